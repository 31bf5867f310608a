#include "fixtures.h"

#include <algorithm>
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

// Appends one `ethtool -S` line: "     name: value" (ethtool do_gstats).
void PutStat(std::string& out, std::string_view name, uint64_t v) {
  out += "     ";
  out += name;
  out += ": ";
  out += std::to_string(v);
  out += '\n';
}

void PutPrioStat(std::string& out, const Port& p, PrioStat stat, int prio) {
  const std::string& name = PrioName(stat, prio);
  PutStat(out, name, EthValue(p, name));
}

// virtio_net under rxe: per-queue counters.
std::string RenderVirtioEthtool(const Port& p) {
  std::string out = "NIC statistics:\n";
  PutStat(out, "rx_queue_0_packets", EthValue(p, "rx_packets"));
  PutStat(out, "rx_queue_0_bytes", EthValue(p, "rx_bytes"));
  PutStat(out, "rx_queue_0_drops", 0);
  PutStat(out, "rx_queue_0_kicks", EthValue(p, "rx_packets") / 64);
  PutStat(out, "tx_queue_0_packets", EthValue(p, "tx_packets"));
  PutStat(out, "tx_queue_0_bytes", EthValue(p, "tx_bytes"));
  PutStat(out, "tx_queue_0_kicks", EthValue(p, "tx_packets") / 16);
  return out;
}

// mlx5 `ethtool -S` text in driver group order: port stats, per-priority traffic, PFC (only
// for PFC-enabled priorities), pause storm events, per-priority drops and marks.
std::string RenderMlx5Ethtool(const Port& p) {
  std::string out = "NIC statistics:\n";
  out.reserve(8192);
  uint64_t rx_pause = 0;
  uint64_t tx_pause = 0;
  for (int q = 0; q < 8; ++q) {
    rx_pause += EthValue(p, PrioName(kRxPrioPause, q));
    tx_pause += EthValue(p, PrioName(kTxPrioPause, q));
  }
  for (const CounterDef& d : kEthtoolPortStats) {
    const std::string_view name = d.name;
    if (name == "rx_pause_ctrl_phy") {
      PutStat(out, name, rx_pause);
    } else if (name == "tx_pause_ctrl_phy") {
      PutStat(out, name, tx_pause);
    } else if (name == "rx_corrected_bits_phy") {  // the lanes' sum, whatever a fault adds
      uint64_t bits = 0;
      for (const char* lane : kLaneErrorStats)
        bits += EthValue(p, lane);
      PutStat(out, name, bits);
    } else {
      PutStat(out, name, EthValue(p, d.name));
    }
  }
  for (int q = 0; q < 8; ++q) {
    for (int k = kRxPrioBytes; k <= kTxPrioPackets; ++k)
      PutPrioStat(out, p, static_cast<PrioStat>(k), q);
  }
  for (int q = 0; q < 8; ++q) {
    if ((p.pfc_mask & (1u << q)) == 0) continue;  // PFC names only for PFC priorities
    for (int k = kRxPrioPause; k <= kRxPrioPauseTransition; ++k)
      PutPrioStat(out, p, static_cast<PrioStat>(k), q);
  }
  for (const char* n : kPauseStormStats)
    PutStat(out, n, EthValue(p, n));
  for (int q = 0; q < 8; ++q)
    PutPrioStat(out, p, kRxPrioBufDiscard, q);
  for (int q = 0; q < 8; ++q) {
    PutPrioStat(out, p, kRxPrioCongDiscard, q);
    PutPrioStat(out, p, kRxPrioMarked, q);
  }
  return out;
}

// ice `ethtool -S` text: the port stats, then the per-priority PFC frame counts (all eight
// priorities, whatever PFC enables).
std::string RenderIceEthtool(const Port& p) {
  std::string out = "NIC statistics:\n";
  out.reserve(4096);
  for (const char* n : kIceEthtoolStats)
    PutStat(out, n, EthValue(p, n));
  for (const auto& [xon, xoff] : {std::pair{kIceTxXon, kIceTxXoff}, {kIceRxXon, kIceRxXoff}}) {
    for (int q = 0; q < 8; ++q) {
      PutStat(out, IcePrioName(xon, q), EthValue(p, IcePrioName(xon, q)));
      PutStat(out, IcePrioName(xoff, q), EthValue(p, IcePrioName(xoff, q)));
    }
  }
  return out;
}

// iproute2 `dcb pfc show` + `dcb app show ... dscp-prio` lines.
std::string RenderDcb(const Port& p) {
  std::string out = "pfc-cap 8 macsec-bypass off delay 7\nprio-pfc";
  for (int q = 0; q < 8; ++q)
    out += Fmt(" %d:%s", q, (p.pfc_mask & (1u << q)) ? "on" : "off");
  out += '\n';
  if (p.trust_dscp) {  // DSCP trust: 64 APP entries, the default map prio = dscp >> 3
    out += "dscp-prio";
    for (int dscp = 0; dscp < 64; ++dscp)
      out += Fmt(" %d:%d", dscp, dscp >> 3);
    out += '\n';
  }
  return out;
}

// ---- transceiver modules: fixtures/module/<netdev>/{lower,page-<bank>-<page>} ----------------
// Binary page images as the kernel's MODULE_EEPROM_GET returns them (128 bytes each), built from
// the specifications' byte positions. RoCE PFs (ConnectX-7): a 400GBASE-DR4 QSFP112 (CMIS, 4
// lanes); LAG slaves (ConnectX-6 Dx): a 100GBASE-SR4 QSFP28 (SFF-8636); E810: a passive DAC.

using Page = std::string;  // 128 bytes

void Put16(Page& page, int at, int value) {
  page[static_cast<size_t>(at)] = static_cast<char>((value >> 8) & 0xff);
  page[static_cast<size_t>(at) + 1] = static_cast<char>(value & 0xff);
}
void PutLimits(Page& page, int at, int ha, int la, int hw, int lw) {
  Put16(page, at, ha);
  Put16(page, at + 2, la);
  Put16(page, at + 4, hw);
  Put16(page, at + 6, lw);
}
void PutText(Page& page, int at, int width, std::string_view text) {
  for (int i = 0; i < width; ++i)
    page[static_cast<size_t>(at + i)] =
        i < static_cast<int>(text.size()) ? text[static_cast<size_t>(i)] : ' ';
}
Page NewPage() {
  return Page(128, '\0');
}

// The netdev's serial number: stable, different per port.
std::string Serial(const Port& p) {
  uint32_t h = 2166136261u;
  for (char c : p.netdev)
    h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return Fmt("SIM%08X", static_cast<unsigned>(h));
}

// Receive power of a healthy lane (0.1 uW), and of the degrading one: 15 % less a tick.
int RxPower(const Port& p, int lane, int nominal) {
  if (p.optic_decay_ticks < 0 || lane != p.optic_lane) return nominal + 150 * lane;
  double v = nominal;
  for (int i = 0; i < p.optic_decay_ticks && v > 100; ++i)
    v *= 0.85;
  return std::max(100, static_cast<int>(v));
}

// 400GBASE-DR4 QSFP112, CMIS 5.0: thresholds of a typical DR4 (rx low warning -10.4 dBm, low
// alarm -14.4 dBm).
std::vector<std::pair<std::string, Page>> CmisDr4(const Port& p, uint64_t tick) {
  Page lo = NewPage(), p00 = NewPage(), p01 = NewPage(), p02 = NewPage(), p11 = NewPage();
  lo[0] = 0x1E;
  lo[1] = 0x50;
  lo[3] = 0x06;                                               // module state: ready
  Put16(lo, 14, 44 * 256 + static_cast<int>(tick % 4) * 64);  // 44.0 .. 44.75 degC
  Put16(lo, 16, 32950);
  lo[85] = 0x02;  // single-mode fibre
  lo[86] = 0x13;  // host interface: 400GAUI-4 (SFF-8024), media 400GBASE-DR4
  lo[87] = 0x1C;
  lo[88] = 0x44;  // 4 host lanes, 4 media lanes
  p00[0] = 0x1E;
  PutText(p00, 1, 16, "NVIDIA");
  PutText(p00, 20, 16, "MMS1Z00-NS400");
  PutText(p00, 36, 2, "A1");
  PutText(p00, 38, 16, Serial(p));
  p00[75] = 0x0C;  // MPO 1x12
  p00[84] = 0x06;  // 1310 nm EML
  p01[32] = 0x07;  // page 01h byte 160: bias, tx and rx power monitored, bias x1
  PutLimits(p02, 0, 80 * 256, 0xffff & (-5 * 256), 75 * 256, 0);
  PutLimits(p02, 8, 36300, 29700, 34650, 31350);
  PutLimits(p02, 48, 39811, 1585, 31623, 2512);  // tx power (176)
  PutLimits(p02, 56, 7500, 1000, 6500, 1500);    // tx bias (184)
  PutLimits(p02, 64, 39811, 363, 31623, 912);    // rx power (192)
  uint8_t rx_low_alarm = 0, rx_low_warning = 0;
  for (int i = 0; i < 4; ++i) {
    const int rx = RxPower(p, i + 1, 8000);
    Put16(p11, 26 + 2 * i, 16000 + 100 * i);  // tx power (154)
    Put16(p11, 42 + 2 * i, 4500 + 20 * i);    // tx bias (170)
    Put16(p11, 58 + 2 * i, rx);               // rx power (186)
    if (rx < 363) rx_low_alarm |= static_cast<uint8_t>(1u << i);
    if (rx < 912) rx_low_warning |= static_cast<uint8_t>(1u << i);
  }
  p11[22] = static_cast<char>(rx_low_alarm);    // byte 150
  p11[24] = static_cast<char>(rx_low_warning);  // byte 152
  return {{"lower", lo},
          {"page-0-00", p00},
          {"page-0-01", p01},
          {"page-0-02", p02},
          {"page-0-11", p11}};
}

// 100GBASE-SR4 QSFP28, SFF-8636.
std::vector<std::pair<std::string, Page>> Sff8636Sr4(const Port& p, uint64_t tick) {
  Page lo = NewPage(), p00 = NewPage(), p03 = NewPage();
  lo[0] = 0x11;
  lo[1] = 0x08;
  Put16(lo, 22, 39 * 256 + static_cast<int>(tick % 4) * 64);
  Put16(lo, 26, 32900);
  uint8_t flags[2] = {0, 0};
  for (int i = 0; i < 4; ++i) {
    const int rx = RxPower(p, i + 1, 6000);
    Put16(lo, 34 + 2 * i, rx);
    Put16(lo, 42 + 2 * i, 3500 + 25 * i);
    Put16(lo, 50 + 2 * i, 6500 + 50 * i);
    // Bytes 9-10: two lanes a byte, high nibble first; low alarm bit 2, low warning bit 0.
    const int shift = (i % 2 == 0) ? 4 : 0;
    if (rx < 490) flags[i / 2] |= static_cast<uint8_t>(0x4 << shift);
    if (rx < 977) flags[i / 2] |= static_cast<uint8_t>(0x1 << shift);
  }
  lo[9] = static_cast<char>(flags[0]);
  lo[10] = static_cast<char>(flags[1]);
  p00[0] = 0x11;
  p00[2] = 0x0C;   // MPO
  p00[19] = 0x00;  // 850 nm VCSEL
  PutText(p00, 20, 16, "Mellanox");
  PutText(p00, 40, 16, "MMA1B00-C100D");
  PutText(p00, 56, 2, "B1");
  PutText(p00, 68, 16, Serial(p));
  p00[92] = 0x0C;  // rx power average, tx power monitored
  PutLimits(p03, 0, 75 * 256, 0xffff & (-5 * 256), 70 * 256, 0);
  PutLimits(p03, 16, 36300, 29700, 34650, 31350);
  PutLimits(p03, 48, 34674, 490, 27542, 977);    // rx power (176): -13.1 / -10.1 dBm
  PutLimits(p03, 56, 6000, 1000, 5500, 1500);    // tx bias (184)
  PutLimits(p03, 64, 34674, 1259, 27542, 1585);  // tx power (192)
  return {{"lower", lo}, {"page-0-00", p00}, {"page-0-03", p03}};
}

// A passive copper QSFP28 DAC: flat memory, no monitors.
std::vector<std::pair<std::string, Page>> Sff8636Dac(const Port& p) {
  Page lo = NewPage(), p00 = NewPage();
  lo[0] = 0x11;
  lo[2] = 0x04;  // flat memory
  p00[0] = 0x11;
  p00[2] = 0x23;                      // no separable connector
  p00[19] = static_cast<char>(0xA0);  // copper cable, unequalized
  PutText(p00, 20, 16, "Amphenol");
  PutText(p00, 40, 16, "NDAQGF-0002");
  PutText(p00, 56, 2, "A");
  PutText(p00, 68, 16, Serial(p));
  return {{"lower", lo}, {"page-0-00", p00}};
}

// ---- LLDP: fixtures/lldp/<netdev>, the frame the switch port at the other end sends (hex) ----

// Bytes as the fixture readers take them: lower-case hex, one line.
std::string Hex(const std::vector<uint8_t>& b) {
  std::string out;
  for (uint8_t c : b)
    out += Fmt("%02x", c);
  return out + "\n";
}

// A rail-optimised fabric: RoCE PF rail i is cabled to leaf-rail<i>, the LAG slaves to a storage
// ToR, the E810 to a management switch. A port that is down hears nothing: its frame says TTL 0
// (the reader then reports no neighbour), as if the last one had expired.
std::string RenderLldp(const Device& d, const Port& p) {
  std::string system, port;
  uint8_t leaf = 0;
  uint32_t h = 2166136261u;
  for (char c : p.netdev)
    h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  if (p.kind == PortKind::kLagSlave) {
    system = "tor-storage-1";
    leaf = 0x40;
    port = Fmt("Ethernet1/%u", 1 + h % 48);
  } else if (p.kind == PortKind::kE810) {
    system = "mgmt-sw-1";
    leaf = 0x50;
    port = Fmt("Ethernet1/%u", 1 + h % 48);
  } else {
    leaf = static_cast<uint8_t>(d.pf);
    system = Fmt("leaf-rail%d", d.pf);
    port = Fmt("Ethernet%u", 1 + 4 * (h % 32));  // 400G ports of a 128x100G-lane leaf
  }
  std::vector<uint8_t> f = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x0c,
                            0x42, 0xa1, leaf, 0x00, 0x01, 0x88, 0xcc};
  auto tlv = [&](uint8_t type, std::string_view value, int subtype = -1) {
    size_t len = value.size() + (subtype >= 0 ? 1 : 0);
    f.push_back(static_cast<uint8_t>(type << 1 | (len >> 8)));
    f.push_back(static_cast<uint8_t>(len));
    if (subtype >= 0) f.push_back(static_cast<uint8_t>(subtype));
    f.insert(f.end(), value.begin(), value.end());
  };
  const char chassis[] = {4, 0x0c, 0x42, static_cast<char>(0xa1), static_cast<char>(leaf), 0, 0};
  tlv(1, std::string_view(chassis, sizeof(chassis)));           // MAC chassis ID
  tlv(2, port, 5);                                              // interface name
  tlv(3, std::string_view(p.up ? "\x00\x78" : "\x00\x00", 2));  // TTL 120 (0: down)
  tlv(4, "to " + p.netdev);                                     // port description
  tlv(5, system);                                               // system name
  tlv(7, std::string_view("\x00\x14\x00\x14", 4));              // bridge, router
  tlv(0, "");
  return Hex(f);
}

// ---- InfiniBand neighbours: fixtures/smp/<device>/<port>/ ------------------------------------

void PutBe(std::vector<uint8_t>& b, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    b[at + i] = static_cast<uint8_t>(v >> (8 * (bytes - 1 - i)));
}

uint8_t LeafPort(const Device& d, const Port& p) {
  return static_cast<uint8_t>(1 + 2 * p.num + 4 * (d.index % 8));
}

// The leaf port's side: its PortInfo (Active, LinkUp, 4x), and its PMA's ClassPortInfo
// (PortCountersExtended with the additional counters) and PortCountersExtended, whose 64-bit
// PortXmitWait grows a little every tick (the leaf briefly waiting for this HCA's credits).
struct LeafPortSide {
  std::string port_info, class_port_info, counters_ext;
};
LeafPortSide RenderLeafPort(const Device& d, const Port& p, uint64_t tick) {
  std::vector<uint8_t> info(64, 0);
  info[31] = 2;     // LinkWidthActive: 4x
  info[32] = 0x04;  // PortState: Active
  info[33] = 0x50;  // PortPhysicalState: LinkUp
  info[36] = LeafPort(d, p);
  std::vector<uint8_t> cpi(192, 0);
  cpi[0] = 1;                        // BaseVersion
  cpi[1] = 1;                        // ClassVersion
  PutBe(cpi, 2, 1u << 9, 2);         // CapabilityMask: PortCountersExtended
  PutBe(cpi, 4, (1u << 1) << 5, 4);  // CapabilityMask2: additional extended counters
  std::vector<uint8_t> ext(192, 0);
  ext[1] = LeafPort(d, p);                                                    // PortSelect
  PutBe(ext, 168, (tick + 1) * 40000 + static_cast<uint64_t>(p.num) * 7, 8);  // PortXmitWait
  return {Hex(info), Hex(cpi), Hex(ext)};
}

// Each InfiniBand rail on its own Quantum-2 leaf (MQM9700): the SMP data of its NodeInfo and
// NodeDescription, as a directed-route query out of the port would get them (hex).
std::pair<std::string, std::string> RenderSmp(const Device& d, const Port& p) {
  std::vector<uint8_t> info(64, 0);
  info[0] = 1;   // BaseVersion
  info[1] = 1;   // ClassVersion
  info[2] = 2;   // NodeType: switch
  info[3] = 65;  // NumPorts
  uint64_t guid = 0xfc6a1c0300a00000ull | static_cast<uint64_t>(d.pf) << 8;
  for (int i = 0; i < 8; ++i) {
    auto byte = static_cast<uint8_t>(guid >> (56 - 8 * i));
    info[4 + i] = byte;   // SystemImageGUID
    info[12 + i] = byte;  // NodeGUID
    info[20 + i] = byte;  // PortGUID (switch port 0)
  }
  info[29] = 8;     // PartitionCap
  info[30] = 0xd2;  // DeviceID 0xd2f2: MQM9700
  info[31] = 0xf2;
  info[35] = 0xa1;            // Revision
  info[36] = LeafPort(d, p);  // LocalPortNum
  info[38] = 0x02;            // VendorID 0x0002c9
  info[39] = 0xc9;
  std::string name = Fmt("MF0;leaf-ib-%d:MQM9700/U1", d.pf);
  std::vector<uint8_t> desc(64, 0);
  std::copy(name.begin(), name.end(), desc.begin());
  return {Hex(info), Hex(desc)};
}

bool RenderModule(SimState& s, const Port& p, std::string* error) {
  std::vector<std::pair<std::string, Page>> pages;
  if (p.kind == PortKind::kLagSlave) {  // before roce_pf: a LAG slave is a RoCE PF too
    pages = Sff8636Sr4(p, s.tick);
  } else if (p.roce_pf) {
    pages = CmisDr4(p, s.tick);
  } else if (p.kind == PortKind::kE810) {
    pages = Sff8636Dac(p);
  } else {
    return true;
  }
  const std::string dir = "module/" + p.netdev;
  if (!s.fixtures.Dir(dir, error)) return false;
  for (const auto& [name, page] : pages) {
    if (!s.fixtures.File(dir + "/" + name, page, error)) return false;
  }
  return true;
}
}  // namespace

bool PrepareFixturesRoot(SimState& s, std::string* error) {
  const std::string fix = s.cfg.root + "/fixtures";
  const std::string marker = ".rdma_fabric_sim";
  s.fixtures.Reset(fix, /*atomic=*/true);
  std::error_code ec;
  if (fs::exists(fix + "/" + marker, ec)) {
    fs::remove_all(fix, ec);
    if (ec) {
      *error = "remove " + fix + ": " + ec.message();
      return false;
    }
  }
  return s.fixtures.Dir("ethtool", error) && s.fixtures.Dir("dcb", error) &&
         s.fixtures.Dir("module", error) && s.fixtures.Dir("lldp", error) &&
         s.fixtures.Dir("smp", error) &&
         s.fixtures.File(marker, "written by rdma_fabric_sim; removed and rewritten at start-up\n",
                         error);
}

bool RenderPortFixtures(SimState& s, const Device& d, const Port& p, std::string* error) {
  if (!RenderModule(s, p, error)) return false;
  if ((p.roce_pf || p.kind == PortKind::kE810) &&
      !s.fixtures.File("lldp/" + p.netdev, RenderLldp(d, p), error)) {
    return false;
  }
  if (p.ib && !d.vf) {
    const std::string dir = "smp/" + d.name + "/" + std::to_string(p.num);
    auto [info, desc] = RenderSmp(d, p);
    LeafPortSide leaf = RenderLeafPort(d, p, s.tick);
    if (!s.fixtures.Dir(dir, error) || !s.fixtures.File(dir + "/node_info", info, error) ||
        !s.fixtures.File(dir + "/node_description", desc, error) ||
        !s.fixtures.File(dir + "/port_info", leaf.port_info, error) ||
        !s.fixtures.File(dir + "/pma_class_port_info", leaf.class_port_info, error) ||
        !s.fixtures.File(dir + "/pma_port_counters_ext", leaf.counters_ext, error)) {
      return false;
    }
  }
  if (p.roce_pf) {
    return s.fixtures.File("ethtool/" + p.netdev, RenderMlx5Ethtool(p), error) &&
           s.fixtures.File("dcb/" + p.netdev, RenderDcb(p), error);
  }
  if (p.kind == PortKind::kE810) {
    return s.fixtures.File("ethtool/" + p.netdev, RenderIceEthtool(p), error) &&
           s.fixtures.File("dcb/" + p.netdev, RenderDcb(p), error);
  }
  if (p.kind == PortKind::kLagBond) {  // the bonding driver has no ethtool stats and no dcbnl
    return s.fixtures.File("dcb/" + p.netdev, "unsupported\n", error);
  }
  if (!s.mlx5() && !d.vf) {
    return s.fixtures.File("ethtool/" + p.netdev, RenderVirtioEthtool(p), error) &&
           s.fixtures.File("dcb/" + p.netdev, "unsupported\n", error);
  }
  return true;
}

}  // namespace rdma_fabric_sim
