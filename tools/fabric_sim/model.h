// The simulated hardware: devices (PFs, VFs, rxe links), their ports and counters, and the
// state of one simulator run (the scenario in force, the tick, the two output trees).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fabric_sim.h"
#include "rng.h"
#include "tree_writer.h"

namespace rdma_fabric_sim {

enum class Overflow { kSaturate, kWrap };

struct Counter {
  uint64_t value = 0;
  int bits = 64;
  Overflow overflow = Overflow::kWrap;
  bool frozen = false;  // excluded from the healthy traffic model (scenario owns it)

  uint64_t Max() const { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
  void Add(uint64_t n) {
    if (overflow == Overflow::kWrap) {
      value = (value + n) & Max();
    } else {
      value = (Max() - value < n) ? Max() : value + n;
    }
  }
  void Set(uint64_t v) { value = std::min(v, Max()); }
};

// PCIe AER counts of one aer_dev_* file: one per status bit, and their total.
struct AerStats {
  std::array<uint64_t, 32> bits{};
  uint64_t total = 0;
};

// What a port models. kStandard is the port of the run's layout (mlx5 PF/VF/IB or rxe); the
// others belong to the extra NICs of the demo fabric (SimConfig::lag, SimConfig::e810).
enum class PortKind {
  kStandard,
  kLagBond,   // the RDMA port of mlx5_bond_N: its netdev is bondN (no ethtool stats, no DCB)
  kLagSlave,  // a bonded PF's netdev (no RDMA port of its own): full mlx5 ethtool, DCB, ECN
  kE810,      // irdma RoCE port on an ice netdev: irdma hw_counters, no PMA, ice ethtool
};

struct Port {
  int num = 1;
  bool ib = false;
  PortKind kind = PortKind::kStandard;
  std::string netdev;
  // The PCI function the netdev sits on, when it is not the device's (the second LAG slave).
  std::string pci;
  std::string pci_rel;
  // Link speed: width x lane speed (deci-Gb/s) and the IB speed name of the rate file.
  int lane_deci_gb = 1000;
  const char* speed_name = "NDR";
  uint64_t guid = 0;  // port GUID (IB) / base of the MAC (RoCE)
  std::array<uint8_t, 6> mac{};
  std::array<uint8_t, 4> ipv4{};
  uint32_t lid = 0;
  bool up = true;
  bool half_width = false;
  int64_t carrier_up = 1;
  int64_t carrier_down = 1;
  double tx_rate = 0;  // bytes per second
  double rx_rate = 0;
  std::map<std::string, Counter> counters;  // key: "counters/x" or "hw_counters/x"
  // Netdev statistics: `ethtool -S` names (mlx5 RoCE PFs: the full set of kEthtool* in
  // counters.h; other netdevs: only the kernel-path rx/tx packets/bytes).
  std::map<std::string, Counter> eth;
  // RoCE configuration (set from the scenario each tick; defaults are the healthy setup).
  uint8_t pfc_mask = 0x08;  // PFC on priority 3
  bool trust_dscp = true;   // DSCP APP entries present, dscp2prio = dscp >> 3
  int mtu = 0;              // netdev MTU (default per layout/link layer)
  uint8_t ecn_mask = 0x08;  // ECN (roce_np and roce_rp) enabled on priority 3
  bool rocev2_gids = true;
  bool roce_pf = false;  // mlx5 RoCE PF port: full ethtool set, DCB fixture, OFED ECN files
  // The transceiver (fixtures/module/<netdev>): lane optic_lane's receive power has been
  // falling for optic_decay_ticks ticks (-1: healthy).
  int optic_decay_ticks = -1;
  int optic_lane = 0;
  Rng rng;
  Rng eth_rng;  // separate stream, so the sysfs counters do not depend on the ethtool model
};

// The NIC a device models.
enum class Nic {
  kConnectX7,       // the run's layout (mlx5 ConnectX-7, or rxe)
  kConnectX6DxLag,  // RoCE LAG: two ConnectX-6 Dx PFs bonded, one RDMA device mlx5_bond_N
  kE810,            // Intel E810-C (ice netdev + irdma RoCE device)
};

struct Device {
  int index = 0;  // global index (PFs first, then VFs, then the LAG and E810 NICs)
  Nic nic = Nic::kConnectX7;
  std::string name;
  bool vf = false;
  int pf = 0;              // PF index (for VFs: the parent PF)
  int vf_index = 0;        // VF number within the PF
  std::string domain_dir;  // "pci0000:00"
  std::string rootport;    // "0000:00:01.0"
  std::string pci;         // "0000:18:00.0" (mlx5) / "virtio0" (rxe netdev parent)
  std::string pci_rel;     // "devices/pci0000:00/0000:00:01.0/0000:18:00.0"
  uint64_t node_guid = 0;
  uint64_t sys_image_guid = 0;
  int numa = 0;
  bool present = true;
  bool downtrained = false;
  AerStats aer_cor, aer_nonfatal, aer_fatal;
  std::vector<Port> ports;
  // RoCE LAG: the two bonded PF netdevs (ports[0] is the RDMA port on the bond netdev).
  std::vector<Port> slaves;
  std::vector<int> vf_devices;  // indexes of this PF's VF devices
  Rng rng;
};

struct Scenario;

inline bool IsMlx5(const SimConfig& cfg) {
  return cfg.layout == SimConfig::Layout::Mlx5;
}

// One simulator run (FabricSim's state).
struct SimState {
  SimConfig cfg;
  const Scenario* scenario = nullptr;
  int fault_index = -1;  // device index hit by the scenario, -1 = none
  uint64_t tick = 0;
  uint64_t scenario_start = 0;  // tick at which the scenario was set (SetScenario)
  bool initialized = false;
  std::vector<Device> devices;
  TreeWriter writer;    // root/sys, in-place rewrites
  TreeWriter fixtures;  // root/fixtures (ethtool/, dcb/), temp file + rename

  bool mlx5() const { return IsMlx5(cfg); }
  Device& fault() { return devices[static_cast<size_t>(fault_index)]; }
};

// The devices of `cfg` at tick 0: names, PCI addresses, GUIDs, netdevs, and counters with a
// plausible history.
std::vector<Device> BuildDevices(const SimConfig& cfg);

// A device after a driver re-probe: counters from zero, AER clear, PCIe trained, each port's
// PRNG streams re-seeded as at start-up.
void ResetDevice(const SimConfig& cfg, Device& d);

// The port whose netdev carries the `ethtool -S`, DCB and link faults of the device: the first
// slave of a LAG (the bond netdev has no statistics of its own), else port 1.
Port& FaultEthPort(Device& d);

// True if the device is a RoCE NIC with DCB and per-priority statistics (a RoCE-only scenario
// can target it): an mlx5 RoCE PF, a LAG or an E810.
bool IsRoceNic(const Device& d);

// The netdev MTU of a port without a configuration fault.
int DefaultMtu(const SimConfig& cfg, const Port& p);

// fe80::EUI-64(mac), the link-local GID of a RoCE port.
std::array<uint8_t, 16> LinkLocalEui64(const std::array<uint8_t, 6>& m);

}  // namespace rdma_fabric_sim
