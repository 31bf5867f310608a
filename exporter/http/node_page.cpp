// The node page (/): the node's health for an engineer who port-forwarded to one node, rendered
// on the server from the status model (rdma_exporter/node_status.h), so it reads the same without
// JavaScript. A small script of our own (/node-page.js, no external assets) swaps the page's
// <main> for a fresh one every poll interval instead of reloading the page.
#include "node_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "rdma_exporter/version.h"

namespace rdma_exporter {
namespace {

std::string Html(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Format(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string Share(const std::optional<double>& ratio) {
  return ratio ? Format("%.1f%%", *ratio * 100) : "–";
}

const char* CheckClass(doctor::Status s) {
  switch (s) {
    case doctor::Status::kPass:
      return "ok";
    case doctor::Status::kSkip:
      return "skip";
    case doctor::Status::kWarn:
      return "warning";
    case doctor::Status::kFail:
      break;
  }
  return "critical";
}

std::string UtcTime(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

void PortRow(std::ostringstream& out, const PortHealth& p) {
  const char* level = LevelName(p.level);
  out << "<tr class=\"" << level << "\" data-port=\"" << Html(p.device) << "/" << p.port
      << "\" data-level=\"" << level << "\">";
  // Port: name, netdev, link layer, pods.
  out << "<td><b>" << Html(p.device) << "/" << p.port << "</b><br><small>"
      << Html(p.netdev.empty() ? "no netdev" : p.netdev) << " · " << Html(p.link_layer)
      << "</small>";
  if (!p.pods.empty()) {
    out << "<br><small class=\"pods\">pods:";
    for (const auto& pod : p.pods)
      out << " " << Html(pod);
    out << "</small>";
  }
  out << "</td>";
  bool up = p.state == "ACTIVE" && p.phys_state == "LinkUp";
  out << "<td class=\"" << (up ? "ok" : "critical") << "\">"
      << Html(p.state.empty() ? "?" : p.state) << "<br><small>"
      << Html(p.phys_state.empty() ? "?" : p.phys_state) << "</small></td>";
  bool below = !p.expected_rate.empty() && p.rate != p.expected_rate;
  out << "<td class=\"" << (below ? "warning" : "") << "\">" << Html(p.rate.empty() ? "–" : p.rate);
  if (below) out << "<br><small>expected " << Html(p.expected_rate) << "</small>";
  out << "</td>";
  out << "<td>" << Share(p.tx_utilisation) << " / " << Share(p.rx_utilisation) << "</td>";
  out << "<td>" << Share(p.tx_pause) << " / " << Share(p.rx_pause);
  if (p.nccl_priority) out << "<br><small>NCCL priority " << *p.nccl_priority << "</small>";
  out << "</td>";
  // Errors: what moved, coloured by the level of its alert; "none" when every rate is zero.
  out << "<td>";
  bool any = false;
  for (const auto& s : p.signals) {
    // Shares of time below 0.1 % print as 0.0 %: noise, unless their level says otherwise.
    if (s.value == 0 || (s.unit == " of time" && s.value < 1e-3 && s.level == Level::kOk)) continue;
    any = true;
    std::string value = s.unit == "BER"        ? Format("%.2g BER", s.value)
                        : s.unit == " of time" ? Format("%.1f%% of time", s.value * 100)
                                               : Format("%.3g/s", s.value);
    out << "<span class=\"" << LevelName(s.level) << "\">" << Html(s.name) << " " << value
        << "</span><br>";
  }
  if (!any) out << (p.signals.empty() ? "–" : "none");
  if (!p.saturated.empty()) {
    out << "<br><small>saturated:";
    for (const auto& c : p.saturated)
      out << " " << Html(c);
    out << "</small>";
  }
  out << "</td>";
  // RoCE configuration checks.
  out << "<td>";
  if (p.roce_checks.empty()) out << "–";
  size_t passing = 0;
  for (const auto& [check, ok] : p.roce_checks) {
    if (ok) {
      ++passing;
    } else {
      out << "<span class=\"warning\">✗ " << Html(check) << "</span><br>";
    }
  }
  if (!p.roce_checks.empty())
    out << "<small>" << passing << "/" << p.roce_checks.size() << " pass</small>";
  out << "</td>";
  out << "<td class=\"" << (p.pcie_capable.empty() ? "" : "warning") << "\">"
      << Html(p.pcie.empty() ? "–" : p.pcie);
  if (!p.pcie_capable.empty())
    out << "<br><small>capable of " << Html(p.pcie_capable) << "</small>";
  out << "</td>";
  out << "<td>";
  if (p.module_temperature_celsius) out << Format("%.0f °C", *p.module_temperature_celsius);
  if (p.module_min_rx_power_watts) {
    out << "<br><small>rx ≥ " << Format("%.3g mW", *p.module_min_rx_power_watts * 1e3)
        << "</small>";
  }
  if (!p.module_temperature_celsius && !p.module_min_rx_power_watts) out << "–";
  out << "</td>";
  out << "<td>";
  for (size_t i = 0; i < p.peers.size(); ++i)
    out << (i == 0 ? "" : "<br>") << Html(p.peers[i]);
  if (p.peers.empty()) out << "–";
  out << "</td>";
  out << "<td class=\"findings\">";
  for (const auto& f : p.findings)
    out << Html(f) << "<br>";
  out << "</td></tr>\n";
}

}  // namespace

const char kNodePageScript[] =
    R"js(// rdma_exporter node page: refreshes the page in place (no reload) every data-refresh seconds.
(function () {
  'use strict';
  var refreshes = 0;
  function main() { return document.getElementById('status'); }
  function schedule() {
    var m = main();
    var seconds = Math.max(1, parseInt(m && m.getAttribute('data-refresh'), 10) || 10);
    setTimeout(refresh, seconds * 1000);
  }
  function refresh() {
    // origin + path: a page opened as https://user:pass@host/ must not fetch a URL with
    // credentials in it (fetch refuses those); the browser sends the cached ones itself.
    fetch(window.location.origin + window.location.pathname,
          { cache: 'no-store', credentials: 'same-origin' })
      .then(function (r) {
        if (!r.ok) throw new Error('HTTP ' + r.status);
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, 'text/html');
        var next = doc.getElementById('status');
        if (!next) throw new Error('no status in the answer');
        refreshes += 1;
        next.setAttribute('data-refreshes', String(refreshes));
        main().replaceWith(next);
        document.title = doc.title;
      })
      .catch(function (e) {
        var s = document.getElementById('refresh-state');
        if (s) s.textContent = 'refresh failed (' + e.message + '); retrying';
      })
      .then(schedule);
  }
  if (main()) schedule();
})();
)js";

std::string RenderNodePage(const NodeHealth* health, const NodePageOptions& options) {
  std::ostringstream out;
  std::string title =
      "RDMA " + (health != nullptr && !health->node.empty() ? health->node : "node");
  if (health != nullptr) title += ": " + std::string(LevelName(health->level));
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
         "<title>"
      << Html(title)
      << "</title><style>"
         "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1f2328}"
         "main{padding:1em 1.5em}h1{font-size:1.4em;margin:0}h2{font-size:1.1em;margin:1.2em 0 "
         ".4em}"
         ".banner{padding:.8em 1em;border-radius:6px;margin-bottom:.6em}"
         ".banner.ok{background:#dafbe1}.banner.warning{background:#fff8c5}"
         ".banner.critical{background:#ffebe9}"
         "table{border-collapse:collapse;width:100%}"
         "td,th{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}"
         "th{background:#f6f8fa}small{color:#57606a}"
         "tr.warning td:first-child{border-left:6px solid #d4a72c}"
         "tr.critical td:first-child{border-left:6px solid #cf222e}"
         "tr.ok td:first-child{border-left:6px solid #2da44e}"
         "td.ok,span.ok{color:#1a7f37}td.warning,span.warning{color:#9a6700;font-weight:600}"
         "td.critical,span.critical{color:#cf222e;font-weight:600}td.skip{color:#57606a}"
         "td.findings{color:#57606a}.meta{color:#57606a}nav a{margin-right:1em}"
         "</style><script src=\"/node-page.js\" defer></script></head><body>\n";
  if (health == nullptr) {
    out << "<main id=\"status\" data-refresh=\"" << options.refresh_seconds
        << "\" data-level=\"unknown\"><h1>" << Html(title)
        << "</h1><p>Waiting for the first poll.</p></main></body></html>\n";
    return out.str();
  }
  const NodeHealth& h = *health;
  out << "<main id=\"status\" data-refresh=\"" << options.refresh_seconds << "\" data-sequence=\""
      << h.sequence << "\" data-level=\"" << LevelName(h.level) << "\">\n";
  out << "<div class=\"banner " << LevelName(h.level) << "\"><h1>" << Html(h.node) << " — "
      << LevelHeadline(h.level) << "</h1>";
  // The worst ports first, each with its first finding: what the engineer acts on.
  std::vector<const PortHealth*> bad;
  for (const auto& p : h.ports) {
    if (p.level != Level::kOk) bad.push_back(&p);
  }
  std::stable_sort(bad.begin(), bad.end(),
                   [](const PortHealth* a, const PortHealth* b) { return a->level > b->level; });
  out << "<p>" << h.ports.size() << " port" << (h.ports.size() == 1 ? "" : "s") << ", "
      << bad.size() << " with findings";
  for (size_t i = 0; i < bad.size() && i < 4; ++i) {
    out << (i == 0 ? ": " : "; ") << "<span class=\"" << LevelName(bad[i]->level) << "\">"
        << Html(bad[i]->device) << "/" << bad[i]->port << " "
        << Html(bad[i]->findings.empty() ? "" : bad[i]->findings.front()) << "</span>";
  }
  if (bad.size() > 4) out << "; and " << bad.size() - 4 << " more";
  if (h.stale) {
    out << "; <b>the last poll is " << Format("%.0f", h.poll_age_seconds)
        << " s old: everything below is stale</b>";
  }
  for (const auto& f : h.findings)
    out << "; " << Html(f);
  out << "</p></div>\n";
  out << "<p class=\"meta\">Poll #" << h.sequence << " at " << UtcTime(h.poll_timestamp) << " ("
      << Format("%.0f", h.poll_age_seconds) << " s ago, took "
      << Format("%.1f", h.poll_duration_seconds * 1e3) << " ms); ";
  if (h.window_seconds > 0) {
    out << "rates over the last " << Format("%.1f", h.window_seconds) << " s between two polls.";
  } else {
    out << "rates after the next poll.";
  }
  out << " <span id=\"refresh-state\"></span></p>\n<nav><a href=\"" << Html(options.telemetry_path)
      << "\">Metrics</a><a href=\"/api/v1/status\">Status JSON</a><a href=\"/-/healthy\">Health</a>"
         "<a href=\"/-/ready\">Readiness</a><span class=\"meta\">rdma_exporter "
      << Html(kVersion) << "</span></nav>\n";

  out << "<h2>Ports</h2>\n<table class=\"ports\"><thead><tr><th>Port</th><th>State</th>"
         "<th>Rate</th><th>Traffic tx / rx</th><th>PFC pause tx / rx</th><th>Errors and drops</th>"
         "<th>RoCE checks</th><th>PCIe</th><th>Optics</th><th>Link peer</th><th>Findings</th></tr>"
         "</thead><tbody>\n";
  for (const auto& p : h.ports)
    PortRow(out, p);
  if (h.ports.empty()) out << "<tr><td colspan=\"11\">No RDMA ports found.</td></tr>\n";
  out << "</tbody></table>\n";

  out << "<h2>Checks</h2>\n<table class=\"checks\"><thead><tr><th>Check</th><th>Result</th>"
         "<th>Reason</th></tr></thead><tbody>\n";
  for (const auto& c : h.checks) {
    out << "<tr data-check=\"" << Html(c.name) << "\"><td>" << Html(c.name) << "</td><td class=\""
        << CheckClass(c.status) << "\">" << doctor::StatusName(c.status) << "</td><td>"
        << Html(doctor::Sanitize(c.reason)) << "</td></tr>\n";
  }
  out << "</tbody></table>\n";

  out << "<h2>Collectors</h2>\n<table class=\"collectors\"><thead><tr><th>Collector</th>"
         "<th>Last run</th><th>Duration</th><th>Read errors</th></tr></thead><tbody>\n";
  for (const auto& c : h.collectors) {
    out << "<tr><td>" << Html(c.name) << "</td><td class=\"" << (c.success ? "ok" : "critical")
        << "\">" << (c.success ? "ok" : "failed") << "</td><td>"
        << Format("%.2f ms", c.duration_seconds * 1e3) << "</td><td class=\""
        << (c.read_errors > 0 ? "warning" : "") << "\">" << Format("%.0f", c.read_errors)
        << "</td></tr>\n";
  }
  out << "</tbody></table>\n</main></body></html>\n";
  return out.str();
}

}  // namespace rdma_exporter
