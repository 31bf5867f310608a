#include "fixtures.h"

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

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
         s.fixtures.File(marker, "written by rdma_fabric_sim; removed and rewritten at start-up\n",
                         error);
}

bool RenderPortFixtures(SimState& s, const Device& d, const Port& p, std::string* error) {
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
