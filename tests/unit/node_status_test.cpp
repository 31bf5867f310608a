// The node status model behind the node page (rdma_exporter/node_status.h): levels from two
// snapshots by the alert rules' thresholds, the page's HTML and the JSON, and the endpoints
// (/, /api/v1/status, /node-page.js) on a server listening on 127.0.0.1 (a free port).
#include "rdma_exporter/node_status.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "exporter/http/node_page.h"
#include "process.h"
#include "rdma_exporter/http_server.h"
#include "rdma_exporter/metrics.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

// A RoCE PF (mlx5_0, ens1f0np0), an InfiniBand PF (mlx5_1) and a VF (mlx5_2), all MT4129.
Inventory ThreePorts() {
  Inventory inv;
  auto add = [&](const char* name, const char* layer, const char* netdev, const char* physfn) {
    DeviceInfo d;
    d.name = name;
    d.has_pci_link = true;
    d.physfn = physfn;
    PortInfo p;
    p.number = 1;
    p.link_layer = layer;
    p.netdev = netdev;
    d.ports.push_back(p);
    inv.devices.push_back(d);
  };
  add("mlx5_0", "Ethernet", "ens1f0np0", "");
  add("mlx5_1", "InfiniBand", "ib0", "");
  add("mlx5_2", "Ethernet", "ens1f0v0", "0000:18:00.0");
  return inv;
}

// The series every port has: ACTIVE/LinkUp at 400 Gb/s (50e9 bytes/s) 4X, MT4129.
std::string Base() {
  std::string text;
  for (const char* d : {"mlx5_0", "mlx5_1", "mlx5_2"}) {
    std::string l = std::string("{device=\"") + d + "\",port=\"1\"}";
    text += std::string("rdma_device_info{device=\"") + d + "\",hca_type=\"MT4129\"} 1\n";
    text += "rdma_port_state" + l + " 4\nrdma_port_physical_state" + l + " 5\n";
    text += "rdma_port_rate_bytes_per_second" + l + " 50000000000\n";
    text += "rdma_port_link_width_lanes" + l + " 4\n";
  }
  return text;
}

struct Built {
  std::vector<prometheus::MetricFamily> now, before;
  Inventory inventory = ThreePorts();
  NodeHealth health;
};

// Builds the status of `now` after `before`, one second apart (fresh: built at the poll time).
std::unique_ptr<Built> Build(const std::string& before, const std::string& now,
                             bool with_before = true) {
  auto b = std::make_unique<Built>();
  b->before = ParseText(Base() + before);
  b->now = ParseText(Base() + now);
  NodeHealthInput in;
  in.inventory = &b->inventory;
  in.now = &b->now;
  if (with_before) in.before = &b->before;
  in.before_timestamp = 1000;
  in.now_timestamp = 1001;
  in.wall_clock = 1001;
  in.sequence = 7;
  in.node = "gpu17";
  in.nccl_ib_tc = 106;
  b->health = BuildNodeHealth(in);
  return b;
}

const PortHealth& PortOf(const NodeHealth& h, const std::string& device) {
  for (const auto& p : h.ports) {
    if (p.device == device) return p;
  }
  throw std::runtime_error("no port " + device);
}

std::string Findings(const PortHealth& p) {
  std::string all;
  for (const auto& f : p.findings)
    all += f + "; ";
  return all;
}

TEST(NodeStatus, AHealthyNodeIsOkWithTrafficAsAShareOfLineRate) {
  auto b = Build(
      "rdma_port_data_transmitted_bytes_total{device=\"mlx5_0\",port=\"1\"} 1000\n"
      "rdma_port_data_received_bytes_total{device=\"mlx5_0\",port=\"1\"} 0\n",
      "rdma_port_data_transmitted_bytes_total{device=\"mlx5_0\",port=\"1\"} 25000001000\n"
      "rdma_port_data_received_bytes_total{device=\"mlx5_0\",port=\"1\"} 5000000000\n");
  const NodeHealth& h = b->health;
  EXPECT_EQ(h.level, Level::kOk);
  EXPECT_EQ(h.node, "gpu17");
  EXPECT_EQ(h.sequence, 7u);
  EXPECT_DOUBLE_EQ(h.window_seconds, 1);
  ASSERT_EQ(h.ports.size(), 3u);
  const auto& p = PortOf(h, "mlx5_0");
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.phys_state, "LinkUp");
  EXPECT_EQ(p.rate, "400 Gb/s 4X");
  EXPECT_EQ(p.expected_rate, "400 Gb/s 4X");
  ASSERT_TRUE(p.tx_utilisation);
  EXPECT_DOUBLE_EQ(*p.tx_utilisation, 0.5);
  EXPECT_DOUBLE_EQ(*p.rx_utilisation, 0.1);
  EXPECT_TRUE(p.findings.empty()) << Findings(p);
  // The doctor's snapshot checks ran on the same samples.
  ASSERT_FALSE(h.checks.empty());
  EXPECT_EQ(h.checks.front().name, "port_active");
  EXPECT_EQ(h.checks.front().status, doctor::Status::kPass);
}

TEST(NodeStatus, TheFirstPollHasNoRatesAndNoFindingsFromThem) {
  auto b = Build("", "rdma_port_symbol_errors_total{device=\"mlx5_1\",port=\"1\"} 99999\n",
                 /*with_before=*/false);
  EXPECT_DOUBLE_EQ(b->health.window_seconds, 0);
  const auto& p = PortOf(b->health, "mlx5_1");
  EXPECT_FALSE(p.tx_utilisation);
  EXPECT_TRUE(p.signals.empty());
  EXPECT_EQ(b->health.level, Level::kOk);
}

TEST(NodeStatus, APortDownIsCriticalOnAPhysicalFunctionAndAWarningOnAVf) {
  std::string down =
      "rdma_port_state{device=\"mlx5_0\",port=\"1\"} 1\n"
      "rdma_port_physical_state{device=\"mlx5_0\",port=\"1\"} 3\n"
      "rdma_port_state{device=\"mlx5_2\",port=\"1\"} 1\n"
      "rdma_port_physical_state{device=\"mlx5_2\",port=\"1\"} 3\n";
  // ParseText keeps the first sample of a series: the down states go first.
  auto b = std::make_unique<Built>();
  b->now = ParseText(down + Base());
  NodeHealthInput in;
  in.inventory = &b->inventory;
  in.now = &b->now;
  in.now_timestamp = in.wall_clock = 1000;
  NodeHealth h = BuildNodeHealth(in);
  EXPECT_EQ(PortOf(h, "mlx5_0").level, Level::kCritical);
  EXPECT_EQ(PortOf(h, "mlx5_0").findings.at(0), "DOWN/Disabled");
  EXPECT_EQ(PortOf(h, "mlx5_2").level, Level::kWarning);
  EXPECT_EQ(PortOf(h, "mlx5_1").level, Level::kOk);
  EXPECT_EQ(h.level, Level::kCritical);
}

TEST(NodeStatus, PfcPauseSentIsAWarningAboveThePartialStormShareAndCriticalAboveTheFullOne) {
  const PageThresholds& t = MixinThresholds();
  auto pause = [](double tx_seconds) {
    std::ostringstream s;
    s << "rdma_pfc_pause_duration_seconds_total{device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\","
         "direction=\"tx\",priority=\"3\"} "
      << tx_seconds << "\n";
    return s.str();
  };
  double between = (t.pfc_tx_pause_warn_ratio + t.pfc_tx_pause_crit_ratio) / 2;
  auto partial = Build(pause(10), pause(10 + between));
  EXPECT_EQ(PortOf(partial->health, "mlx5_0").level, Level::kWarning);
  EXPECT_NE(Findings(PortOf(partial->health, "mlx5_0")).find("sends PFC pause"), std::string::npos);
  auto full = Build(pause(10), pause(10 + (t.pfc_tx_pause_crit_ratio + 1) / 2));
  EXPECT_EQ(PortOf(full->health, "mlx5_0").level, Level::kCritical);
  ASSERT_TRUE(PortOf(full->health, "mlx5_0").tx_pause);
  auto quiet = Build(pause(10), pause(10 + t.pfc_tx_pause_warn_ratio / 2));
  EXPECT_EQ(PortOf(quiet->health, "mlx5_0").level, Level::kOk);
}

TEST(NodeStatus, TheNcclPriorityPausedByTheFabricIsAWarning) {
  auto rx = [](double seconds) {
    std::ostringstream s;
    s << "rdma_nccl_priority{device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\"} 3\n"
         "rdma_pfc_pause_duration_seconds_total{device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\","
         "direction=\"rx\",priority=\"3\"} "
      << seconds << "\n";
    return s.str();
  };
  auto b = Build(rx(0), rx(MixinThresholds().nccl_rx_pause_warn_ratio * 2));
  const auto& p = PortOf(b->health, "mlx5_0");
  EXPECT_EQ(p.nccl_priority, 3);
  EXPECT_EQ(p.level, Level::kWarning);
  EXPECT_NE(Findings(p).find("NCCL priority 3 paused"), std::string::npos) << Findings(p);
}

TEST(NodeStatus, SymbolErrorsAreABitErrorRateOfTheLineRate) {
  // 400 Gb/s: 5 errors in a second is a BER of 1.25e-11, above the drain level (1e-12).
  auto b = Build("rdma_port_symbol_errors_total{device=\"mlx5_1\",port=\"1\"} 100\n",
                 "rdma_port_symbol_errors_total{device=\"mlx5_1\",port=\"1\"} 105\n");
  const auto& p = PortOf(b->health, "mlx5_1");
  ASSERT_EQ(p.signals.size(), 1u) << "only the IB symbol errors were given";
  EXPECT_EQ(p.signals[0].name, "symbol_error");
  EXPECT_DOUBLE_EQ(p.signals[0].value, 5.0 / 400e9);
  EXPECT_DOUBLE_EQ(p.signals[0].events, 5);
  EXPECT_EQ(p.signals[0].level, Level::kCritical);
  EXPECT_EQ(p.level, Level::kCritical);
}

TEST(NodeStatus, OneRareErrorBetweenTwoPollsIsShownButColoursNothing) {
  // One symbol error in a second is a BER of 2.5e-12 (above the drain level), but the ticket
  // rule needs bitErrorsTicketMin errors: the healthy noise of a fabric never turns a port amber.
  auto b = Build(
      "rdma_port_symbol_errors_total{device=\"mlx5_1\",port=\"1\"} 100\n"
      "rdma_hw_packet_seq_err_total{device=\"mlx5_0\",port=\"1\"} 0\n",
      "rdma_port_symbol_errors_total{device=\"mlx5_1\",port=\"1\"} 101\n"
      "rdma_hw_packet_seq_err_total{device=\"mlx5_0\",port=\"1\"} 1\n");
  ASSERT_LT(1, MixinThresholds().min_events);
  const auto& ib = PortOf(b->health, "mlx5_1");
  ASSERT_EQ(ib.signals.size(), 1u);
  EXPECT_GT(ib.signals[0].value, MixinThresholds().bit_error_rate_crit);
  EXPECT_EQ(ib.signals[0].level, Level::kOk);
  EXPECT_EQ(PortOf(b->health, "mlx5_0").level, Level::kOk);
  EXPECT_EQ(b->health.level, Level::kOk);
}

TEST(NodeStatus, ACounterThatWentBackwardsGivesNoRate) {
  // A driver reload resets counters: no negative rate, no finding.
  auto b = Build("rdma_hw_out_of_buffer_total{device=\"mlx5_0\",port=\"1\"} 900000\n",
                 "rdma_hw_out_of_buffer_total{device=\"mlx5_0\",port=\"1\"} 3\n");
  const auto& p = PortOf(b->health, "mlx5_0");
  EXPECT_TRUE(p.signals.empty());
  EXPECT_EQ(p.level, Level::kOk);
}

TEST(NodeStatus, TransportRetriesExceededAreCriticalAndAckTimeoutsAWarning) {
  auto b = Build(
      "rdma_hw_req_transport_retries_exceeded_total{device=\"mlx5_0\",port=\"1\"} 0\n"
      "rdma_hw_local_ack_timeout_err_total{device=\"mlx5_1\",port=\"1\"} 0\n",
      "rdma_hw_req_transport_retries_exceeded_total{device=\"mlx5_0\",port=\"1\"} 1\n"
      "rdma_hw_local_ack_timeout_err_total{device=\"mlx5_1\",port=\"1\"} 20\n");
  EXPECT_EQ(PortOf(b->health, "mlx5_0").level, Level::kCritical);
  EXPECT_EQ(PortOf(b->health, "mlx5_1").level, Level::kWarning);
}

TEST(NodeStatus, AFailingRoceCheckAndADowntrainedRateAreWarnings) {
  std::string now =
      "rdma_roce_config_ok{device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\","
      "check=\"pfc_on_nccl_priority\"} 0\n"
      "rdma_roce_config_ok{device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\","
      "check=\"trust_dscp\"} 1\n";
  auto b = std::make_unique<Built>();
  // mlx5_2 (same HCA type and link layer as mlx5_0) trained to 200 Gb/s 2X.
  b->now = ParseText(
      "rdma_port_rate_bytes_per_second{device=\"mlx5_2\",port=\"1\"} 25000000000\n"
      "rdma_port_link_width_lanes{device=\"mlx5_2\",port=\"1\"} 2\n" +
      now + Base());
  NodeHealthInput in;
  in.inventory = &b->inventory;
  in.now = &b->now;
  in.now_timestamp = in.wall_clock = 1000;
  NodeHealth h = BuildNodeHealth(in);
  const auto& roce = PortOf(h, "mlx5_0");
  EXPECT_EQ(roce.level, Level::kWarning);
  ASSERT_EQ(roce.roce_checks.size(), 2u);
  EXPECT_EQ(roce.roce_checks[0], std::make_pair(std::string("pfc_on_nccl_priority"), false));
  EXPECT_NE(Findings(roce).find("RoCE check failing: pfc_on_nccl_priority"), std::string::npos);
  // Two Ethernet MT4129 ports, 400 and 200: a tie goes to the faster one.
  const auto& slow = PortOf(h, "mlx5_2");
  EXPECT_EQ(slow.rate, "200 Gb/s 2X");
  EXPECT_EQ(slow.expected_rate, "400 Gb/s 4X");
  EXPECT_EQ(slow.level, Level::kWarning);
}

TEST(NodeStatus, AStalePollMakesTheNodeCriticalUntilAFreshOne) {
  auto b = Build("", "");
  NodeHealth h = b->health;
  ASSERT_EQ(h.level, Level::kOk);
  const PageThresholds& t = MixinThresholds();
  SetPollAge(h, h.poll_timestamp + t.poll_stale_seconds + 1, t);
  EXPECT_TRUE(h.stale);
  EXPECT_EQ(h.level, Level::kCritical);
  SetPollAge(h, h.poll_timestamp + 1, t);
  EXPECT_FALSE(h.stale);
  EXPECT_EQ(h.level, Level::kOk);
}

TEST(NodeStatus, AFailingCollectorIsAWarningWithItsReadErrors) {
  auto b = Build("",
                 "rdma_exporter_collector_success{collector=\"ethtool\"} 0\n"
                 "rdma_exporter_collector_duration_seconds{collector=\"ethtool\"} 0.5\n"
                 "rdma_exporter_read_errors_total{collector=\"ethtool\",reason=\"EIO\"} 3\n"
                 "rdma_exporter_read_errors_total{collector=\"ethtool\",reason=\"malformed\"} 2\n");
  ASSERT_EQ(b->health.collectors.size(), 1u);
  EXPECT_FALSE(b->health.collectors[0].success);
  EXPECT_DOUBLE_EQ(b->health.collectors[0].read_errors, 5);
  EXPECT_EQ(b->health.level, Level::kWarning);
  EXPECT_EQ(b->health.findings.at(0), "collector ethtool failing");
}

TEST(NodeStatus, TheThresholdsAreTheMixinsGeneratedFile) {
  // dashboards/out/node-page-thresholds.json, which dashboards/generate.sh writes from
  // config.libsonnet: the page and the alert rules read one source.
  std::ifstream in(std::string(RDMA_TEST_FIXTURES) +
                   "/../../dashboards/out/node-page-thresholds.json");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  std::map<std::string, double> values;
  std::regex row("\"([A-Za-z]+)\": ([-0-9.e+]+)");
  std::string s = text.str();
  for (std::sregex_iterator it(s.begin(), s.end(), row), end; it != end; ++it)
    values[(*it)[1]] = std::stod((*it)[2]);
  const PageThresholds& t = MixinThresholds();
  EXPECT_EQ(values.size(), sizeof(PageThresholds) / sizeof(double));
  EXPECT_DOUBLE_EQ(values.at("pfcTxPauseCritRatio"), t.pfc_tx_pause_crit_ratio);
  EXPECT_DOUBLE_EQ(values.at("bitErrorRateCrit"), t.bit_error_rate_crit);
  EXPECT_DOUBLE_EQ(values.at("localAckTimeoutsPerSecond"), t.local_ack_timeouts_per_second);
  EXPECT_DOUBLE_EQ(values.at("pollStaleSeconds"), t.poll_stale_seconds);
}

TEST(NodeStatus, TheJsonNamesEveryPortWithItsLevel) {
  auto b = Build("", "rdma_port_state{device=\"mlx5_1\",port=\"1\"} 1\n");
  std::string json = NodeHealthJson(b->health);
  EXPECT_EQ(json.rfind("{\"node\":\"gpu17\",\"level\":\"ok\",\"sequence\":7,", 0), 0u) << json;
  EXPECT_NE(json.find("{\"device\":\"mlx5_0\",\"port\":1,\"netdev\":\"ens1f0np0\""),
            std::string::npos);
  EXPECT_NE(json.find("\"checks\":[\n{\"check\":\"port_active\",\"status\":\"PASS\""),
            std::string::npos);
  EXPECT_EQ(std::count(json.begin(), json.end(), '{'), std::count(json.begin(), json.end(), '}'));
}

TEST(NodePage, RendersLevelsAndEscapesWhatTheNodeNames) {
  auto b = Build("", "");
  NodeHealth h = b->health;
  h.node = "<script>alert(1)</script>";
  h.ports[0].netdev = "eth\"<b>";
  h.ports[0].level = Level::kCritical;
  h.ports[0].findings = {"DOWN/Disabled"};
  NodePageOptions options;
  options.refresh_seconds = 3;
  std::string page = RenderNodePage(&h, options);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("eth&quot;&lt;b&gt;"), std::string::npos);
  EXPECT_NE(page.find("<main id=\"status\" data-refresh=\"3\" data-sequence=\"7\""),
            std::string::npos);
  EXPECT_NE(page.find("<tr class=\"critical\" data-port=\"mlx5_0/1\""), std::string::npos);
  EXPECT_NE(page.find("<script src=\"/node-page.js\" defer></script>"), std::string::npos);
  // Small: a few tens of kB for a node.
  EXPECT_LT(page.size(), 40000u);
  EXPECT_NE(RenderNodePage(nullptr, options).find("Waiting for the first poll."),
            std::string::npos);
}

TEST(NodePage, ServedWithTheStatusJsonAndTheScriptFromTheLastSnapshots) {
  PollerConfig poller_config;
  poller_config.process_metrics = false;
  Poller poller(std::make_unique<SysfsReader>(testing::RxeCaptureSysfs()),
                std::move(poller_config));
  HttpConfig config;
  int port = testing::FreeLoopbackPort();
  config.civetweb_ports = "127.0.0.1:" + std::to_string(port);
  config.max_connections = 4;
  config.node_name = "capture-node";
  InitHttpLibrary(false);
  HttpServer server(config, poller);
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  auto early = testing::HttpGet(port, "/api/v1/status");
  EXPECT_EQ(early.status, 503);
  EXPECT_NE(testing::HttpGet(port, "/").body.find("Waiting for the first poll."),
            std::string::npos);
  poller.Collect();
  poller.Collect();
  auto status = testing::HttpGet(port, "/api/v1/status");
  EXPECT_EQ(status.status, 200);
  EXPECT_EQ(status.headers["content-type"], "application/json");
  EXPECT_NE(status.body.find("\"node\":\"capture-node\""), std::string::npos) << status.body;
  EXPECT_NE(status.body.find("\"sequence\":2,"), std::string::npos) << status.body;
  EXPECT_NE(status.body.find("\"device\":\"rxe0\""), std::string::npos) << status.body;
  EXPECT_EQ(status.body.find("\"window_seconds\":0,"), std::string::npos) << "two polls: rates";
  auto page = testing::HttpGet(port, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.headers["content-security-policy"].find("script-src 'self'"), std::string::npos);
  EXPECT_NE(page.body.find("data-port=\"rxe0/1\""), std::string::npos);
  auto script = testing::HttpGet(port, "/node-page.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_EQ(script.headers["content-type"], "text/javascript; charset=utf-8");
  EXPECT_NE(script.body.find("replaceWith"), std::string::npos);
  server.Stop();
}

}  // namespace
}  // namespace rdma_exporter
