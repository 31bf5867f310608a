#include "counters.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "format.h"

namespace rdma_fabric_sim {

namespace {

// IB PMA PortCounters / PortCountersExtended, ext table (reference §1.5). Saturating.
constexpr CounterDef kPmaCounters[] = {
    {"symbol_error", 16, kSat},
    {"link_error_recovery", 8, kSat},
    {"link_downed", 8, kSat},
    {"port_rcv_errors", 16, kSat},
    {"port_rcv_remote_physical_errors", 16, kSat},
    {"port_rcv_switch_relay_errors", 16, kSat},
    {"port_xmit_discards", 16, kSat},
    {"port_xmit_constraint_errors", 8, kSat},
    {"port_rcv_constraint_errors", 8, kSat},
    {"local_link_integrity_errors", 4, kSat},
    {"excessive_buffer_overrun_errors", 4, kSat},
    {"VL15_dropped", 16, kSat},
    {"port_xmit_wait", 32, kSat},
    {"port_xmit_data", 64, kSat},
    {"port_rcv_data", 64, kSat},
    {"port_xmit_packets", 64, kSat},
    {"port_rcv_packets", 64, kSat},
    {"unicast_xmit_packets", 64, kSat},
    {"unicast_rcv_packets", 64, kSat},
    {"multicast_xmit_packets", 64, kSat},
    {"multicast_rcv_packets", 64, kSat},
};

// mlx5 hw_counters, groups 1-7 of reference §2.1, in descs[] order. Groups 1-5 are 32-bit
// firmware q-counters (wrap modulo 2^32), groups 6-7 are 64-bit.
constexpr CounterDef kMlx5HwCounters[] = {
    {"rx_write_requests", 32, kWrap},
    {"rx_read_requests", 32, kWrap},
    {"rx_atomic_requests", 32, kWrap},
    {"rx_dct_connect", 32, kWrap},
    {"out_of_buffer", 32, kWrap},
    {"out_of_sequence", 32, kWrap},
    {"duplicate_request", 32, kWrap},
    {"rnr_nak_retry_err", 32, kWrap},
    {"packet_seq_err", 32, kWrap},
    {"implied_nak_seq_err", 32, kWrap},
    {"local_ack_timeout_err", 32, kWrap},
    {"resp_local_length_error", 32, kWrap},
    {"resp_cqe_error", 32, kWrap},
    {"req_cqe_error", 32, kWrap},
    {"req_remote_invalid_request", 32, kWrap},
    {"req_remote_access_errors", 32, kWrap},
    {"resp_remote_access_errors", 32, kWrap},
    {"resp_cqe_flush_error", 32, kWrap},
    {"req_cqe_flush_error", 32, kWrap},
    {"req_transport_retries_exceeded", 32, kWrap},
    {"req_rnr_retries_exceeded", 32, kWrap},
    {"roce_adp_retrans", 32, kWrap},
    {"roce_adp_retrans_to", 32, kWrap},
    {"roce_slow_restart", 32, kWrap},
    {"roce_slow_restart_cnps", 32, kWrap},
    {"roce_slow_restart_trans", 32, kWrap},
    {"rp_cnp_ignored", 64, kWrap},
    {"rp_cnp_handled", 64, kWrap},
    {"np_ecn_marked_roce_packets", 64, kWrap},
    {"np_cnp_sent", 64, kWrap},
    {"rx_icrc_encapsulated", 64, kWrap},
};

// rdma_rxe hw_counters (reference §2.2, the 15-counter set of 5.x/6.x kernels). 64-bit.
constexpr CounterDef kRxeHwCounters[] = {
    {"sent_pkts", 64, kWrap},           {"rcvd_pkts", 64, kWrap},
    {"duplicate_request", 64, kWrap},   {"out_of_seq_request", 64, kWrap},
    {"rcvd_rnr_err", 64, kWrap},        {"send_rnr_err", 64, kWrap},
    {"rcvd_seq_err", 64, kWrap},        {"ack_deferred", 64, kWrap},
    {"retry_exceeded_err", 64, kWrap},  {"retry_rnr_exceeded_err", 64, kWrap},
    {"completer_retry_err", 64, kWrap}, {"send_err", 64, kWrap},
    {"link_downed", 64, kWrap},         {"rdma_sends", 64, kWrap},
    {"rdma_recvs", 64, kWrap},
};

// irdma hw_counters of a gen2 device (E810), irdma_hw_stat_descs[] of 6.x kernels (verbs.c):
// gen1 32- and 64-bit, then gen2. The driver accumulates the hardware deltas into 64 bits.
constexpr CounterDef kIrdmaHwCounters[] = {
    {"ip4InDiscards", 64, kWrap},
    {"ip4InTruncatedPkts", 64, kWrap},
    {"ip4OutNoRoutes", 64, kWrap},
    {"ip6InDiscards", 64, kWrap},
    {"ip6InTruncatedPkts", 64, kWrap},
    {"ip6OutNoRoutes", 64, kWrap},
    {"rxVlanErrors", 64, kWrap},
    {"ip4InOctets", 64, kWrap},
    {"ip4InPkts", 64, kWrap},
    {"ip4InReasmRqd", 64, kWrap},
    {"ip4InMcastPkts", 64, kWrap},
    {"ip4OutOctets", 64, kWrap},
    {"ip4OutPkts", 64, kWrap},
    {"ip4OutSegRqd", 64, kWrap},
    {"ip4OutMcastPkts", 64, kWrap},
    {"ip6InOctets", 64, kWrap},
    {"ip6InPkts", 64, kWrap},
    {"ip6InReasmRqd", 64, kWrap},
    {"ip6InMcastPkts", 64, kWrap},
    {"ip6OutOctets", 64, kWrap},
    {"ip6OutPkts", 64, kWrap},
    {"ip6OutSegRqd", 64, kWrap},
    {"ip6OutMcastPkts", 64, kWrap},
    {"InRdmaReads", 64, kWrap},
    {"InRdmaSends", 64, kWrap},
    {"InRdmaWrites", 64, kWrap},
    {"OutRdmaReads", 64, kWrap},
    {"OutRdmaSends", 64, kWrap},
    {"OutRdmaWrites", 64, kWrap},
    {"RdmaBnd", 64, kWrap},
    {"RdmaInv", 64, kWrap},
    {"cnpHandled", 64, kWrap},
    {"cnpIgnored", 64, kWrap},
    {"cnpSent", 64, kWrap},
    {"ip4InMcastOctets", 64, kWrap},
    {"ip4OutMcastOctets", 64, kWrap},
    {"ip6InMcastOctets", 64, kWrap},
    {"ip6OutMcastOctets", 64, kWrap},
    {"RxUDP", 64, kWrap},
    {"TxUDP", 64, kWrap},
    {"RxECNMrkd", 64, kWrap},
    {"RetransSegs", 64, kWrap},
    {"InOptErrors", 64, kWrap},
    {"InProtoErrors", 64, kWrap},
    {"InSegs", 64, kWrap},
    {"OutSegs", 64, kWrap},
};

constexpr const char* kIcePrioStatFormats[kIcePrioStatCount] = {
    "tx_priority_%d_xon.nic", "tx_priority_%d_xoff.nic", "rx_priority_%d_xon.nic",
    "rx_priority_%d_xoff.nic"};

constexpr const char* kPrioStatFormats[kPrioStatCount] = {
    "rx_prio%d_bytes",          "rx_prio%d_packets",
    "rx_prio%d_discards",       "tx_prio%d_bytes",
    "tx_prio%d_packets",        "rx_prio%d_pause",
    "rx_prio%d_pause_duration", "tx_prio%d_pause",
    "tx_prio%d_pause_duration", "rx_prio%d_pause_transition",
    "rx_prio%d_buf_discard",    "rx_prio%d_cong_discard",
    "rx_prio%d_marked"};

// Kernel-path (non-RDMA) traffic of a netdev per second: IPoIB / Ethernet management traffic.
// rxe sends RoCE through the netdev, so there the netdev carries all of it.
constexpr double kSwBytesPerSecond = 2e6;

// `per_second` over one tick of `dt` seconds, rounded, never negative.
uint64_t PerTick(double per_second, double dt) {
  return static_cast<uint64_t>(std::llround(std::max(0.0, per_second * dt)));
}

void Bump(Port& p, const char* key, uint64_t n) {
  auto it = p.counters.find(key);
  if (it == p.counters.end() || it->second.frozen || n == 0) return;
  it->second.Add(n);
}

void InitEth(Port& p) {
  p.eth.clear();
  for (const char* n : kNetdevTrafficStats)
    p.eth[n] = Counter{0, 64, kWrap, false};
  if (p.kind == PortKind::kE810) {
    for (const char* n : kIceEthtoolStats)
      p.eth[n] = Counter{0, 64, kWrap, false};
    for (int k = 0; k < kIcePrioStatCount; ++k) {
      for (int q = 0; q < 8; ++q)
        p.eth[IcePrioName(static_cast<IcePrioStat>(k), q)] = Counter{0, 64, kWrap, false};
    }
    return;
  }
  if (!p.roce_pf) return;
  for (const CounterDef& d : kEthtoolPortStats)
    p.eth[d.name] = Counter{0, d.bits, d.overflow, false};
  for (int k = 0; k < kPrioStatCount; ++k) {
    for (int q = 0; q < 8; ++q)
      p.eth[PrioName(static_cast<PrioStat>(k), q)] = Counter{0, 64, kWrap, false};
  }
  for (const char* n : kPauseStormStats)
    p.eth[n] = Counter{0, 64, kWrap, false};
}

// rxe: the RoCE traffic goes through the netdev (virtio-net), 1 KiB per packet.
void AddRxeNetdevTraffic(Port& p, uint64_t rx, uint64_t tx) {
  BumpEth(p, "rx_bytes", rx);
  BumpEth(p, "rx_packets", rx / 1024);
  BumpEth(p, "tx_bytes", tx);
  BumpEth(p, "tx_packets", tx / 1024);
}

// mlx5: the netdev's own (SW) counters see only the kernel-path traffic, 800 B per packet.
void AddKernelPathTraffic(Port& p, uint64_t sw_rx, uint64_t sw_tx) {
  BumpEth(p, "rx_bytes", sw_rx);
  BumpEth(p, "rx_packets", sw_rx / 800);
  BumpEth(p, "tx_bytes", sw_tx);
  BumpEth(p, "tx_packets", sw_tx / 800);
}

// The bytes of one interval on a RoCE PF port, by where they go.
struct PfTraffic {
  uint64_t rdma_rx;
  uint64_t rdma_tx;
  uint64_t kernel_rx;
  uint64_t kernel_tx;
  uint64_t cnp_rx;  // packets (64 bytes each)
  uint64_t cnp_tx;
};

// Per-priority traffic of a RoCE PF: RDMA on the data priority, kernel traffic on 0, CNPs on 6;
// the `_phy` totals are the sums over the priorities.
void AddPriorityTraffic(Port& p, const PfTraffic& t) {
  BumpEth(p, "rx_csum_complete", t.kernel_rx / 800);
  BumpEth(p, PrioName(kRxPrioBytes, kDataPrio), t.rdma_rx);
  BumpEth(p, PrioName(kRxPrioPackets, kDataPrio), t.rdma_rx / 4096);
  BumpEth(p, PrioName(kTxPrioBytes, kDataPrio), t.rdma_tx);
  BumpEth(p, PrioName(kTxPrioPackets, kDataPrio), t.rdma_tx / 4096);
  BumpEth(p, PrioName(kRxPrioBytes, 0), t.kernel_rx);
  BumpEth(p, PrioName(kRxPrioPackets, 0), t.kernel_rx / 800);
  BumpEth(p, PrioName(kTxPrioBytes, 0), t.kernel_tx);
  BumpEth(p, PrioName(kTxPrioPackets, 0), t.kernel_tx / 800);
  BumpEth(p, PrioName(kRxPrioBytes, kCnpPrio), t.cnp_rx * 64);
  BumpEth(p, PrioName(kRxPrioPackets, kCnpPrio), t.cnp_rx);
  BumpEth(p, PrioName(kTxPrioBytes, kCnpPrio), t.cnp_tx * 64);
  BumpEth(p, PrioName(kTxPrioPackets, kCnpPrio), t.cnp_tx);
  BumpEth(p, "rx_vport_rdma_unicast_bytes", t.rdma_rx + t.cnp_rx * 64);
  BumpEth(p, "rx_vport_rdma_unicast_packets", t.rdma_rx / 4096 + t.cnp_rx);
  BumpEth(p, "tx_vport_rdma_unicast_bytes", t.rdma_tx + t.cnp_tx * 64);
  BumpEth(p, "tx_vport_rdma_unicast_packets", t.rdma_tx / 4096 + t.cnp_tx);
  BumpEth(p, "rx_bytes_phy", t.rdma_rx + t.kernel_rx + t.cnp_rx * 64);
  BumpEth(p, "rx_packets_phy", t.rdma_rx / 4096 + t.kernel_rx / 800 + t.cnp_rx);
  BumpEth(p, "tx_bytes_phy", t.rdma_tx + t.kernel_tx + t.cnp_tx * 64);
  BumpEth(p, "tx_packets_phy", t.rdma_tx / 4096 + t.kernel_tx / 800 + t.cnp_tx);
}

// FEC-corrected bits: the total and its even split over the four lanes (no extra PRNG draw,
// so the totals are the same as before the lanes were modelled).
void AddCorrectedBits(Port& p, uint64_t bits) {
  BumpEth(p, "rx_corrected_bits_phy", bits);
  for (size_t lane = 0; lane < std::size(kLaneErrorStats); ++lane)
    BumpEth(p, kLaneErrorStats[lane], bits / 4 + (lane == 0 ? bits % 4 : 0));
}

// E810: the port's MAC counters (".nic") see all traffic, RoCE included; the VSI (netdev)
// counters and queue 0 only the kernel path. RoCE frames (4 KiB MTU) count as "big".
void AddIceTraffic(Port& p, uint64_t rdma_rx, uint64_t rdma_tx, uint64_t sw_rx, uint64_t sw_tx) {
  AddKernelPathTraffic(p, sw_rx, sw_tx);
  for (const auto& [dir, rdma, sw] : {std::tuple{"rx", rdma_rx, sw_rx}, {"tx", rdma_tx, sw_tx}}) {
    const std::string d = dir;
    BumpEth(p, d + "_unicast", sw / 800);
    BumpEth(p, d + "_queue_0_packets", sw / 800);
    BumpEth(p, d + "_queue_0_bytes", sw);
    BumpEth(p, d + "_bytes.nic", rdma + sw);
    BumpEth(p, d + "_unicast.nic", rdma / 4096 + sw / 800);
    BumpEth(p, d + "_size_big.nic", rdma / 4096);
    BumpEth(p, d + "_size_1023.nic", sw / 800);
  }
}

// One tick of E810 PFC frames: XOFF (and the XON that ends it) on the PFC priorities; the
// data priority pauses now and then as on the mlx5 ports. Without PFC on it, it drops.
void IcePfcTick(Port& p, double dt) {
  Rng& r = p.eth_rng;
  for (int q = 0; q < 8; ++q) {
    if ((p.pfc_mask & (1u << q)) == 0) continue;
    const uint64_t rx = q == kDataPrio && r.Chance(0.4) ? r.Uniform(1, PerTick(200, dt))
                        : r.Chance(0.01)                ? 1
                                                        : 0;
    const uint64_t tx = q == kDataPrio && r.Chance(0.2) ? r.Uniform(1, PerTick(50, dt)) : 0;
    BumpEth(p, IcePrioName(kIceRxXoff, q), rx);
    BumpEth(p, IcePrioName(kIceRxXon, q), (rx + 2) / 3);
    BumpEth(p, IcePrioName(kIceTxXoff, q), tx);
    BumpEth(p, IcePrioName(kIceTxXon, q), (tx + 2) / 3);
  }
  if ((p.pfc_mask & (1u << kDataPrio)) == 0) {
    BumpEth(p, "rx_dropped.nic", r.Uniform(0, PerTick(3000, dt)));
  }
  if (r.Chance(0.002)) BumpEth(p, "rx_crc_errors.nic", 1);
}

// The irdma hw_counters of RDMA traffic: RoCE v2 over IPv4 (UDP), 4 KiB packets.
void AddIrdmaTraffic(Port& p, uint64_t tx, uint64_t rx, uint64_t cnp) {
  const uint64_t tx_pkts = tx / 4096;
  const uint64_t rx_pkts = rx / 4096;
  Bump(p, "hw_counters/ip4InOctets", rx);
  Bump(p, "hw_counters/ip4InPkts", rx_pkts);
  Bump(p, "hw_counters/RxUDP", rx_pkts);
  Bump(p, "hw_counters/ip4OutOctets", tx);
  Bump(p, "hw_counters/ip4OutPkts", tx_pkts);
  Bump(p, "hw_counters/TxUDP", tx_pkts);
  Bump(p, "hw_counters/InRdmaWrites", rx_pkts * 6 / 10);
  Bump(p, "hw_counters/InRdmaReads", rx_pkts / 10);
  Bump(p, "hw_counters/InRdmaSends", rx_pkts / 20);
  Bump(p, "hw_counters/OutRdmaWrites", tx_pkts * 6 / 10);
  Bump(p, "hw_counters/OutRdmaReads", tx_pkts / 10);
  Bump(p, "hw_counters/OutRdmaSends", tx_pkts / 20);
  Bump(p, "hw_counters/RxECNMrkd", cnp);
  Bump(p, "hw_counters/cnpSent", cnp);
  Bump(p, "hw_counters/cnpHandled", cnp);
}

// One tick of an E810 port: irdma hw_counters, then the ice `ethtool -S` statistics.
void E810Traffic(const SimConfig& cfg, Port& p, uint64_t tx, uint64_t rx) {
  const double dt = cfg.interval_seconds;
  Rng& r = p.rng;
  AddIrdmaTraffic(p, tx, rx, r.Chance(0.05) ? r.Uniform(1, 50) : 0);
  if (r.Chance(0.01)) Bump(p, "hw_counters/cnpIgnored", 1);
  if (r.Chance(0.005)) Bump(p, "hw_counters/RetransSegs", 1);
  const uint64_t sw_rx = PerTick(kSwBytesPerSecond * (0.5 + p.eth_rng.Unit()), dt);
  AddIceTraffic(p, rx, tx, sw_rx, sw_rx / 2);
  IcePfcTick(p, dt);
}

// The E810 counters of `uptime` seconds before the simulation starts.
void E810History(Port& p, double uptime) {
  const auto u = static_cast<uint64_t>(uptime);
  const auto rx = static_cast<uint64_t>(p.rx_rate * uptime);
  const auto tx = static_cast<uint64_t>(p.tx_rate * uptime);
  const auto sw_rx = static_cast<uint64_t>(kSwBytesPerSecond * uptime);
  AddIrdmaTraffic(p, tx, rx, u / 50);
  AddIceTraffic(p, rx, tx, sw_rx, sw_rx / 2);
  const uint64_t rx_xoff = u * p.eth_rng.Uniform(10, 60);
  const uint64_t tx_xoff = u * p.eth_rng.Uniform(2, 20);
  BumpEth(p, IcePrioName(kIceRxXoff, kDataPrio), rx_xoff);
  BumpEth(p, IcePrioName(kIceRxXon, kDataPrio), rx_xoff / 3);
  BumpEth(p, IcePrioName(kIceTxXoff, kDataPrio), tx_xoff);
  BumpEth(p, IcePrioName(kIceTxXon, kDataPrio), tx_xoff / 3);
}

// The netdev statistics of `uptime` seconds before the simulation starts.
void EthHistory(const SimConfig& cfg, Port& p, double uptime) {
  Rng& r = p.eth_rng;
  const auto u = static_cast<uint64_t>(uptime);
  const uint64_t sw_rx = static_cast<uint64_t>(kSwBytesPerSecond * uptime);
  const uint64_t sw_tx = sw_rx / 2;
  const auto rx = static_cast<uint64_t>(p.rx_rate * uptime);
  const auto tx = static_cast<uint64_t>(p.tx_rate * uptime);
  if (!IsMlx5(cfg)) {
    AddRxeNetdevTraffic(p, rx, tx);
    return;
  }
  AddKernelPathTraffic(p, sw_rx, sw_tx);
  if (!p.roce_pf) return;
  const uint64_t cnp = u * 20;
  AddPriorityTraffic(p, {rx, tx, sw_rx, sw_tx, cnp, cnp});
  const uint64_t rx_pause = u * r.Uniform(10, 60);
  const uint64_t tx_pause = u * r.Uniform(2, 20);
  BumpEth(p, PrioName(kRxPrioPause, kDataPrio), rx_pause);
  BumpEth(p, PrioName(kRxPrioPauseDuration, kDataPrio), rx_pause * r.Uniform(5, 15));
  BumpEth(p, PrioName(kRxPrioPauseTransition, kDataPrio), rx_pause / 3);
  BumpEth(p, PrioName(kTxPrioPause, kDataPrio), tx_pause);
  BumpEth(p, PrioName(kTxPrioPauseDuration, kDataPrio), tx_pause * r.Uniform(5, 15));
  BumpEth(p, PrioName(kRxPrioMarked, kDataPrio), u * r.Uniform(1, 5));
  AddCorrectedBits(p, u * r.Uniform(500, 3000));
  BumpEth(p, "rx_vport_rdma_multicast_packets", u / 100);
  BumpEth(p, "rx_vport_rdma_multicast_bytes", u / 100 * 256);
  BumpEth(p, "rx_buffer_passed_thres_phy", u / r.Uniform(10, 100));
  BumpEth(p, "rx_out_of_buffer", u / r.Uniform(10, 100));
  BumpEth(p, "outbound_pci_stalled_rd_events", u / 86400);
}

void AddPause(Port& p, int prio, bool rx, uint64_t frames) {
  if (frames == 0) return;
  Rng& r = p.eth_rng;
  BumpEth(p, PrioName(rx ? kRxPrioPause : kTxPrioPause, prio), frames);
  // Each pause holds the queue for a few µs at 400G (max quanta 65535 x 512 bit = 84 µs).
  BumpEth(p, PrioName(rx ? kRxPrioPauseDuration : kTxPrioPauseDuration, prio),
          frames * r.Uniform(2, 20));
  if (rx) BumpEth(p, PrioName(kRxPrioPauseTransition, prio), (frames + 2) / 3);
}

// One tick of PFC pauses, drops and ECN marks on a RoCE PF port.
void EthPfcTick(Port& p, double dt) {
  Rng& r = p.eth_rng;
  // PFC: small pause counts on the data priority; rare ones on other PFC priorities.
  for (int q = 0; q < 8; ++q) {
    if ((p.pfc_mask & (1u << q)) == 0) continue;
    if (q == kDataPrio) {
      if (r.Chance(0.4)) AddPause(p, q, /*rx=*/true, r.Uniform(1, PerTick(200, dt)));
      if (r.Chance(0.2)) AddPause(p, q, /*rx=*/false, r.Uniform(1, PerTick(50, dt)));
    } else if (r.Chance(0.01)) {
      AddPause(p, q, /*rx=*/true, 1);
    }
  }
  if ((p.pfc_mask & (1u << kDataPrio)) == 0) {
    // Lossless traffic without PFC: bursts overflow the receive buffer and are dropped.
    const uint64_t drops = r.Uniform(0, PerTick(3000, dt));
    BumpEth(p, PrioName(kRxPrioBufDiscard, kDataPrio), drops);
    BumpEth(p, PrioName(kRxPrioDiscards, kDataPrio), drops / 4);
    BumpEth(p, "rx_discards_phy", drops / 4);
  }
  if (r.Chance(0.05)) BumpEth(p, PrioName(kRxPrioMarked, kDataPrio), r.Uniform(1, 50));
  if (r.Chance(0.002)) BumpEth(p, PrioName(kRxPrioCongDiscard, kDataPrio), 1);
  // A rare buffer discard lands on the lossy default priority 0: on the lossless NCCL priority it
  // is a fault (RdmaLosslessPriorityDiscards), which the healthy fabric must not show.
  if (r.Chance(0.002)) BumpEth(p, PrioName(kRxPrioBufDiscard, 0), 1);
}

// One tick of the physical layer and PCIe statistics of a RoCE PF port.
void EthPhysicalTick(Port& p, double dt) {
  Rng& r = p.eth_rng;
  // Physical layer: FEC corrects a few thousand bits per second; rare real errors.
  AddCorrectedBits(p, r.Uniform(0, PerTick(4000, dt)));
  if (r.Chance(0.002)) BumpEth(p, "rx_symbol_err_phy", 1);
  if (r.Chance(0.002)) BumpEth(p, "rx_crc_errors_phy", 1);
  if (r.Chance(0.0005)) BumpEth(p, "rx_pcs_symbol_err_phy", 1);
  if (r.Chance(0.005)) BumpEth(p, "rx_discards_phy", 1);
  if (r.Chance(0.05)) BumpEth(p, "rx_buffer_passed_thres_phy", r.Uniform(1, 5));
  if (r.Chance(0.01)) BumpEth(p, "rx_out_of_buffer", r.Uniform(1, 20));

  // PCIe: the stall gauges hover near zero (a scenario kSet overrides them afterwards).
  for (const char* g : {"outbound_pci_stalled_rd", "outbound_pci_stalled_wr"}) {
    auto it = p.eth.find(g);
    if (it != p.eth.end() && !it->second.frozen) it->second.Set(r.Uniform(0, 2));
  }
}

// One tick of netdev statistics. `tx`/`rx` are the port's RDMA bytes this tick.
void EthTraffic(const SimConfig& cfg, Port& p, uint64_t tx, uint64_t rx) {
  const double dt = cfg.interval_seconds;
  Rng& r = p.eth_rng;
  if (!IsMlx5(cfg)) {  // rxe: RoCE goes through the netdev
    AddRxeNetdevTraffic(p, rx, tx);
    return;
  }
  const uint64_t sw_rx = PerTick(kSwBytesPerSecond * (0.5 + r.Unit()), dt);
  const uint64_t sw_tx = sw_rx / 2;
  AddKernelPathTraffic(p, sw_rx, sw_tx);
  if (!p.roce_pf) return;
  const uint64_t cnp_rx = r.Uniform(0, PerTick(40, dt));
  const uint64_t cnp_tx = r.Uniform(0, PerTick(40, dt));
  AddPriorityTraffic(p, {rx, tx, sw_rx, sw_tx, cnp_rx, cnp_tx});
  EthPfcTick(p, dt);
  EthPhysicalTick(p, dt);
}

// One tick of the mlx5 PMA counters and hw_counters.
void Mlx5Traffic(Port& p, double dt, uint64_t tx, uint64_t rx) {
  Rng& r = p.rng;
  const uint64_t tx_pkts = tx / 4096;
  const uint64_t rx_pkts = rx / 4096;
  const uint64_t mc_tx = r.Uniform(0, 3);
  const uint64_t mc_rx = r.Uniform(0, 3);
  Bump(p, "counters/port_xmit_data", tx / 4);  // 4-octet words
  Bump(p, "counters/port_rcv_data", rx / 4);
  Bump(p, "counters/unicast_xmit_packets", tx_pkts);
  Bump(p, "counters/unicast_rcv_packets", rx_pkts);
  Bump(p, "counters/multicast_xmit_packets", mc_tx);
  Bump(p, "counters/multicast_rcv_packets", mc_rx);
  Bump(p, "counters/port_xmit_packets", tx_pkts + mc_tx);
  Bump(p, "counters/port_rcv_packets", rx_pkts + mc_rx);
  Bump(p, "counters/port_xmit_wait", r.Uniform(0, PerTick(2000, dt)));
  Bump(p, "hw_counters/rx_write_requests", rx_pkts * 6 / 10);
  Bump(p, "hw_counters/rx_read_requests", rx_pkts / 10);
  Bump(p, "hw_counters/rx_atomic_requests", r.Uniform(0, PerTick(20, dt)));
  if (!p.ib) {
    if (r.Chance(0.05)) {
      const uint64_t n = r.Uniform(1, 50);
      Bump(p, "hw_counters/np_ecn_marked_roce_packets", n);
      Bump(p, "hw_counters/np_cnp_sent", n);
    }
    if (r.Chance(0.05)) Bump(p, "hw_counters/rp_cnp_handled", r.Uniform(1, 50));
    if (r.Chance(0.01)) Bump(p, "hw_counters/rp_cnp_ignored", 1);
  }
  if (r.Chance(0.01)) Bump(p, "counters/symbol_error", 1);
  if (r.Chance(0.005)) Bump(p, "counters/port_rcv_errors", 1);
  if (r.Chance(0.002)) Bump(p, "counters/link_error_recovery", 1);
  if (r.Chance(0.02)) Bump(p, "hw_counters/out_of_sequence", r.Uniform(1, 5));
  if (r.Chance(0.01)) Bump(p, "hw_counters/duplicate_request", 1);
  if (r.Chance(0.005)) Bump(p, "hw_counters/local_ack_timeout_err", 1);
  if (r.Chance(0.005)) Bump(p, "hw_counters/packet_seq_err", 1);
}

// One tick of the rxe hw_counters.
void RxeTraffic(Port& p, uint64_t tx, uint64_t rx) {
  Rng& r = p.rng;
  const uint64_t tx_pkts = tx / 1024;
  const uint64_t rx_pkts = rx / 1024;
  Bump(p, "hw_counters/sent_pkts", tx_pkts);
  Bump(p, "hw_counters/rcvd_pkts", rx_pkts);
  Bump(p, "hw_counters/rdma_sends", tx_pkts / 4);
  Bump(p, "hw_counters/rdma_recvs", rx_pkts / 4);
  if (r.Chance(0.1)) Bump(p, "hw_counters/ack_deferred", r.Uniform(1, 20));
  if (r.Chance(0.01)) Bump(p, "hw_counters/duplicate_request", 1);
  if (r.Chance(0.01)) Bump(p, "hw_counters/out_of_seq_request", 1);
  if (r.Chance(0.005)) Bump(p, "hw_counters/rcvd_seq_err", 1);
}

void AddCounters(Port& p, const char* prefix, const CounterDef* defs, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const CounterDef& d = defs[i];
    p.counters[std::string(prefix) + d.name] = Counter{0, d.bits, d.overflow, false};
  }
}

// The sysfs counters of `uptime` seconds before the simulation starts (error counters stay 0).
void CounterHistory(const SimConfig& cfg, Port& p, double uptime) {
  const auto tx = static_cast<uint64_t>(p.tx_rate * uptime);
  const auto rx = static_cast<uint64_t>(p.rx_rate * uptime);
  const auto set = [&](const char* key, uint64_t v) {
    auto it = p.counters.find(key);
    if (it != p.counters.end()) it->second.Add(v);  // Add: wraps/saturates like the HW
  };
  if (IsMlx5(cfg)) {
    const uint64_t mc = static_cast<uint64_t>(uptime) / 100;
    set("counters/port_xmit_data", tx / 4);
    set("counters/port_rcv_data", rx / 4);
    set("counters/unicast_xmit_packets", tx / 4096);
    set("counters/unicast_rcv_packets", rx / 4096);
    set("counters/multicast_xmit_packets", mc);
    set("counters/multicast_rcv_packets", mc);
    set("counters/port_xmit_packets", tx / 4096 + mc);
    set("counters/port_rcv_packets", rx / 4096 + mc);
    set("counters/port_xmit_wait", static_cast<uint64_t>(uptime) * 1000);
    set("hw_counters/rx_write_requests", rx / 4096 * 6 / 10);
    set("hw_counters/rx_read_requests", rx / 4096 / 10);
    set("hw_counters/rx_atomic_requests", static_cast<uint64_t>(uptime) * 10);
  } else {
    set("hw_counters/sent_pkts", tx / 1024);
    set("hw_counters/rcvd_pkts", rx / 1024);
    set("hw_counters/rdma_sends", tx / 1024 / 4);
    set("hw_counters/rdma_recvs", rx / 1024 / 4);
  }
}

// The RDMA bytes of port `p` in one tick (rate +-20 %); false while the link is down.
bool TickBytes(const SimConfig& cfg, Port& p, uint64_t* tx, uint64_t* rx) {
  if (!p.up) return false;
  const double dt = cfg.interval_seconds;
  Rng& r = p.rng;
  *tx = static_cast<uint64_t>(p.tx_rate * dt * (0.8 + 0.4 * r.Unit()));
  *rx = static_cast<uint64_t>(p.rx_rate * dt * (0.8 + 0.4 * r.Unit()));
  return true;
}

// The bond netdev's statistics are the sums over its slaves (bond_get_stats).
void SumSlaveStats(Device& d) {
  Port& bond = d.ports[0];
  for (const char* name : {"rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_crc_errors_phy",
                           "tx_errors_phy", "rx_discards_phy", "rx_out_of_buffer"}) {
    uint64_t sum = 0;
    for (const Port& slave : d.slaves)
      sum += EthValue(slave, name);
    bond.eth[name].value = sum;
  }
}

// One tick of a RoCE LAG: the RDMA port's counters (PMA, hw_counters) count the traffic of
// both slaves; the flows hash 40-60 % onto the first slave, all onto the one up if the other
// is down. The bond is up while a slave is.
void LagTraffic(const SimConfig& cfg, Device& d) {
  Port& bond = d.ports[0];
  Port& first = d.slaves[0];
  Port& second = d.slaves[1];
  bond.up = first.up || second.up;
  uint64_t tx = 0;
  uint64_t rx = 0;
  if (TickBytes(cfg, bond, &tx, &rx)) {
    Mlx5Traffic(bond, cfg.interval_seconds, tx, rx);
    const double share = !second.up ? 1.0 : (!first.up ? 0.0 : 0.4 + 0.2 * bond.rng.Unit());
    const auto tx_first = static_cast<uint64_t>(static_cast<double>(tx) * share);
    const auto rx_first = static_cast<uint64_t>(static_cast<double>(rx) * share);
    if (first.up) EthTraffic(cfg, first, tx_first, rx_first);
    if (second.up) EthTraffic(cfg, second, tx - tx_first, rx - rx_first);
  }
  SumSlaveStats(d);
}

}  // namespace

const std::string& IcePrioName(IcePrioStat stat, int prio) {
  static const auto kTable = [] {
    std::array<std::array<std::string, 8>, kIcePrioStatCount> t;
    for (int k = 0; k < kIcePrioStatCount; ++k) {
      for (int q = 0; q < 8; ++q)
        t[static_cast<size_t>(k)][static_cast<size_t>(q)] = Fmt(kIcePrioStatFormats[k], q);
    }
    return t;
  }();
  return kTable[static_cast<size_t>(stat)][static_cast<size_t>(prio & 7)];
}

const std::string& PrioName(PrioStat stat, int prio) {
  static const auto kTable = [] {
    std::array<std::array<std::string, 8>, kPrioStatCount> t;
    for (int k = 0; k < kPrioStatCount; ++k) {
      for (int q = 0; q < 8; ++q) {
        t[static_cast<size_t>(k)][static_cast<size_t>(q)] = Fmt(kPrioStatFormats[k], q);
      }
    }
    return t;
  }();
  return kTable[static_cast<size_t>(stat)][static_cast<size_t>(prio & 7)];
}

int AerBit(const char* const* names, std::string_view name) {
  for (int i = 0; i < 32; ++i) {
    if (names[i] != nullptr && name == names[i]) return i;
  }
  return -1;
}

void InitCounters(const SimConfig& cfg, Port& p, bool with_history) {
  p.counters.clear();
  if (p.kind == PortKind::kE810) {  // irdma has no process_mad: no PMA counters
    AddCounters(p, "hw_counters/", kIrdmaHwCounters, std::size(kIrdmaHwCounters));
  } else if (p.kind == PortKind::kLagSlave) {
    // A bonded PF has a netdev but no RDMA port: the LAG's counters are on mlx5_bond_N.
  } else if (IsMlx5(cfg)) {
    AddCounters(p, "counters/", kPmaCounters, std::size(kPmaCounters));
    AddCounters(p, "hw_counters/", kMlx5HwCounters, std::size(kMlx5HwCounters));
  } else {
    AddCounters(p, "hw_counters/", kRxeHwCounters, std::size(kRxeHwCounters));
  }
  p.carrier_up = 1;
  p.carrier_down = 1;
  p.up = true;
  p.half_width = false;
  InitEth(p);
  if (!with_history) return;  // freshly (re-)probed device: everything starts at zero
  // The port has been up for a while: from an hour to a week.
  const auto uptime = static_cast<double>(p.rng.Uniform(3600, 7 * 86400));
  if (p.kind == PortKind::kE810) {
    E810History(p, uptime);
    return;
  }
  EthHistory(cfg, p, uptime);
  CounterHistory(cfg, p, uptime);
}

void DeviceTraffic(const SimConfig& cfg, Device& d) {
  if (d.nic == Nic::kConnectX6DxLag) {
    LagTraffic(cfg, d);
    return;
  }
  for (Port& p : d.ports) {
    uint64_t tx = 0;
    uint64_t rx = 0;
    if (!TickBytes(cfg, p, &tx, &rx)) continue;
    if (p.kind == PortKind::kE810) {
      E810Traffic(cfg, p, tx, rx);
      continue;
    }
    if (IsMlx5(cfg)) {
      Mlx5Traffic(p, cfg.interval_seconds, tx, rx);
    } else {
      RxeTraffic(p, tx, rx);
    }
    EthTraffic(cfg, p, tx, rx);
  }
}

void BumpEth(Port& p, const std::string& key, uint64_t n) {
  auto it = p.eth.find(key);
  if (it == p.eth.end() || it->second.frozen || n == 0) return;
  it->second.Add(n);
}

uint64_t EthValue(const Port& p, const std::string& key) {
  auto it = p.eth.find(key);
  return it == p.eth.end() ? 0 : it->second.value;
}

}  // namespace rdma_fabric_sim
