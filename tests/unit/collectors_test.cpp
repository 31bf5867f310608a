// Collector behaviour on the hand-made mlx5 fixture trees (tests/fixtures/mlx5-roce, mlx5-ib)
// and on the real Soft-RoCE capture. tests/fixtures/README.md lists which quirk each test covers.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "collectors/device_info.h"
#include "collectors/gid_table.h"
#include "collectors/hw_counters.h"
#include "collectors/pcie.h"
#include "collectors/port_counters.h"
#include "collectors/port_state.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/inventory.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

namespace fs = std::filesystem;
using Families = std::vector<prometheus::MetricFamily>;
using LabelMap = std::map<std::string, std::string>;
using ErrorMap = std::map<std::pair<std::string, std::string>, uint64_t>;

// The saturation gauge of the counters collector (one place to change if it is renamed).
const std::string kSaturated = "rdma_port_counters_saturated";

std::string Roce() {
  return FixturePath("mlx5-roce");
}
std::string Ib() {
  return FixturePath("mlx5-ib");
}

const prometheus::MetricFamily* FindFamily(const Families& families, const std::string& name) {
  for (const auto& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

bool Matches(const prometheus::ClientMetric& m, const LabelMap& labels) {
  size_t matched = 0;
  for (const auto& l : m.label) {
    auto it = labels.find(l.name);
    if (it != labels.end() && it->second == l.value) ++matched;
  }
  return matched == labels.size();
}

// Value of label `label` on the single sample of `name` matching `labels`.
std::optional<std::string> LabelOf(const Families& families, const std::string& name,
                                   const LabelMap& labels, const std::string& label) {
  const auto* family = FindFamily(families, name);
  if (family == nullptr) return std::nullopt;
  for (const auto& m : family->metric) {
    if (!Matches(m, labels)) continue;
    for (const auto& l : m.label) {
      if (l.name == label) return l.value;
    }
  }
  return std::nullopt;
}

// Samples of `name` matching `labels`.
size_t CountMatching(const Families& families, const std::string& name, const LabelMap& labels) {
  const auto* family = FindFamily(families, name);
  if (family == nullptr) return 0;
  size_t n = 0;
  for (const auto& m : family->metric)
    n += Matches(m, labels) ? 1 : 0;
  return n;
}

// Samples of any family carrying label name=value.
size_t CountWithLabel(const Families& families, const std::string& name, const std::string& value) {
  size_t n = 0;
  for (const auto& family : families)
    n += CountMatching(families, family.name, {{name, value}});
  return n;
}

void CopyTree(const std::string& from, const TempDir& to) {
  fs::copy(from, to.path(), fs::copy_options::copy_symlinks | fs::copy_options::recursive);
}

template <typename C>
CollectResult CollectWith(const std::string& root, const DeviceFilter& filter = {}) {
  SysfsReader reader(root);
  C collector;
  return RunCollector(collector, reader, filter);
}

LabelMap Port(const std::string& device, unsigned port) {
  return {{"device", device}, {"port", std::to_string(port)}};
}

LabelMap PortWith(const std::string& device, unsigned port, const std::string& name,
                  const std::string& value) {
  LabelMap labels = Port(device, port);
  labels[name] = value;
  return labels;
}

// ---------------------------------------------------------------------------------------------
// device: rdma_device_info

TEST(DeviceInfoCollector, Mlx5RocePfHasFirmwareBoardHcaTypePciAndNuma) {
  auto r = CollectWith<DeviceInfoCollector>(Roce());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Count(r.families, "rdma_device_info"), 3u);
  LabelMap d0 = {{"device", "mlx5_0"}};
  EXPECT_EQ(Value(r.families, "rdma_device_info", d0), 1);
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d0, "node_guid"), "b8ce:f603:00a1:b2c4");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d0, "sys_image_guid"), "b8ce:f603:00a1:b2c4");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d0, "fw_ver"), "22.39.1002");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d0, "board_id"), "MT_0000000359");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d0, "hca_type"), "MT4125");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d0, "node_type"), "CA");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d0, "pci_address"), "0000:3b:00.0");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d0, "numa_node"), "0");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d0, "physfn"), "");
}

TEST(DeviceInfoCollector, SriovVfCarriesItsParentPfAsPhysfn) {
  auto r = CollectWith<DeviceInfoCollector>(Roce());
  LabelMap d1 = {{"device", "mlx5_1"}};
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d1, "physfn"), "0000:3b:00.0");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d1, "pci_address"), "0000:3b:00.1");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", d1, "hca_type"), "MT4126");
}

TEST(DeviceInfoCollector, UnknownNumaNodeIsExportedAsMinusOne) {
  auto r = CollectWith<DeviceInfoCollector>(Roce());
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", {{"device", "mlx5_2"}}, "numa_node"), "-1");
}

TEST(DeviceInfoCollector, InfiniBandConnectX7Devices) {
  auto r = CollectWith<DeviceInfoCollector>(Ib());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Count(r.families, "rdma_device_info"), 3u);
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", {{"device", "mlx5_1"}}, "hca_type"), "MT4129");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", {{"device", "mlx5_1"}}, "fw_ver"),
            "28.39.1002");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", {{"device", "mlx5_1"}}, "pci_address"),
            "0000:2a:00.0");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", {{"device", "mlx5_2"}}, "numa_node"), "1");
}

TEST(DeviceInfoCollector, RxeCaptureHasEmptyPciFirmwareAndHcaLabels) {
  auto r = CollectWith<DeviceInfoCollector>(RxeCaptureSysfs());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Count(r.families, "rdma_device_info"), 2u);
  LabelMap rxe0 = {{"device", "rxe0"}};
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", rxe0, "node_guid"), "5054:00ff:fe12:3456");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", rxe0, "node_type"), "CA");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", rxe0, "fw_ver"), "");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", rxe0, "hca_type"), "");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", rxe0, "board_id"), "");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", rxe0, "pci_address"), "");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", rxe0, "numa_node"), "");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", rxe0, "physfn"), "");
  EXPECT_EQ(LabelOf(r.families, "rdma_device_info", {{"device", "rxe1"}}, "node_guid"),
            "5054:00ff:fe12:3457");
}

// ---------------------------------------------------------------------------------------------
// port: rdma_port_info, state, rate

TEST(PortStateCollector, ActiveRocePortIsUpAt100GbEdr) {
  auto r = CollectWith<PortStateCollector>(Roce());
  auto p = Port("mlx5_0", 1);
  EXPECT_EQ(Value(r.families, "rdma_port_state", p), 4);
  EXPECT_EQ(Value(r.families, "rdma_port_physical_state", p), 5);
  EXPECT_EQ(Value(r.families, "rdma_port_up", p), 1);
  EXPECT_EQ(Value(r.families, "rdma_port_rate_bytes_per_second", p), 12.5e9);
  EXPECT_EQ(Value(r.families, "rdma_port_link_width_lanes", p), 4);
  EXPECT_EQ(Value(r.families, "rdma_port_lane_speed_info", PortWith("mlx5_0", 1, "speed", "EDR")),
            1);
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", p, "link_layer"), "Ethernet");
}

TEST(PortStateCollector, RoceNetdevComesFromDefaultGidForPfAndVf) {
  auto r = CollectWith<PortStateCollector>(Roce());
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", Port("mlx5_0", 1), "netdev"), "ens1f0np0");
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", Port("mlx5_1", 1), "netdev"), "ens1f0v0");
  // mlx5_2 has no default GID: the only netdev of its PCI function is used.
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", Port("mlx5_2", 1), "netdev"), "ens2f0np0");
}

TEST(PortStateCollector, GarbageStateAndEmptyRateCostOnlyTheirSeries) {
  auto r = CollectWith<PortStateCollector>(Roce());
  auto p = Port("mlx5_2", 1);
  EXPECT_EQ(Value(r.families, "rdma_port_info", p), 1);
  EXPECT_FALSE(Value(r.families, "rdma_port_state", p).has_value());
  EXPECT_EQ(Value(r.families, "rdma_port_physical_state", p), 2);
  EXPECT_FALSE(Value(r.families, "rdma_port_up", p).has_value());
  EXPECT_FALSE(Value(r.families, "rdma_port_rate_bytes_per_second", p).has_value());
  EXPECT_FALSE(Value(r.families, "rdma_port_link_width_lanes", p).has_value());
  EXPECT_EQ(CountMatching(r.families, "rdma_port_lane_speed_info", p), 0u);
  EXPECT_EQ(r.failures, 2u);
  EXPECT_EQ(r.errors, (ErrorMap{{{"port", "malformed"}, 2}}));
}

TEST(PortStateCollector, OlderKernelRateWithoutASpeedNameKeepsRateAndWidth) {
  // 4.x kernels printed SDR without its name ("10 Gb/sec (4X)"); it was counted as malformed and
  // rate, width and lane speed were dropped.
  TempDir tree;
  CopyTree(Roce(), tree);
  std::ofstream(tree.path() + "/class/infiniband/mlx5_0/ports/1/rate") << "10 Gb/sec (4X)\n";
  auto r = CollectWith<PortStateCollector>(tree.path());
  auto p = Port("mlx5_0", 1);
  EXPECT_EQ(Value(r.families, "rdma_port_rate_bytes_per_second", p), 1.25e9);
  EXPECT_EQ(Value(r.families, "rdma_port_link_width_lanes", p), 4);
  EXPECT_EQ(Value(r.families, "rdma_port_lane_speed_info", PortWith("mlx5_0", 1, "speed", "SDR")),
            1);
  // Only mlx5_2's garbage state and empty rate are malformed.
  EXPECT_EQ(r.errors, (ErrorMap{{{"port", "malformed"}, 2}}));
}

TEST(PortStateCollector, InfiniBandNdrPortsAndIpoibNetdev) {
  auto r = CollectWith<PortStateCollector>(Ib());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Count(r.families, "rdma_port_info"), 14u);
  EXPECT_EQ(Value(r.families, "rdma_port_rate_bytes_per_second", Port("mlx5_0", 1)), 50e9);
  EXPECT_EQ(Value(r.families, "rdma_port_lane_speed_info", PortWith("mlx5_0", 1, "speed", "NDR")),
            1);
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", Port("mlx5_0", 1), "link_layer"), "InfiniBand");
  // ib0.8001 has the same GUID; the parent interface is reported.
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", Port("mlx5_0", 1), "netdev"), "ib0");
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", Port("mlx5_1", 1), "netdev"), "ib1");
  // No IPoIB interface on the multi-plane device.
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", Port("mlx5_2", 3), "netdev"), "");
}

TEST(PortStateCollector, MultiPlaneXdrPortsAndOneDownPort) {
  auto r = CollectWith<PortStateCollector>(Ib());
  EXPECT_EQ(Count(r.families, "rdma_port_up"), 14u);
  auto p5 = Port("mlx5_2", 5);
  EXPECT_EQ(Value(r.families, "rdma_port_rate_bytes_per_second", p5), 25e9);
  EXPECT_EQ(Value(r.families, "rdma_port_link_width_lanes", p5), 1);
  EXPECT_EQ(Value(r.families, "rdma_port_lane_speed_info", PortWith("mlx5_2", 5, "speed", "XDR")),
            1);
  EXPECT_EQ(Value(r.families, "rdma_port_up", p5), 1);
  auto p12 = Port("mlx5_2", 12);
  EXPECT_EQ(Value(r.families, "rdma_port_state", p12), 1);
  EXPECT_EQ(Value(r.families, "rdma_port_physical_state", p12), 3);
  EXPECT_EQ(Value(r.families, "rdma_port_up", p12), 0);
  EXPECT_EQ(Value(r.families, "rdma_port_rate_bytes_per_second", p12), 1.25e9);
  EXPECT_EQ(Value(r.families, "rdma_port_lane_speed_info", PortWith("mlx5_2", 12, "speed", "SDR")),
            1);
}

TEST(PortStateCollector, RxeCapturePortRateAndNetdevFromParent) {
  auto r = CollectWith<PortStateCollector>(RxeCaptureSysfs());
  EXPECT_EQ(r.failures, 0u);
  auto p = Port("rxe0", 1);
  EXPECT_EQ(Value(r.families, "rdma_port_state", p), 4);
  EXPECT_EQ(Value(r.families, "rdma_port_physical_state", p), 5);
  EXPECT_EQ(Value(r.families, "rdma_port_up", p), 1);
  EXPECT_EQ(Value(r.families, "rdma_port_rate_bytes_per_second", p), 312500000);
  EXPECT_EQ(Value(r.families, "rdma_port_link_width_lanes", p), 1);
  EXPECT_EQ(Value(r.families, "rdma_port_lane_speed_info", PortWith("rxe0", 1, "speed", "SDR")), 1);
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", p, "netdev"), "eth0");
  EXPECT_EQ(LabelOf(r.families, "rdma_port_info", Port("rxe1", 1), "netdev"), "eth1");
}

TEST(PortStateCollector, RateEinvalOfEmptyCageDropsRateSeriesAndCountsInvalid) {
  FaultyReader reader(Ib());
  reader.read_faults["class/infiniband/mlx5_0/ports/1/rate"] = EINVAL;
  PortStateCollector collector;
  auto r = RunCollector(collector, reader);
  auto p = Port("mlx5_0", 1);
  EXPECT_FALSE(Value(r.families, "rdma_port_rate_bytes_per_second", p).has_value());
  EXPECT_FALSE(Value(r.families, "rdma_port_link_width_lanes", p).has_value());
  EXPECT_EQ(CountMatching(r.families, "rdma_port_lane_speed_info", p), 0u);
  EXPECT_EQ(Value(r.families, "rdma_port_up", p), 1);
  EXPECT_EQ(Value(r.families, "rdma_port_rate_bytes_per_second", Port("mlx5_1", 1)), 50e9);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ(r.errors, (ErrorMap{{{"port", "invalid"}, 1}}));
}

// ---------------------------------------------------------------------------------------------
// counters: PMA port counters

TEST(PortCountersCollector, ExtTableDataCountersAreMultipliedByFour) {
  auto r = CollectWith<PortCountersCollector>(Roce());
  auto p = Port("mlx5_0", 1);
  EXPECT_EQ(Value(r.families, "rdma_port_data_transmitted_bytes_total", p), 123456789.0 * 4);
  EXPECT_EQ(Value(r.families, "rdma_port_data_received_bytes_total", p), 987654321.0 * 4);
  EXPECT_EQ(Value(r.families, "rdma_port_packets_transmitted_total", p), 5000001);
  EXPECT_EQ(Value(r.families, "rdma_port_packets_received_total", p), 6000002);
  EXPECT_EQ(Value(r.families, "rdma_port_unicast_packets_transmitted_total", p), 4900001);
  EXPECT_EQ(Value(r.families, "rdma_port_multicast_packets_received_total", p), 100003);
  EXPECT_EQ(Value(r.families, "rdma_port_transmit_wait_ticks_total", p), 1400000);
  EXPECT_EQ(Value(r.families, "rdma_port_vl15_dropped_total", p), 13);
  EXPECT_EQ(Value(r.families, "rdma_port_local_link_integrity_errors_total", p), 11);
  EXPECT_EQ(Value(r.families, "rdma_port_data_transmitted_bytes_total", Port("mlx5_1", 1)),
            23.0 * 4);
}

TEST(PortCountersCollector, SaturatedGaugeIsOneAt65535And255AndZeroBelow) {
  auto r = CollectWith<PortCountersCollector>(Roce());
  auto sat = [&](const std::string& counter) {
    return Value(r.families, kSaturated, PortWith("mlx5_0", 1, "counter", counter));
  };
  EXPECT_EQ(Value(r.families, "rdma_port_symbol_errors_total", Port("mlx5_0", 1)), 65535);
  EXPECT_EQ(sat("symbol_error"), 1);
  EXPECT_EQ(sat("link_downed"), 1);
  EXPECT_EQ(sat("link_error_recovery"), 0);
  EXPECT_EQ(sat("port_rcv_errors"), 0);
  EXPECT_EQ(sat("excessive_buffer_overrun_errors"), 0);
  EXPECT_EQ(sat("port_xmit_wait"), 0);
  // 64-bit counters of the extended table have no saturation gauge.
  EXPECT_FALSE(sat("port_xmit_data").has_value());
  EXPECT_FALSE(sat("unicast_xmit_packets").has_value());
  // 13 counters of width <= 32 bits.
  EXPECT_EQ(CountMatching(r.families, kSaturated, Port("mlx5_0", 1)), 13u);
}

// mlx5_2's other counters read numbers: the port has PMA, so one file reading "N/A (no PMA)" is
// a failed query (and the empty file garbage), each a read error; the port is not "no PMA".
TEST(PortCountersCollector, OnAPmaPortOneNaNoPmaFileAndAnEmptyFileAreMalformed) {
  auto r = CollectWith<PortCountersCollector>(Roce());
  auto p = Port("mlx5_2", 1);
  EXPECT_EQ(Value(r.families, "rdma_port_pma_supported", p), 1);
  EXPECT_FALSE(Value(r.families, "rdma_port_symbol_errors_total", p).has_value());
  EXPECT_FALSE(Value(r.families, "rdma_port_receive_errors_total", p).has_value());
  EXPECT_EQ(Value(r.families, "rdma_port_data_transmitted_bytes_total", p), 77 * 4);
  EXPECT_EQ(Value(r.families, "rdma_port_link_downed_total", p), 0);
  EXPECT_EQ(r.failures, 2u);
  EXPECT_EQ(r.errors, (ErrorMap{{{"counters", "malformed"}, 2}}));
}

TEST(PortCountersCollector, BasicTable32BitDataCounterAtAllOnesIsSaturated) {
  auto r = CollectWith<PortCountersCollector>(Ib());
  EXPECT_EQ(r.failures, 0u);
  for (unsigned port = 2; port <= 12; ++port) {
    SCOPED_TRACE(port);
    EXPECT_EQ(Value(r.families, "rdma_port_data_transmitted_bytes_total", Port("mlx5_2", port)),
              4294967295.0 * 4);
    EXPECT_EQ(Value(r.families, kSaturated, PortWith("mlx5_2", port, "counter", "port_xmit_data")),
              1);
    EXPECT_EQ(Value(r.families, kSaturated, PortWith("mlx5_2", port, "counter", "port_rcv_data")),
              0);
    EXPECT_EQ(
        Value(r.families, kSaturated, PortWith("mlx5_2", port, "counter", "port_xmit_packets")), 0);
  }
  // No unicast/multicast series in the basic table.
  EXPECT_FALSE(Value(r.families, "rdma_port_unicast_packets_transmitted_total", Port("mlx5_2", 2))
                   .has_value());
  // The extended table of mlx5_0 has 64-bit data counters.
  EXPECT_FALSE(Value(r.families, kSaturated, PortWith("mlx5_0", 1, "counter", "port_xmit_data"))
                   .has_value());
  EXPECT_EQ(Value(r.families, "rdma_port_data_transmitted_bytes_total", Port("mlx5_0", 1)),
            113 * 4);
}

TEST(PortCountersCollector, LegacyCountersExtOverridesThe32BitValues) {
  auto r = CollectWith<PortCountersCollector>(Ib());
  auto p = Port("mlx5_2", 1);
  EXPECT_EQ(Value(r.families, "rdma_port_data_transmitted_bytes_total", p), 8589934592.0 * 4);
  EXPECT_EQ(Value(r.families, "rdma_port_data_received_bytes_total", p), 8589934593.0 * 4);
  EXPECT_EQ(Value(r.families, "rdma_port_packets_transmitted_total", p), 5000000000.0);
  EXPECT_EQ(Value(r.families, "rdma_port_unicast_packets_transmitted_total", p), 4000000000.0);
  EXPECT_EQ(Value(r.families, "rdma_port_multicast_packets_received_total", p), 12);
  EXPECT_EQ(CountMatching(r.families, "rdma_port_data_transmitted_bytes_total", p), 1u);
  // 64-bit legacy values: no saturation gauge although counters/port_xmit_data is all-ones.
  EXPECT_FALSE(Value(r.families, kSaturated, PortWith("mlx5_2", 1, "counter", "port_xmit_data"))
                   .has_value());
}

TEST(PortCountersCollector, ASmallerCountersExtValueNeverHidesTheBasicOne) {
  // A counters_ext file reading 0 replaced a 6.8e9 counters/ value: exported as 0.
  TempDir tree;
  CopyTree(Ib(), tree);
  std::string port = tree.path() + "/class/infiniband/mlx5_2/ports/1/";
  std::ofstream(port + "counters/port_xmit_packets") << "6800000000\n";
  std::ofstream(port + "counters_ext/port_xmit_packets_64") << "0\n";
  std::ofstream(port + "counters/port_rcv_packets") << "4294967295\n";
  std::ofstream(port + "counters_ext/port_rcv_packets_64") << "7000000000\n";
  auto r = CollectWith<PortCountersCollector>(tree.path());
  auto p = Port("mlx5_2", 1);
  EXPECT_EQ(Value(r.families, "rdma_port_packets_transmitted_total", p), 6800000000.0);
  EXPECT_EQ(Value(r.families, "rdma_port_packets_received_total", p), 7000000000.0);
  // Above 32 bits the basic value proves the 64-bit table: no saturation gauge.
  EXPECT_FALSE(Value(r.families, kSaturated, PortWith("mlx5_2", 1, "counter", "port_xmit_packets"))
                   .has_value());
}

// Current kernels create no counters/ directory for a device without process_mad (rxe here).
TEST(PortCountersCollector, RxeCaptureWithoutCountersDirIsAPortWithoutPmaAndNoError) {
  auto r = CollectWith<PortCountersCollector>(RxeCaptureSysfs());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.families.size(), 1u);
  EXPECT_EQ(Value(r.families, "rdma_port_pma_supported", Port("rxe0", 1)), 0);
  EXPECT_EQ(Value(r.families, "rdma_port_pma_supported", Port("rxe1", 1)), 0);
  EXPECT_EQ(Count(r.families, "rdma_port_pma_supported"), 2u);
}

// Older kernels create counters/ for every port; without process_mad (iWARP, irdma) each of its
// files reads "N/A (no PMA)". That is a property of the port, exported once per poll, not 17
// read errors per poll.
TEST(PortCountersCollector, OlderKernelNoPmaPortExportsZeroOncePerPollAndCountsNoErrors) {
  TempDir tree;
  CopyTree(Roce(), tree);
  std::string dir = "class/infiniband/mlx5_2/ports/1/counters/";
  for (const auto& entry : std::filesystem::directory_iterator(tree.path() + "/" + dir)) {
    tree.Write(dir + entry.path().filename().string(), "N/A (no PMA)\n");
  }
  SysfsReader reader(tree.path());
  PortCountersCollector collector;
  for (int poll = 0; poll < 2; ++poll) {
    SCOPED_TRACE(poll);
    auto r = RunCollector(collector, reader);
    EXPECT_EQ(r.failures, 0u);
    EXPECT_TRUE(r.errors.empty());
    EXPECT_EQ(Value(r.families, "rdma_port_pma_supported", Port("mlx5_2", 1)), 0);
    EXPECT_EQ(CountMatching(r.families, "rdma_port_pma_supported", Port("mlx5_2", 1)), 1u);
    // Nothing else of that port; the PMA ports are unchanged.
    EXPECT_EQ(CountWithLabel(r.families, "device", "mlx5_2"), 1u);
    EXPECT_EQ(Value(r.families, "rdma_port_pma_supported", Port("mlx5_0", 1)), 1);
    EXPECT_EQ(Value(r.families, "rdma_port_symbol_errors_total", Port("mlx5_0", 1)), 65535);
  }
}

TEST(PortCountersCollector, PermissionAndIoErrorCostOnlyThatCounter) {
  FaultyReader reader(Ib());
  reader.read_faults["class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors"] = EACCES;
  reader.read_faults["class/infiniband/mlx5_0/ports/1/counters/port_xmit_discards"] = EIO;
  PortCountersCollector collector;
  auto r = RunCollector(collector, reader);
  auto p = Port("mlx5_0", 1);
  EXPECT_FALSE(Value(r.families, "rdma_port_receive_errors_total", p).has_value());
  EXPECT_FALSE(Value(r.families, "rdma_port_transmit_discards_total", p).has_value());
  EXPECT_FALSE(Value(r.families, kSaturated, PortWith("mlx5_0", 1, "counter", "port_rcv_errors"))
                   .has_value());
  // Everything else of that port and the other ports is still there.
  EXPECT_EQ(Value(r.families, "rdma_port_symbol_errors_total", p), 100);
  EXPECT_EQ(Value(r.families, "rdma_port_data_transmitted_bytes_total", p), 113 * 4);
  EXPECT_EQ(Value(r.families, "rdma_port_receive_errors_total", Port("mlx5_1", 1)), 203);
  EXPECT_EQ(CountMatching(r.families, kSaturated, p), 11u);
  EXPECT_EQ(r.failures, 2u);
  EXPECT_EQ(r.errors, (ErrorMap{{{"counters", "permission"}, 1}, {{"counters", "io"}, 1}}));
}

// A 17-file table without unicast_* is either the basic (32-bit) table or the kernel's "noietf"
// table, whose data/packet counters are 64-bit. A value above 2^32-1 proves the 64-bit table:
// those four counters then have no saturation gauge (64-bit counters do not saturate in practice).
TEST(PortCountersCollector, ValueAbove32BitAllOnesProvesThe64BitTable) {
  TempDir tmp;
  CopyTree(Ib(), tmp);
  tmp.Write("class/infiniband/mlx5_2/ports/3/counters/port_xmit_data", "8589934592\n");
  auto r = CollectWith<PortCountersCollector>(tmp.path());
  EXPECT_EQ(Value(r.families, "rdma_port_data_transmitted_bytes_total", Port("mlx5_2", 3)),
            8589934592.0 * 4);
  for (const char* counter :
       {"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets"}) {
    SCOPED_TRACE(counter);
    EXPECT_FALSE(
        Value(r.families, kSaturated, PortWith("mlx5_2", 3, "counter", counter)).has_value());
  }
  // port_xmit_wait is read from PortCounters (32-bit) in every table.
  EXPECT_EQ(Value(r.families, kSaturated, PortWith("mlx5_2", 3, "counter", "port_xmit_wait")), 0);
}

// The width of one data counter follows from its siblings (one table per port), and is
// remembered: a 64-bit counter passing 2^32-1 (or cleared and read at exactly 2^32-1) is not
// saturated. Before: only the presence of unicast_* decided, so this port read as saturated.
TEST(PortCountersCollector, NoietfPortAtExactly32BitAllOnesIsNotSaturatedAndWidthIsRemembered) {
  TempDir tmp;
  CopyTree(Ib(), tmp);
  std::string dir = "class/infiniband/mlx5_2/ports/4/counters/";
  tmp.Write(dir + "port_rcv_packets", "6800000000\n");  // > 2^32-1: the noietf table
  SysfsReader reader(tmp.path());
  PortCountersCollector collector;
  auto first = RunCollector(collector, reader);
  EXPECT_EQ(Value(first.families, "rdma_port_data_transmitted_bytes_total", Port("mlx5_2", 4)),
            4294967295.0 * 4);
  EXPECT_FALSE(Value(first.families, kSaturated, PortWith("mlx5_2", 4, "counter", "port_xmit_data"))
                   .has_value());
  // Counters cleared (perfquery -x): every value below 2^32 again, port_xmit_data at 2^32-1.
  tmp.Write(dir + "port_rcv_packets", "5\n");
  auto second = RunCollector(collector, reader);
  EXPECT_EQ(Value(second.families, "rdma_port_packets_received_total", Port("mlx5_2", 4)), 5);
  EXPECT_FALSE(
      Value(second.families, kSaturated, PortWith("mlx5_2", 4, "counter", "port_xmit_data"))
          .has_value());
  // A port of the same device without such evidence keeps the 32-bit treatment.
  EXPECT_EQ(Value(second.families, kSaturated, PortWith("mlx5_2", 5, "counter", "port_xmit_data")),
            1);
}

// What a port proved is forgotten once the port is gone: a card that comes back under the same
// name (a swap, a re-registered device) proves its width afresh.
TEST(PortCountersCollector, AVanishedPortsRememberedWidthIsForgotten) {
  TempDir tmp;
  CopyTree(Ib(), tmp);
  std::string dir = "class/infiniband/mlx5_2/ports/4/counters/";
  tmp.Write(dir + "port_rcv_packets", "6800000000\n");  // > 2^32-1: the noietf table
  SysfsReader reader(tmp.path());
  PortCountersCollector collector;
  auto first = RunCollector(collector, reader);
  EXPECT_FALSE(Value(first.families, kSaturated, PortWith("mlx5_2", 4, "counter", "port_xmit_data"))
                   .has_value());
  const std::string device = tmp.path() + "/class/infiniband/mlx5_2";
  std::filesystem::rename(device, tmp.path() + "/mlx5_2.away");
  auto gone = RunCollector(collector, reader);
  EXPECT_FALSE(Value(gone.families, "rdma_port_packets_received_total", Port("mlx5_2", 4)));
  std::filesystem::rename(tmp.path() + "/mlx5_2.away", device);
  tmp.Write(dir + "port_rcv_packets", "5\n");
  auto back = RunCollector(collector, reader);
  EXPECT_EQ(Value(back.families, kSaturated, PortWith("mlx5_2", 4, "counter", "port_xmit_data")),
            1);
}

// The extended table (unicast_* files) is 64-bit from the start: 2^32-1 there is just a value.
TEST(PortCountersCollector, ExtTableValueAt32BitAllOnesIsNotSaturated) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  tmp.Write("class/infiniband/mlx5_0/ports/1/counters/port_rcv_packets", "4294967295\n");
  auto r = CollectWith<PortCountersCollector>(tmp.path());
  EXPECT_EQ(Value(r.families, "rdma_port_packets_received_total", Port("mlx5_0", 1)), 4294967295.0);
  EXPECT_FALSE(Value(r.families, kSaturated, PortWith("mlx5_0", 1, "counter", "port_rcv_packets"))
                   .has_value());
  EXPECT_EQ(Value(r.families, "rdma_port_pma_supported", Port("mlx5_0", 1)), 1);
}

// ---------------------------------------------------------------------------------------------
// hw_counters

TEST(HwCountersCollector, Mlx5PortCountersWithKnownHelp) {
  auto r = CollectWith<HwCountersCollector>(Roce());
  auto p = Port("mlx5_0", 1);
  EXPECT_EQ(Value(r.families, "rdma_hw_rx_write_requests_total", p), 4000000000.0);
  EXPECT_EQ(Value(r.families, "rdma_hw_out_of_buffer_total", p), 1004);
  EXPECT_EQ(Value(r.families, "rdma_hw_local_ack_timeout_err_total", p), 17);
  EXPECT_EQ(Value(r.families, "rdma_hw_req_rnr_retries_exceeded_total", p), 1020);
  EXPECT_EQ(Value(r.families, "rdma_hw_rp_cnp_handled_total", p), 1027);
  EXPECT_EQ(Value(r.families, "rdma_hw_np_ecn_marked_roce_packets_total", p), 1028);
  EXPECT_EQ(Value(r.families, "rdma_hw_rx_icrc_encapsulated_total", p), 1030);
  EXPECT_EQ(Value(r.families, "rdma_hw_out_of_buffer_total", Port("mlx5_1", 1)), 3);
  const auto* family = FindFamily(r.families, "rdma_hw_out_of_buffer_total");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->help, HwCounterHelp("out_of_buffer"));
  EXPECT_EQ(family->type, prometheus::MetricType::Counter);
}

TEST(HwCountersCollector, UnknownCounterIsExportedWithGenericHelp) {
  auto r = CollectWith<HwCountersCollector>(Roce());
  EXPECT_EQ(Value(r.families, "rdma_hw_new_fancy_counters_total", Port("mlx5_0", 1)), 42);
  const auto* family = FindFamily(r.families, "rdma_hw_new_fancy_counters_total");
  ASSERT_NE(family, nullptr);
  EXPECT_NE(family->help.find("new_fancy_counter"), std::string::npos) << family->help;
  EXPECT_NE(family->help.find("not known"), std::string::npos) << family->help;
}

TEST(HwCountersCollector, LifespanMillisecondsBecomeSecondsNotACounter) {
  auto r = CollectWith<HwCountersCollector>(Roce());
  EXPECT_EQ(Value(r.families, "rdma_hw_counters_lifespan_seconds", Port("mlx5_0", 1)), 0.01);
  EXPECT_EQ(Count(r.families, "rdma_hw_lifespan_total"), 0u);
}

TEST(HwCountersCollector, GarbageValueIsMalformedAndSkipped) {
  auto r = CollectWith<HwCountersCollector>(Roce());
  EXPECT_FALSE(Value(r.families, "rdma_hw_out_of_buffer_total", Port("mlx5_2", 1)).has_value());
  EXPECT_EQ(Value(r.families, "rdma_hw_rx_write_requests_total", Port("mlx5_2", 1)), 9);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ(r.errors, (ErrorMap{{{"hw_counters", "malformed"}, 1}}));
}

TEST(HwCountersCollector, RxWriteRequestsIsReadFirstToRefreshTheMlx5Cache) {
  FaultyReader reader(Ib());
  HwCountersCollector collector;
  RunCollector(collector, reader);
  auto first_under = [&](const std::string& dir) -> std::string {
    for (const auto& path : reader.reads) {
      if (path.rfind(dir, 0) == 0) return path.substr(dir.size());
    }
    return "";
  };
  EXPECT_EQ(first_under("class/infiniband/mlx5_0/ports/1/hw_counters/"), "rx_write_requests");
  EXPECT_EQ(first_under("class/infiniband/mlx5_1/hw_counters/"), "vport_rx_write_requests");
}

TEST(HwCountersCollector, DeviceLevelSwitchdevCountersUseDeviceHwPrefix) {
  auto r = CollectWith<HwCountersCollector>(Ib());
  EXPECT_EQ(r.failures, 0u);
  LabelMap d1 = {{"device", "mlx5_1"}};
  EXPECT_EQ(Value(r.families, "rdma_device_hw_vport_rx_write_requests_total", d1), 7000);
  EXPECT_EQ(Value(r.families, "rdma_device_hw_vport_out_of_buffer_total", d1), 3);
  EXPECT_EQ(Value(r.families, "rdma_device_hw_counters_lifespan_seconds", d1), 0.01);
  EXPECT_EQ(Count(r.families, "rdma_device_hw_vport_rx_write_requests_total"), 1u);
  // Device-level samples have no port label.
  EXPECT_EQ(LabelOf(r.families, "rdma_device_hw_vport_out_of_buffer_total", d1, "port"),
            std::nullopt);
  const auto* family = FindFamily(r.families, "rdma_device_hw_vport_out_of_buffer_total");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->help, HwCounterHelp("out_of_buffer"));
  // Per-port counters of the same device are still per port.
  EXPECT_EQ(Value(r.families, "rdma_hw_out_of_buffer_total", Port("mlx5_1", 1)), 31);
}

TEST(HwCountersCollector, RxeCaptureRealValues) {
  auto r = CollectWith<HwCountersCollector>(RxeCaptureSysfs());
  EXPECT_EQ(r.failures, 0u);
  auto p0 = Port("rxe0", 1);
  EXPECT_EQ(Value(r.families, "rdma_hw_rdma_sends_total", p0), 3110);
  EXPECT_EQ(Value(r.families, "rdma_hw_rdma_recvs_total", p0), 3110);
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", p0), 181252);
  EXPECT_EQ(Value(r.families, "rdma_hw_rcvd_pkts_total", p0), 181252);
  EXPECT_EQ(Value(r.families, "rdma_hw_duplicate_request_total", p0), 1723);
  EXPECT_EQ(Value(r.families, "rdma_hw_completer_retry_err_total", p0), 46);
  EXPECT_EQ(Value(r.families, "rdma_hw_ack_deferred_total", p0), 1);
  EXPECT_EQ(Value(r.families, "rdma_hw_counters_lifespan_seconds", p0), 0.012);
  auto p1 = Port("rxe1", 1);
  EXPECT_EQ(Value(r.families, "rdma_hw_rdma_sends_total", p1), 200);
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", p1), 1000);
  // 15 counters + lifespan per rxe port, no device-level directory.
  EXPECT_EQ(CountWithLabel(r.families, "device", "rxe0"), 16u);
  EXPECT_EQ(Count(r.families, "rdma_device_hw_counters_lifespan_seconds"), 0u);
}

TEST(HwCountersCollector, IoErrorOnOneCounterCostsOnlyThatSeries) {
  FaultyReader reader(Ib());
  reader.read_faults["class/infiniband/mlx5_0/ports/1/hw_counters/out_of_buffer"] = EIO;
  HwCountersCollector collector;
  auto r = RunCollector(collector, reader);
  EXPECT_FALSE(Value(r.families, "rdma_hw_out_of_buffer_total", Port("mlx5_0", 1)).has_value());
  EXPECT_EQ(Value(r.families, "rdma_hw_out_of_buffer_total", Port("mlx5_1", 1)), 31);
  EXPECT_EQ(Value(r.families, "rdma_hw_rx_write_requests_total", Port("mlx5_0", 1)), 20);
  EXPECT_EQ(Value(r.families, "rdma_hw_local_ack_timeout_err_total", Port("mlx5_0", 1)), 40);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ(r.errors, (ErrorMap{{{"hw_counters", "io"}, 1}}));
}

TEST(HwCountersCollector, Mlx5QCounterWrapIsExtendedTo64Bits) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  const std::string file = "class/infiniband/mlx5_0/ports/1/hw_counters/rx_write_requests";
  tmp.Write(file, "4294967000\n");
  SysfsReader reader(tmp.path());
  HwCountersCollector collector;
  auto r1 = RunCollector(collector, reader);
  EXPECT_EQ(Value(r1.families, "rdma_hw_rx_write_requests_total", Port("mlx5_0", 1)), 4294967000.0);
  tmp.Write(file, "100\n");
  auto r2 = RunCollector(collector, reader);
  EXPECT_EQ(Value(r2.families, "rdma_hw_rx_write_requests_total", Port("mlx5_0", 1)),
            4294967296.0 + 100);
  tmp.Write(file, "250\n");
  auto r3 = RunCollector(collector, reader);
  EXPECT_EQ(Value(r3.families, "rdma_hw_rx_write_requests_total", Port("mlx5_0", 1)),
            4294967296.0 + 250);
}

TEST(HwCountersCollector, Mlx5CongestionCounterIs64BitAndNotExtended) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  const std::string file = "class/infiniband/mlx5_0/ports/1/hw_counters/rp_cnp_handled";
  SysfsReader reader(tmp.path());
  HwCountersCollector collector;
  RunCollector(collector, reader);
  tmp.Write(file, "5\n");
  auto r = RunCollector(collector, reader);
  EXPECT_EQ(Value(r.families, "rdma_hw_rp_cnp_handled_total", Port("mlx5_0", 1)), 5);
}

TEST(HwCountersCollector, RxeCounterGoingDownIsNotExtended) {
  TempDir tmp;
  CopyTree(RxeCaptureSysfs(), tmp);
  const std::string file = "class/infiniband/rxe0/ports/1/hw_counters/sent_pkts";
  SysfsReader reader(tmp.path());
  HwCountersCollector collector;
  auto r1 = RunCollector(collector, reader);
  EXPECT_EQ(Value(r1.families, "rdma_hw_sent_pkts_total", Port("rxe0", 1)), 181252);
  tmp.Write(file, "5\n");
  auto r2 = RunCollector(collector, reader);
  EXPECT_EQ(Value(r2.families, "rdma_hw_sent_pkts_total", Port("rxe0", 1)), 5);
}

// One failed read of a wrapping q-counter must not throw away its 2^32 history: the exported
// counter would go back by 4 GiB (a counter reset) on the next successful poll.
TEST(HwCountersCollector, TransientReadErrorKeepsTheWrapHistory) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  const std::string file = "class/infiniband/mlx5_0/ports/1/hw_counters/rx_write_requests";
  FaultyReader reader(tmp.path());
  HwCountersCollector collector;
  tmp.Write(file, "4294967000\n");
  RunCollector(collector, reader);
  tmp.Write(file, "100\n");
  auto r2 = RunCollector(collector, reader);
  EXPECT_EQ(Value(r2.families, "rdma_hw_rx_write_requests_total", Port("mlx5_0", 1)),
            4294967296.0 + 100);
  reader.read_faults[file] = EIO;
  auto r3 = RunCollector(collector, reader);
  EXPECT_FALSE(
      Value(r3.families, "rdma_hw_rx_write_requests_total", Port("mlx5_0", 1)).has_value());
  reader.read_faults.clear();
  tmp.Write(file, "200\n");
  auto r4 = RunCollector(collector, reader);
  EXPECT_EQ(Value(r4.families, "rdma_hw_rx_write_requests_total", Port("mlx5_0", 1)),
            4294967296.0 + 200);
}

// The collector keeps each port's hw_counters/ listing and file refs between polls: a device
// that registers again with another set of counters must be read afresh, each value under its
// own name.
TEST(HwCountersCollector, ADeviceRegisteredAgainWithOtherCountersIsReadAfresh) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  const std::string dir = "class/infiniband/mlx5_0/ports/1/hw_counters";
  SysfsReader reader(tmp.path());
  HwCountersCollector collector;
  auto r1 = RunCollector(collector, reader);
  ASSERT_TRUE(Value(r1.families, "rdma_hw_out_of_buffer_total", Port("mlx5_0", 1)).has_value());
  tmp.Remove(dir);
  tmp.Write(dir + "/np_cnp_sent", "11\n");
  tmp.Write(dir + "/out_of_buffer", "22\n");
  tmp.Write(dir + "/rx_write_requests", "4294967000\n");
  reader.CloseUnder("class/infiniband/mlx5_0/");  // what the poller does for a new device
  auto r2 = RunCollector(collector, reader);
  EXPECT_EQ(Value(r2.families, "rdma_hw_np_cnp_sent_total", Port("mlx5_0", 1)), 11);
  EXPECT_EQ(Value(r2.families, "rdma_hw_out_of_buffer_total", Port("mlx5_0", 1)), 22);
  EXPECT_FALSE(Value(r2.families, "rdma_hw_rp_cnp_handled_total", Port("mlx5_0", 1)).has_value());
  // Its q-counters still wrap into 64 bits.
  tmp.Write(dir + "/rx_write_requests", "5\n");
  auto r3 = RunCollector(collector, reader);
  EXPECT_EQ(Value(r3.families, "rdma_hw_rx_write_requests_total", Port("mlx5_0", 1)),
            4294967296.0 + 5);
  EXPECT_EQ(Value(r3.families, "rdma_hw_out_of_buffer_total", Port("mlx5_0", 1)), 22);
}

// ---------------------------------------------------------------------------------------------
// pcie

TEST(PcieCollector, Gen4X16LinkAndAerTotals) {
  auto r = CollectWith<PcieCollector>(Roce());
  EXPECT_EQ(r.failures, 0u);
  auto kind = [](const std::string& device, const std::string& k) -> LabelMap {
    return {{"device", device}, {"kind", k}};
  };
  EXPECT_EQ(Value(r.families, "rdma_pcie_link_transfers_per_second", kind("mlx5_0", "current")),
            16e9);
  EXPECT_EQ(Value(r.families, "rdma_pcie_link_transfers_per_second", kind("mlx5_0", "max")), 16e9);
  EXPECT_EQ(Value(r.families, "rdma_pcie_link_width_lanes", kind("mlx5_0", "current")), 16);
  EXPECT_EQ(Value(r.families, "rdma_pcie_link_width_lanes", kind("mlx5_0", "max")), 16);
  auto sev = [](const std::string& s) -> LabelMap { return {{"device", "mlx5_0"}, {"class", s}}; };
  EXPECT_EQ(Value(r.families, "rdma_pcie_aer_errors_total", sev("correctable")), 3);
  EXPECT_EQ(Value(r.families, "rdma_pcie_aer_errors_total", sev("nonfatal")), 1);
  EXPECT_EQ(Value(r.families, "rdma_pcie_aer_errors_total", sev("fatal")), 0);
  // Only mlx5_0 has AER files.
  EXPECT_EQ(Count(r.families, "rdma_pcie_aer_errors_total"), 3u);
}

TEST(PcieCollector, DowntrainedLinkWithOldKernelSpelling) {
  auto r = CollectWith<PcieCollector>(Roce());
  auto kind = [](const std::string& k) -> LabelMap { return {{"device", "mlx5_2"}, {"kind", k}}; };
  EXPECT_EQ(Value(r.families, "rdma_pcie_link_transfers_per_second", kind("current")), 8e9);
  EXPECT_EQ(Value(r.families, "rdma_pcie_link_transfers_per_second", kind("max")), 16e9);
  EXPECT_EQ(Value(r.families, "rdma_pcie_link_width_lanes", kind("current")), 8);
  EXPECT_EQ(Value(r.families, "rdma_pcie_link_width_lanes", kind("max")), 16);
}

TEST(PcieCollector, VfWithUnknownSpeedAndWidthZeroHasNoLinkSeriesAndNoError) {
  auto r = CollectWith<PcieCollector>(Roce());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(CountWithLabel(r.families, "device", "mlx5_1"), 0u);
  EXPECT_EQ(Count(r.families, "rdma_pcie_link_transfers_per_second"), 4u);
  EXPECT_EQ(Count(r.families, "rdma_pcie_link_width_lanes"), 4u);
}

TEST(PcieCollector, Gen5OnInfiniBandDevices) {
  auto r = CollectWith<PcieCollector>(Ib());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Value(r.families, "rdma_pcie_link_transfers_per_second",
                  {{"device", "mlx5_2"}, {"kind", "current"}}),
            32e9);
  EXPECT_EQ(Count(r.families, "rdma_pcie_aer_errors_total"), 6u);
}

// The bridge above 0000:3b:00.0 and 0000:5e:00.0 (the slot) is Gen4 x16: its maximum is exported
// per device so that "downtrained" can compare against min(card, slot).
TEST(PcieCollector, UpstreamBridgeMaximumPerDeviceButNotForTheVf) {
  auto r = CollectWith<PcieCollector>(Roce());
  EXPECT_EQ(r.failures, 0u);
  for (const char* device : {"mlx5_0", "mlx5_2"}) {
    SCOPED_TRACE(device);
    EXPECT_EQ(
        Value(r.families, "rdma_pcie_upstream_max_link_transfers_per_second", {{"device", device}}),
        16e9);
    EXPECT_EQ(Value(r.families, "rdma_pcie_upstream_max_link_width_lanes", {{"device", device}}),
              16);
  }
  EXPECT_EQ(Count(r.families, "rdma_pcie_upstream_max_link_transfers_per_second"), 2u);
  EXPECT_EQ(Count(r.families, "rdma_pcie_upstream_max_link_width_lanes"), 2u);
}

// No max_link_* files in the parent directory (mlx5-ib's bridge, or a root complex pci0000:xx):
// no upstream series and no error; a garbage value is malformed like the card's own files.
TEST(PcieCollector, UpstreamWithoutFilesIsAbsentAndGarbageIsMalformed) {
  auto ib = CollectWith<PcieCollector>(Ib());
  EXPECT_EQ(ib.failures, 0u);
  EXPECT_EQ(Count(ib.families, "rdma_pcie_upstream_max_link_transfers_per_second"), 0u);
  EXPECT_EQ(Count(ib.families, "rdma_pcie_upstream_max_link_width_lanes"), 0u);

  TempDir tmp;
  CopyTree(Roce(), tmp);
  tmp.Write("devices/pci0000:00/0000:00:02.0/max_link_speed", "8.0 GT/s PCIe\n");
  tmp.Write("devices/pci0000:00/0000:00:02.0/max_link_width", "x8\n");
  auto r = CollectWith<PcieCollector>(tmp.path());
  EXPECT_EQ(
      Value(r.families, "rdma_pcie_upstream_max_link_transfers_per_second", {{"device", "mlx5_0"}}),
      8e9);
  EXPECT_EQ(Count(r.families, "rdma_pcie_upstream_max_link_width_lanes"), 0u);
  EXPECT_EQ(r.errors, (ErrorMap{{{"pcie", "malformed"}, 2}}));
}

TEST(PcieCollector, RxeWithoutPciFunctionHasNoSeries) {
  auto r = CollectWith<PcieCollector>(RxeCaptureSysfs());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_TRUE(r.families.empty());
}

// ---------------------------------------------------------------------------------------------
// gid

TEST(GidTableCollector, RoceGidsWithTypeAndNetdevAndEmptyEntriesSkipped) {
  auto r = CollectWith<GidTableCollector>(Roce());
  EXPECT_EQ(r.failures, 0u);
  auto idx = [](unsigned i) { return PortWith("mlx5_0", 1, "index", std::to_string(i)); };
  const std::string ll = "fe80:0000:0000:0000:bace:f6ff:fea1:b2c4";
  const std::string v4 = "0000:0000:0000:0000:0000:ffff:0a00:0001";
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", idx(0), "gid"), ll);
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", idx(0), "gid_type"), "IB/RoCE v1");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", idx(1), "gid"), ll);
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", idx(1), "gid_type"), "RoCE v2");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", idx(1), "netdev"), "ens1f0np0");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", idx(2), "gid"), v4);
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", idx(3), "gid"), v4);
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", idx(3), "gid_type"), "RoCE v2");
  // Index 4 is the zero GID, index 5 the bare fe80:: prefix: both skipped.
  EXPECT_FALSE(Value(r.families, "rdma_gid_info", idx(4)).has_value());
  EXPECT_FALSE(Value(r.families, "rdma_gid_info", idx(5)).has_value());
  EXPECT_EQ(CountMatching(r.families, "rdma_gid_info", Port("mlx5_0", 1)), 4u);
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", PortWith("mlx5_1", 1, "index", "1"), "netdev"),
            "ens1f0v0");
  EXPECT_EQ(CountMatching(r.families, "rdma_gid_info", Port("mlx5_1", 1)), 2u);
  EXPECT_EQ(CountMatching(r.families, "rdma_gid_info", Port("mlx5_2", 1)), 0u);
}

TEST(GidTableCollector, InfiniBandGidsHaveNoNetdev) {
  auto r = CollectWith<GidTableCollector>(Ib());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Count(r.families, "rdma_gid_info"), 14u);
  auto p = PortWith("mlx5_0", 1, "index", "0");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", p, "gid"),
            "fe80:0000:0000:0000:a088:c203:0045:1a2c");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", p, "gid_type"), "IB/RoCE v1");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", p, "netdev"), "");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", PortWith("mlx5_2", 12, "index", "0"), "gid"),
            "fe80:0000:0000:0000:a088:c203:0045:200c");
}

TEST(GidTableCollector, RxeCaptureWithEmptyGidDirectoryHasNoEntriesAndNoErrors) {
  auto r = CollectWith<GidTableCollector>(RxeCaptureSysfs());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Count(r.families, "rdma_gid_info"), 0u);
}

TEST(GidTableCollector, NdevsEinvalMeansNoNetdevAndIsNotAnError) {
  FaultyReader reader(Roce());
  reader.read_faults["class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/1"] = EINVAL;
  GidTableCollector collector;
  auto r = RunCollector(collector, reader);
  auto p = PortWith("mlx5_0", 1, "index", "1");
  EXPECT_EQ(Value(r.families, "rdma_gid_info", p), 1);
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", p, "netdev"), "");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", p, "gid_type"), "RoCE v2");
  EXPECT_EQ(r.failures, 0u);
  EXPECT_TRUE(r.errors.empty());
}

TEST(GidTableCollector, TypesIoErrorIsCountedButTheEntryStays) {
  FaultyReader reader(Roce());
  reader.read_faults["class/infiniband/mlx5_0/ports/1/gid_attrs/types/3"] = EIO;
  GidTableCollector collector;
  auto r = RunCollector(collector, reader);
  auto p = PortWith("mlx5_0", 1, "index", "3");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", p, "gid_type"), "");
  EXPECT_EQ(LabelOf(r.families, "rdma_gid_info", p, "netdev"), "ens1f0np0");
  EXPECT_EQ(r.errors, (ErrorMap{{{"gid", "io"}, 1}}));
}

TEST(GidTableCollector, UnreadableGidCostsOnlyThatEntry) {
  FaultyReader reader(Roce());
  reader.read_faults["class/infiniband/mlx5_0/ports/1/gids/2"] = EIO;
  GidTableCollector collector;
  auto r = RunCollector(collector, reader);
  EXPECT_FALSE(Value(r.families, "rdma_gid_info", PortWith("mlx5_0", 1, "index", "2")).has_value());
  EXPECT_EQ(CountMatching(r.families, "rdma_gid_info", Port("mlx5_0", 1)), 3u);
  EXPECT_EQ(r.errors, (ErrorMap{{{"gid", "io"}, 1}}));
}

// ---------------------------------------------------------------------------------------------
// All collectors: device filter, vanished devices

// The collectors that read only sysfs (the others need kernel readers, tested elsewhere).
bool IsSysfsCollector(std::string_view name) {
  for (std::string_view n : {"device", "port", "counters", "hw_counters", "pcie", "gid"}) {
    if (n == name) return true;
  }
  return false;
}

TEST(AllCollectors, ExcludedDeviceHasNoFileReadAndNoSeries) {
  FaultyReader reader(Roce());
  DeviceFilter filter;
  filter.exclude = std::regex("mlx5_1");
  for (const auto& factory : CollectorRegistry()) {
    SCOPED_TRACE(std::string(factory.name));
    auto collector = factory.create(CollectorOptions{});
    auto r = RunCollector(*collector, reader, filter);
    EXPECT_EQ(CountWithLabel(r.families, "device", "mlx5_1"), 0u);
  }
  size_t mlx5_0_reads = 0;
  for (const auto& path : reader.reads) {
    EXPECT_NE(path.rfind("class/infiniband/mlx5_1/", 0), 0u) << path;
    if (path.rfind("class/infiniband/mlx5_0/", 0) == 0) ++mlx5_0_reads;
  }
  EXPECT_GT(mlx5_0_reads, 50u);  // the check above saw real traffic
}

TEST(AllCollectors, VanishedDeviceSeriesAreGoneWithoutErrors) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  SysfsReader reader(tmp.path());
  std::vector<std::unique_ptr<Collector>> collectors;
  for (const auto& factory : CollectorRegistry()) {
    if (IsSysfsCollector(factory.name)) collectors.push_back(factory.create(CollectorOptions{}));
  }
  size_t failures_before = 0;
  for (auto& c : collectors) {
    auto r = RunCollector(*c, reader);
    failures_before += r.failures;
    if (c->name() != "pcie") {
      EXPECT_GT(CountWithLabel(r.families, "device", "mlx5_1"), 0u);
    }
  }
  tmp.Remove("class/infiniband/mlx5_1");
  tmp.Remove("devices/pci0000:00/0000:00:02.0/0000:3b:00.1/infiniband/mlx5_1");
  size_t failures_after = 0;
  for (auto& c : collectors) {
    SCOPED_TRACE(std::string(c->name()));
    auto r = RunCollector(*c, reader);
    failures_after += r.failures;
    EXPECT_EQ(CountWithLabel(r.families, "device", "mlx5_1"), 0u);
    if (c->name() != "pcie") {
      EXPECT_GT(CountWithLabel(r.families, "device", "mlx5_0"), 0u);
    }
  }
  EXPECT_EQ(failures_after, failures_before);
}

TEST(AllCollectors, DanglingClassLinkOfAHalfRemovedDeviceIsSkipped) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  tmp.Remove("devices/pci0000:00/0000:00:02.0/0000:3b:00.1/infiniband/mlx5_1");
  SysfsReader reader(tmp.path());
  std::vector<DiscoveryError> errors;
  Inventory inventory = DiscoverInventory(reader, {}, &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(inventory.devices.size(), 2u);
  EXPECT_EQ(inventory.devices[0].name, "mlx5_0");
  EXPECT_EQ(inventory.devices[1].name, "mlx5_2");
  HwCountersCollector hw;
  auto r = RunCollector(hw, reader);
  EXPECT_EQ(CountWithLabel(r.families, "device", "mlx5_1"), 0u);
  EXPECT_EQ(Value(r.families, "rdma_hw_rp_cnp_handled_total", Port("mlx5_0", 1)), 1027);
}

}  // namespace
}  // namespace rdma_exporter::testing
