#include "sysfs_tree.h"

#include <sys/statfs.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "counters.h"
#include "format.h"

namespace rdma_fabric_sim {

namespace fs = std::filesystem;

namespace {

// An aer_dev_* file in the kernel format (aer_stats_attrs): every named bit, unnamed bits only
// when non-zero, then the total.
std::string RenderAer(const AerStats& s, const char* const* names, const char* array_name,
                      const char* total_name) {
  std::string out;
  for (int i = 0; i < 32; ++i) {
    const uint64_t v = s.bits[static_cast<size_t>(i)];
    if (names[i] != nullptr) {
      out += Fmt("%s %llu\n", names[i], static_cast<unsigned long long>(v));
    } else if (v != 0) {
      out += Fmt("%s_bit[%d] %llu\n", array_name, i, static_cast<unsigned long long>(v));
    }
  }
  out += Fmt("TOTAL_%s %llu\n", total_name, static_cast<unsigned long long>(s.total));
  return out;
}

std::string GuidString(uint64_t g) {
  return Fmt("%04x:%04x:%04x:%04x", static_cast<unsigned>((g >> 48) & 0xffff),
             static_cast<unsigned>((g >> 32) & 0xffff), static_cast<unsigned>((g >> 16) & 0xffff),
             static_cast<unsigned>(g & 0xffff));
}

std::string MacString(const std::array<uint8_t, 6>& m) {
  return Fmt("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

// 16 bytes -> "%pI6" (8 groups of 4 lower-case hex digits, not compressed).
std::string Gid(const std::array<uint8_t, 16>& b) {
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if (i) out += ':';
    out += Fmt("%02x%02x", b[static_cast<size_t>(2 * i)], b[static_cast<size_t>(2 * i + 1)]);
  }
  return out;
}

std::array<uint8_t, 16> LinkLocalGuid(uint64_t g) {
  std::array<uint8_t, 16> b{0xfe, 0x80};
  for (int i = 0; i < 8; ++i)
    b[static_cast<size_t>(8 + i)] = static_cast<uint8_t>(g >> (56 - 8 * i));
  return b;
}

std::array<uint8_t, 16> V4Mapped(const std::array<uint8_t, 4>& a) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a[0], a[1], a[2], a[3]};
}

// "%d%s Gb/sec (%dX%s)" as in rate_show(); lane speed in deci-Gb/s.
std::string RateString(int width, int lane_deci_gb, const char* speed_name) {
  const int rate = width * lane_deci_gb;
  return Fmt("%d%s Gb/sec (%dX %s)", rate / 10, rate % 10 ? ".5" : "", width, speed_name);
}

// The netdev's directory: a bond is a virtual device; a LAG slave sits on its own PF.
std::string NetRel(const Device& d, const Port& p) {
  if (p.kind == PortKind::kLagBond) return "devices/virtual/net/" + p.netdev;
  return (p.pci_rel.empty() ? d.pci_rel : p.pci_rel) + "/net/" + p.netdev;
}

// The relative symlink target from directory `from` to `to` (both relative to the sysfs root),
// as sysfs_create_link() makes it: up to the common ancestor, then down.
std::string RelativeLink(const std::string& from, const std::string& to) {
  return fs::path(to).lexically_relative(fs::path(from)).string();
}

// What the PCI function and the RDMA device of a NIC show.
struct NicIdentity {
  const char* vendor;
  const char* device;
  const char* vf_device;
  const char* subsystem_device;
  const char* driver;
  const char* pcie_speed;      // max_link_speed (and current when trained)
  const char* pcie_downspeed;  // current_link_speed when downtrained
  const char* fw_ver;
  const char* hca_type;  // nullptr: the driver has no hca_type/hw_rev/board_id attributes
  const char* vf_hca_type;
  const char* board_id;
};

const NicIdentity& Identity(Nic nic) {
  // ConnectX-7 (0x1021, PCIe Gen5); ConnectX-6 Dx (0x101d, Gen4, firmware 22.x); Intel E810-C
  // for QSFP (0x1592, the 100 GbE E810-CQDA2; 0x1593 is the SFP and 0x159b the 25 GbE E810-XXV
  // part). irdma has no hca_type, hw_rev or board_id: those are mlx4/mlx5/hfi1 attributes.
  static const NicIdentity kConnectX7 = {
      "0x15b3",         "0x1021",     "0x101e", "0x0007", "mlx5_core",    "32.0 GT/s PCIe",
      "16.0 GT/s PCIe", "28.39.1002", "MT4129", "MT4130", "MT_0000000838"};
  static const NicIdentity kConnectX6Dx = {
      "0x15b3",        "0x101d",     "0x101e", "0x0016", "mlx5_core",    "16.0 GT/s PCIe",
      "8.0 GT/s PCIe", "22.39.1002", "MT4125", "MT4126", "MT_0000000359"};
  static const NicIdentity kE810 = {"0x8086", "0x1592",         "0x1889",        "0x0002",
                                    "ice",    "16.0 GT/s PCIe", "8.0 GT/s PCIe", "1.71",
                                    nullptr,  nullptr,          nullptr};
  switch (nic) {
    case Nic::kConnectX6DxLag:
      return kConnectX6Dx;
    case Nic::kE810:
      return kE810;
    case Nic::kConnectX7:
      break;
  }
  return kConnectX7;
}

// One PCI function of `d` at `b`: ids, NUMA node, PCIe link, AER, driver link.
bool RenderPciFunction(SimState& s, const Device& d, const std::string& pci, const std::string& b,
                       const AerStats& cor, std::string* error) {
  TreeWriter& w = s.writer;
  const NicIdentity& id = Identity(d.nic);
  const bool pcie_down = d.downtrained;
  const std::string driver = std::string("bus/pci/drivers/") + id.driver;
  return w.File(b + "/vendor", Line(id.vendor), error) &&
         w.File(b + "/device", Line(d.vf ? id.vf_device : id.device), error) &&
         w.File(b + "/subsystem_vendor", Line(id.vendor), error) &&
         w.File(b + "/subsystem_device", Line(id.subsystem_device), error) &&
         w.File(b + "/class", d.ports[0].ib ? "0x020700\n" : "0x020000\n", error) &&
         w.File(b + "/revision", "0x00\n", error) &&
         w.File(b + "/numa_node", SNum(d.numa), error) &&
         w.File(b + "/current_link_speed", Line(pcie_down ? id.pcie_downspeed : id.pcie_speed),
                error) &&
         w.File(b + "/max_link_speed", Line(id.pcie_speed), error) &&
         w.File(b + "/current_link_width", pcie_down ? "8\n" : "16\n", error) &&
         w.File(b + "/max_link_width", "16\n", error) &&
         w.File(b + "/aer_dev_correctable",
                RenderAer(cor, kAerCorrectableNames, "dev_cor_errs", "ERR_COR"), error) &&
         w.File(
             b + "/aer_dev_nonfatal",
             RenderAer(d.aer_nonfatal, kAerUncorrectableNames, "dev_nonfatal_errs", "ERR_NONFATAL"),
             error) &&
         w.File(b + "/aer_dev_fatal",
                RenderAer(d.aer_fatal, kAerUncorrectableNames, "dev_fatal_errs", "ERR_FATAL"),
                error) &&
         w.Dir(driver, error) && w.Link(b + "/driver", "../../../../" + driver, error) &&
         w.Link("bus/pci/devices/" + pci, "../../../" + b, error);
}

// The PCI functions of `d`: the mlx5 PF or VF with its SR-IOV links, both PFs of a LAG (the
// second without AER counts of its own), the E810's function.
bool RenderPci(SimState& s, const Device& d, std::string* error) {
  TreeWriter& w = s.writer;
  const std::string& b = d.pci_rel;
  if (!RenderPciFunction(s, d, d.pci, b, d.aer_cor, error)) return false;
  if (!d.vf) {
    // The root port the card sits in (the upstream bridge): a slot of the card's own generation
    // and width, so the card is not limited by it.
    const NicIdentity& id = Identity(d.nic);
    const std::string slot = fs::path(b).parent_path().string();
    if (!w.File(slot + "/max_link_speed", Line(id.pcie_speed), error) ||
        !w.File(slot + "/max_link_width", "16\n", error)) {
      return false;
    }
  }
  if (d.nic == Nic::kConnectX6DxLag) {
    const Port& second = d.slaves[1];
    return RenderPciFunction(s, d, second.pci, second.pci_rel, AerStats{}, error);
  }
  if (d.nic == Nic::kE810) return true;
  bool ok = true;
  if (!d.vf) {
    const int total = std::max(16, static_cast<int>(d.vf_devices.size()));
    ok = w.File(b + "/sriov_totalvfs", Num(static_cast<uint64_t>(total)), error) &&
         w.File(b + "/sriov_numvfs", Num(d.vf_devices.size()), error);
    for (size_t k = 0; ok && k < d.vf_devices.size(); ++k) {
      const Device& vf = s.devices[static_cast<size_t>(d.vf_devices[k])];
      ok = w.Link(b + "/virtfn" + std::to_string(k), "../" + vf.pci, error);
    }
  } else {
    ok = w.Link(b + "/physfn", "../" + s.devices[static_cast<size_t>(d.pf)].pci, error);
  }
  return ok;
}

// rxe: the virtio-net PCI function and its virtioN child (the netdev parent).
bool RenderVirtio(SimState& s, const Device& d, std::string* error) {
  TreeWriter& w = s.writer;
  const std::string pcifn = d.rootport;  // virtio-net sits directly on the root bus
  const std::string b = "devices/" + d.domain_dir + "/" + pcifn;
  return w.File(b + "/vendor", "0x1af4\n", error) && w.File(b + "/device", "0x1000\n", error) &&
         w.File(b + "/numa_node", "-1\n", error) &&
         w.File(d.pci_rel + "/vendor", "0x1af4\n", error) &&
         w.File(d.pci_rel + "/device", "0x0001\n", error) &&
         w.Link("bus/pci/devices/" + pcifn, "../../../" + b, error);
}

// class/infiniband/<dev>: node type, GUIDs, firmware and board attributes.
bool RenderIbDevice(SimState& s, const Device& d, std::string* error) {
  TreeWriter& w = s.writer;
  const std::string b = IbRel(s.cfg, d);
  bool ok = w.File(b + "/node_type", "1: CA\n", error) &&
            w.File(b + "/node_guid", Line(GuidString(d.node_guid)), error) &&
            w.File(b + "/sys_image_guid", Line(GuidString(d.sys_image_guid)), error) &&
            w.Link("class/infiniband/" + d.name, "../../" + b, error);
  if (!ok) return false;
  if (s.mlx5()) {
    const NicIdentity& id = Identity(d.nic);
    ok = w.File(b + "/fw_ver", Line(id.fw_ver), error) &&
         w.File(b + "/node_desc", "demo-node " + d.name + "\n", error) &&
         w.Link(b + "/device", "../../../" + d.pci, error);
    if (ok && id.hca_type != nullptr) {
      ok = w.File(b + "/hca_type", Line(d.vf ? id.vf_hca_type : id.hca_type), error) &&
           w.File(b + "/hw_rev", "0\n", error) && w.File(b + "/board_id", Line(id.board_id), error);
    }
  } else {
    ok = w.File(b + "/fw_ver", "\n", error) && w.File(b + "/node_desc", "rxe\n", error) &&
         w.File(b + "/parent", Line(d.ports[0].netdev), error);
  }
  return ok;
}

std::string PortRate(const SimConfig& cfg, const Port& p) {
  if (IsMlx5(cfg)) return RateString(p.half_width ? 2 : 4, p.lane_deci_gb, p.speed_name);
  return p.half_width ? RateString(1, 25, "SDR") : RateString(1, 100, "FDR10");
}

int64_t NetSpeed(const SimConfig& cfg, const Port& p) {
  if (!p.up) return -1;
  if (IsMlx5(cfg)) return int64_t{p.half_width ? 2 : 4} * p.lane_deci_gb * 100;
  return p.half_width ? 1000 : 10000;
}

// The port attributes: state, rate, link layer, LIDs, capability mask, P_Key table.
bool RenderPortAttributes(SimState& s, const std::string& b, const Port& p, std::string* error) {
  TreeWriter& w = s.writer;
  const char* state = p.up ? "4: ACTIVE\n" : "1: DOWN\n";
  const char* phys = p.up ? "5: LinkUp\n" : (s.mlx5() ? "3: Disabled\n" : "2: Polling\n");
  // irdma_query_port: lid 1, IB_PORT_CM_SUP | IB_PORT_REINIT_SUP.
  const bool e810 = p.kind == PortKind::kE810;
  const uint32_t cap = p.ib ? 0xa651e848u : (e810 ? 0x00050000u : 0x00010000u);
  return w.File(b + "/state", state, error) && w.File(b + "/phys_state", phys, error) &&
         w.File(b + "/rate", Line(PortRate(s.cfg, p)), error) &&
         w.File(b + "/link_layer", p.ib ? "InfiniBand\n" : "Ethernet\n", error) &&
         w.File(b + "/lid", Fmt("0x%x\n", e810 ? 1u : p.lid), error) &&
         w.File(b + "/sm_lid", p.ib ? "0x1\n" : "0x0\n", error) &&
         w.File(b + "/sm_sl", "0\n", error) && w.File(b + "/lid_mask_count", "0\n", error) &&
         w.File(b + "/cap_mask", Fmt("0x%08x\n", cap), error) &&
         w.File(b + "/pkeys/0", "0xffff\n", error);
}

struct GidEntry {
  std::array<uint8_t, 16> gid{};
  const char* type = nullptr;  // nullptr = empty entry
  bool ndev = false;
};

// The GID table of port `p` (gids_per_port entries, unused ones the zero GID).
std::vector<GidEntry> GidTable(const SimConfig& cfg, const Port& p) {
  std::vector<GidEntry> gids(static_cast<size_t>(std::max(1, cfg.gids_per_port)));
  if (p.ib) {
    gids[0] = {LinkLocalGuid(p.guid), "IB/RoCE v1", false};
  } else if (IsMlx5(cfg) && p.kind != PortKind::kE810) {
    const GidEntry want[4] = {{LinkLocalEui64(p.mac), "IB/RoCE v1", true},
                              {LinkLocalEui64(p.mac), "RoCE v2", true},
                              {V4Mapped(p.ipv4), "IB/RoCE v1", true},
                              {V4Mapped(p.ipv4), "RoCE v2", true}};
    for (size_t i = 0; i < 4 && i < gids.size(); ++i)
      gids[i] = want[i];
  } else {  // rxe and irdma support RoCE v2 only
    const GidEntry want[2] = {{LinkLocalEui64(p.mac), "RoCE v2", true},
                              {V4Mapped(p.ipv4), "RoCE v2", true}};
    for (size_t i = 0; i < 2 && i < gids.size(); ++i)
      gids[i] = want[i];
  }
  if (!p.rocev2_gids) {  // deleted entries read as the zero GID, without types/ndevs
    for (GidEntry& g : gids) {
      if (g.type != nullptr && std::string_view(g.type) == "RoCE v2") g = GidEntry{};
    }
  }
  return gids;
}

// gids/N, and gid_attrs/types/N and gid_attrs/ndevs/N for the entries in use (removed when an
// entry is deleted).
bool RenderGidTable(SimState& s, const std::string& b, const Port& p, std::string* error) {
  TreeWriter& w = s.writer;
  const std::vector<GidEntry> gids = GidTable(s.cfg, p);
  bool ok = w.Dir(b + "/gid_attrs/types", error) && w.Dir(b + "/gid_attrs/ndevs", error);
  for (size_t i = 0; ok && i < gids.size(); ++i) {
    const std::string idx = std::to_string(i);
    const std::string type_rel = b + "/gid_attrs/types/" + idx;
    const std::string ndev_rel = b + "/gid_attrs/ndevs/" + idx;
    ok = w.File(b + "/gids/" + idx, Line(Gid(gids[i].gid)), error);
    if (ok && gids[i].type != nullptr) {
      ok = w.File(type_rel, Line(gids[i].type), error);
    } else if (ok && w.HasFile(type_rel)) {
      ok = w.Remove(type_rel, error);
    }
    if (ok && gids[i].ndev) {
      ok = w.File(ndev_rel, Line(p.netdev), error);
    } else if (ok && w.HasFile(ndev_rel)) {
      ok = w.Remove(ndev_rel, error);
    }
  }
  return ok;
}

bool RenderPort(SimState& s, const Device& d, const Port& p, std::string* error) {
  TreeWriter& w = s.writer;
  const std::string b = IbRel(s.cfg, d) + "/ports/" + std::to_string(p.num);
  if (!RenderPortAttributes(s, b, p, error) || !RenderGidTable(s, b, p, error)) return false;
  for (const auto& [key, c] : p.counters) {
    if (!w.File(b + "/" + key, Num(c.value), error)) return false;
  }
  return w.File(b + "/hw_counters/lifespan", "10\n", error);
}

// IPoIB: the 20-byte hardware address (QPN flags, then the GID fe80::<port GUID>); else the MAC.
std::string NetdevAddress(const Port& p) {
  if (!p.ib) return MacString(p.mac);
  std::string address = "00:00:10:87:fe:80:00:00:00:00:00:00";
  for (int i = 0; i < 8; ++i) {
    address += Fmt(":%02x", static_cast<unsigned>((p.guid >> (56 - 8 * i)) & 0xff));
  }
  return address;
}

// Kernel netdev statistics. On mlx5e rx_dropped is the 2863 if_in_discards (rx_discards_phy),
// rx_missed_errors is rx_out_of_buffer and rx_crc_errors the 802.3 FCS errors
// (mlx5e_get_stats); packets/bytes are the kernel-path (SW) counters.
bool RenderNetdevStatistics(SimState& s, const std::string& b, const Port& p, std::string* error) {
  const uint64_t rx_crc = EthValue(p, "rx_crc_errors_phy");
  const std::pair<const char*, uint64_t> stats[] = {
      {"rx_packets", EthValue(p, "rx_packets")},
      {"tx_packets", EthValue(p, "tx_packets")},
      {"rx_bytes", EthValue(p, "rx_bytes")},
      {"tx_bytes", EthValue(p, "tx_bytes")},
      {"rx_errors", rx_crc},
      {"tx_errors", EthValue(p, "tx_errors_phy")},
      {"rx_dropped", EthValue(p, "rx_discards_phy")},
      {"tx_dropped", 0},
      {"rx_crc_errors", rx_crc},
      {"rx_missed_errors", EthValue(p, "rx_out_of_buffer")},
  };
  for (const auto& [name, value] : stats) {
    if (!s.writer.File(b + "/statistics/" + name, Num(value), error)) return false;
  }
  return true;
}

// MLNX_OFED en_ecn.c: per-priority ECN enables and the NP parameters (RoCE PFs, not VFs).
bool RenderEcn(SimState& s, const std::string& b, const Port& p, std::string* error) {
  TreeWriter& w = s.writer;
  for (int q = 0; q < 8; ++q) {
    const char* on = (p.ecn_mask & (1u << q)) ? "1\n" : "0\n";
    if (!w.File(Fmt("%s/ecn/roce_np/enable/%d", b.c_str(), q), on, error) ||
        !w.File(Fmt("%s/ecn/roce_rp/enable/%d", b.c_str(), q), on, error)) {
      return false;
    }
  }
  return w.File(b + "/ecn/roce_np/min_time_between_cnps", "4\n", error) &&
         w.File(b + "/ecn/roce_np/cnp_dscp", "48\n", error) &&
         w.File(b + "/ecn/roce_np/cnp_802p_prio", SNum(kCnpPrio), error);
}

// The bond's own files (bonding/, lower_<slave> links from netdev_adjacent_sysfs_add) and,
// on each slave, master and upper_<bond> (__netdev_adjacent_dev_insert) and bonding_slave/
// (bond_sysfs_slave.c). 802.3ad, the usual RoCE LAG mode.
bool RenderBondLinks(SimState& s, const Device& d, std::string* error) {
  TreeWriter& w = s.writer;
  const Port& bond = d.ports[0];
  const std::string b = NetRel(d, bond);
  std::string slaves;
  bool ok = w.File(b + "/bonding/mode", "802.3ad 4\n", error) &&
            w.File(b + "/bonding/mii_status", bond.up ? "up\n" : "down\n", error) &&
            w.File(b + "/bonding/xmit_hash_policy", "layer3+4 1\n", error);
  for (const Port& slave : d.slaves) {
    const std::string sb = NetRel(d, slave);
    slaves += (slaves.empty() ? "" : " ") + slave.netdev;
    ok = ok && w.Link(b + "/lower_" + slave.netdev, RelativeLink(b, sb), error) &&
         w.Link(sb + "/master", RelativeLink(sb, b), error) &&
         w.Link(sb + "/upper_" + bond.netdev, RelativeLink(sb, b), error) &&
         w.File(sb + "/bonding_slave/state", "active\n", error) &&
         w.File(sb + "/bonding_slave/mii_status", slave.up ? "up\n" : "down\n", error) &&
         w.File(sb + "/bonding_slave/link_failure_count", SNum(slave.carrier_down - 1), error) &&
         w.File(sb + "/bonding_slave/perm_hwaddr", Line(MacString(slave.mac)), error);
  }
  return ok && w.File(b + "/bonding/slaves", Line(slaves), error);
}

// The bond's link speed: the sum over the slaves that are up (bond_update_speed_duplex).
int64_t BondSpeed(const SimConfig& cfg, const Device& d) {
  int64_t speed = 0;
  for (const Port& slave : d.slaves) {
    if (slave.up) speed += NetSpeed(cfg, slave);
  }
  return speed > 0 ? speed : -1;
}

bool RenderNetdev(SimState& s, const Device& d, const Port& p, std::string* error) {
  TreeWriter& w = s.writer;
  const std::string b = NetRel(d, p);
  const int mtu = p.mtu > 0 ? p.mtu : DefaultMtu(s.cfg, p);
  const bool bond = p.kind == PortKind::kLagBond;
  if (!RenderNetdevStatistics(s, b, p, error)) return false;
  if (p.roce_pf && !RenderEcn(s, b, p, error)) return false;
  // A bond is virtual: no device link. The other netdevs link to their PCI function.
  if (!bond && !w.Link(b + "/device", "../../../" + (p.pci.empty() ? d.pci : p.pci), error)) {
    return false;
  }
  // flags: IFF_UP | IFF_BROADCAST | IFF_MULTICAST (the simulator never sets admin down), plus
  // IFF_MASTER (0x400) on a bond and IFF_SLAVE (0x800) on its slaves.
  const char* flags = bond ? "0x1403\n" : (p.kind == PortKind::kLagSlave ? "0x1803\n" : "0x1003\n");
  const int64_t speed = bond ? BondSpeed(s.cfg, d) : NetSpeed(s.cfg, p);
  const int dev_port = s.mlx5() && p.kind == PortKind::kStandard ? p.num - 1 : 0;
  // 802.3ad gives every slave the bond's MAC (the slave's own is bonding_slave/perm_hwaddr).
  const Port& addressed = p.kind == PortKind::kLagSlave ? d.ports[0] : p;
  return w.File(b + "/address", Line(NetdevAddress(addressed)), error) &&
         w.File(b + "/flags", flags, error) &&
         w.File(b + "/operstate", p.up ? "up\n" : "down\n", error) &&
         w.File(b + "/carrier", p.up ? "1\n" : "0\n", error) &&
         w.File(b + "/mtu", SNum(mtu), error) && w.File(b + "/speed", SNum(speed), error) &&
         w.File(b + "/dev_id", "0x0\n", error) && w.File(b + "/dev_port", SNum(dev_port), error) &&
         w.File(b + "/carrier_changes", SNum(p.carrier_up + p.carrier_down), error) &&
         w.File(b + "/carrier_up_count", SNum(p.carrier_up), error) &&
         w.File(b + "/carrier_down_count", SNum(p.carrier_down), error) &&
         w.File(b + "/type", p.ib ? "32\n" : "1\n", error) &&
         w.Link("class/net/" + p.netdev, "../../" + b, error);
}

}  // namespace

std::string IbRel(const SimConfig& cfg, const Device& d) {
  return IsMlx5(cfg) ? d.pci_rel + "/infiniband/" + d.name : "devices/virtual/infiniband/" + d.name;
}

bool PrepareSysfsRoot(SimState& s, std::string* error) {
  std::error_code ec;
  const std::string sys = s.cfg.root + "/sys";
  s.writer.Reset(sys);
  // Safety: never touch a real sysfs (e.g. --root /).
  struct statfs sfs;
  if (::statfs(sys.c_str(), &sfs) == 0 && static_cast<uint64_t>(sfs.f_type) == 0x62656572ULL) {
    *error = "refusing to overwrite " + sys + ": it is a real sysfs mount";
    return false;
  }
  if (fs::weakly_canonical(sys, ec) == fs::path("/sys")) {
    *error = "refusing to overwrite /sys";
    return false;
  }
  ec.clear();
  fs::remove_all(sys, ec);
  if (ec) {
    *error = "remove " + sys + ": " + ec.message();
    return false;
  }
  fs::create_directories(sys, ec);
  if (ec) {
    *error = "mkdir " + sys + ": " + ec.message();
    return false;
  }
  return s.writer.Dir("class/infiniband", error) && s.writer.Dir("class/net", error) &&
         s.writer.Dir("bus/pci/devices", error);
}

bool RenderDeviceSysfs(SimState& s, const Device& d, std::string* error) {
  if (s.mlx5()) {
    if (!RenderPci(s, d, error)) return false;
  } else {
    if (!RenderVirtio(s, d, error)) return false;
  }
  return RenderIbDevice(s, d, error);
}

bool RenderPortSysfs(SimState& s, const Device& d, const Port& p, std::string* error) {
  return RenderPort(s, d, p, error) && RenderNetdev(s, d, p, error);
}

bool RenderSlaveSysfs(SimState& s, const Device& d, const Port& slave, std::string* error) {
  if (!RenderNetdev(s, d, slave, error)) return false;
  // After the last slave: the bond's and the slaves' adjacency links (the dirs now exist).
  return &slave != &d.slaves.back() || RenderBondLinks(s, d, error);
}

}  // namespace rdma_fabric_sim
