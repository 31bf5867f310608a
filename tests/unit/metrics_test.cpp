#include "rdma_exporter/metrics.h"

#include <gtest/gtest.h>

#include "rdma_exporter/logging.h"

namespace rdma_exporter {
namespace {

TEST(MetricSink, GroupsSamplesByFamilyAndSortsFamilies) {
  MetricSink sink;
  sink.Counter("rdma_b_total", "b", {{"device", "mlx5_0"}}, 1);
  sink.Gauge("rdma_a", "a", {}, 2);
  sink.Counter("rdma_b_total", "b", {{"device", "mlx5_1"}}, 3);
  EXPECT_EQ(sink.sample_count(), 3u);
  auto families = sink.Take();
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "rdma_a");
  EXPECT_EQ(families[1].name, "rdma_b_total");
  EXPECT_EQ(families[1].metric.size(), 2u);
  EXPECT_EQ(sink.sample_count(), 0u);
  EXPECT_TRUE(sink.Take().empty());
}

TEST(RenderText, ProducesPrometheusTextFormat) {
  MetricSink sink;
  sink.Counter("rdma_port_data_received_bytes_total", "Data octets received.",
               {{"device", "mlx5_0"}, {"port", "1"}}, 400);
  sink.Gauge("rdma_gid_info", "A GID.", {{"gid_type", "RoCE v2"}, {"netdev", "a\"b"}}, 1);
  std::string text = RenderText(sink.Take());
  EXPECT_NE(text.find("# HELP rdma_port_data_received_bytes_total Data octets received.\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE rdma_port_data_received_bytes_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("rdma_port_data_received_bytes_total{device=\"mlx5_0\",port=\"1\"} 400\n"),
            std::string::npos);
  EXPECT_NE(text.find("netdev=\"a\\\"b\""), std::string::npos) << text;
}

TEST(SanitizeMetricName, MakesValidLowerCaseNames) {
  EXPECT_EQ(SanitizeMetricName("VL15_dropped"), "vl15_dropped");
  EXPECT_EQ(SanitizeMetricName("rx-prio3.pause"), "rx_prio3_pause");
  EXPECT_EQ(SanitizeMetricName("__a__b__"), "a_b");
  EXPECT_EQ(SanitizeMetricName("5g"), "x5g");
  EXPECT_EQ(SanitizeMetricName(""), "x");
}

TEST(GenericMetricName, AvoidsTypeWordsPromtoolRejects) {
  EXPECT_EQ(GenericMetricName("rdma_hw_", "new_fancy_counter", "_total"),
            "rdma_hw_new_fancy_counters_total");
  EXPECT_EQ(GenericMetricName("rdma_hw_", "counter_x", "_total"), "rdma_hw_counters_x_total");
  EXPECT_EQ(GenericMetricName("rdma_hw_", "gauge", ""), "rdma_hw_gauges");
  EXPECT_EQ(GenericMetricName("rdma_hw_", "counters_lifespan", ""), "rdma_hw_counters_lifespan");
  EXPECT_EQ(GenericMetricName("rdma_port_", "Weird-Name", "_total"), "rdma_port_weird_name_total");
}

TEST(Logging, FormatsLogfmtAndJsonWithEscaping) {
  EXPECT_EQ(
      FormatLogLine(LogFormat::kLogfmt, "warn", "read failed", {{"path", "a b"}, {"reason", "io"}}),
      "level=warn msg=\"read failed\" path=\"a b\" reason=io");
  EXPECT_EQ(FormatLogLine(LogFormat::kJson, "info", "say \"hi\"\n", {{"k", "v"}}),
            "{\"level\":\"info\",\"msg\":\"say \\\"hi\\\"\\n\",\"k\":\"v\"}");
}

}  // namespace
}  // namespace rdma_exporter
