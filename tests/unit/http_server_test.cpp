// The HTTP layer in-process: the landing page's reading of a snapshot and the exception barrier
// at CivetWeb's C callback. Listens on 127.0.0.1 (a free port).
#include "rdma_exporter/http_server.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "process.h"
#include "rdma_exporter/metric_names.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

prometheus::ClientMetric PortSample(const std::string& device, const std::string& port,
                                    double value) {
  prometheus::ClientMetric m;
  m.label = {{"device", device}, {"port", port}};
  m.gauge.value = value;
  return m;
}

std::unique_ptr<Snapshot> SnapshotWithPortStates(std::vector<prometheus::ClientMetric> samples) {
  prometheus::MetricFamily state;
  state.name = std::string(metric::kPortState);
  state.type = prometheus::MetricType::Gauge;
  state.metric = std::move(samples);
  auto snapshot = std::make_unique<Snapshot>();
  snapshot->text = RenderText(std::vector<prometheus::MetricFamily>{state});
  return snapshot;
}

TEST(LandingPage, PortLabelsThatAreNotPortNumbersAreSkippedNotThrown) {
  // std::stoi threw std::invalid_argument / std::out_of_range for these, inside CivetWeb's C
  // callback.
  auto snapshot =
      SnapshotWithPortStates({PortSample("mlx5_0", "1", 4), PortSample("mlx5_0", "99999999999", 4),
                              PortSample("mlx5_0", "x", 4)});
  std::string page;
  ASSERT_NO_THROW(page = RenderLandingPage(snapshot.get(), "/metrics"));
  EXPECT_NE(page.find("<td>mlx5_0</td><td>1</td>"), std::string::npos);
  EXPECT_EQ(page.find("99999999999"), std::string::npos);
}

TEST(LandingPage, StateValuesOutsideTheTableShowAsUnknown) {
  // 4294967295 (a state file reading "4294967295: X") was cast to int: undefined behaviour.
  auto snapshot =
      SnapshotWithPortStates({PortSample("mlx5_0", "1", 4294967295.0),
                              PortSample("mlx5_1", "1", -1), PortSample("mlx5_2", "1", 4)});
  std::string page = RenderLandingPage(snapshot.get(), "/metrics");
  EXPECT_NE(page.find("<td class=\"down\">UNKNOWN</td>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td class=\"up\">ACTIVE</td>"), std::string::npos) << page;
}

TEST(HttpServer, AnExceptionInAHandlerIsA500AndTheServerKeepsServing) {
  // Without the barrier the exception unwinds through CivetWeb's C frames: std::terminate.
  PollerConfig poller_config;
  poller_config.process_metrics = false;
  Poller poller(std::make_unique<SysfsReader>(testing::RxeCaptureSysfs()),
                std::move(poller_config));
  poller.Collect();
  HttpConfig config;
  int port = testing::FreeLoopbackPort();
  config.civetweb_ports = "127.0.0.1:" + std::to_string(port);
  config.max_connections = 4;
  config.on_request_for_testing = [](std::string_view path) {
    if (path == "/throw") throw std::runtime_error("handler bug");
    if (path == "/throw-int") throw 42;
  };
  InitHttpLibrary();
  HttpServer server(config, poller);
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  EXPECT_EQ(testing::HttpGet(port, "/throw").status, 500);
  EXPECT_EQ(testing::HttpGet(port, "/throw-int").status, 500);
  auto metrics = testing::HttpGet(port, "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("rdma_exporter_devices"), std::string::npos);
  server.Stop();
}

}  // namespace
}  // namespace rdma_exporter
