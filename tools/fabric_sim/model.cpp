#include "model.h"

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
  return devices;
}

void ResetDevice(const SimConfig& cfg, Device& d) {
  d.aer_cor = AerStats{};
  d.aer_nonfatal = AerStats{};
  d.aer_fatal = AerStats{};
  d.downtrained = false;
  for (Port& p : d.ports) {
    SeedPort(cfg.seed, d.index, p);
    InitCounters(cfg, p, /*with_history=*/false);
  }
}

int DefaultMtu(const SimConfig& cfg, const Port& p) {
  return p.ib ? 4092 : (IsMlx5(cfg) ? 9000 : 1500);
}

std::array<uint8_t, 16> LinkLocalEui64(const std::array<uint8_t, 6>& m) {
  return {0xfe, 0x80, 0,    0,    0,    0,    0,   0, static_cast<uint8_t>(m[0] ^ 0x02),
          m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
}

}  // namespace rdma_fabric_sim
