// Counter names, widths and overflow rules (kernel reference §1.5, §2.1, §2.2, §3.1), and how
// the counters of a port advance: a plausible history at start-up, then one tick of healthy
// traffic at a time. Scenario effects on counters are in faults.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model.h"

namespace rdma_fabric_sim {

struct CounterDef {
  const char* name;
  int bits;
  Overflow overflow;
};

inline constexpr Overflow kSat = Overflow::kSaturate;
inline constexpr Overflow kWrap = Overflow::kWrap;

// mlx5 `ethtool -S` statistics (reference §3.1) that are not per priority, in the order the
// driver's stats groups list them: SW, q-counter, 802.3, RFC 2863, physical layer, extended,
// PCIe. `outbound_pci_stalled_rd/wr` are gauges (percent of the last second).
inline constexpr CounterDef kEthtoolPortStats[] = {
    {"rx_packets", 64, kWrap},
    {"rx_bytes", 64, kWrap},
    {"tx_packets", 64, kWrap},
    {"tx_bytes", 64, kWrap},
    {"rx_csum_complete", 64, kWrap},
    {"rx_out_of_buffer", 32, kWrap},  // u32 sum of q-counters
    // vport group: the RoCE traffic of the function (the RDMA bytes bypass the SW counters).
    {"rx_vport_rdma_unicast_packets", 64, kWrap},
    {"rx_vport_rdma_unicast_bytes", 64, kWrap},
    {"tx_vport_rdma_unicast_packets", 64, kWrap},
    {"tx_vport_rdma_unicast_bytes", 64, kWrap},
    {"rx_vport_rdma_multicast_packets", 64, kWrap},
    {"rx_vport_rdma_multicast_bytes", 64, kWrap},
    {"tx_vport_rdma_multicast_packets", 64, kWrap},
    {"tx_vport_rdma_multicast_bytes", 64, kWrap},
    {"tx_packets_phy", 64, kWrap},
    {"rx_packets_phy", 64, kWrap},
    {"rx_crc_errors_phy", 64, kWrap},
    {"tx_bytes_phy", 64, kWrap},
    {"rx_bytes_phy", 64, kWrap},
    {"rx_pause_ctrl_phy", 64, kWrap},  // rendered as the sum of rx_prio*_pause
    {"tx_pause_ctrl_phy", 64, kWrap},  // rendered as the sum of tx_prio*_pause
    {"rx_symbol_err_phy", 64, kWrap},
    {"rx_discards_phy", 64, kWrap},
    {"tx_discards_phy", 64, kWrap},
    {"tx_errors_phy", 64, kWrap},
    {"link_down_events_phy", 32, kWrap},
    {"rx_pcs_symbol_err_phy", 64, kWrap},
    {"rx_corrected_bits_phy", 64, kWrap},  // rendered as the sum of the four lanes
    // Per-lane corrected bits (pport_phy_statistical_err_lanes_stats_desc): a failing optic
    // shows one lane far above the others.
    {"rx_err_lane_0_phy", 64, kWrap},
    {"rx_err_lane_1_phy", 64, kWrap},
    {"rx_err_lane_2_phy", 64, kWrap},
    {"rx_err_lane_3_phy", 64, kWrap},
    {"rx_buffer_passed_thres_phy", 64, kWrap},
    {"rx_pci_signal_integrity", 64, kWrap},
    {"tx_pci_signal_integrity", 64, kWrap},
    {"outbound_pci_buffer_overflow", 64, kWrap},
    {"outbound_pci_stalled_rd", 64, kWrap},
    {"outbound_pci_stalled_wr", 64, kWrap},
    {"outbound_pci_stalled_rd_events", 64, kWrap},
    {"outbound_pci_stalled_wr_events", 64, kWrap},
    // pme group: transceiver module status and error events.
    {"module_unplug", 64, kWrap},
    {"module_bus_stuck", 64, kWrap},
    {"module_high_temp", 64, kWrap},
    {"module_bad_shorted", 64, kWrap},
};

// The lanes of the 4-lane PHY (rx_err_lane_<N>_phy).
inline constexpr const char* kLaneErrorStats[] = {"rx_err_lane_0_phy", "rx_err_lane_1_phy",
                                                  "rx_err_lane_2_phy", "rx_err_lane_3_phy"};

// ice (E810) `ethtool -S` statistics that are not per priority, in ice_get_strings() order:
// the VSI (netdev) stats, queue 0, then the port's PF stats (".nic"). The per-priority
// {tx,rx}_priority_<p>_{xon,xoff}.nic follow (IcePrioName).
inline constexpr const char* kIceEthtoolStats[] = {
    "rx_unicast",
    "tx_unicast",
    "rx_multicast",
    "tx_multicast",
    "rx_broadcast",
    "tx_broadcast",
    "rx_bytes",
    "tx_bytes",
    "rx_dropped",
    "rx_unknown_protocol",
    "rx_alloc_fail",
    "rx_pg_alloc_fail",
    "tx_errors",
    "tx_linearize",
    "tx_busy",
    "tx_restart",
    "tx_queue_0_packets",
    "tx_queue_0_bytes",
    "rx_queue_0_packets",
    "rx_queue_0_bytes",
    "rx_bytes.nic",
    "tx_bytes.nic",
    "rx_unicast.nic",
    "tx_unicast.nic",
    "rx_multicast.nic",
    "tx_multicast.nic",
    "rx_broadcast.nic",
    "tx_broadcast.nic",
    "tx_errors.nic",
    "tx_timeout.nic",
    "rx_size_64.nic",
    "tx_size_64.nic",
    "rx_size_127.nic",
    "tx_size_127.nic",
    "rx_size_255.nic",
    "tx_size_255.nic",
    "rx_size_511.nic",
    "tx_size_511.nic",
    "rx_size_1023.nic",
    "tx_size_1023.nic",
    "rx_size_1522.nic",
    "tx_size_1522.nic",
    "rx_size_big.nic",
    "tx_size_big.nic",
    "link_xon_rx.nic",
    "link_xon_tx.nic",
    "link_xoff_rx.nic",
    "link_xoff_tx.nic",
    "tx_dropped_link_down.nic",
    "rx_undersize.nic",
    "rx_fragments.nic",
    "rx_oversize.nic",
    "rx_jabber.nic",
    "rx_csum_bad.nic",
    "rx_length_errors.nic",
    "rx_dropped.nic",
    "rx_crc_errors.nic",
    "illegal_bytes.nic",
    "mac_local_faults.nic",
    "mac_remote_faults.nic",
    "fdir_sb_match.nic",
    "fdir_sb_status.nic",
};

// ice per-priority PFC frame counts (ice_get_strings: tx for priorities 0-7, then rx).
enum IcePrioStat { kIceTxXon, kIceTxXoff, kIceRxXon, kIceRxXoff, kIcePrioStatCount };

// Per-priority mlx5 statistics (64-bit). The PFC group is listed only for priorities with PFC
// enabled; the simulator keeps counting all eight so a priority keeps its value when PFC is
// switched off and on again.
enum PrioStat {
  kRxPrioBytes,
  kRxPrioPackets,
  kRxPrioDiscards,
  kTxPrioBytes,
  kTxPrioPackets,
  kRxPrioPause,  // first of the PFC group
  kRxPrioPauseDuration,
  kTxPrioPause,
  kTxPrioPauseDuration,
  kRxPrioPauseTransition,  // last of the PFC group
  kRxPrioBufDiscard,
  kRxPrioCongDiscard,
  kRxPrioMarked,
  kPrioStatCount,
};

inline constexpr const char* kPauseStormStats[] = {"tx_pause_storm_warning_events",
                                                   "tx_pause_storm_error_events"};

// Netdev traffic counters every netdev has (kernel path; `ethtool -S` SW stats on mlx5).
inline constexpr const char* kNetdevTrafficStats[] = {"rx_packets", "rx_bytes", "tx_packets",
                                                      "tx_bytes"};

// The RoCE (NCCL) data priority: NCCL_IB_TC=106 -> DSCP 26 -> priority 26 >> 3 = 3.
inline constexpr int kDataPrio = 3;
// CNPs go out on priority 6 (ecn/roce_np/cnp_802p_prio).
inline constexpr int kCnpPrio = 6;

// PCIe AER stat names (drivers/pci/pcie/aer.c, 5.x/6.x kernels); nullptr = unnamed bit.
inline constexpr const char* kAerCorrectableNames[32] = {
    "RxErr",    nullptr, nullptr, nullptr, nullptr,   nullptr,       "BadTLP",     "BadDLLP",
    "Rollover", nullptr, nullptr, nullptr, "Timeout", "NonFatalErr", "CorrIntErr", "HeaderOF",
    nullptr,    nullptr, nullptr, nullptr, nullptr,   nullptr,       nullptr,      nullptr,
    nullptr,    nullptr, nullptr, nullptr, nullptr,   nullptr,       nullptr,      nullptr};
inline constexpr const char* kAerUncorrectableNames[32] = {"Undefined",
                                                           nullptr,
                                                           nullptr,
                                                           nullptr,
                                                           "DLP",
                                                           "SDES",
                                                           nullptr,
                                                           nullptr,
                                                           nullptr,
                                                           nullptr,
                                                           nullptr,
                                                           nullptr,
                                                           "TLP",
                                                           "FCP",
                                                           "CmpltTO",
                                                           "CmpltAbrt",
                                                           "UnxCmplt",
                                                           "RxOF",
                                                           "MalfTLP",
                                                           "ECRC",
                                                           "UnsupReq",
                                                           "ACSViol",
                                                           "UncorrIntErr",
                                                           "BlockedTLP",
                                                           "AtomicOpBlocked",
                                                           "TLPBlockedErr",
                                                           "PoisonTLPBlocked",
                                                           nullptr,
                                                           nullptr,
                                                           nullptr,
                                                           nullptr,
                                                           nullptr};

// The name of per-priority statistic `stat` for priority `prio` ("rx_prio3_pause").
const std::string& PrioName(PrioStat stat, int prio);

// The name of ice statistic `stat` for priority `prio` ("tx_priority_3_xoff.nic").
const std::string& IcePrioName(IcePrioStat stat, int prio);

// The bit of AER stat `name` in `names` (kAerCorrectableNames or kAerUncorrectableNames), -1
// if there is none.
int AerBit(const char* const* names, std::string_view name);

// Fresh counters of port `p` (carrier counts 2/1/1, link up, full width). With `with_history`
// they start from a plausible history (the port has been up for a while) so rates and deltas
// look real from the first scrape; without, everything starts at zero (a re-probed device).
void InitCounters(const SimConfig& cfg, Port& p, bool with_history);

// One tick (cfg.interval_seconds) of healthy traffic on the ports of `d`: the sysfs counters
// and the netdev/ethtool statistics. Nothing moves while a link is down; frozen counters
// stay. A LAG splits the RDMA traffic of its port over the slaves that are up.
void DeviceTraffic(const SimConfig& cfg, Device& d);

// Adds `n` to netdev statistic `key` of `p` (if it exists and is not frozen).
void BumpEth(Port& p, const std::string& key, uint64_t n);

// The value of netdev statistic `key` of `p`, 0 if it does not exist.
uint64_t EthValue(const Port& p, const std::string& key);

}  // namespace rdma_fabric_sim
