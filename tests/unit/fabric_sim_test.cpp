// The simulator's extra NICs of the demo fabric (issue 15): the RoCE LAG (mlx5_bond_0 on bond0
// over two ConnectX-6 Dx PFs) and the Intel E810 (irdma on ice). Checks the tree layout the
// kernel shows for them and that their counters move, through the public API and the files.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>

#include "fabric_sim/fabric_sim.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using rdma_exporter::testing::TempDir;
using rdma_fabric_sim::FabricSim;
using rdma_fabric_sim::SimConfig;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

uint64_t ReadU64(const std::string& path) {
  return std::stoull(Read(path));
}

// "     name: value" lines of an `ethtool -S` fixture.
std::map<std::string, uint64_t> Ethtool(const std::string& path) {
  std::map<std::string, uint64_t> stats;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.rfind(": ");
    const auto start = line.find_first_not_of(' ');
    if (colon == std::string::npos || start == std::string::npos) continue;
    stats[line.substr(start, colon - start)] = std::stoull(line.substr(colon + 2));
  }
  return stats;
}

// The demo fabric (8 ConnectX-7, one VF, one LAG, one E810) under `scenario`.
class DemoFabric {
 public:
  explicit DemoFabric(const std::string& scenario = "healthy", const std::string& fault = "") {
    SimConfig config;
    config.root = dir_.path();
    config.scenario = scenario;
    if (!fault.empty()) config.fault_device = fault;
    sim_ = std::make_unique<FabricSim>(config);
    std::string error;
    EXPECT_TRUE(sim_->WriteInitialTree(&error)) << error;
  }
  void Tick(int n) {
    std::string error;
    for (int i = 0; i < n; ++i)
      ASSERT_TRUE(sim_->Tick(&error)) << error;
  }
  std::string Sys(const std::string& rel) const { return sim_->sysfs_root() + "/" + rel; }
  std::string Fix(const std::string& rel) const { return sim_->fixtures_root() + "/" + rel; }
  const FabricSim& sim() const { return *sim_; }

 private:
  TempDir dir_;
  std::unique_ptr<FabricSim> sim_;
};

// The demo fabric's extra NICs take the PF slots after mlx5_7: slot 8 (bus 0x30) the LAG,
// slot 9 (bus 0x33 = 51) the E810.
constexpr const char* kBondPort = "class/infiniband/mlx5_bond_0/ports/1/";
constexpr const char* kE810 = "class/infiniband/rocep51s0f0/";
constexpr const char* kE810Port = "class/infiniband/rocep51s0f0/ports/1/";

TEST(FabricSimLag, BondAndSlavesLookLikeAnMlx5LagHost) {
  DemoFabric f;
  EXPECT_EQ(Read(f.Sys("class/infiniband/mlx5_bond_0/hca_type")), "MT4125");
  EXPECT_EQ(fs::canonical(f.Sys("class/infiniband/mlx5_bond_0/device")),
            fs::canonical(f.Sys("bus/pci/devices/0000:30:00.0")));
  EXPECT_EQ(Read(f.Sys(kBondPort + std::string("link_layer"))), "Ethernet");
  EXPECT_EQ(Read(f.Sys(kBondPort + std::string("gid_attrs/ndevs/0"))), "bond0");
  // No RDMA device for the second PF: the LAG replaces mlx5_0/mlx5_1 of that NIC.
  for (const auto& e : fs::directory_iterator(f.Sys("class/infiniband"))) {
    EXPECT_NE(fs::canonical(e.path() / "device"),
              fs::canonical(f.Sys("bus/pci/devices/0000:30:00.1")))
        << e.path();
  }
  // The bond is virtual, lists its slaves and links to them; they link back.
  EXPECT_EQ(fs::read_symlink(f.Sys("class/net/bond0")).string(), "../../devices/virtual/net/bond0");
  EXPECT_FALSE(fs::exists(f.Sys("class/net/bond0/device")));
  EXPECT_EQ(Read(f.Sys("class/net/bond0/bonding/slaves")), "ens9f0np0 ens9f1np1");
  const std::pair<const char*, const char*> slaves[] = {{"ens9f0np0", "0000:30:00.0"},
                                                        {"ens9f1np1", "0000:30:00.1"}};
  for (const auto& [slave, pci] : slaves) {
    const std::string lower = f.Sys("class/net/bond0/lower_") + slave;
    EXPECT_EQ(fs::canonical(lower), fs::canonical(f.Sys("class/net/") + slave)) << slave;
    EXPECT_EQ(fs::canonical(lower).parent_path().parent_path().filename(), pci) << slave;
    const std::string slave_dir = f.Sys("class/net/") + slave;
    EXPECT_EQ(fs::read_symlink(slave_dir + "/master").string(), "../../../../../virtual/net/bond0");
    EXPECT_EQ(fs::canonical(slave_dir + "/master"), fs::canonical(f.Sys("class/net/bond0")));
    EXPECT_EQ(fs::canonical(slave_dir + "/upper_bond0"), fs::canonical(f.Sys("class/net/bond0")));
    EXPECT_EQ(fs::canonical(slave_dir + "/device"), fs::canonical(f.Sys("bus/pci/devices/") + pci));
    // Full mlx5 ethtool content with the new counters, DCB with PFC on 3 and DSCP trust.
    const auto stats = Ethtool(f.Fix("ethtool/") + slave);
    for (const char* name :
         {"rx_err_lane_0_phy", "rx_err_lane_3_phy", "tx_discards_phy", "rx_pause_ctrl_phy",
          "tx_pause_ctrl_phy", "rx_pci_signal_integrity", "tx_pci_signal_integrity",
          "module_unplug", "module_bus_stuck", "module_high_temp", "module_bad_shorted",
          "rx_vport_rdma_unicast_packets", "tx_vport_rdma_unicast_bytes",
          "rx_vport_rdma_multicast_packets", "tx_vport_rdma_multicast_bytes", "rx_prio3_pause"}) {
      EXPECT_EQ(stats.count(name), 1u) << slave << " " << name;
    }
    const std::string dcb = Read(f.Fix("dcb/") + slave);
    EXPECT_NE(dcb.find("prio-pfc 0:off 1:off 2:off 3:on 4:off"), std::string::npos) << dcb;
    EXPECT_NE(dcb.find("dscp-prio 0:0"), std::string::npos) << dcb;
  }
  // The bonding driver has no ethtool stats and no DCB.
  EXPECT_FALSE(fs::exists(f.Fix("ethtool/bond0")));
  EXPECT_EQ(Read(f.Fix("dcb/bond0")), "unsupported");
  EXPECT_EQ(Read(f.Sys("class/net/bond0/speed")), "200000");
}

TEST(FabricSimLag, TrafficIsSplitOverTheSlavesAndSummedOnTheBond) {
  DemoFabric f;
  const auto before0 = Ethtool(f.Fix("ethtool/ens9f0np0"));
  const auto before1 = Ethtool(f.Fix("ethtool/ens9f1np1"));
  const uint64_t data_before = ReadU64(f.Sys(kBondPort + std::string("counters/port_rcv_data")));
  f.Tick(5);
  const auto after0 = Ethtool(f.Fix("ethtool/ens9f0np0"));
  const auto after1 = Ethtool(f.Fix("ethtool/ens9f1np1"));
  const uint64_t data_after = ReadU64(f.Sys(kBondPort + std::string("counters/port_rcv_data")));
  const std::string rdma = "rx_prio3_bytes";  // the RDMA bytes of the slave
  const uint64_t first = after0.at(rdma) - before0.at(rdma);
  const uint64_t second = after1.at(rdma) - before1.at(rdma);
  EXPECT_GT(first, 0u);
  EXPECT_GT(second, 0u);
  // port_rcv_data counts 4-byte words of both slaves' RDMA bytes (rounded per tick).
  EXPECT_NEAR(static_cast<double>(data_after - data_before) * 4,
              static_cast<double>(first + second), 5 * 4.0);
  // rx_corrected_bits_phy is the sum of the lanes.
  EXPECT_EQ(after0.at("rx_corrected_bits_phy"),
            after0.at("rx_err_lane_0_phy") + after0.at("rx_err_lane_1_phy") +
                after0.at("rx_err_lane_2_phy") + after0.at("rx_err_lane_3_phy"));
  // The bond's netdev statistics are the sums over its slaves.
  EXPECT_EQ(ReadU64(f.Sys("class/net/bond0/statistics/rx_bytes")),
            ReadU64(f.Sys("class/net/ens9f0np0/statistics/rx_bytes")) +
                ReadU64(f.Sys("class/net/ens9f1np1/statistics/rx_bytes")));
}

TEST(FabricSimLag, LinkDownTakesOneSlaveAndTheBondStaysUp) {
  DemoFabric f("link-down", "mlx5_bond_0");
  EXPECT_EQ(f.sim().fault_device(), "mlx5_bond_0");
  f.Tick(4);
  EXPECT_EQ(Read(f.Sys("class/net/ens9f0np0/carrier")), "0");
  EXPECT_EQ(Read(f.Sys("class/net/ens9f1np1/carrier")), "1");
  EXPECT_EQ(Read(f.Sys("class/net/bond0/speed")), "100000");
  EXPECT_EQ(Read(f.Sys(kBondPort + std::string("state"))), "4: ACTIVE");
  const auto down = Ethtool(f.Fix("ethtool/ens9f0np0"));
  f.Tick(2);
  EXPECT_EQ(Ethtool(f.Fix("ethtool/ens9f0np0")).at("rx_prio3_bytes"), down.at("rx_prio3_bytes"));
}

TEST(FabricSimLag, BadLaneRaisesOneLaneOfTheFirstSlave) {
  DemoFabric f("bad-lane", "mlx5_bond_0");
  const auto before = Ethtool(f.Fix("ethtool/ens9f0np0"));
  f.Tick(10);
  const auto after = Ethtool(f.Fix("ethtool/ens9f0np0"));
  const auto delta = [&](const char* lane) { return after.at(lane) - before.at(lane); };
  // Healthy lanes correct at most 1000 bits/s each; the failing one 20k-60k.
  EXPECT_GE(delta("rx_err_lane_3_phy"), 200000u);
  EXPECT_LE(delta("rx_err_lane_0_phy"), 10000u + 30);  // lane 0 takes the remainders
  EXPECT_LE(delta("rx_err_lane_2_phy"), 10000u);
  EXPECT_EQ(after.at("rx_corrected_bits_phy") - before.at("rx_corrected_bits_phy"),
            delta("rx_err_lane_0_phy") + delta("rx_err_lane_1_phy") + delta("rx_err_lane_2_phy") +
                delta("rx_err_lane_3_phy"));
}

TEST(FabricSimLag, ModuleUnplugIsAnEventWithALinkDrop) {
  DemoFabric f("module-unplug", "mlx5_0");
  f.Tick(2);
  EXPECT_EQ(Ethtool(f.Fix("ethtool/ens1f0np0")).at("module_unplug"), 0u);
  const uint64_t downs = Ethtool(f.Fix("ethtool/ens1f0np0")).at("link_down_events_phy");
  f.Tick(1);  // tick 3: pulled
  EXPECT_EQ(Ethtool(f.Fix("ethtool/ens1f0np0")).at("module_unplug"), 1u);
  EXPECT_EQ(Ethtool(f.Fix("ethtool/ens1f0np0")).at("link_down_events_phy"), downs + 1);
  EXPECT_EQ(Read(f.Sys("class/infiniband/mlx5_0/ports/1/state")), "1: DOWN");
  f.Tick(3);  // tick 6: re-seated, counted once
  EXPECT_EQ(Ethtool(f.Fix("ethtool/ens1f0np0")).at("module_unplug"), 1u);
  EXPECT_EQ(Read(f.Sys("class/infiniband/mlx5_0/ports/1/state")), "4: ACTIVE");
}

TEST(FabricSimE810, DeviceLooksLikeIrdmaOnIce) {
  DemoFabric f;
  EXPECT_EQ(Read(f.Sys(kE810 + std::string("device/vendor"))), "0x8086");
  EXPECT_EQ(Read(f.Sys(kE810 + std::string("device/device"))), "0x1592");
  EXPECT_EQ(fs::read_symlink(f.Sys(kE810 + std::string("device/driver"))).filename(), "ice");
  EXPECT_EQ(Read(f.Sys(kE810 + std::string("node_type"))), "1: CA");
  EXPECT_FALSE(Read(f.Sys(kE810 + std::string("fw_ver"))).empty());
  EXPECT_FALSE(fs::exists(f.Sys(kE810 + std::string("hca_type"))));  // mlx-specific
  EXPECT_FALSE(fs::exists(f.Sys(kE810 + std::string("board_id"))));
  // No process_mad: current kernels create no counters/ (PMA) group for the port.
  EXPECT_FALSE(fs::exists(f.Sys(kE810Port + std::string("counters"))));
  for (const char* name : {"ip4InOctets", "ip4OutOctets", "InRdmaWrites", "cnpHandled",
                           "cnpIgnored", "cnpSent", "RxECNMrkd", "RxUDP", "lifespan"}) {
    EXPECT_TRUE(fs::exists(f.Sys(kE810Port + std::string("hw_counters/") + name))) << name;
  }
  EXPECT_EQ(Read(f.Sys(kE810Port + std::string("gid_attrs/types/0"))), "RoCE v2");
  EXPECT_EQ(Read(f.Sys(kE810Port + std::string("gid_attrs/ndevs/0"))), "ens10f0np0");
  EXPECT_EQ(Read(f.Sys(kE810Port + std::string("rate"))), "100 Gb/sec (4X EDR)");
  const auto stats = Ethtool(f.Fix("ethtool/ens10f0np0"));
  for (const char* name :
       {"rx_priority_3_xon.nic", "rx_priority_3_xoff.nic", "tx_priority_3_xon.nic",
        "tx_priority_7_xoff.nic", "link_xon_rx.nic", "link_xoff_rx.nic", "link_xon_tx.nic",
        "link_xoff_tx.nic", "rx_crc_errors.nic", "rx_bytes.nic", "rx_dropped.nic"}) {
    EXPECT_EQ(stats.count(name), 1u) << name;
  }
  EXPECT_EQ(stats.count("rx_prio3_pause"), 0u);  // no mlx5 names
  EXPECT_NE(Read(f.Fix("dcb/ens10f0np0")).find("prio-pfc 0:off 1:off 2:off 3:on"),
            std::string::npos);
}

TEST(FabricSimE810, CongestionRaisesPriority3XoffAndCnps) {
  DemoFabric f("congestion", "rocep51s0f0");
  const auto before = Ethtool(f.Fix("ethtool/ens10f0np0"));
  const uint64_t marked = ReadU64(f.Sys(kE810Port + std::string("hw_counters/RxECNMrkd")));
  const uint64_t octets = ReadU64(f.Sys(kE810Port + std::string("hw_counters/ip4InOctets")));
  f.Tick(3);
  const auto after = Ethtool(f.Fix("ethtool/ens10f0np0"));
  EXPECT_GE(after.at("tx_priority_3_xoff.nic") - before.at("tx_priority_3_xoff.nic"), 6000u);
  EXPECT_GE(after.at("rx_priority_3_xoff.nic") - before.at("rx_priority_3_xoff.nic"), 3000u);
  EXPECT_EQ(after.at("tx_priority_0_xoff.nic"), before.at("tx_priority_0_xoff.nic"));
  EXPECT_GE(ReadU64(f.Sys(kE810Port + std::string("hw_counters/RxECNMrkd"))) - marked, 60000u);
  EXPECT_GT(ReadU64(f.Sys(kE810Port + std::string("hw_counters/ip4InOctets"))), octets);
}

TEST(FabricSimE810, PfcStormTargetsTheE810) {
  DemoFabric f("pfc-storm", "rocep51s0f0");
  EXPECT_EQ(f.sim().fault_device(), "rocep51s0f0");  // a RoCE NIC: not replaced by mlx5_0
  const auto before = Ethtool(f.Fix("ethtool/ens10f0np0"));
  f.Tick(2);
  const auto after = Ethtool(f.Fix("ethtool/ens10f0np0"));
  EXPECT_GE(after.at("tx_priority_3_xoff.nic") - before.at("tx_priority_3_xoff.nic"), 20000u);
}

TEST(FabricSimExtraNics, LeftOutWithZeroCounts) {
  TempDir dir;
  SimConfig config;
  config.root = dir.path();
  config.lag = 0;
  config.e810 = 0;
  FabricSim sim(config);
  std::string error;
  ASSERT_TRUE(sim.WriteInitialTree(&error)) << error;
  EXPECT_FALSE(fs::exists(sim.sysfs_root() + "/class/infiniband/mlx5_bond_0"));
  EXPECT_FALSE(fs::exists(sim.sysfs_root() + "/class/net/bond0"));
  EXPECT_FALSE(fs::exists(sim.sysfs_root() + "/class/infiniband/rocep51s0f0"));
}

TEST(FabricSimExtraNics, VanishAndReturnOfTheLag) {
  DemoFabric f("vanish", "mlx5_bond_0");
  f.Tick(3);
  EXPECT_FALSE(fs::exists(f.Sys("class/infiniband/mlx5_bond_0")));
  EXPECT_FALSE(fs::exists(f.Sys("class/net/ens9f1np1")));
  EXPECT_FALSE(fs::exists(f.Sys("bus/pci/devices/0000:30:00.1")));
  EXPECT_FALSE(fs::exists(f.Fix("ethtool/ens9f0np0")));
  f.Tick(3);
  EXPECT_EQ(Read(f.Sys("class/net/bond0/bonding/slaves")), "ens9f0np0 ens9f1np1");
  EXPECT_TRUE(fs::exists(f.Fix("ethtool/ens9f1np1")));
  EXPECT_TRUE(fs::exists(f.Sys(kBondPort + std::string("counters/port_rcv_data"))));
}

}  // namespace
