#include "exporter/flags.h"
#include "rdma_exporter/parse.h"

#include <gtest/gtest.h>

#include "rdma_exporter/collector.h"

namespace rdma_exporter {
namespace {

bool Parse(std::vector<std::string> args, Options* options, std::string* error) {
  return ParseFlags(args, options, error);
}

TEST(Flags, DefaultsMatchTheDocumentation) {
  Options o;
  std::string error;
  ASSERT_TRUE(Parse({}, &o, &error));
  EXPECT_EQ(o.listen_address, ":9879");
  EXPECT_EQ(o.telemetry_path, "/metrics");
  EXPECT_EQ(o.sysfs_root, "/sys");
  EXPECT_EQ(o.poll_interval.count(), 10000);
  EXPECT_EQ(o.slow_poll_interval.count(), 60000);
  EXPECT_EQ(o.collector_options.hw_counters_source, HwCounterSource::kAuto);
  EXPECT_EQ(o.log_level, "info");
  EXPECT_EQ(o.log_format, LogFormat::kLogfmt);
}

TEST(Flags, AcceptsEqualsAndSeparateValues) {
  Options o;
  std::string error;
  ASSERT_TRUE(Parse({"--web.listen-address=127.0.0.1:1234", "--path.sysfs", "/tmp/x",
                     "--poll-interval=0", "--log.format=json", "--log.level", "debug",
                     "--device-exclude=mlx5_[4-7]", "--no-collector.gid", "--collector.pcie"},
                    &o, &error))
      << error;
  EXPECT_EQ(o.listen_address, "127.0.0.1:1234");
  EXPECT_EQ(o.sysfs_root, "/tmp/x");
  EXPECT_EQ(o.poll_interval.count(), 0);
  EXPECT_EQ(o.log_format, LogFormat::kJson);
  EXPECT_EQ(o.log_level, "debug");
  EXPECT_EQ(o.device_exclude, "mlx5_[4-7]");
  EXPECT_FALSE(o.collector_overrides.at("gid"));
  EXPECT_TRUE(o.collector_overrides.at("pcie"));
}

TEST(Flags, AcceptsRoceAndFixtureFlags) {
  Options o;
  std::string error;
  ASSERT_TRUE(Parse({"--nccl.ib-tc=106", "--roce.min-mtu", "9000", "--path.fixtures=/tmp/f",
                     "--collector.ethtool.metrics-include=rx_.*"},
                    &o, &error))
      << error;
  EXPECT_EQ(o.collector_options.nccl_ib_tc, 106);
  EXPECT_EQ(o.collector_options.roce_min_mtu, 9000u);
  EXPECT_EQ(o.fixtures_dir, "/tmp/f");
  ASSERT_TRUE(o.collector_options.ethtool_metrics_include);
  EXPECT_TRUE(std::regex_match("rx_bytes", *o.collector_options.ethtool_metrics_include));
}

TEST(Flags, AcceptsPollTierAndHwCounterSourceFlags) {
  Options o;
  std::string error;
  ASSERT_TRUE(
      Parse({"--poll-interval.slow=5m", "--collector.hw_counters.source", "netlink"}, &o, &error))
      << error;
  EXPECT_EQ(o.slow_poll_interval.count(), 300000);
  EXPECT_EQ(o.collector_options.hw_counters_source, HwCounterSource::kNetlink);
  ASSERT_TRUE(Parse({"--poll-interval.slow=0", "--collector.hw_counters.source=sysfs"}, &o, &error))
      << error;
  EXPECT_EQ(o.slow_poll_interval.count(), 0);
  EXPECT_EQ(o.collector_options.hw_counters_source, HwCounterSource::kSysfs);
}

TEST(Flags, RejectsWrongFlagsAndValuesWithOneLine) {
  const std::vector<std::vector<std::string>> bad = {
      {"--bogus"},
      {"--collector.nosuch"},
      {"--poll-interval=ten"},
      {"--poll-interval=10ms"},
      {"--log.level=loud"},
      {"--log.format=xml"},
      {"--device-include=mlx5_("},
      {"--web.listen-address=nohost"},
      {"--web.listen-address=:99999"},
      {"--web.listen-address=[::]:9879"},
      {"--web.listen-address=300.1.1.1:80"},
      {"--web.telemetry-path=metrics"},
      {"--path.sysfs"},
      {"positional"},
      {"--version=maybe"},
      {"--nccl.ib-tc=256"},
      {"--nccl.ib-tc=-1"},
      {"--roce.min-mtu=big"},
      {"--collector.ethtool.metrics-include=("},
      {"--collector.ethtool.bogus=1"},
      {"--poll-interval.slow=soon"},
      {"--collector.hw_counters.source=mad"},
  };
  for (const auto& args : bad) {
    Options o;
    std::string error;
    EXPECT_FALSE(Parse(args, &o, &error)) << args[0];
    EXPECT_FALSE(error.empty()) << args[0];
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(Duration, ParsesGoStyleDurations) {
  EXPECT_EQ(ParseDuration("10s")->count(), 10000);
  EXPECT_EQ(ParseDuration("500ms")->count(), 500);
  EXPECT_EQ(ParseDuration("1m30s")->count(), 90000);
  EXPECT_EQ(ParseDuration("0")->count(), 0);
  EXPECT_EQ(ParseDuration("1.5s")->count(), 1500);
  EXPECT_FALSE(ParseDuration("10"));
  EXPECT_FALSE(ParseDuration("s"));
  EXPECT_FALSE(ParseDuration("-1s"));
}

TEST(ListenAddress, TranslatesToCivetwebPorts) {
  std::string ports, error;
  ASSERT_TRUE(ListenAddressToCivetweb(":9879", &ports, &error));
  EXPECT_EQ(ports, "9879");
  ASSERT_TRUE(ListenAddressToCivetweb("127.0.0.1:9100", &ports, &error));
  EXPECT_EQ(ports, "127.0.0.1:9100");
  ASSERT_TRUE(ListenAddressToCivetweb("localhost:9100", &ports, &error));
  EXPECT_EQ(ports, "127.0.0.1:9100");
}

TEST(Usage, ListsEveryCollectorFlag) {
  std::string usage = UsageText();
  for (const auto& f : CollectorRegistry()) {
    EXPECT_NE(usage.find("--collector." + std::string(f.name)), std::string::npos) << f.name;
  }
  EXPECT_NE(usage.find("--web.listen-address"), std::string::npos);
  EXPECT_NE(usage.find("--device-exclude"), std::string::npos);
}

}  // namespace
}  // namespace rdma_exporter
