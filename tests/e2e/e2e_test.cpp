// End-to-end tests of the shipped rules and dashboards with real processes on 127.0.0.1:
// rdma_fabric_sim -> rdma_exporter -> Debian's Prometheus (1 s scrape and evaluation) ->
// Debian's Alertmanager (group_wait 0s, group_interval 1s) -> a webhook receiver in this
// process. The simulator switches scenarios at runtime through --scenario-file.
//
// E2E.*: the rules of dashboards/out/test (short windows and `for`, same config otherwise).
// Dashboards.*: the shipped rules; every panel query of dashboards/out/dashboards runs against
// Prometheus scraping the demo fabric and must succeed with a non-empty result.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "process.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Alertmanager's webhook: one POST per notification; bodies are kept for the assertions.
class WebhookReceiver {
 public:
  WebhookReceiver() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;  // the kernel picks a free port: no race with parallel tests
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd_, 16) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len)) {
      ADD_FAILURE() << "webhook receiver: cannot listen on 127.0.0.1";
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~WebhookReceiver() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::string req = ReadRequest(c);
      static const char kOk[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!::write(c, kOk, sizeof(kOk) - 1);
      ::close(c);
      const auto body = req.find("\r\n\r\n");
      if (body != std::string::npos) {
        std::lock_guard<std::mutex> lock(mu_);
        bodies_.push_back(req.substr(body + 4));
      }
    }
  }
  // Headers, then Content-Length bytes of body (Alertmanager sends a length).
  static std::string ReadRequest(int c) {
    std::string req;
    char buf[8192];
    size_t want = std::string::npos;
    const auto deadline = Clock::now() + 5s;
    while (Clock::now() < deadline) {
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      const ssize_t n = ::read(c, buf, sizeof(buf));
      if (n <= 0) break;
      req.append(buf, static_cast<size_t>(n));
      const auto end = req.find("\r\n\r\n");
      if (end != std::string::npos && want == std::string::npos) {
        std::string headers = req.substr(0, end);
        for (char& ch : headers)
          ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        const auto cl = headers.find("content-length:");
        want = end + 4 + (cl == std::string::npos ? 0 : std::stoul(headers.substr(cl + 15)));
      }
      if (want != std::string::npos && req.size() >= want) break;
    }
    return req;
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> bodies_;
};

std::string UrlEncode(const std::string& s) {
  std::string out;
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  return out;
}

bool WaitHttp200(int port, const std::string& path, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (HttpGet(port, path).status == 200) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

bool WaitFor(std::chrono::milliseconds timeout, const std::function<bool()>& done) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return done();
}

// The pipeline; `alertmanager` false = Prometheus only (no alerting).
class Stack {
 public:
  Stack(const std::string& rules, const std::string& scenario, bool alertmanager) {
    Write("scenario", scenario + "\n");
    sim_ = std::make_unique<Process>(std::vector<std::string>{
        RDMA_FABRIC_SIM_BIN, "--root", dir_.path() + "/fabric", "--interval", "500ms",
        "--scenario-file", dir_.path() + "/scenario", "--kubelet-socket",
        dir_.path() + "/fabric/pod-resources/kubelet.sock"});
    if (!WaitFor(10s, [&] { return sim_->stderr_text().find("serving") != std::string::npos; })) {
      ADD_FAILURE() << "simulator did not start: " << sim_->stderr_text();
      return;
    }
    for (int attempt = 0; attempt < 5 && exporter_port_ == 0; ++attempt) {
      const int port = FreeLoopbackPort();
      exporter_ = std::make_unique<Process>(std::vector<std::string>{
          RDMA_EXPORTER_BIN, "--web.listen-address=127.0.0.1:" + std::to_string(port),
          "--path.sysfs=" + dir_.path() + "/fabric/sys",
          "--path.fixtures=" + dir_.path() + "/fabric/fixtures", "--nccl.ib-tc=106",
          "--poll-interval=500ms",
          "--collector.pod_resources.socket=" + dir_.path() + "/fabric/pod-resources/kubelet.sock",
          "--collector.pod_resources.interval=1s", "--collector.lldp", "--collector.ib_peer"});
      if (WaitReady(port, 15s)) exporter_port_ = port;
    }
    if (exporter_port_ == 0) {
      ADD_FAILURE() << "exporter did not start: " << exporter_->stderr_text();
      return;
    }
    if (alertmanager) {
      Write("alertmanager.yml",
            "route:\n"
            "  receiver: hook\n"
            "  group_by: [alertname, instance, device, port]\n"
            "  group_wait: 0s\n"
            "  group_interval: 1s\n"
            "  repeat_interval: 1h\n"
            "receivers:\n"
            "  - name: hook\n"
            "    webhook_configs:\n"
            "      - url: http://127.0.0.1:" +
                std::to_string(hook_.port()) +
                "/hook\n"
                "        send_resolved: true\n");
      for (int attempt = 0; attempt < 5 && am_port_ == 0; ++attempt) {
        const int port = FreeLoopbackPort();
        alertmanager_ = std::make_unique<Process>(std::vector<std::string>{
            ALERTMANAGER_BIN, "--config.file=" + dir_.path() + "/alertmanager.yml",
            "--storage.path=" + dir_.path() + "/alertmanager",
            "--web.listen-address=127.0.0.1:" + std::to_string(port),
            "--cluster.listen-address="});  // no gossip port
        if (WaitHttp200(port, "/-/ready", 20s)) am_port_ = port;
      }
      if (am_port_ == 0) {
        ADD_FAILURE() << "alertmanager did not start: " << alertmanager_->stderr_text();
        return;
      }
    }
    std::string config =
        "global:\n"
        "  scrape_interval: 1s\n"
        "  evaluation_interval: 1s\n"
        "rule_files: ['" +
        rules + "']\n";
    if (alertmanager) {
      config +=
          "alerting:\n"
          "  alertmanagers:\n"
          "    - static_configs:\n"
          "        - targets: ['127.0.0.1:" +
          std::to_string(am_port_) + "']\n";
    }
    config +=
        "scrape_configs:\n"
        "  - job_name: rdma_exporter\n"
        "    static_configs:\n"
        "      - targets: ['" +
        Instance() +
        "']\n"
        "        labels: {cluster: demo}\n";
    Write("prometheus.yml", config);
    for (int attempt = 0; attempt < 5 && prom_port_ == 0; ++attempt) {
      const int port = FreeLoopbackPort();
      prometheus_ = std::make_unique<Process>(std::vector<std::string>{
          PROMETHEUS_BIN, "--config.file=" + dir_.path() + "/prometheus.yml",
          "--storage.tsdb.path=" + dir_.path() + "/prometheus",
          "--web.listen-address=127.0.0.1:" + std::to_string(port)});
      if (WaitHttp200(port, "/-/ready", 30s)) prom_port_ = port;
    }
    if (prom_port_ == 0) {
      ADD_FAILURE() << "prometheus did not start: " << prometheus_->stderr_text();
      return;
    }
    ok_ = true;
  }

  bool ok() const { return ok_; }
  std::string Instance() const { return "127.0.0.1:" + std::to_string(exporter_port_); }
  WebhookReceiver& hook() { return hook_; }
  std::string Logs() {
    std::string out = "--- simulator\n" + sim_->stderr_text();
    if (prometheus_) out += "--- prometheus\n" + prometheus_->stderr_text();
    if (alertmanager_) out += "--- alertmanager\n" + alertmanager_->stderr_text();
    return out;
  }
  // "NAME [DEVICE]": the simulator switches before its next tick.
  void SetScenario(const std::string& line) { Write("scenario", line + "\n"); }

  // The body of /api/v1/query for expr (status 0 body empty if Prometheus did not answer).
  HttpResponse Query(const std::string& expr) {
    return HttpGet(prom_port_, "/api/v1/query?query=" + UrlEncode(expr));
  }
  bool NonEmpty(const std::string& expr) {
    const HttpResponse r = Query(expr);
    return r.status == 200 && r.body.find("\"status\":\"success\"") != std::string::npos &&
           r.body.find("\"result\":[]") == std::string::npos;
  }

 private:
  void Write(const std::string& name, const std::string& content) {
    std::ofstream(dir_.path() + "/" + name + ".tmp") << content;
    std::rename((dir_.path() + "/" + name + ".tmp").c_str(), (dir_.path() + "/" + name).c_str());
  }

  TempDir dir_;
  WebhookReceiver hook_;
  // Destroyed (stopped by PID) in reverse order: Prometheus first, the simulator last.
  std::unique_ptr<Process> sim_, exporter_, alertmanager_, prometheus_;
  int exporter_port_ = 0, am_port_ = 0, prom_port_ = 0;
  bool ok_ = false;
};

// A notification (one group: alertname, instance, device, port) with this status and labels.
bool HasNotification(const std::vector<std::string>& bodies, const std::string& status,
                     const std::string& alertname, const std::string& device,
                     const std::string& port) {
  for (const std::string& b : bodies) {
    if (b.find("\"status\":\"" + status + "\"") != std::string::npos &&
        b.find("\"groupLabels\":{\"alertname\":\"" + alertname + "\",\"device\":\"" + device +
               "\"") != std::string::npos &&
        b.find("\"port\":\"" + port + "\"") != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string Joined(const std::vector<std::string>& bodies) {
  std::string out;
  for (const std::string& b : bodies)
    out += b + "\n";
  return out;
}

// Waits until the test rules have data for every port of the demo fabric.
void WaitForRuleData(Stack& s) {
  ASSERT_TRUE(WaitFor(30s, [&] {
    return s.NonEmpty("device_port:rdma_port_traffic_bytes:rate10s") &&
           s.NonEmpty("device_port_priority:rdma_pfc_pause_ratio:rate10s");
  })) << s.Logs();
}

TEST(E2E, HealthyFabricDeliversNoNotification) {
  Stack s(RDMA_TEST_RULES, "healthy", /*alertmanager=*/true);
  ASSERT_TRUE(s.ok()) << s.Logs();
  WaitForRuleData(s);
  // Two thirds of the longest test window (30 s) and ten times `for` (2 s): noise fires here.
  std::this_thread::sleep_for(20s);
  EXPECT_TRUE(s.hook().bodies().empty()) << Joined(s.hook().bodies());
  // Nothing pending either.
  EXPECT_FALSE(s.NonEmpty("ALERTS")) << s.Query("ALERTS").body;
}

void FaultPagesAndResolves(const std::string& fault, const std::string& alertname,
                           const std::string& device) {
  Stack s(RDMA_TEST_RULES, "healthy", /*alertmanager=*/true);
  ASSERT_TRUE(s.ok()) << s.Logs();
  WaitForRuleData(s);
  ASSERT_TRUE(s.hook().bodies().empty()) << Joined(s.hook().bodies());

  const auto injected = Clock::now();
  s.SetScenario(fault + " " + device);
  ASSERT_TRUE(WaitFor(
      30s, [&] { return HasNotification(s.hook().bodies(), "firing", alertname, device, "1"); }))
      << Joined(s.hook().bodies()) << s.Logs();
  std::printf("%s: %s page for %s/1 after %.1f s\n", fault.c_str(), alertname.c_str(),
              device.c_str(), std::chrono::duration<double>(Clock::now() - injected).count());
  // The page names the right device and port only: no other port pages this alert.
  for (const std::string& b : s.hook().bodies()) {
    if (b.find("\"alertname\":\"" + alertname + "\"") == std::string::npos) continue;
    EXPECT_NE(b.find("\"device\":\"" + device + "\""), std::string::npos) << b;
    EXPECT_NE(b.find("\"instance\":\"" + s.Instance() + "\""), std::string::npos) << b;
    EXPECT_NE(b.find("\"severity\":\"critical\""), std::string::npos) << b;
    EXPECT_NE(b.find("docs/runbook.md#" +
                     std::string(alertname == "RdmaPortDown" ? "rdmaportdown" : "rdmapfcstorm")),
              std::string::npos)
        << b;
  }

  const auto cleared = Clock::now();
  s.SetScenario("healthy");
  ASSERT_TRUE(WaitFor(
      45s, [&] { return HasNotification(s.hook().bodies(), "resolved", alertname, device, "1"); }))
      << Joined(s.hook().bodies()) << s.Logs();
  std::printf("%s: resolved after %.1f s\n", fault.c_str(),
              std::chrono::duration<double>(Clock::now() - cleared).count());
}

TEST(E2E, LinkDownPagesForTheDownPortAndResolves) {
  FaultPagesAndResolves("link-down", "RdmaPortDown", "mlx5_1");
}

TEST(E2E, PfcStormPagesForTheStormingPortAndResolves) {
  FaultPagesAndResolves("pfc-storm", "RdmaPfcStorm", "mlx5_0");
}

// Titles of annotation queries (link events) in DashboardQueries: they have data only while an
// event is in their window.
constexpr char kAnnotationPrefix[] = "annotation ";

// Every panel, variable and annotation query of a dashboard, with Grafana's variables and macros
// substituted: "title\x1fexpr" records separated by \x1e, extracted by jsonnet (which reads
// JSON) from the committed file.
std::vector<std::pair<std::string, std::string>> DashboardQueries(const std::string& file) {
  const std::string code =
      "local d = import '" + file +
      "';\n"
      "local all(ps) = std.flattenArrays([[p] + all(if std.objectHas(p, 'panels') then "
      "p.panels else []) for p in ps]);\n"
      "std.join('\\u001e', [p.title + '\\u001f' + t.expr for p in all(d.panels) "
      "if std.objectHas(p, 'targets') for t in p.targets] + "
      "['variable ' + v.name + '\\u001f' + v.query.query for v in d.templating.list "
      "if v.type == 'query'] + "
      "['" +
      std::string(kAnnotationPrefix) +
      "' + a.name + '\\u001f' + a.expr for a in "
      "d.annotations.list if std.objectHas(a, 'expr')])";
  std::string out;
  const int rc = RunCommand({JSONNET_BIN, "-S", "-e", code}, &out);
  EXPECT_EQ(rc, 0) << out;
  std::vector<std::pair<std::string, std::string>> queries;
  std::stringstream records(out);
  std::string rec;
  while (std::getline(records, rec, '\x1e')) {
    const auto sep = rec.find('\x1f');
    if (sep == std::string::npos) continue;
    std::string expr = rec.substr(sep + 1);
    while (!expr.empty() && expr.back() == '\n')
      expr.pop_back();
    queries.emplace_back(rec.substr(0, sep), expr);
  }
  return queries;
}

std::string Substitute(std::string expr, const std::string& instance) {
  // label_values(M, L) of a variable query -> the label's values as PromQL sees them.
  if (expr.rfind("label_values(", 0) == 0) {
    const auto comma = expr.rfind(',');
    expr = "group by (" + expr.substr(comma + 1, expr.size() - comma - 2) + ") (" +
           expr.substr(13, comma - 13) + ")";
  }
  const std::pair<std::string, std::string> vars[] = {
      {"$__rate_interval", "10s"}, {"$__interval", "1s"},     {"$__range", "1m"},
      {"$cluster", "demo"},        {"$node", instance},       {"$device", ".*"},
      {"$namespace", "ml-team"},   {"$pod", "llama-train-0"},
  };
  for (const auto& [var, value] : vars) {
    for (auto pos = expr.find(var); pos != std::string::npos; pos = expr.find(var, pos)) {
      expr.replace(pos, var.size(), value);
      pos += value.size();
    }
  }
  return expr;
}

TEST(Dashboards, EveryPanelQueryReturnsDataOnTheDemoFabric) {
  // A fault makes an alert fire for the alert panels (RdmaPfcStormWatchdog has `for: 0m`).
  Stack s(RDMA_SHIPPED_RULES, "pfc-storm mlx5_0", /*alertmanager=*/false);
  ASSERT_TRUE(s.ok()) << s.Logs();
  ASSERT_TRUE(WaitFor(45s, [&] {
    return s.NonEmpty("device_port:rdma_rail_traffic_ratio:rate5m") &&
           s.NonEmpty("ALERTS{alertstate=\"firing\"}") && s.NonEmpty("rdma_pod_info");
  })) << s.Logs();

  int checked = 0;
  std::vector<std::pair<std::string, std::string>> annotations;
  for (const char* name :
       {"rdma-fabric-overview.json", "rdma-node.json", "rdma-exporter.json", "rdma-job.json"}) {
    const auto queries = DashboardQueries(std::string(RDMA_DASHBOARDS) + "/" + name);
    EXPECT_GE(queries.size(), 10u) << name;
    for (const auto& [title, raw] : queries) {
      if (title.rfind(kAnnotationPrefix, 0) == 0) {
        annotations.emplace_back(std::string(name) + " / " + title, Substitute(raw, s.Instance()));
        continue;
      }
      const std::string expr = Substitute(raw, s.Instance());
      EXPECT_EQ(expr.find('$'), std::string::npos) << name << " / " << title << ": " << expr;
      const HttpResponse r = s.Query(expr);
      EXPECT_EQ(r.status, 200) << name << " / " << title << ": " << expr << "\n" << r.body;
      EXPECT_NE(r.body.find("\"status\":\"success\""), std::string::npos)
          << name << " / " << title << ": " << expr << "\n"
          << r.body;
      EXPECT_EQ(r.body.find("\"result\":[]"), std::string::npos)
          << name << " / " << title << ": empty result for " << expr;
      ++checked;
    }
  }
  std::printf("%d dashboard queries returned data\n", checked);

  // The link-event annotations mark real events: an InfiniBand link going down (state change,
  // link_downed) and a RoCE transceiver pulled and re-seated (state, carrier, module event).
  ASSERT_FALSE(annotations.empty());
  s.SetScenario("link-down mlx5_1");
  ASSERT_TRUE(WaitFor(20s, [&] {
    return s.NonEmpty("increase(rdma_port_link_downed_total{device=\"mlx5_1\"}[2m]) > 0");
  })) << s.Logs();
  s.SetScenario("module-unplug mlx5_0");
  for (const auto& [title, expr] : annotations) {
    EXPECT_TRUE(WaitFor(20s, [&] { return s.NonEmpty(expr); }))
        << title << ": no event marked by " << expr << "\n"
        << s.Query(expr).body;
  }
  std::printf("%zu annotation queries marked the injected link events\n", annotations.size());
}

// The simulator's runtime switch itself: a scenario file changes the fault and "healthy"
// clears it, with counters continuing.
TEST(FabricSim, ScenarioFileSwitchesScenarioAtRuntime) {
  TempDir dir;
  dir.Write("scenario", "healthy\n");
  Process sim({RDMA_FABRIC_SIM_BIN, "--root", dir.path() + "/fabric", "--interval", "100ms",
               "--scenario-file", dir.path() + "/scenario"});
  const std::string port = dir.path() + "/fabric/sys/class/infiniband/mlx5_1/ports/1/";
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
  };
  // The simulator rewrites files in place: a read can land between truncate and write and see
  // an empty file, so counters are read until they hold a number.
  const auto read_counter = [&](const std::string& path) {
    std::string value;
    WaitFor(10s, [&] {
      value = read(path);
      return !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    });
    return value;
  };
  ASSERT_TRUE(WaitFor(10s, [&] { return read(port + "state") == "4: ACTIVE"; }));
  const std::string downed_before = read_counter(port + "counters/link_downed");
  ASSERT_FALSE(downed_before.empty());
  dir.Write("scenario", "link-down mlx5_1\n");
  // The tick writes the state before the counters: wait for both, a loaded machine can read
  // between the two writes.
  ASSERT_TRUE(WaitFor(10s, [&] {
    return read(port + "state") == "1: DOWN" &&
           read_counter(port + "counters/link_downed") != downed_before;
  })) << sim.stderr_text();
  EXPECT_EQ(std::stoull(read_counter(port + "counters/link_downed")),
            std::stoull(downed_before) + 1);
  dir.Write("scenario", "no-such-scenario\n");  // reported, ignored
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(read(port + "state"), "1: DOWN");
  dir.Write("scenario", "healthy\n");
  ASSERT_TRUE(WaitFor(10s, [&] { return read(port + "state") == "4: ACTIVE"; }))
      << sim.stderr_text();
  EXPECT_EQ(sim.Stop(), 0);
  EXPECT_NE(sim.stderr_text().find("unknown scenario 'no-such-scenario'"), std::string::npos)
      << sim.stderr_text();
}

}  // namespace
}  // namespace rdma_exporter::testing
