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

std::string NetRel(const Device& d, const Port& p) {
  return d.pci_rel + "/net/" + p.netdev;
}

// The mlx5 PCI function: ids, NUMA node, PCIe link, AER, driver, SR-IOV links.
bool RenderPci(SimState& s, const Device& d, std::string* error) {
  TreeWriter& w = s.writer;
  const std::string& b = d.pci_rel;
  const bool pcie_down = d.downtrained;
  bool ok =
      w.File(b + "/vendor", "0x15b3\n", error) &&
      w.File(b + "/device", d.vf ? "0x101e\n" : "0x1021\n", error) &&
      w.File(b + "/subsystem_vendor", "0x15b3\n", error) &&
      w.File(b + "/subsystem_device", "0x0007\n", error) &&
      w.File(b + "/class", d.ports[0].ib ? "0x020700\n" : "0x020000\n", error) &&
      w.File(b + "/revision", "0x00\n", error) && w.File(b + "/numa_node", SNum(d.numa), error) &&
      w.File(b + "/current_link_speed", pcie_down ? "16.0 GT/s PCIe\n" : "32.0 GT/s PCIe\n",
             error) &&
      w.File(b + "/max_link_speed", "32.0 GT/s PCIe\n", error) &&
      w.File(b + "/current_link_width", pcie_down ? "8\n" : "16\n", error) &&
      w.File(b + "/max_link_width", "16\n", error) &&
      w.File(b + "/aer_dev_correctable",
             RenderAer(d.aer_cor, kAerCorrectableNames, "dev_cor_errs", "ERR_COR"), error) &&
      w.File(b + "/aer_dev_nonfatal",
             RenderAer(d.aer_nonfatal, kAerUncorrectableNames, "dev_nonfatal_errs", "ERR_NONFATAL"),
             error) &&
      w.File(b + "/aer_dev_fatal",
             RenderAer(d.aer_fatal, kAerUncorrectableNames, "dev_fatal_errs", "ERR_FATAL"),
             error) &&
      w.Dir("bus/pci/drivers/mlx5_core", error) &&
      w.Link(b + "/driver", "../../../../bus/pci/drivers/mlx5_core", error) &&
      w.Link("bus/pci/devices/" + d.pci, "../../../" + b, error);
  if (!ok) return false;
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
    ok = w.File(b + "/fw_ver", "28.39.1002\n", error) &&
         w.File(b + "/hca_type", d.vf ? "MT4130\n" : "MT4129\n", error) &&
         w.File(b + "/hw_rev", "0\n", error) && w.File(b + "/board_id", "MT_0000000838\n", error) &&
         w.File(b + "/node_desc", "demo-node " + d.name + "\n", error) &&
         w.Link(b + "/device", "../../../" + d.pci, error);
  } else {
    ok = w.File(b + "/fw_ver", "\n", error) && w.File(b + "/node_desc", "rxe\n", error) &&
         w.File(b + "/parent", Line(d.ports[0].netdev), error);
  }
  return ok;
}

std::string PortRate(const SimConfig& cfg, const Port& p) {
  if (IsMlx5(cfg)) return RateString(p.half_width ? 2 : 4, 1000, "NDR");
  return p.half_width ? RateString(1, 25, "SDR") : RateString(1, 100, "FDR10");
}

int64_t NetSpeed(const SimConfig& cfg, const Port& p) {
  if (!p.up) return -1;
  if (IsMlx5(cfg)) return p.half_width ? 200000 : 400000;
  return p.half_width ? 1000 : 10000;
}

// The port attributes: state, rate, link layer, LIDs, capability mask, P_Key table.
bool RenderPortAttributes(SimState& s, const std::string& b, const Port& p, std::string* error) {
  TreeWriter& w = s.writer;
  const char* state = p.up ? "4: ACTIVE\n" : "1: DOWN\n";
  const char* phys = p.up ? "5: LinkUp\n" : (s.mlx5() ? "3: Disabled\n" : "2: Polling\n");
  const uint32_t cap = p.ib ? 0xa651e848u : 0x00010000u;
  return w.File(b + "/state", state, error) && w.File(b + "/phys_state", phys, error) &&
         w.File(b + "/rate", Line(PortRate(s.cfg, p)), error) &&
         w.File(b + "/link_layer", p.ib ? "InfiniBand\n" : "Ethernet\n", error) &&
         w.File(b + "/lid", Fmt("0x%x\n", p.lid), error) &&
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
  } else if (IsMlx5(cfg)) {
    const GidEntry want[4] = {{LinkLocalEui64(p.mac), "IB/RoCE v1", true},
                              {LinkLocalEui64(p.mac), "RoCE v2", true},
                              {V4Mapped(p.ipv4), "IB/RoCE v1", true},
                              {V4Mapped(p.ipv4), "RoCE v2", true}};
    for (size_t i = 0; i < 4 && i < gids.size(); ++i)
      gids[i] = want[i];
  } else {  // rxe supports RoCE v2 only
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

bool RenderNetdev(SimState& s, const Device& d, const Port& p, std::string* error) {
  TreeWriter& w = s.writer;
  const std::string b = NetRel(d, p);
  const int mtu = p.mtu > 0 ? p.mtu : DefaultMtu(s.cfg, p);
  if (!RenderNetdevStatistics(s, b, p, error)) return false;
  if (p.roce_pf && !RenderEcn(s, b, p, error)) return false;
  // flags: IFF_UP | IFF_BROADCAST | IFF_MULTICAST (the simulator never sets admin down).
  return w.File(b + "/address", Line(NetdevAddress(p)), error) &&
         w.File(b + "/flags", "0x1003\n", error) &&
         w.File(b + "/operstate", p.up ? "up\n" : "down\n", error) &&
         w.File(b + "/carrier", p.up ? "1\n" : "0\n", error) &&
         w.File(b + "/mtu", SNum(mtu), error) &&
         w.File(b + "/speed", SNum(NetSpeed(s.cfg, p)), error) &&
         w.File(b + "/dev_id", "0x0\n", error) &&
         w.File(b + "/dev_port", SNum(s.mlx5() ? p.num - 1 : 0), error) &&
         w.File(b + "/carrier_changes", SNum(p.carrier_up + p.carrier_down), error) &&
         w.File(b + "/carrier_up_count", SNum(p.carrier_up), error) &&
         w.File(b + "/carrier_down_count", SNum(p.carrier_down), error) &&
         w.File(b + "/type", p.ib ? "32\n" : "1\n", error) &&
         w.Link(b + "/device", "../../../" + d.pci, error) &&
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

}  // namespace rdma_fabric_sim
