// The ethtool readers and EthtoolCollector: `ethtool -S` fixture parsing
// (tests/fixtures/ethtool), the mlx5 family mapping on the mlx5-roce tree, and the ioctl
// reader's string-set change handling against a simulated driver (reference §3.3).
#include <gtest/gtest.h>
#include <linux/ethtool.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "collectors/ethtool.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/error_tracker.h"
#include "rdma_exporter/inventory.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/metrics.h"
#include "test_util.h"

namespace rdma_exporter {
// Defined in exporter/ethtool_reader.cpp: the ioctl reader over a simulated SIOCETHTOOL.
using EthtoolIoctlFn = std::function<int(const std::string& netdev, void* buffer)>;
std::unique_ptr<EthtoolReader> MakeEthtoolIoctlReaderForTest(EthtoolIoctlFn ioctl_fn);
}  // namespace rdma_exporter

namespace rdma_exporter::testing {
namespace {

namespace fs = std::filesystem;
using Families = std::vector<prometheus::MetricFamily>;
using LabelMap = std::map<std::string, std::string>;

std::string EthtoolFixtures() {
  return FixturePath("ethtool");
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Forwards to a reader the test keeps (KernelReaders owns its readers) and records the netdevs
// asked for.
class Recording : public EthtoolReader {
 public:
  Recording(EthtoolReader& inner, std::vector<std::string>* calls) : inner_(inner), calls_(calls) {}
  int ReadStats(const std::string& netdev, EthtoolStats* out) override {
    calls_->push_back(netdev);
    return inner_.ReadStats(netdev, out);
  }

 private:
  EthtoolReader& inner_;
  std::vector<std::string>* calls_;
};

struct Poll {
  Families families;
  size_t failures = 0;
  std::map<std::pair<std::string, std::string>, uint64_t> errors;
  std::vector<std::string> reads;  // netdevs read
};

// One collection of `collector` over the sysfs tree `root` with `ethtool` as the kernel reader.
Poll Collect(EthtoolCollector& collector, const std::string& root, EthtoolReader& ethtool) {
  SysfsReader sysfs(root);
  std::vector<DiscoveryError> discovery_errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &discovery_errors);
  Poll poll;
  KernelReaders kernel;
  kernel.ethtool = std::make_unique<Recording>(ethtool, &poll.reads);
  ErrorTracker errors;
  CollectContext ctx(sysfs, errors, collector.name(), &kernel);
  MetricSink sink;
  EXPECT_TRUE(collector.Collect(inventory, ctx, sink));
  poll.families = sink.Take();
  poll.failures = ctx.failures();
  poll.errors = errors.Totals();
  return poll;
}

Poll CollectRoce(EthtoolCollector& collector, const std::string& ethtool_dir = EthtoolFixtures()) {
  auto reader = MakeEthtoolFixtureReader(ethtool_dir);
  return Collect(collector, FixturePath("mlx5-roce"), *reader);
}

CollectorOptions Include(const std::string& pattern) {
  CollectorOptions options;
  options.ethtool_metrics_include.emplace(pattern);
  return options;
}

LabelMap Pf(LabelMap extra = {}) {
  LabelMap labels = {{"device", "mlx5_0"}, {"port", "1"}, {"netdev", "ens1f0np0"}};
  labels.insert(extra.begin(), extra.end());
  return labels;
}

const prometheus::MetricFamily* Find(const Families& families, const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Label values of `label` across the samples of a family.
std::vector<std::string> LabelValues(const Families& families, const std::string& name,
                                     const std::string& label) {
  std::vector<std::string> values;
  const auto* family = Find(families, name);
  if (family == nullptr) return values;
  for (const auto& m : family->metric) {
    for (const auto& l : m.label) {
      if (l.name == label) values.push_back(l.value);
    }
  }
  return values;
}

void ExpectPromtoolClean(const Families& families) {
  TempDir tmp;
  std::string file = tmp.path() + "/metrics.prom";
  std::ofstream(file) << RenderText(families);
  std::string command = "promtool check metrics < '" + file + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0)
    output.append(buf, n);
  int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "promtool check metrics:\n"
                                                             << output;
}

// ---------------------------------------------------------------------------------------------
// Fixture reader

TEST(EthtoolFixtureReader, ParsesPfcCaptureInDriverOrder) {
  auto reader = MakeEthtoolFixtureReader(EthtoolFixtures());
  EthtoolStats stats;
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  ASSERT_EQ(stats.names.size(), stats.values.size());
  EXPECT_EQ(stats.names.size(), 334u);  // 335 lines minus "NIC statistics:"
  EXPECT_EQ(stats.names.front(), "rx_packets");
  EXPECT_EQ(stats.values.front(), 48213377u);
  EXPECT_EQ(stats.names.back(), "rx_prio7_marked");
  std::map<std::string, uint64_t> by_name;
  for (size_t i = 0; i < stats.names.size(); ++i)
    by_name[stats.names[i]] = stats.values[i];
  EXPECT_EQ(by_name.size(), stats.names.size());  // no duplicates
  EXPECT_EQ(by_name["rx_prio3_pause_duration"], 2750000u);
  EXPECT_EQ(by_name["rx_out_of_buffer"], 4294967000u);
  EXPECT_EQ(by_name["rx_prio3_bytes"], 987654321098u);
  // PFC on priority 3 only: 5 pause names, none for other priorities, no global pause.
  size_t pause_names = 0;
  for (const auto& name : stats.names) {
    if (std::regex_match(name, std::regex("(rx|tx)_prio[0-7]_pause.*"))) {
      ++pause_names;
      EXPECT_NE(name.find("prio3"), std::string::npos) << name;
    }
    EXPECT_EQ(name.find("global"), std::string::npos) << name;
  }
  EXPECT_EQ(pause_names, 5u);
}

TEST(EthtoolFixtureReader, GlobalPauseCaptureHasGlobalNamesAndNoPfc) {
  auto reader = MakeEthtoolFixtureReader(EthtoolFixtures());
  EthtoolStats stats;
  ASSERT_EQ(reader->ReadStats("ens3f0np0", &stats), 0);
  size_t global = 0;
  for (const auto& name : stats.names) {
    if (name.find("_global_pause") != std::string::npos) ++global;
    EXPECT_FALSE(std::regex_match(name, std::regex(".*_prio[0-7]_pause.*"))) << name;
  }
  EXPECT_EQ(global, 5u);
}

TEST(EthtoolFixtureReader, MissingCaptureIsEnodev) {
  auto reader = MakeEthtoolFixtureReader(EthtoolFixtures());
  EthtoolStats stats;
  stats.names = {"stale"};
  stats.values = {1};
  EXPECT_EQ(reader->ReadStats("ens9f9np9", &stats), ENODEV);
  EXPECT_TRUE(stats.names.empty());
  EXPECT_EQ(reader->ReadStats("", &stats), ENODEV);
  EXPECT_EQ(reader->ReadStats("../ethtool/ens1f0np0", &stats), ENODEV);
  EXPECT_EQ(MakeEthtoolFixtureReader("/nonexistent-dir")->ReadStats("eth0", &stats), ENODEV);
}

TEST(EthtoolFixtureReader, BadLinesAreSkipped) {
  TempDir dir;
  dir.Write("eth0",
            "NIC statistics:\n"
            "     rx_packets: 12\n"
            "     garbage line\n"
            "     rx_bytes: -5\n"
            "     tx_bytes: 12abc\n"
            "     : 7\n"
            "     tx_dropped:\n"
            "     rx_queue_0_packets: 18446744073709551615\n"
            "     huge: 18446744073709551616\n"
            "\tweird name with spaces: 3\r\n"
            "     tx_packets: 9");  // no trailing newline
  auto reader = MakeEthtoolFixtureReader(dir.path());
  EthtoolStats stats;
  ASSERT_EQ(reader->ReadStats("eth0", &stats), 0);
  EXPECT_EQ(stats.names, (std::vector<std::string>{"rx_packets", "rx_queue_0_packets",
                                                   "weird name with spaces", "tx_packets"}));
  EXPECT_EQ(stats.values, (std::vector<uint64_t>{12, UINT64_MAX, 3, 9}));
}

TEST(EthtoolFixtureReader, CaptureWithoutStatsIsEopnotsupp) {
  TempDir dir;
  dir.Write("lo", "no stats available\n");
  dir.Write("empty", "");
  auto reader = MakeEthtoolFixtureReader(dir.path());
  EthtoolStats stats;
  EXPECT_EQ(reader->ReadStats("lo", &stats), EOPNOTSUPP);
  EXPECT_EQ(reader->ReadStats("empty", &stats), EOPNOTSUPP);
}

// ---------------------------------------------------------------------------------------------
// Collector on the mlx5-roce tree + tests/fixtures/ethtool

TEST(EthtoolCollector, RegisteredDefaultOnAndConstructedFromOptions) {
  bool found = false;
  for (const auto& factory : CollectorRegistry()) {
    if (factory.name != "ethtool") continue;
    found = true;
    EXPECT_TRUE(factory.enabled_by_default);
  }
  EXPECT_TRUE(found);
}

TEST(EthtoolCollector, WithoutKernelReadersEmitsNothing) {
  SysfsReader sysfs(FixturePath("mlx5-roce"));
  std::vector<DiscoveryError> discovery_errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &discovery_errors);
  ErrorTracker errors;
  CollectContext ctx(sysfs, errors, "ethtool");
  MetricSink sink;
  EthtoolCollector collector;
  EXPECT_TRUE(collector.Collect(inventory, ctx, sink));
  EXPECT_TRUE(sink.Take().empty());
  EXPECT_EQ(ctx.failures(), 0u);
}

TEST(EthtoolCollector, PfcPriority3PauseFramesDurationsAndTransitions) {
  EthtoolCollector collector;
  auto p = CollectRoce(collector);
  const std::string frames = "rdma_pfc_pause_frames_total";
  EXPECT_EQ(Value(p.families, frames, Pf({{"direction", "rx"}, {"priority", "3"}})), 18224);
  EXPECT_EQ(Value(p.families, frames, Pf({{"direction", "tx"}, {"priority", "3"}})), 90311);
  // Only priority 3 has PFC enabled: no series for any other priority.
  EXPECT_EQ(Count(p.families, frames), 2u);
  for (const auto& prio : LabelValues(p.families, frames, "priority"))
    EXPECT_EQ(prio, "3");

  const std::string duration = "rdma_pfc_pause_duration_seconds_total";
  auto rx = Value(p.families, duration, Pf({{"direction", "rx"}, {"priority", "3"}}));
  auto tx = Value(p.families, duration, Pf({{"direction", "tx"}, {"priority", "3"}}));
  ASSERT_TRUE(rx && tx);
  EXPECT_DOUBLE_EQ(*rx, 2.75);   // 2750000 us
  EXPECT_DOUBLE_EQ(*tx, 6.125);  // 6125000 us
  EXPECT_EQ(Count(p.families, duration), 2u);

  EXPECT_EQ(Value(p.families, "rdma_pfc_pause_transitions_total", Pf({{"priority", "3"}})), 9112);
  EXPECT_EQ(Count(p.families, "rdma_pfc_pause_transitions_total"), 1u);
  EXPECT_EQ(LabelValues(p.families, "rdma_pfc_pause_transitions_total", "direction").size(), 0u);

  EXPECT_EQ(Value(p.families, "rdma_pfc_storm_events_total", Pf({{"level", "warning"}})), 3);
  EXPECT_EQ(Value(p.families, "rdma_pfc_storm_events_total", Pf({{"level", "error"}})), 1);
  // Global pause is off in this capture.
  EXPECT_EQ(Find(p.families, "rdma_global_pause_frames_total"), nullptr);
  EXPECT_EQ(Find(p.families, "rdma_global_pause_duration_seconds_total"), nullptr);
  EXPECT_EQ(Find(p.families, "rdma_global_pause_transitions_total"), nullptr);
}

TEST(EthtoolCollector, PriorityTrafficDiscardsAndEcnMarksForPrioritiesInUse) {
  EthtoolCollector collector;
  auto p = CollectRoce(collector);
  // The capture carries traffic on priorities 0, 3 (PFC) and 6; 1, 2, 4, 5, 7 are all zero and
  // are left out to bound cardinality.
  EXPECT_EQ(Count(p.families, "rdma_priority_bytes_total"), 6u);  // 3 prios x rx/tx
  EXPECT_EQ(Count(p.families, "rdma_priority_packets_total"), 6u);
  EXPECT_EQ(Count(p.families, "rdma_priority_discards_total"), 9u);  // 3 prios x 3 reasons
  EXPECT_EQ(Count(p.families, "rdma_priority_ecn_marked_packets_total"), 3u);
  EXPECT_EQ(Value(p.families, "rdma_priority_bytes_total", Pf({{"priority", "1"}})), std::nullopt);
  EXPECT_EQ(
      Value(p.families, "rdma_priority_bytes_total", Pf({{"direction", "rx"}, {"priority", "3"}})),
      987654321098.0);
  EXPECT_EQ(
      Value(p.families, "rdma_priority_bytes_total", Pf({{"direction", "tx"}, {"priority", "3"}})),
      876543210987.0);
  EXPECT_EQ(Value(p.families, "rdma_priority_packets_total",
                  Pf({{"direction", "rx"}, {"priority", "0"}})),
            4123456);
  EXPECT_EQ(Value(p.families, "rdma_priority_packets_total",
                  Pf({{"direction", "tx"}, {"priority", "6"}})),
            49152);
  EXPECT_EQ(Value(p.families, "rdma_priority_discards_total",
                  Pf({{"reason", "host_buffer"}, {"priority", "3"}})),
            42);
  EXPECT_EQ(Value(p.families, "rdma_priority_discards_total",
                  Pf({{"reason", "congestion"}, {"priority", "3"}})),
            7);
  EXPECT_EQ(Value(p.families, "rdma_priority_discards_total",
                  Pf({{"reason", "port_buffer"}, {"priority", "3"}})),
            5);
  EXPECT_EQ(Value(p.families, "rdma_priority_discards_total",
                  Pf({{"reason", "host_buffer"}, {"priority", "0"}})),
            1);
  EXPECT_EQ(Value(p.families, "rdma_priority_ecn_marked_packets_total", Pf({{"priority", "3"}})),
            1203344);
  EXPECT_EQ(Value(p.families, "rdma_priority_ecn_marked_packets_total", Pf({{"priority", "6"}})),
            0);
  // No direction label on the rx-only families.
  EXPECT_TRUE(LabelValues(p.families, "rdma_priority_discards_total", "direction").empty());
  EXPECT_TRUE(
      LabelValues(p.families, "rdma_priority_ecn_marked_packets_total", "direction").empty());
}

TEST(EthtoolCollector, PhyNicAndPcieHealthFamilies) {
  EthtoolCollector collector;
  auto p = CollectRoce(collector);
  EXPECT_EQ(Value(p.families, "rdma_phy_link_down_events_total", Pf()), 2);
  EXPECT_EQ(Value(p.families, "rdma_phy_symbol_errors_total", Pf()), 3);
  EXPECT_EQ(Value(p.families, "rdma_phy_crc_errors_total", Pf()), 17);
  EXPECT_EQ(Value(p.families, "rdma_phy_fec_corrected_bit_errors_total", Pf()), 1234567);
  EXPECT_EQ(Value(p.families, "rdma_phy_uncorrectable_symbol_errors_total", Pf()), 11);
  EXPECT_EQ(Value(p.families, "rdma_phy_receive_discards_total", Pf()), 2048);
  EXPECT_EQ(Value(p.families, "rdma_phy_receive_buffer_full_events_total", Pf()), 96);
  EXPECT_EQ(Value(p.families, "rdma_nic_receive_out_of_buffer_total", Pf()), 4294967000.0);
  auto wr = Value(p.families, "rdma_pcie_outbound_stalled_ratio", Pf({{"kind", "write"}}));
  ASSERT_TRUE(wr);
  EXPECT_DOUBLE_EQ(*wr, 0.12);  // 12 %
  EXPECT_EQ(Value(p.families, "rdma_pcie_outbound_stalled_ratio", Pf({{"kind", "read"}})), 0);
  EXPECT_EQ(Value(p.families, "rdma_pcie_outbound_stalled_events_total", Pf({{"kind", "write"}})),
            37);
  EXPECT_EQ(Value(p.families, "rdma_pcie_outbound_stalled_events_total", Pf({{"kind", "read"}})),
            0);
  const auto* ratio = Find(p.families, "rdma_pcie_outbound_stalled_ratio");
  ASSERT_NE(ratio, nullptr);
  EXPECT_EQ(ratio->type, prometheus::MetricType::Gauge);
  // Every fixed family has a HELP text.
  for (const auto& family : p.families)
    EXPECT_GT(family.help.size(), 30u) << family.name;
}

TEST(EthtoolCollector, VfIsSkippedAndMissingNetdevIsNoDeviceWithoutHarmingOtherPorts) {
  EthtoolCollector collector;
  auto p = CollectRoce(collector);
  // mlx5_0 -> ens1f0np0 (capture), mlx5_1 is a VF (ens1f0v0, never read), mlx5_2 -> ens2f0np0
  // (no capture: ENODEV).
  EXPECT_EQ(p.reads, (std::vector<std::string>{"ens1f0np0", "ens2f0np0"}));
  EXPECT_EQ(p.failures, 1u);
  EXPECT_EQ((p.errors[{"ethtool", "no_device"}]), 1u);
  EXPECT_EQ(p.errors.size(), 1u);
  for (const auto& family : p.families) {
    for (const auto& device : LabelValues(p.families, family.name, "device"))
      EXPECT_EQ(device, "mlx5_0") << family.name;
  }
  EXPECT_EQ(Value(p.families, "rdma_phy_link_down_events_total", Pf()), 2);
}

TEST(EthtoolCollector, GlobalPauseCaptureHasGlobalFamiliesAndNoPfcSeries) {
  // The global-pause capture served as ens1f0np0 (the PF of the mlx5-roce tree).
  TempDir dir;
  fs::copy_file(EthtoolFixtures() + "/ens3f0np0", dir.path() + "/ens1f0np0");
  EthtoolCollector collector;
  auto p = CollectRoce(collector, dir.path());
  EXPECT_EQ(Value(p.families, "rdma_global_pause_frames_total", Pf({{"direction", "rx"}})), 5512);
  EXPECT_EQ(Value(p.families, "rdma_global_pause_frames_total", Pf({{"direction", "tx"}})),
            1266552);
  auto rx =
      Value(p.families, "rdma_global_pause_duration_seconds_total", Pf({{"direction", "rx"}}));
  auto tx =
      Value(p.families, "rdma_global_pause_duration_seconds_total", Pf({{"direction", "tx"}}));
  ASSERT_TRUE(rx && tx);
  EXPECT_DOUBLE_EQ(*rx, 0.88);
  EXPECT_DOUBLE_EQ(*tx, 555.665182);
  EXPECT_EQ(Value(p.families, "rdma_global_pause_transitions_total", Pf()), 2710);
  EXPECT_EQ(Find(p.families, "rdma_pfc_pause_frames_total"), nullptr);
  EXPECT_EQ(Find(p.families, "rdma_pfc_pause_duration_seconds_total"), nullptr);
  EXPECT_EQ(Find(p.families, "rdma_pfc_pause_transitions_total"), nullptr);
  EXPECT_EQ(Count(p.families, "rdma_pfc_storm_events_total"), 2u);
  EXPECT_EQ(Count(p.families, "rdma_priority_bytes_total"), 2u);  // only priority 0 carries traffic
}

TEST(EthtoolCollector, UnknownStatsAbsentByDefault) {
  EthtoolCollector collector{CollectorOptions{}};
  auto p = CollectRoce(collector);
  for (const auto& family : p.families)
    EXPECT_EQ(family.name.rfind("rdma_ethtool_", 0), std::string::npos) << family.name;
}

TEST(EthtoolCollector, MetricsIncludeExportsMatchingUnknownStatsAsUntyped) {
  EthtoolCollector collector(Include("rx_vport_unicast_.*|tx_errors_phy|tx_mac_control_phy"));
  auto p = CollectRoce(collector);
  EXPECT_EQ(Value(p.families, "rdma_ethtool_rx_vport_unicast_bytes", Pf()), 21874423344.0);
  EXPECT_EQ(Value(p.families, "rdma_ethtool_rx_vport_unicast_packets", Pf()), 48201112);
  EXPECT_EQ(Value(p.families, "rdma_ethtool_tx_mac_control_phy", Pf()), 90311);
  EXPECT_EQ(Value(p.families, "rdma_ethtool_tx_errors_phy", Pf()), 0);
  const auto* family = Find(p.families, "rdma_ethtool_tx_mac_control_phy");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->type, prometheus::MetricType::Untyped);
  EXPECT_NE(family->help.find("tx_mac_control_phy"), std::string::npos);
  // The match is a full match: "rx_packets" is not included by "tx_mac_control_phy"-like
  // substrings, and known stats never get a generic series.
  EXPECT_EQ(Find(p.families, "rdma_ethtool_rx_packets"), nullptr);
  EthtoolCollector partial(Include("mac_control"));
  auto q = CollectRoce(partial);
  EXPECT_EQ(Find(q.families, "rdma_ethtool_tx_mac_control_phy"), nullptr);
  EthtoolCollector all(Include(".*"));
  auto r = CollectRoce(all);
  EXPECT_EQ(Find(r.families, "rdma_ethtool_rx_prio3_pause"), nullptr);
  EXPECT_EQ(Find(r.families, "rdma_ethtool_rx_out_of_buffer"), nullptr);
  // The curated mlx5 names of issue 15 are families now, not generic series.
  for (const char* known :
       {"rdma_ethtool_rx_err_lane_3_phy", "rdma_ethtool_module_unplug",
        "rdma_ethtool_tx_pause_ctrl_phy", "rdma_ethtool_tx_discards_phy",
        "rdma_ethtool_rx_vport_rdma_unicast_bytes", "rdma_ethtool_tx_pci_signal_integrity"}) {
    EXPECT_EQ(Find(r.families, known), nullptr) << known;
  }
  EXPECT_NE(Find(r.families, "rdma_ethtool_rx0_packets"), nullptr);
}

TEST(EthtoolCollector, Mlx5LaneErrorsDiscardsPauseControlPcieModulesAndRoceTraffic) {
  EthtoolCollector collector;
  auto p = CollectRoce(collector);
  // rx_err_lane_<N>_phy: one series per lane the driver lists (4 on this card).
  const std::string lanes = "rdma_phy_lane_errors_total";
  EXPECT_EQ(Count(p.families, lanes), 4u);
  EXPECT_EQ(Value(p.families, lanes, Pf({{"lane", "0"}})), 400000);
  EXPECT_EQ(Value(p.families, lanes, Pf({{"lane", "1"}})), 300000);
  EXPECT_EQ(Value(p.families, lanes, Pf({{"lane", "2"}})), 334567);
  EXPECT_EQ(Value(p.families, lanes, Pf({{"lane", "3"}})), 200000);
  EXPECT_EQ(Value(p.families, "rdma_phy_transmit_discards_total", Pf()), 0);
  const std::string pause = "rdma_phy_pause_control_frames_total";
  EXPECT_EQ(Value(p.families, pause, Pf({{"direction", "rx"}})), 18224);
  EXPECT_EQ(Value(p.families, pause, Pf({{"direction", "tx"}})), 90311);
  const std::string pcie = "rdma_pcie_signal_integrity_errors_total";
  EXPECT_EQ(Value(p.families, pcie, Pf({{"direction", "rx"}})), 0);
  EXPECT_EQ(Value(p.families, pcie, Pf({{"direction", "tx"}})), 2);
  const std::string module = "rdma_module_events_total";
  EXPECT_EQ(Count(p.families, module), 4u);
  auto events = LabelValues(p.families, module, "event");
  std::sort(events.begin(), events.end());
  EXPECT_EQ(events,
            (std::vector<std::string>{"bad_shorted", "bus_stuck", "high_temperature", "unplug"}));
  EXPECT_EQ(Value(p.families, module, Pf({{"event", "unplug"}})), 0);
  const std::string bytes = "rdma_roce_vport_bytes_total";
  EXPECT_EQ(Count(p.families, bytes), 4u);
  EXPECT_EQ(Value(p.families, bytes, Pf({{"direction", "rx"}, {"cast", "unicast"}})),
            1987654321000.0);
  EXPECT_EQ(Value(p.families, bytes, Pf({{"direction", "tx"}, {"cast", "unicast"}})),
            1876543210000.0);
  EXPECT_EQ(Value(p.families, bytes, Pf({{"direction", "rx"}, {"cast", "multicast"}})), 0);
  const std::string packets = "rdma_roce_vport_packets_total";
  EXPECT_EQ(Count(p.families, packets), 4u);
  EXPECT_EQ(Value(p.families, packets, Pf({{"direction", "rx"}, {"cast", "unicast"}})), 1898765432);
  EXPECT_EQ(Value(p.families, packets, Pf({{"direction", "tx"}, {"cast", "unicast"}})), 1765432109);
  for (const auto& name : {lanes, pause, pcie, module, bytes, packets}) {
    const auto* family = Find(p.families, name);
    ASSERT_NE(family, nullptr) << name;
    EXPECT_EQ(family->type, prometheus::MetricType::Counter) << name;
  }
}

// The capture `file` of tests/fixtures/ethtool served as ens1f0np0 (the PF of mlx5-roce).
Poll CollectAsPf(EthtoolCollector& collector, const std::string& file) {
  TempDir dir;
  fs::copy_file(EthtoolFixtures() + "/" + file, dir.path() + "/ens1f0np0");
  return CollectRoce(collector, dir.path());
}

TEST(EthtoolCollector, IceE810PfcFramesAreXonPlusXoffForPrioritiesInUse) {
  EthtoolCollector collector;
  auto p = CollectAsPf(collector, "ens5f0");
  // ice lists XON and XOFF for all 8 priorities; only priority 3 counted any: 1200 + 3400
  // received, 800 + 2100 sent.
  const std::string frames = "rdma_pfc_pause_frames_total";
  EXPECT_EQ(Count(p.families, frames), 2u);
  EXPECT_EQ(Value(p.families, frames, Pf({{"direction", "rx"}, {"priority", "3"}})), 4600);
  EXPECT_EQ(Value(p.families, frames, Pf({{"direction", "tx"}, {"priority", "3"}})), 2900);
  // link_xon_rx.nic 5 + link_xoff_rx.nic 7; nothing sent.
  EXPECT_EQ(Value(p.families, "rdma_global_pause_frames_total", Pf({{"direction", "rx"}})), 12);
  EXPECT_EQ(Value(p.families, "rdma_global_pause_frames_total", Pf({{"direction", "tx"}})), 0);
  // ice counts no pause time, transitions or storms, and none of the mlx5 families.
  for (const char* absent :
       {"rdma_pfc_pause_duration_seconds_total", "rdma_pfc_pause_transitions_total",
        "rdma_pfc_storm_events_total", "rdma_priority_bytes_total", "rdma_phy_lane_errors_total"}) {
    EXPECT_EQ(Find(p.families, absent), nullptr) << absent;
  }
  ExpectPromtoolClean(p.families);
}

TEST(EthtoolCollector, IcePrioritiesWithoutPauseFramesHaveNoSeries) {
  // Every priority of the ice list at zero: no PFC series at all (16 names, 0 series), and a
  // priority appears as soon as one of its counters moves.
  TempDir dir;
  std::string capture =
      std::regex_replace(ReadText(EthtoolFixtures() + "/ens5f0"),
                         std::regex("(priority_3_xo(n|ff)\\.nic): [0-9]+"), "$1: 0");
  dir.Write("ens1f0np0", capture);
  EthtoolCollector collector;
  auto idle = CollectRoce(collector, dir.path());
  EXPECT_EQ(Find(idle.families, "rdma_pfc_pause_frames_total"), nullptr);
  dir.Write("ens1f0np0", std::regex_replace(capture, std::regex("tx_priority_5_xoff\\.nic: 0"),
                                            "tx_priority_5_xoff.nic: 9"));
  auto busy = CollectRoce(collector, dir.path());
  EXPECT_EQ(Count(busy.families, "rdma_pfc_pause_frames_total"), 2u);
  EXPECT_EQ(Value(busy.families, "rdma_pfc_pause_frames_total",
                  Pf({{"direction", "tx"}, {"priority", "5"}})),
            9);
  EXPECT_EQ(Value(busy.families, "rdma_pfc_pause_frames_total",
                  Pf({{"direction", "rx"}, {"priority", "5"}})),
            0);
}

TEST(EthtoolCollector, BnxtPfcFramesAndPauseTimeButNotItsTransitionsOrCosTraffic) {
  EthtoolCollector collector;
  auto p = CollectAsPf(collector, "ens6f0np0");
  const std::string frames = "rdma_pfc_pause_frames_total";
  EXPECT_EQ(Count(p.families, frames), 2u);
  EXPECT_EQ(Value(p.families, frames, Pf({{"direction", "rx"}, {"priority", "3"}})), 4321);
  EXPECT_EQ(Value(p.families, frames, Pf({{"direction", "tx"}, {"priority", "3"}})), 8765);
  const std::string duration = "rdma_pfc_pause_duration_seconds_total";
  EXPECT_EQ(Count(p.families, duration), 2u);
  auto rx = Value(p.families, duration, Pf({{"direction", "rx"}, {"priority", "3"}}));
  auto tx = Value(p.families, duration, Pf({{"direction", "tx"}, {"priority", "3"}}));
  ASSERT_TRUE(rx && tx);
  EXPECT_DOUBLE_EQ(*rx, 1.5);   // pfc_pri3_rx_duration_us 1500000
  EXPECT_DOUBLE_EQ(*tx, 0.25);  // pfc_pri3_tx_duration_us 250000
  // rx/tx_pause_frames: 802.3x only (PFC frames are rx/tx_pfc_frames).
  EXPECT_EQ(Value(p.families, "rdma_global_pause_frames_total", Pf({{"direction", "rx"}})), 0);
  EXPECT_EQ(Value(p.families, "rdma_global_pause_frames_total", Pf({{"direction", "tx"}})), 0);
  // pfc_pri<p>_rx_transitions count both edges (mlx5 only XOFF->XON), and *_pri<p> traffic is
  // the CoS queue's (priorities 0-2 and 4-7 all repeat cos0 here): neither is mapped.
  EXPECT_EQ(Find(p.families, "rdma_pfc_pause_transitions_total"), nullptr);
  EXPECT_EQ(Find(p.families, "rdma_priority_bytes_total"), nullptr);
  EXPECT_EQ(Find(p.families, "rdma_priority_packets_total"), nullptr);
  ExpectPromtoolClean(p.families);
}

TEST(EthtoolCollector, RxOutOfBufferWrapIsExtendedAcrossCollections) {
  TempDir dir;
  std::string capture = ReadText(EthtoolFixtures() + "/ens1f0np0");
  dir.Write("ens1f0np0", capture);
  EthtoolCollector collector;
  auto first = CollectRoce(collector, dir.path());
  EXPECT_EQ(Value(first.families, "rdma_nic_receive_out_of_buffer_total", Pf()), 4294967000.0);
  // The u32 sum wraps: 4294967000 -> 100 is 396 more drops.
  std::string wrapped = std::regex_replace(capture, std::regex("rx_out_of_buffer: 4294967000"),
                                           "rx_out_of_buffer: 100");
  ASSERT_NE(wrapped, capture);
  dir.Write("ens1f0np0", wrapped);
  auto second = CollectRoce(collector, dir.path());
  EXPECT_EQ(Value(second.families, "rdma_nic_receive_out_of_buffer_total", Pf()), 4294967396.0);
  // Other 64-bit counters are not extended.
}

// A driver whose string set changes between polls (PFC enabled on priority 4, then all off).
class ChangingReader : public EthtoolReader {
 public:
  int poll = 0;
  int ReadStats(const std::string& netdev, EthtoolStats* out) override {
    out->names.clear();
    out->values.clear();
    if (netdev != "ens1f0np0") return ENODEV;
    auto add = [&](const std::string& name, uint64_t value) {
      out->names.push_back(name);
      out->values.push_back(value);
    };
    add("rx_prio3_bytes", 1000 + poll);
    if (poll <= 1) {
      add("rx_prio3_pause", 10 + poll);
      add("rx_prio3_pause_duration", 1000000);
    }
    if (poll == 1) {
      add("rx_prio4_pause", 20);
      add("tx_prio4_pause", 21);
    }
    add("rx_out_of_buffer", 5);
    ++poll;
    return 0;
  }
};

TEST(EthtoolCollector, StringSetChangesBetweenPollsAddAndRemoveSeries) {
  ChangingReader reader;
  EthtoolCollector collector;
  auto root = FixturePath("mlx5-roce");
  auto p0 = Collect(collector, root, reader);
  EXPECT_EQ(Count(p0.families, "rdma_pfc_pause_frames_total"), 1u);
  EXPECT_EQ(Value(p0.families, "rdma_pfc_pause_frames_total", Pf({{"priority", "3"}})), 10);
  auto p1 = Collect(collector, root, reader);
  EXPECT_EQ(Count(p1.families, "rdma_pfc_pause_frames_total"), 3u);
  EXPECT_EQ(Value(p1.families, "rdma_pfc_pause_frames_total", Pf({{"priority", "3"}})), 11);
  EXPECT_EQ(Value(p1.families, "rdma_pfc_pause_frames_total",
                  Pf({{"direction", "tx"}, {"priority", "4"}})),
            21);
  auto p2 = Collect(collector, root, reader);
  EXPECT_EQ(Find(p2.families, "rdma_pfc_pause_frames_total"), nullptr);
  EXPECT_EQ(Find(p2.families, "rdma_pfc_pause_duration_seconds_total"), nullptr);
  EXPECT_EQ(Value(p2.families, "rdma_priority_bytes_total", Pf({{"priority", "3"}})), 1002);
}

TEST(EthtoolCollector, RepeatedNamesAndNetdevSharedByTwoPortsAreReadOnce) {
  // A RoCE-like device with two Ethernet ports on one netdev (rxe-style `parent`).
  TempDir tree;
  tree.Write("class/infiniband/roce0/parent", "eth0\n");
  tree.Write("class/infiniband/roce0/ports/1/link_layer", "Ethernet\n");
  tree.Write("class/infiniband/roce0/ports/2/link_layer", "Ethernet\n");
  tree.Write("class/infiniband/ib0/ports/1/link_layer", "InfiniBand\n");
  TempDir captures;
  captures.Write("eth0", "NIC statistics:\n     rx_prio0_bytes: 5\n     rx_prio0_bytes: 6\n");
  auto reader = MakeEthtoolFixtureReader(captures.path());
  EthtoolCollector collector;
  auto p = Collect(collector, tree.path(), *reader);
  EXPECT_EQ(p.reads, (std::vector<std::string>{"eth0"}));
  EXPECT_EQ(Count(p.families, "rdma_priority_bytes_total"), 1u);
  EXPECT_EQ(Value(p.families, "rdma_priority_bytes_total",
                  {{"device", "roce0"}, {"port", "1"}, {"netdev", "eth0"}}),
            5);
  ExpectPromtoolClean(p.families);
}

TEST(EthtoolCollector, IbTreeHasNoEthernetPortsAndNoReads) {
  auto reader = MakeEthtoolFixtureReader(EthtoolFixtures());
  EthtoolCollector collector;
  auto p = Collect(collector, FixturePath("mlx5-ib"), *reader);
  EXPECT_TRUE(p.reads.empty());
  EXPECT_TRUE(p.families.empty());
}

TEST(EthtoolCollector, RenderedFamiliesPassPromtool) {
  EthtoolCollector pfc(Include(".*"));
  ExpectPromtoolClean(CollectRoce(pfc).families);
  TempDir dir;
  fs::copy_file(EthtoolFixtures() + "/ens3f0np0", dir.path() + "/ens1f0np0");
  EthtoolCollector global(Include(".*"));
  ExpectPromtoolClean(CollectRoce(global, dir.path()).families);
}

// ---------------------------------------------------------------------------------------------
// ioctl reader against a simulated driver (struct layouts of include/uapi/linux/ethtool.h)

struct FakeDriver {
  std::vector<std::string> names;
  std::vector<uint64_t> values;
  bool old_kernel = false;  // before 7b07be1ff1cb: ignores the count passed in
  int error = 0;            // returned by every call when set
  int gsset_calls = 0, gstrings_calls = 0, gstats_calls = 0;
  std::function<void()> before_gstats;  // e.g. reconfigure PFC between GSTRINGS and GSTATS

  int Ioctl(const std::string&, void* buffer) {
    if (error != 0) return error;
    auto* bytes = static_cast<char*>(buffer);
    uint32_t cmd;
    std::memcpy(&cmd, bytes, 4);
    uint32_t count = static_cast<uint32_t>(names.size());
    switch (cmd) {
      case ETHTOOL_GSSET_INFO: {
        ++gsset_calls;
        uint64_t mask;
        std::memcpy(&mask, bytes + 8, 8);
        if (names.empty()) {
          mask = 0;  // the kernel clears the bit of a set the driver lacks
          std::memcpy(bytes + 8, &mask, 8);
          return 0;
        }
        std::memcpy(bytes + 16, &count, 4);
        return 0;
      }
      case ETHTOOL_GSTRINGS: {
        ++gstrings_calls;
        uint32_t len;
        std::memcpy(&len, bytes + 8, 4);
        if (!old_kernel && len != 0 && len != count) {
          uint32_t zero = 0;
          std::memcpy(bytes + 8, &zero, 4);
          return 0;
        }
        std::memcpy(bytes + 8, &count, 4);
        for (uint32_t i = 0; i < count; ++i) {
          char* s = bytes + 12 + size_t{i} * ETH_GSTRING_LEN;
          std::memset(s, 0, ETH_GSTRING_LEN);
          std::memcpy(s, names[i].data(), std::min<size_t>(names[i].size(), ETH_GSTRING_LEN));
        }
        return 0;
      }
      case ETHTOOL_GSTATS: {
        ++gstats_calls;
        if (before_gstats) {
          auto hook = std::move(before_gstats);
          before_gstats = nullptr;
          hook();
          count = static_cast<uint32_t>(names.size());
        }
        uint32_t n;
        std::memcpy(&n, bytes + 4, 4);
        if (!old_kernel && n != 0 && n != count) {
          uint32_t zero = 0;
          std::memcpy(bytes + 4, &zero, 4);
          return 0;
        }
        std::memcpy(bytes + 4, &count, 4);
        std::memcpy(bytes + 8, values.data(), values.size() * 8);
        return 0;
      }
      default:
        return EINVAL;
    }
  }

  std::unique_ptr<EthtoolReader> Reader() {
    return MakeEthtoolIoctlReaderForTest(
        [this](const std::string& netdev, void* buffer) { return Ioctl(netdev, buffer); });
  }

  // PFC enabled on priority p: 5 names appended (what mlx5 does to its set).
  void EnablePfc(int p) {
    std::string prio = "prio" + std::to_string(p);
    for (const char* fmt : {"rx_%s_pause", "rx_%s_pause_duration", "tx_%s_pause",
                            "tx_%s_pause_duration", "rx_%s_pause_transition"}) {
      std::string name = fmt;
      name.replace(name.find("%s"), 2, prio);
      names.push_back(name);
      values.push_back(100 + p);
    }
  }
};

FakeDriver Mlx5Like() {
  FakeDriver d;
  d.names = {"rx_packets", "rx_bytes", "rx_out_of_buffer", "a_name_exactly_32_bytes_long_xyz"};
  d.values = {1, 2, 3, 4};
  return d;
}

TEST(EthtoolIoctlReader, ReadsNamesOnceThenOnlyValues) {
  FakeDriver d = Mlx5Like();
  auto reader = d.Reader();
  EthtoolStats stats;
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  // A 32-byte name has no NUL in its slot.
  EXPECT_EQ(stats.names, d.names);
  EXPECT_EQ(stats.values, d.values);
  d.values[0] = 77;
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  EXPECT_EQ(stats.values[0], 77u);
  EXPECT_EQ(d.gsset_calls, 1);
  EXPECT_EQ(d.gstrings_calls, 1);
  EXPECT_EQ(d.gstats_calls, 2);
  // A second netdev has its own set.
  ASSERT_EQ(reader->ReadStats("ens2f0np0", &stats), 0);
  EXPECT_EQ(d.gstrings_calls, 2);
}

TEST(EthtoolIoctlReader, CountChangeOnCurrentKernelRereadsTheSet) {
  FakeDriver d = Mlx5Like();
  auto reader = d.Reader();
  EthtoolStats stats;
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  d.EnablePfc(3);  // GSTATS with the old count now returns n_stats = 0
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  EXPECT_EQ(stats.names, d.names);
  EXPECT_EQ(stats.values, d.values);
  EXPECT_EQ(stats.names.size(), 9u);
  EXPECT_EQ(d.gsset_calls, 2);
  EXPECT_EQ(d.gstats_calls, 3);  // first poll, stale attempt, retry
}

TEST(EthtoolIoctlReader, CountChangeOnOldKernelIsDetectedAndBufferHasRoom) {
  FakeDriver d = Mlx5Like();
  d.old_kernel = true;
  auto reader = d.Reader();
  EthtoolStats stats;
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  // Old kernels write the current (larger) count into a buffer sized for the old one.
  for (int p = 0; p < 8; ++p)
    d.EnablePfc(p);
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  EXPECT_EQ(stats.names.size(), 44u);
  EXPECT_EQ(stats.names, d.names);
  EXPECT_EQ(stats.values, d.values);
  // And shrinking: the reply's smaller n_stats is a mismatch too.
  d.names.resize(4);
  d.values.resize(4);
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  EXPECT_EQ(stats.names.size(), 4u);
}

TEST(EthtoolIoctlReader, ChangeBetweenStringsAndStatsIsRetriedOnce) {
  FakeDriver d = Mlx5Like();
  d.before_gstats = [&d] { d.EnablePfc(3); };
  auto reader = d.Reader();
  EthtoolStats stats;
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  EXPECT_EQ(stats.names.size(), 9u);
  EXPECT_EQ(stats.values, d.values);
}

TEST(EthtoolIoctlReader, SetChangingOnEveryCallGivesEagainNotGarbage) {
  FakeDriver d = Mlx5Like();
  auto reader = d.Reader();
  EthtoolStats stats;
  int p = 0;
  std::function<void()> flip;
  flip = [&] {
    d.EnablePfc(p++ % 8);
    d.before_gstats = flip;
  };
  d.before_gstats = flip;
  EXPECT_EQ(reader->ReadStats("ens1f0np0", &stats), EAGAIN);
  EXPECT_TRUE(stats.names.empty());
  EXPECT_TRUE(stats.values.empty());
}

TEST(EthtoolIoctlReader, ErrorsAreErrnoValues) {
  FakeDriver none;  // no ETH_SS_STATS set (lo, bridges)
  EthtoolStats stats;
  EXPECT_EQ(none.Reader()->ReadStats("lo", &stats), EOPNOTSUPP);
  FakeDriver gone = Mlx5Like();
  gone.error = ENODEV;
  EXPECT_EQ(gone.Reader()->ReadStats("ens9f0np0", &stats), ENODEV);
  // Names the kernel cannot hold are ENODEV without a call.
  FakeDriver d = Mlx5Like();
  auto reader = d.Reader();
  EXPECT_EQ(reader->ReadStats("", &stats), ENODEV);
  EXPECT_EQ(reader->ReadStats("a_name_of_16_chr", &stats), ENODEV);
  EXPECT_EQ(d.gsset_calls, 0);
  // A netdev that vanishes after its set was cached starts afresh when it returns.
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  d.error = ENODEV;
  EXPECT_EQ(reader->ReadStats("ens1f0np0", &stats), ENODEV);
  EXPECT_TRUE(stats.names.empty());
  d.error = 0;
  ASSERT_EQ(reader->ReadStats("ens1f0np0", &stats), 0);
  EXPECT_EQ(d.gsset_calls, 2);
}

}  // namespace
}  // namespace rdma_exporter::testing
