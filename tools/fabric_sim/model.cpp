#include "model.h"

#include <cstdio>

#include "counters.h"
#include "format.h"

namespace rdma_fabric_sim {

namespace {

bool PfIsIb(const SimConfig& cfg, int pf) {
  switch (cfg.link_layer) {
    case SimConfig::LinkLayer::Roce:
      return false;
    case SimConfig::LinkLayer::Ib:
      return true;
    case SimConfig::LinkLayer::Mixed:
      break;
  }
  return pf % 2 == 1;
}

// One PRNG stream per port for the sysfs counters and one for the netdev/ethtool model.
void SeedPort(uint64_t seed, int device_index, Port& p) {
  const uint64_t stream = (static_cast<uint64_t>(device_index) << 16) + p.num;
  p.rng = Rng(MixSeed(seed, stream));
  p.eth_rng = Rng(MixSeed(seed ^ 0xe7e7e7e7ULL, stream));
}

uint64_t Eui64FromMac(const std::array<uint8_t, 6>& m) {
  const auto ll = LinkLocalEui64(m);
  uint64_t g = 0;
  for (int i = 8; i < 16; ++i)
    g = (g << 8) | ll[static_cast<size_t>(i)];
  return g;
}

// Names and LIDs numbered across all devices of the run.
struct Numbering {
  int ib_netdevs = 0;
  uint32_t next_lid = 2;  // 0x1 is the SM
};

// Device `i` without ports: name, PCI placement, GUID, NUMA node.
Device PlaceDevice(const SimConfig& cfg, int i) {
  const int pfs = cfg.devices;
  Device d;
  d.index = i;
  d.vf = i >= pfs;
  d.pf = d.vf ? 0 : i;
  d.vf_index = d.vf ? i - pfs : 0;
  d.rng = Rng(MixSeed(cfg.seed, (static_cast<uint64_t>(i) << 16) + 0xffff));
  const int pf = d.pf;
  const int domain = pf / 64;
  const int slot = pf % 64;
  d.domain_dir = Fmt("pci%04x:00", domain);
  d.rootport = Fmt("%04x:00:%02x.%x", domain, 1 + slot / 8, slot % 8);
  d.numa = (2 * pf < cfg.devices) ? 0 : 1;
  if (IsMlx5(cfg)) {
    d.name = "mlx5_" + std::to_string(i);
    const int bus = 0x18 + slot * 3;
    d.pci = Fmt("%04x:%02x:00.%x", domain, bus, d.vf ? d.vf_index + 1 : 0);
    d.pci_rel = "devices/" + d.domain_dir + "/" + d.rootport + "/" + d.pci;
    d.node_guid = 0xb8cef60300000000ULL | (0xa10044ULL + static_cast<uint64_t>(i) * 0x100);
  } else {
    d.name = "rxe" + std::to_string(i);
    d.pci = "virtio" + std::to_string(i);
    d.pci_rel = "devices/" + d.domain_dir + "/" + d.rootport + "/" + d.pci;
  }
  return d;
}

// ConnectX-7 port: GUID and MAC from the node GUID, netdev name, LID (IB), traffic rates.
void AddressMlx5Port(const Device& d, Port& p, Numbering& numbering) {
  const int i = d.index;
  const int pn = p.num;
  p.guid = d.node_guid + static_cast<uint64_t>(pn - 1);
  p.mac = {0xb8,
           0xce,
           0xf6,
           static_cast<uint8_t>(p.guid >> 16),
           static_cast<uint8_t>(p.guid >> 8),
           static_cast<uint8_t>(p.guid)};
  const int second = (pn - 1) + 64 * (i >> 8);
  p.ipv4 = {10, static_cast<uint8_t>(second), static_cast<uint8_t>(i & 0xff), 1};
  if (p.ib) {
    p.netdev = "ib" + std::to_string(numbering.ib_netdevs++);
    p.lid = numbering.next_lid++;
  } else if (d.vf) {
    p.netdev = "ens1f0v" + std::to_string(d.vf_index);
  } else {
    p.netdev = "ens" + std::to_string(i + 1) + "f0np" + std::to_string(pn - 1);
  }
  p.tx_rate = 1e9 + p.rng.Unit() * 4e9;
  p.rx_rate = 1e9 + p.rng.Unit() * 4e9;
}

// Soft-RoCE port on a QEMU virtio-net: MAC 52:54:00:12:34:56+i, GUID its EUI-64.
void AddressRxePort(const Device& d, Port& p) {
  const int i = d.index;
  p.mac = {0x52,
           0x54,
           0x00,
           0x12,
           static_cast<uint8_t>(0x34 + (i >> 8)),
           static_cast<uint8_t>(0x56 + i)};
  p.ipv4 = {10, 0, static_cast<uint8_t>(2 + i), 15};
  p.netdev = "eth" + std::to_string(i);
  p.guid = Eui64FromMac(p.mac);
  p.tx_rate = 1e8 + p.rng.Unit() * 9e8;
  p.rx_rate = 1e8 + p.rng.Unit() * 9e8;
}

// PCI placement of the extra NIC that takes PF slot `slot` (numbered after the PFs): root port
// and bus as for PF `slot`.
Device PlaceExtraNic(const SimConfig& cfg, int index, int slot, Nic nic) {
  Device d;
  d.index = index;
  d.nic = nic;
  d.pf = slot;
  d.rng = Rng(MixSeed(cfg.seed, (static_cast<uint64_t>(index) << 16) + 0xffff));
  const int domain = slot / 64;
  const int bus = 0x18 + (slot % 64) * 3;
  d.domain_dir = Fmt("pci%04x:00", domain);
  d.rootport = Fmt("%04x:00:%02x.%x", domain, 1 + (slot % 64) / 8, slot % 8);
  d.numa = 1;
  d.pci = Fmt("%04x:%02x:00.0", domain, bus);
  d.pci_rel = "devices/" + d.domain_dir + "/" + d.rootport + "/" + d.pci;
  return d;
}

// A RoCE port of an extra NIC: 100 GbE (4X EDR as ib_get_eth_speed/mlx5 report 100G), MAC,
// IPv4, traffic rates, counters with history.
// `num` is 1 for the RDMA port; LAG slaves, which have no RDMA port, take 2 and 3 (only
// their PRNG streams use it).
Port MakeExtraPort(const SimConfig& cfg, const Device& d, PortKind kind, int num,
                   const std::array<uint8_t, 6>& mac, uint8_t ip_second) {
  Port p;
  p.num = num;
  p.kind = kind;
  p.roce_pf = kind == PortKind::kLagSlave;
  p.lane_deci_gb = 250;
  p.speed_name = "EDR";
  p.mac = mac;
  p.guid = Eui64FromMac(mac);
  p.ipv4 = {10, ip_second, static_cast<uint8_t>(d.index & 0xff), 1};
  SeedPort(cfg.seed, d.index, p);
  p.mtu = DefaultMtu(cfg, p);
  p.tx_rate = 1e9 + p.rng.Unit() * 4e9;
  p.rx_rate = 1e9 + p.rng.Unit() * 4e9;
  InitCounters(cfg, p, /*with_history=*/true);
  return p;
}

// RoCE LAG `k`: mlx5_bond_k (ConnectX-6 Dx) on PF0's PCI function, port 1 on bondk, and the
// two bonded PF netdevs ens<S>f0np0 (function .0) and ens<S>f1np1 (function .1). As on a real
// LAG host there is no RDMA device for PF1: mlx5_bond_k replaces mlx5_0/mlx5_1 of that NIC.
Device MakeLag(const SimConfig& cfg, int index, int slot, int k) {
  Device d = PlaceExtraNic(cfg, index, slot, Nic::kConnectX6DxLag);
  d.name = "mlx5_bond_" + std::to_string(k);
  d.node_guid = 0x0c42a10300000000ULL | (0xb00000ULL + static_cast<uint64_t>(k) * 0x100);
  d.sys_image_guid = d.node_guid;
  const auto mac = [&](int fn) -> std::array<uint8_t, 6> {
    return {0x0c, 0x42, 0xa1, 0xb0, static_cast<uint8_t>(k), static_cast<uint8_t>(fn)};
  };
  for (int fn = 0; fn < 2; ++fn) {
    Port slave = MakeExtraPort(cfg, d, PortKind::kLagSlave, 2 + fn, mac(fn), 200);
    slave.netdev = Fmt("ens%df%dnp%d", slot + 1, fn, fn);
    slave.pci = d.pci.substr(0, d.pci.size() - 1) + std::to_string(fn);
    slave.pci_rel = "devices/" + d.domain_dir + "/" + d.rootport + "/" + slave.pci;
    d.slaves.push_back(std::move(slave));
  }
  // The bond takes the MAC of its first slave; RDMA traffic is the sum over both slaves.
  Port bond = MakeExtraPort(cfg, d, PortKind::kLagBond, 1, mac(0), 200);
  bond.netdev = "bond" + std::to_string(k);
  d.ports.push_back(std::move(bond));
  return d;
}

// E810 `k`: the irdma device of an E810-C (100 GbE QSFP28) in RoCE mode. irdma registers
// "irdma%d", but rdma-core's udev rule (60-rdma-persistent-naming.rules, NAME_FALLBACK, as
// shipped by Ubuntu and RHEL) renames it by PCI location with the RoCE prefix: an add-in card
// has no onboard index, so it is "rocep<bus>s<slot>f<function>" (bus in decimal). The ice
// netdev is ens<S>f0np0: ice registers a devlink port, whose phys_port_name "p0" systemd
// appends as "np0", as for mlx5.
Device MakeE810(const SimConfig& cfg, int index, int slot, int k) {
  Device d = PlaceExtraNic(cfg, index, slot, Nic::kE810);
  unsigned domain = 0, bus = 0;
  std::sscanf(d.pci.c_str(), "%x:%x", &domain, &bus);
  d.name = Fmt("rocep%us0f0", bus);
  const std::array<uint8_t, 6> mac = {0xb4, 0x96, 0x91, 0xe8, static_cast<uint8_t>(k), 0x00};
  Port p = MakeExtraPort(cfg, d, PortKind::kE810, 1, mac, 210);
  p.netdev = Fmt("ens%df0np0", slot + 1);
  // irdma: node GUID and system image GUID are the EUI-64 of the netdev's MAC.
  d.node_guid = p.guid;
  d.sys_image_guid = p.guid;
  d.ports.push_back(std::move(p));
  return d;
}

Port MakePort(const SimConfig& cfg, const Device& d, int num, bool ib, Numbering& numbering) {
  Port p;
  p.num = num;
  p.ib = ib;
  p.roce_pf = IsMlx5(cfg) && !ib && !d.vf;
  SeedPort(cfg.seed, d.index, p);
  p.mtu = DefaultMtu(cfg, p);
  if (IsMlx5(cfg)) {
    AddressMlx5Port(d, p, numbering);
  } else {
    AddressRxePort(d, p);
  }
  InitCounters(cfg, p, /*with_history=*/true);
  return p;
}

}  // namespace

std::vector<Device> BuildDevices(const SimConfig& cfg) {
  std::vector<Device> devices;
  const bool mlx5 = IsMlx5(cfg);
  const int vfs = mlx5 ? cfg.vfs : 0;
  Numbering numbering;
  for (int i = 0; i < cfg.devices + vfs; ++i) {
    Device d = PlaceDevice(cfg, i);
    const int nports = (mlx5 && !d.vf) ? cfg.ports : 1;
    const bool ib = mlx5 && PfIsIb(cfg, d.pf);
    for (int pn = 1; pn <= nports; ++pn)
      d.ports.push_back(MakePort(cfg, d, pn, ib, numbering));
    if (!mlx5) d.node_guid = d.ports[0].guid;
    d.sys_image_guid = d.vf ? devices[0].node_guid : d.node_guid;
    devices.push_back(std::move(d));
  }
  for (Device& d : devices) {
    if (d.vf) devices[0].vf_devices.push_back(d.index);
  }
  if (!mlx5) return devices;
  // The extra NICs take the PF slots after the last PF, LAGs first.
  int slot = cfg.devices;
  for (int k = 0; k < cfg.lag; ++k)
    devices.push_back(MakeLag(cfg, static_cast<int>(devices.size()), slot++, k));
  for (int k = 0; k < cfg.e810; ++k)
    devices.push_back(MakeE810(cfg, static_cast<int>(devices.size()), slot++, k));
  return devices;
}

void ResetDevice(const SimConfig& cfg, Device& d) {
  d.aer_cor = AerStats{};
  d.aer_nonfatal = AerStats{};
  d.aer_fatal = AerStats{};
  d.downtrained = false;
  for (std::vector<Port>* ports : {&d.ports, &d.slaves}) {
    for (Port& p : *ports) {
      SeedPort(cfg.seed, d.index, p);
      InitCounters(cfg, p, /*with_history=*/false);
    }
  }
}

Port& FaultEthPort(Device& d) {
  return d.slaves.empty() ? d.ports[0] : d.slaves[0];
}

bool IsRoceNic(const Device& d) {
  return d.nic != Nic::kConnectX7 || (!d.ports.empty() && d.ports[0].roce_pf);
}

int DefaultMtu(const SimConfig& cfg, const Port& p) {
  return p.ib ? 4092 : (IsMlx5(cfg) || p.kind != PortKind::kStandard ? 9000 : 1500);
}

std::array<uint8_t, 16> LinkLocalEui64(const std::array<uint8_t, 6>& m) {
  return {0xfe, 0x80, 0,    0,    0,    0,    0,   0, static_cast<uint8_t>(m[0] ^ 0x02),
          m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
}

}  // namespace rdma_fabric_sim
