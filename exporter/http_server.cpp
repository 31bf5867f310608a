#include "http_server.h"

#include <civetweb.h>

#include <cstring>
#include <map>
#include <sstream>

#include "rdma_exporter/logging.h"
#include "version.h"

namespace rdma_exporter {
namespace {

constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

void Send(mg_connection* conn, int status, const char* content_type, const std::string& body,
          const char* encoding = nullptr) {
  mg_response_header_start(conn, status);
  mg_response_header_add(conn, "Content-Type", content_type, -1);
  if (encoding != nullptr) mg_response_header_add(conn, "Content-Encoding", encoding, -1);
  mg_response_header_add(conn, "Content-Length", std::to_string(body.size()).c_str(), -1);
  mg_response_header_send(conn);
  const mg_request_info* info = mg_get_request_info(conn);
  if (std::strcmp(info->request_method, "HEAD") != 0) mg_write(conn, body.data(), body.size());
}

bool MethodAllowed(mg_connection* conn) {
  const char* method = mg_get_request_info(conn)->request_method;
  if (std::strcmp(method, "GET") == 0 || std::strcmp(method, "HEAD") == 0) return true;
  Send(conn, 405, "text/plain; charset=utf-8", "Method Not Allowed\n");
  return false;
}

bool AcceptsGzip(mg_connection* conn) {
  const char* accept = mg_get_header(conn, "Accept-Encoding");
  if (accept == nullptr) return false;
  // Tokens are comma separated, optionally with ;q=. "gzip;q=0" refuses gzip.
  std::string_view header(accept);
  size_t pos = 0;
  while (pos <= header.size()) {
    size_t comma = header.find(',', pos);
    std::string_view token =
        header.substr(pos, comma == std::string_view::npos ? header.npos : comma - pos);
    while (!token.empty() && token.front() == ' ')
      token.remove_prefix(1);
    if (token.substr(0, 4) == "gzip") {
      std::string_view params = token.substr(4);
      return params.find("q=0") == std::string_view::npos ||
             params.find("q=0.") != std::string_view::npos;
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return false;
}

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

std::string LabelValue(const prometheus::ClientMetric& m, std::string_view name) {
  for (const auto& l : m.label) {
    if (l.name == name) return l.value;
  }
  return "";
}

const char* StateName(double v) {
  static const char* kNames[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  int i = static_cast<int>(v);
  return i >= 0 && i <= 5 ? kNames[i] : "UNKNOWN";
}

const char* PhysStateName(double v) {
  static const char* kNames[] = {"?",        "Sleep",  "Polling",           "Disabled",
                                 "Training", "LinkUp", "LinkErrorRecovery", "PhyTest"};
  int i = static_cast<int>(v);
  return i >= 1 && i <= 7 ? kNames[i] : "?";
}

}  // namespace

std::string RenderLandingPage(const Snapshot* snapshot, const std::string& telemetry_path) {
  struct Row {
    std::string link_layer, netdev, state, phys, rate, fw, pci;
  };
  std::map<std::pair<std::string, int>, Row> rows;
  std::map<std::string, std::pair<std::string, std::string>> devices;  // fw, pci
  if (snapshot != nullptr) {
    for (const auto& family : snapshot->families) {
      for (const auto& m : family.metric) {
        std::string device = LabelValue(m, "device");
        if (family.name == "rdma_device_info") {
          devices[device] = {LabelValue(m, "fw_ver"), LabelValue(m, "pci_address")};
          continue;
        }
        std::string port = LabelValue(m, "port");
        if (port.empty()) continue;
        auto key = std::make_pair(device, std::stoi(port));
        if (family.name == "rdma_port_info") {
          rows[key].link_layer = LabelValue(m, "link_layer");
          rows[key].netdev = LabelValue(m, "netdev");
        } else if (family.name == "rdma_port_state") {
          rows[key].state = StateName(m.gauge.value);
        } else if (family.name == "rdma_port_physical_state") {
          rows[key].phys = PhysStateName(m.gauge.value);
        } else if (family.name == "rdma_port_rate_bytes_per_second") {
          std::ostringstream r;
          r << m.gauge.value * 8 / 1e9 << " Gb/s";
          rows[key].rate = r.str();
        }
      }
    }
  }
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>RDMA Exporter</title>"
         "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:4px 10px;text-align:left}"
         ".up{color:#080}.down{color:#c00}</style></head><body>\n"
         "<h1>RDMA Exporter</h1>\n<p>Version "
      << Html(kVersion) << " (revision " << Html(kRevision) << ")</p>\n<ul><li><a href=\""
      << Html(telemetry_path) << "\">Metrics</a></li><li><a href=\"/-/healthy\">Health</a></li>"
      << "<li><a href=\"/-/ready\">Readiness</a></li></ul>\n";
  if (snapshot == nullptr) {
    out << "<p>Waiting for the first poll.</p>\n";
  } else {
    out << "<h2>Ports</h2>\n<table><tr><th>Device</th><th>Port</th><th>Link layer</th>"
           "<th>State</th><th>Physical state</th><th>Rate</th><th>Netdev</th><th>Firmware</th>"
           "<th>PCI</th></tr>\n";
    for (const auto& [key, row] : rows) {
      const auto& dev = devices[key.first];
      const char* cls = row.state == "ACTIVE" ? "up" : "down";
      out << "<tr><td>" << Html(key.first) << "</td><td>" << key.second << "</td><td>"
          << Html(row.link_layer) << "</td><td class=\"" << cls << "\">" << Html(row.state)
          << "</td><td>" << Html(row.phys) << "</td><td>" << Html(row.rate) << "</td><td>"
          << Html(row.netdev) << "</td><td>" << Html(dev.first) << "</td><td>" << Html(dev.second)
          << "</td></tr>\n";
    }
    if (rows.empty()) out << "<tr><td colspan=\"9\">No RDMA ports found.</td></tr>\n";
    out << "</table>\n";
  }
  out << "</body></html>\n";
  return out.str();
}

HttpServer::HttpServer(HttpConfig config, Poller& poller)
    : config_(std::move(config)), poller_(poller) {}

HttpServer::~HttpServer() {
  Stop();
}

bool HttpServer::Start(std::string* error) {
  const char* options[] = {"listening_ports", config_.civetweb_ports.c_str(), "num_threads", "4",
                           "request_timeout_ms", "10000", "enable_keep_alive", "yes",
                           // Headers and body are separate writes: without TCP_NODELAY the body
                           // waits for a delayed ACK (~40 ms per scrape).
                           "tcp_nodelay", "1", nullptr};
  mg_callbacks callbacks{};
  ctx_ = mg_start(&callbacks, this, options);
  if (ctx_ == nullptr) {
    *error = "cannot listen on " + config_.civetweb_ports + " (address in use or not local?)";
    return false;
  }
  mg_server_port ports[4]{};
  if (mg_get_server_ports(ctx_, 4, ports) > 0) port_ = ports[0].port;
  std::string metrics_pattern = config_.telemetry_path + "$";
  mg_set_request_handler(ctx_, metrics_pattern.c_str(), &HandleMetrics, this);
  mg_set_request_handler(ctx_, "/-/healthy$", &HandleHealthy, this);
  mg_set_request_handler(ctx_, "/-/ready$", &HandleReady, this);
  mg_set_request_handler(ctx_, "/$", &HandleLanding, this);
  return true;
}

void HttpServer::Stop() {
  if (ctx_ != nullptr) {
    mg_stop(ctx_);
    ctx_ = nullptr;
  }
}

int HttpServer::HandleMetrics(mg_connection* conn, void* self) {
  auto* server = static_cast<HttpServer*>(self);
  if (!MethodAllowed(conn)) return 405;
  std::shared_ptr<const Snapshot> snapshot =
      server->config_.collect_on_scrape ? server->poller_.Collect() : server->poller_.Latest();
  if (snapshot == nullptr) {
    Send(conn, 503, "text/plain; charset=utf-8", "first poll has not completed yet\n");
    return 503;
  }
  if (AcceptsGzip(conn) && !snapshot->gzip.empty()) {
    Send(conn, 200, kTextContentType, snapshot->gzip, "gzip");
  } else {
    Send(conn, 200, kTextContentType, snapshot->text);
  }
  return 200;
}

int HttpServer::HandleLanding(mg_connection* conn, void* self) {
  auto* server = static_cast<HttpServer*>(self);
  if (!MethodAllowed(conn)) return 405;
  auto snapshot = server->poller_.Latest();
  Send(conn, 200, "text/html; charset=utf-8",
       RenderLandingPage(snapshot.get(), server->config_.telemetry_path));
  return 200;
}

int HttpServer::HandleHealthy(mg_connection* conn, void*) {
  Send(conn, 200, "text/plain; charset=utf-8", "Healthy\n");
  return 200;
}

int HttpServer::HandleReady(mg_connection* conn, void* self) {
  auto* server = static_cast<HttpServer*>(self);
  if (server->poller_.Latest() == nullptr) {
    Send(conn, 503, "text/plain; charset=utf-8", "Not ready: first poll has not completed\n");
    return 503;
  }
  Send(conn, 200, "text/plain; charset=utf-8", "Ready\n");
  return 200;
}

}  // namespace rdma_exporter
