// RoCE LAG (issue 15, item 1) on the mlx5-lag fixture tree: mlx5_bond_0 port 1 on bond0, slaves
// ens1f0np0 and ens1f1np1. Discovery finds the slaves (bonding/slaves, else lower_* links), and
// the ethtool, dcb, ecn and roce_config collectors read each slave instead of the bond (which
// has no statistics, DCB or ECN), one series set per slave labelled netdev=<slave>,
// bond=<bond>. Fixture facts are listed in tests/fixtures/README.md (mlx5-lag).
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectors/dcb.h"
#include "collectors/ecn.h"
#include "collectors/ethtool.h"
#include "collectors/roce_config.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/inventory.h"
#include "rdma_exporter/kernel_readers.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

namespace fs = std::filesystem;
using Families = std::vector<prometheus::MetricFamily>;
using LabelMap = std::map<std::string, std::string>;

const LabelMap kSlave0 = {
    {"device", "mlx5_bond_0"}, {"port", "1"}, {"netdev", "ens1f0np0"}, {"bond", "bond0"}};
const LabelMap kSlave1 = {
    {"device", "mlx5_bond_0"}, {"port", "1"}, {"netdev", "ens1f1np1"}, {"bond", "bond0"}};

std::string Lag() {
  return FixturePath("mlx5-lag");
}

// A writable copy of the LAG tree (sysfs and fixture files).
void CopyLag(const TempDir& to) {
  fs::copy(Lag(), to.path(), fs::copy_options::copy_symlinks | fs::copy_options::recursive);
}

LabelMap With(LabelMap labels, const std::string& name, const std::string& value) {
  labels[name] = value;
  return labels;
}

// Samples of any family with a label of that value.
size_t SamplesWithLabel(const Families& families, const std::string& label,
                        const std::string& value) {
  size_t n = 0;
  for (const auto& family : families) {
    for (const auto& metric : family.metric) {
      for (const auto& l : metric.label)
        n += l.name == label && l.value == value ? 1 : 0;
    }
  }
  return n;
}

// One collector over the discovered inventory, with the fixture kernel readers of `fixtures`.
CollectResult RunOnTree(Collector& collector, const std::string& sysfs_root,
                        const std::string& fixtures) {
  SysfsReader sysfs(sysfs_root);
  KernelReaders kernel = MakeKernelReaders(fixtures, sysfs);
  kernel.BeginPoll();
  std::vector<DiscoveryError> discovery_errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &discovery_errors);
  EXPECT_TRUE(discovery_errors.empty());
  ErrorTracker errors;
  CollectContext ctx(sysfs, errors, collector.name(), &kernel);
  MetricSink sink;
  EXPECT_TRUE(collector.Collect(inventory, ctx, sink));
  return {sink.Take(), ctx.failures(), errors.Totals()};
}

CollectResult RunOnLag(Collector& collector) {
  return RunOnTree(collector, Lag(), Lag());
}

const PortInfo& OnlyPort(const Inventory& inventory) {
  static const PortInfo kNone;
  if (inventory.devices.size() != 1 || inventory.devices[0].ports.size() != 1) {
    ADD_FAILURE() << "expected one device with one port";
    return kNone;
  }
  return inventory.devices[0].ports[0];
}

// ---------------------------------------------------------------------------------------------
// Inventory

TEST(LagInventory, BondPortRecordsItsSlavesFromBondingSlaves) {
  SysfsReader sysfs(Lag());
  std::vector<DiscoveryError> errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(inventory.devices.size(), 1u);
  EXPECT_EQ(inventory.devices[0].name, "mlx5_bond_0");
  EXPECT_EQ(inventory.devices[0].pci_address, "0000:ca:00.0");
  const PortInfo& port = OnlyPort(inventory);
  EXPECT_EQ(port.netdev, "bond0");  // ibdev2netdev's answer stays the bond
  EXPECT_EQ(port.bond_slaves, (std::vector<std::string>{"ens1f0np0", "ens1f1np1"}));
  auto physical = PhysicalNetdevs(port);
  ASSERT_EQ(physical.size(), 2u);
  EXPECT_EQ(physical[0].name, "ens1f0np0");
  EXPECT_EQ(physical[0].bond, "bond0");
  EXPECT_EQ(physical[1].name, "ens1f1np1");
  EXPECT_EQ(physical[1].bond, "bond0");
}

TEST(LagInventory, BondingSlavesKeepsKernelOrderNotNameOrder) {
  TempDir tmp;
  CopyLag(tmp);
  // The bonding driver lists slaves in enslavement order; the lower_* links sort by name.
  tmp.Write("devices/virtual/net/bond0/bonding/slaves", "ens1f1np1 ens1f0np0\n");
  SysfsReader sysfs(tmp.path());
  std::vector<DiscoveryError> errors;
  EXPECT_EQ(OnlyPort(DiscoverInventory(sysfs, {}, &errors)).bond_slaves,
            (std::vector<std::string>{"ens1f1np1", "ens1f0np0"}));
}

TEST(LagInventory, LowerLinksAreUsedWhenThereIsNoBondingDirectory) {
  TempDir tmp;
  CopyLag(tmp);
  // A team device (or any upper device) has lower_<name> links but no bonding/ group.
  fs::remove_all(tmp.path() + "/devices/virtual/net/bond0/bonding");
  tmp.Symlink("devices/virtual/net/bond0/lower_ens9", "../../../pci0000:00/nowhere");
  SysfsReader sysfs(tmp.path());
  std::vector<DiscoveryError> errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(OnlyPort(inventory).bond_slaves,
            (std::vector<std::string>{"ens1f0np0", "ens1f1np1", "ens9"}));
}

TEST(LagInventory, BondWithoutSlavesIsItsOwnPhysicalNetdev) {
  TempDir tmp;
  CopyLag(tmp);
  tmp.Write("devices/virtual/net/bond0/bonding/slaves", "");  // the kernel prints nothing
  SysfsReader sysfs(tmp.path());
  std::vector<DiscoveryError> errors;
  const PortInfo port = OnlyPort(DiscoverInventory(sysfs, {}, &errors));
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(port.bond_slaves.empty());
  auto physical = PhysicalNetdevs(port);
  ASSERT_EQ(physical.size(), 1u);
  EXPECT_EQ(physical[0].name, "bond0");
  EXPECT_EQ(physical[0].bond, "");
}

TEST(LagInventory, UnreadableBondingSlavesIsADiscoveryErrorNotACrash) {
  FaultyReader sysfs(Lag());
  sysfs.read_faults["class/net/bond0/bonding/slaves"] = EIO;
  std::vector<DiscoveryError> errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "class/net/bond0/bonding/slaves");
  EXPECT_EQ(errors[0].err, EIO);
  const PortInfo& port = OnlyPort(inventory);
  EXPECT_EQ(port.netdev, "bond0");
  EXPECT_TRUE(port.bond_slaves.empty());
}

TEST(LagInventory, PhysicalNetdevWithDeviceLinkIsNotAskedForSlaves) {
  TempDir tmp;
  CopyLag(tmp);
  // Point the RDMA port at a slave: a PCI function's netdev is never an upper device, and its
  // bonding/ files are not even opened.
  for (int i = 0; i < 4; ++i) {
    tmp.Write(
        "devices/pci0000:00/0000:00:02.0/0000:ca:00.0/infiniband/mlx5_bond_0/ports/1/"
        "gid_attrs/ndevs/" +
            std::to_string(i),
        "ens1f0np0\n");
  }
  FaultyReader sysfs(tmp.path());
  std::vector<DiscoveryError> errors;
  const PortInfo port = OnlyPort(DiscoverInventory(sysfs, {}, &errors));
  EXPECT_EQ(port.netdev, "ens1f0np0");
  EXPECT_TRUE(port.bond_slaves.empty());
  for (const auto& path : sysfs.reads)
    EXPECT_EQ(path.find("bonding"), std::string::npos) << path;
}

TEST(LagInventory, PlainRocePortsHaveNoSlaves) {
  SysfsReader sysfs(FixturePath("mlx5-roce"));
  std::vector<DiscoveryError> errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(inventory.devices.size(), 3u);
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      EXPECT_TRUE(port.bond_slaves.empty()) << device.name;
      auto physical = PhysicalNetdevs(port);
      ASSERT_EQ(physical.size(), 1u);
      EXPECT_EQ(physical[0].name, port.netdev);
      EXPECT_EQ(physical[0].bond, "");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Collectors

TEST(LagEthtool, EachSlaveIsReadWithItsOwnValuesAndTheBondLabel) {
  EthtoolCollector collector;
  auto result = RunOnLag(collector);
  EXPECT_EQ(result.failures, 0u);  // no ethtool/bond0: the bond is never asked
  // ens1f0np0 = the shared capture + 1, ens1f1np1 = 2x (tests/fixtures/README.md).
  LabelMap rx3 = {{"direction", "rx"}, {"priority", "3"}};
  auto pause = [&](const LabelMap& slave) {
    LabelMap labels = slave;
    labels.insert(rx3.begin(), rx3.end());
    return Value(result.families, "rdma_pfc_pause_frames_total", labels);
  };
  EXPECT_EQ(pause(kSlave0), 18225);
  EXPECT_EQ(pause(kSlave1), 36448);
  EXPECT_EQ(
      Value(result.families, "rdma_pfc_storm_events_total", With(kSlave0, "level", "warning")), 0);
  EXPECT_EQ(
      Value(result.families, "rdma_pfc_storm_events_total", With(kSlave1, "level", "warning")), 5);
  EXPECT_EQ(Value(result.families, "rdma_pfc_storm_events_total", With(kSlave1, "level", "error")),
            2);
  EXPECT_EQ(Value(result.families, "rdma_phy_crc_errors_total", kSlave0), 18);
  EXPECT_EQ(Value(result.families, "rdma_phy_crc_errors_total", kSlave1), 34);
  EXPECT_EQ(Value(result.families, "rdma_nic_receive_out_of_buffer_total", kSlave1), 2000);
  EXPECT_EQ(SamplesWithLabel(result.families, "netdev", "bond0"), 0u);
  // Every sample is one slave's: as many with the bond label as with the two slave names.
  EXPECT_EQ(SamplesWithLabel(result.families, "bond", "bond0"),
            SamplesWithLabel(result.families, "netdev", "ens1f0np0") +
                SamplesWithLabel(result.families, "netdev", "ens1f1np1"));
  EXPECT_GT(SamplesWithLabel(result.families, "netdev", "ens1f1np1"), 20u);
}

TEST(LagEthtool, AFailingSlaveCostsOnlyItsOwnSeries) {
  TempDir tmp;
  CopyLag(tmp);
  tmp.Remove("ethtool/ens1f1np1");  // ENODEV, as a slave renamed or removed
  EthtoolCollector collector;
  auto result = RunOnTree(collector, tmp.path(), tmp.path());
  EXPECT_EQ(result.failures, 1u);
  EXPECT_EQ((result.errors[{"ethtool", "no_device"}]), 1u);
  EXPECT_EQ(SamplesWithLabel(result.families, "netdev", "ens1f1np1"), 0u);
  EXPECT_GT(SamplesWithLabel(result.families, "netdev", "ens1f0np0"), 20u);
}

TEST(LagDcb, PfcAndTrustPerSlaveAndNothingForTheBond) {
  DcbCollector collector;
  auto result = RunOnLag(collector);
  EXPECT_EQ(result.failures, 0u);
  EXPECT_EQ(Value(result.families, "rdma_dcb_supported", kSlave0), 1);
  EXPECT_EQ(Value(result.families, "rdma_dcb_supported", kSlave1), 1);
  // dcb/bond0 says unsupported: had the bond been asked, a 0 would be exported for it.
  EXPECT_EQ(SamplesWithLabel(result.families, "netdev", "bond0"), 0u);
  EXPECT_EQ(Value(result.families, "rdma_pfc_enabled", With(kSlave0, "priority", "3")), 1);
  EXPECT_EQ(Value(result.families, "rdma_pfc_enabled", With(kSlave0, "priority", "4")), 0);
  EXPECT_EQ(Value(result.families, "rdma_pfc_enabled", With(kSlave1, "priority", "4")), 1);
  EXPECT_EQ(Value(result.families, "rdma_qos_trust_info", With(kSlave0, "mode", "dscp")), 1);
  EXPECT_EQ(Value(result.families, "rdma_qos_trust_info", With(kSlave1, "mode", "dscp")), 1);
}

TEST(LagDcb, AMissingSlaveIsCountedSinceTheNetdevCollectorOnlyReadsTheBond) {
  TempDir tmp;
  CopyLag(tmp);
  tmp.Remove("dcb/ens1f1np1");  // the fixture reader's ENODEV
  DcbCollector collector;
  auto result = RunOnTree(collector, tmp.path(), tmp.path());
  EXPECT_EQ(result.failures, 1u);
  EXPECT_EQ(Value(result.families, "rdma_dcb_supported", kSlave0), 1);
  EXPECT_FALSE(Value(result.families, "rdma_dcb_supported", kSlave1));
}

TEST(LagEcn, EcnFilesOfEachSlave) {
  EcnCollector collector;
  auto result = RunOnLag(collector);
  EXPECT_EQ(result.failures, 0u);
  auto ecn = [&](const LabelMap& slave, const char* role, const char* prio) {
    return Value(result.families, "rdma_ecn_enabled",
                 With(With(slave, "role", role), "priority", prio));
  };
  EXPECT_EQ(ecn(kSlave0, "np", "3"), 1);
  EXPECT_EQ(ecn(kSlave0, "rp", "3"), 1);
  EXPECT_EQ(ecn(kSlave1, "np", "3"), 1);
  EXPECT_EQ(ecn(kSlave1, "rp", "3"), 0);
  EXPECT_EQ(ecn(kSlave1, "rp", "2"), 0);
  EXPECT_EQ(Count(result.families, "rdma_ecn_enabled"), 32u);  // 2 slaves x 2 roles x 8
}

TEST(LagRoceConfig, ChecksAndNcclPriorityPerSlave) {
  CollectorOptions options;
  options.nccl_ib_tc = 106;  // DSCP 26 -> priority 3 on both slaves
  RoceConfigCollector collector(options);
  auto result = RunOnLag(collector);
  auto ok = [&](const LabelMap& slave, const char* check) {
    return Value(result.families, "rdma_roce_config_ok", With(slave, "check", check));
  };
  EXPECT_EQ(Value(result.families, "rdma_nccl_priority", kSlave0), 3);
  EXPECT_EQ(Value(result.families, "rdma_nccl_priority", kSlave1), 3);
  EXPECT_EQ(ok(kSlave0, "trust_dscp"), 1);
  EXPECT_EQ(ok(kSlave0, "pfc_on_nccl_priority"), 1);
  EXPECT_EQ(ok(kSlave0, "pfc_only_on_nccl_priority"), 1);
  EXPECT_EQ(ok(kSlave1, "pfc_on_nccl_priority"), 1);
  EXPECT_EQ(ok(kSlave1, "pfc_only_on_nccl_priority"), 0);  // PFC on 3 and 4
  EXPECT_EQ(ok(kSlave0, "ecn_rp_on_nccl_priority"), 1);
  EXPECT_EQ(ok(kSlave1, "ecn_rp_on_nccl_priority"), 0);
  // The port's own checks (bond0's MTU 9000, the GID table) are in each slave's set.
  EXPECT_EQ(ok(kSlave0, "mtu_at_least_4200"), 1);
  EXPECT_EQ(ok(kSlave1, "mtu_at_least_4200"), 1);
  EXPECT_EQ(ok(kSlave0, "roce_v2_gid_present"), 1);
  EXPECT_EQ(ok(kSlave1, "roce_v2_gid_present"), 1);
  EXPECT_EQ(SamplesWithLabel(result.families, "netdev", "bond0"), 0u);
}

TEST(LagCollectors, PlainRoceTreeHasNoBondLabel) {
  CollectorOptions options;
  options.nccl_ib_tc = 106;
  EthtoolCollector ethtool;
  DcbCollector dcb;
  EcnCollector ecn;
  RoceConfigCollector roce_config(options);
  for (Collector* collector : std::vector<Collector*>{&ethtool, &dcb, &ecn, &roce_config}) {
    auto result = RunOnTree(*collector, FixturePath("mlx5-roce"), FixturePath(""));
    size_t bond_labels = 0;
    for (const auto& family : result.families) {
      for (const auto& metric : family.metric) {
        for (const auto& l : metric.label)
          bond_labels += l.name == "bond" ? 1 : 0;
      }
    }
    EXPECT_EQ(bond_labels, 0u) << collector->name();
  }
}

}  // namespace
}  // namespace rdma_exporter::testing
