#include "rdma_exporter/metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <sstream>

#include "rdma_exporter/logging.h"

// Sanitizer runtimes (clang's TSan and ASan link their own operator new/delete statically) own the
// global allocator, so a replacement here would be a duplicate definition; the allocation count is
// taken in the plain build, which CI runs first.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RDMA_SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define RDMA_SANITIZER_BUILD 1
#endif
#endif

// Counts heap allocations while allocations_counted is set (MetricSink's steady state must make
// none per sample). Replacing the global operator new/delete pair is the standard hook.
static std::atomic<bool> allocations_counted{false};
static std::atomic<size_t> allocations{0};
#ifndef RDMA_SANITIZER_BUILD
void* operator new(size_t size) {
  if (allocations_counted) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// GCC pairs the inlined replacement new with these and reports malloc/free as a mismatch.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop
#endif

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

// The families the exporter writes: counters, gauges, untyped; labels with characters to escape.
std::vector<prometheus::MetricFamily> SampleFamilies() {
  MetricSink sink;
  for (int port = 1; port <= 3; ++port) {
    Labels labels = {{"device", "mlx5_0"}, {"port", std::to_string(port)}};
    sink.Counter("rdma_port_data_received_bytes_total", "Data octets received.", labels,
                 400.0 * port);
    sink.Gauge("rdma_port_state", "State.", labels, 4);
  }
  sink.Gauge("rdma_gid_info", "A GID.", {{"gid", "fe80::1"}, {"netdev", "a\"b\\c"}}, 1);
  sink.Untyped("rdma_ethtool_rx_x", "", {{"device", "mlx5_0"}}, 12345678901234.0);
  sink.Gauge("rdma_exporter_devices", "Devices.", {}, 2);
  sink.Gauge("rdma_ratio", "A ratio.", {{"device", "d"}}, 0.5);
  return sink.Take();
}

TEST(RenderText, WritesWhatPrometheusCppsSerializerWrites) {
  // The sink's own writer replaced prometheus-cpp's TextSerializer on the poll path; for the
  // values both write alike (integers, short fractions) the text must be byte for byte the same.
  auto families = SampleFamilies();
  std::ostringstream reference;
  prometheus::TextSerializer().Serialize(reference, families);
  EXPECT_EQ(RenderText(families), reference.str());
}

TEST(RenderText, ValuesAreIntegersOrTheShortestRoundTrip) {
  auto text = [](double v) {
    std::string out;
    AppendValue(&out, v);
    return out;
  };
  EXPECT_EQ(text(0), "0");
  EXPECT_EQ(text(1000000), "1000000");
  EXPECT_EQ(text(18446744073709551615.0), "18446744073709551616");  // 2^64, shorter than 1.8e+19
  EXPECT_EQ(text(1.5e300), "1.5e+300");
  EXPECT_EQ(text(9007199254740993.0), "9007199254740992");  // 2^53 + 1 is not a double
  EXPECT_EQ(text(0.1 + 0.2), "0.30000000000000004");        // %.16g wrote "0.3": another double
  EXPECT_EQ(text(-0.25), "-0.25");
  EXPECT_EQ(text(1e-7), "1e-07");
  EXPECT_EQ(text(std::nan("")), "Nan");
  EXPECT_EQ(text(HUGE_VAL), "+Inf");
  EXPECT_EQ(text(-HUGE_VAL), "-Inf");
}

TEST(ParseText, ReadsBackWhatRenderTextWrote) {
  MetricSink sink;
  sink.Gauge("rdma_a", "Help with \\ and\nnewline.", {{"v", "q\"b\\s\nn"}, {"w", ""}}, 0.1 + 0.2);
  sink.Counter("rdma_b_total", "", {}, 18446744073709551615.0);
  sink.Gauge("rdma_c", "c", {{"x", "1"}}, -HUGE_VAL);
  sink.Untyped("rdma_d", "d", {{"x", "1"}}, std::nan(""));
  auto families = ParseText(RenderText(sink));
  ASSERT_EQ(families.size(), 4u);
  EXPECT_EQ(families[0].name, "rdma_a");
  EXPECT_EQ(families[0].help, "Help with \\ and\nnewline.");
  EXPECT_EQ(families[0].type, prometheus::MetricType::Gauge);
  ASSERT_EQ(families[0].metric.size(), 1u);
  ASSERT_EQ(families[0].metric[0].label.size(), 2u);
  EXPECT_EQ(families[0].metric[0].label[0].value, "q\"b\\s\nn");
  EXPECT_EQ(families[0].metric[0].label[1].value, "");
  EXPECT_EQ(families[0].metric[0].gauge.value, 0.1 + 0.2);  // exactly: shortest round trip
  EXPECT_EQ(families[1].type, prometheus::MetricType::Counter);
  EXPECT_EQ(families[1].metric[0].counter.value, 18446744073709551615.0);
  EXPECT_EQ(families[2].metric[0].gauge.value, -HUGE_VAL);
  EXPECT_EQ(families[3].type, prometheus::MetricType::Untyped);
  EXPECT_TRUE(std::isnan(families[3].metric[0].untyped.value));
  // And the model renders to the same text again.
  EXPECT_EQ(RenderText(families), RenderText(ParseText(RenderText(families))));
}

TEST(MetricSink, KeepsSeriesAcrossPollsAndDropsTheOnesAPollDidNotAdd) {
  MetricSink sink;
  sink.Gauge("rdma_x", "x", {{"port", "1"}}, 1);
  sink.Gauge("rdma_x", "x", {{"port", "2"}}, 2);
  EXPECT_EQ(RenderText(sink),
            "# HELP rdma_x x\n# TYPE rdma_x gauge\nrdma_x{port=\"1\"} 1\n"
            "rdma_x{port=\"2\"} 2\n");
  sink.Clear();
  // Port 1 vanished, port 3 appeared, and the order changed: the text follows this poll only.
  sink.Gauge("rdma_x", "x", {{"port", "3"}}, 3);
  sink.Gauge("rdma_x", "x", {{"port", "2"}}, 5);
  EXPECT_EQ(RenderText(sink),
            "# HELP rdma_x x\n# TYPE rdma_x gauge\nrdma_x{port=\"3\"} 3\n"
            "rdma_x{port=\"2\"} 5\n");
  sink.Clear();
  EXPECT_EQ(RenderText(sink), "");
  EXPECT_TRUE(sink.Take().empty());
}

TEST(RenderText, MergesAFamilyThatSeveralSinksHoldInSinkOrder) {
  MetricSink first, second;
  second.Gauge("rdma_b", "b", {{"k", "2"}}, 2);
  second.Gauge("rdma_a", "a", {}, 1);
  first.Gauge("rdma_b", "b", {{"k", "1"}}, 1);
  const MetricSink* sinks[] = {&first, &second};
  EXPECT_EQ(RenderText(sinks),
            "# HELP rdma_a a\n# TYPE rdma_a gauge\nrdma_a 1\n"
            "# HELP rdma_b b\n# TYPE rdma_b gauge\nrdma_b{k=\"1\"} 1\nrdma_b{k=\"2\"} 2\n");
}

TEST(MetricSink, ASteadyStatePollAllocatesNothingPerSample) {
  // Labels built once, as a collector's per-port labels are; the sink has seen the series.
  std::vector<Labels> ports;
  for (int port = 0; port < 64; ++port)
    ports.push_back({{"device", "mlx5_" + std::to_string(port)}, {"port", "1"}});
  MetricSink sink;
  auto poll = [&](double v) {
    for (const auto& labels : ports) {
      sink.Counter("rdma_port_packets_received_total", "Packets.", labels, v);
      sink.Gauge("rdma_port_state", "State.", labels, 4);
    }
  };
  poll(1);
  sink.Clear();
  poll(2);
  sink.Clear();
#ifdef RDMA_SANITIZER_BUILD
  GTEST_SKIP() << "the sanitizer runtime owns operator new; allocations are counted in the plain "
                  "build";
#endif
  allocations = 0;
  allocations_counted = true;
  poll(3);
  allocations_counted = false;
  EXPECT_EQ(allocations.load(), 0u) << "allocations for " << 2 * ports.size() << " samples";
  EXPECT_NE(RenderText(sink).find("rdma_port_state{device=\"mlx5_63\",port=\"1\"} 4\n"),
            std::string::npos);
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
