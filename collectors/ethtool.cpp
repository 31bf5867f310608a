#include "ethtool.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_set>

#include "common.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter {
namespace {

enum class Type { kCounter, kGauge };

struct Family {
  std::string_view name;
  const char* help;
  Type type;
};

// Meanings and units from the drivers' documentation and sources: mlx5 counters.rst and
// en_stats.c, ice_ethtool.c, bnxt_ethtool.c (reference §3.1). HELP texts name the ethtool stat of
// each driver feeding the family.
enum FamilyId : size_t {
  kPfcPauseFrames,
  kPfcPauseDuration,
  kPfcPauseTransitions,
  kPfcStormEvents,
  kPriorityBytes,
  kPriorityPackets,
  kPriorityDiscards,
  kPriorityEcnMarked,
  kGlobalPauseFrames,
  kGlobalPauseDuration,
  kGlobalPauseTransitions,
  kPhyLinkDown,
  kPhySymbolErrors,
  kPhyCrcErrors,
  kPhyFecCorrectedBits,
  kPhyUncorrectableSymbolErrors,
  kPhyReceiveDiscards,
  kPhyReceiveBufferFull,
  kNicOutOfBuffer,
  kPcieOutboundStalled,
  kPcieOutboundStalledEvents,
  kPhyLaneErrors,
  kPhyTransmitDiscards,
  kPhyPauseControlFrames,
  kPcieSignalIntegrity,
  kModuleEvents,
  kRoceVportBytes,
  kRoceVportPackets,
  kFamilyCount,
};

constexpr std::array<Family, kFamilyCount> kFamilies = {{
    {metric::kPfcPauseFrames,
     "PFC pause frames on the priority: rx = received from the link partner (it asked this port "
     "to stop sending), tx = sent by this NIC (its receive buffer for the priority was filling). "
     "mlx5 rx/tx_prio<p>_pause (only priorities with PFC enabled have series); ice "
     "rx/tx_priority_<p>_xon.nic + _xoff.nic (their sum); bnxt_en rx/tx_pfc_ena_frames_pri<p>.",
     Type::kCounter},
    {metric::kPfcPauseDuration,
     "Time the priority spent paused by PFC, in seconds: rx = this port was held off by the link "
     "partner, tx = this NIC held the partner off (mlx5 rx/tx_prio<p>_pause_duration, bnxt_en "
     "pfc_pri<p>_rx/tx_duration_us; microseconds).",
     Type::kCounter},
    {"rdma_pfc_pause_transitions_total",
     "Received PFC pause XOFF to XON transitions on the priority (ethtool "
     "rx_prio<p>_pause_transition).",
     Type::kCounter},
    {metric::kPfcStormEvents,
     "Pause storm events: warning = the NIC sent pause frames for longer than the stall warning "
     "watermark; error = it reached the critical watermark and stall prevention stopped pause "
     "transmission, so drops may have occurred (ethtool tx_pause_storm_warning/error_events).",
     Type::kCounter},
    {"rdma_priority_bytes_total",
     "Bytes received (rx) or transmitted (tx) on the L2 priority at the physical port (ethtool "
     "rx/tx_prio<p>_bytes).",
     Type::kCounter},
    {"rdma_priority_packets_total",
     "Packets received (rx) or transmitted (tx) on the L2 priority at the physical port (ethtool "
     "rx/tx_prio<p>_packets).",
     Type::kCounter},
    {metric::kPriorityDiscards,
     "Received packets of the priority discarded by the NIC: host_buffer = lack of per-host "
     "receive buffer (rx_prio<p>_buf_discard, indexed by traffic class), congestion = per-host "
     "congestion, WRED (rx_prio<p>_cong_discard), port_buffer = lack of port receive buffers "
     "(rx_prio<p>_discards).",
     Type::kCounter},
    {"rdma_priority_ecn_marked_packets_total",
     "Received packets of the priority ECN-marked by the NIC due to per-host congestion (ethtool "
     "rx_prio<p>_marked).",
     Type::kCounter},
    {"rdma_global_pause_frames_total",
     "IEEE 802.3x global pause frames received (rx) or sent (tx): mlx5 rx/tx_global_pause (only "
     "while global pause is enabled); ice link_xon_rx.nic + link_xoff_rx.nic (tx: _tx; their "
     "sum); bnxt_en rx/tx_pause_frames.",
     Type::kCounter},
    {"rdma_global_pause_duration_seconds_total",
     "Time spent paused by 802.3x global pause, in seconds: rx = this port did not send, tx = "
     "this NIC held the partner off (ethtool rx/tx_global_pause_duration, microseconds).",
     Type::kCounter},
    {"rdma_global_pause_transitions_total",
     "Received 802.3x global pause XOFF to XON transitions (ethtool rx_global_pause_transition).",
     Type::kCounter},
    {metric::kPhyLinkDownEvents,
     "Times the physical link's operational state went down; rising = port flapping (ethtool "
     "link_down_events_phy).",
     Type::kCounter},
    {"rdma_phy_symbol_errors_total",
     "Received packets dropped due to physical coding (symbol) errors (ethtool "
     "rx_symbol_err_phy).",
     Type::kCounter},
    {"rdma_phy_crc_errors_total",
     "Received packets dropped due to an FCS (CRC) error at the physical port (ethtool "
     "rx_crc_errors_phy).",
     Type::kCounter},
    {"rdma_phy_fec_corrected_bit_errors_total",
     "Bit errors corrected by the active FEC (RS/FC); rising = high raw bit error rate (ethtool "
     "rx_corrected_bits_phy).",
     Type::kCounter},
    {"rdma_phy_uncorrectable_symbol_errors_total",
     "Symbol errors not corrected by FEC (or FEC inactive); rising = traffic is lost on the link "
     "(ethtool rx_pcs_symbol_err_phy).",
     Type::kCounter},
    {"rdma_phy_receive_discards_total",
     "Received packets dropped for lack of port receive buffers; rising = the NIC cannot absorb "
     "the incoming traffic (ethtool rx_discards_phy).",
     Type::kCounter},
    {"rdma_phy_receive_buffer_full_events_total",
     "Events in which the port receive buffer was more than 85% full (ethtool "
     "rx_buffer_passed_thres_phy).",
     Type::kCounter},
    {"rdma_nic_receive_out_of_buffer_total",
     "Times an Ethernet receive queue had no software buffer for incoming traffic (ethtool "
     "rx_out_of_buffer; a wrapping 32-bit sum in mlx5, extended to 64 bits). Not the RDMA "
     "hw_counters out_of_buffer.",
     Type::kCounter},
    {"rdma_pcie_outbound_stalled_ratio",
     "Fraction (0-1) of the last second in which the NIC had outbound PCIe reads (read) or posted "
     "writes (write) it could not issue for lack of credits (ethtool outbound_pci_stalled_rd/wr, "
     "percent).",
     Type::kGauge},
    {"rdma_pcie_outbound_stalled_events_total",
     "Seconds in which the outbound PCIe read (read) or write (write) stall exceeded 30% (ethtool "
     "outbound_pci_stalled_rd/wr_events).",
     Type::kCounter},
    {metric::kPhyLaneErrors,
     "Raw physical errors on the lane, counted before FEC correction; one lane far above the "
     "others = a failing optic, cable or connector lane (ethtool rx_err_lane_<N>_phy).",
     Type::kCounter},
    {"rdma_phy_transmit_discards_total",
     "Packets discarded on transmission although no error was detected: link down, head-of-line "
     "drop, pause from the network (ethtool tx_discards_phy).",
     Type::kCounter},
    {"rdma_phy_pause_control_frames_total",
     "Link-layer pause MAC control frames received (rx; the network asked this port to stop) or "
     "transmitted (tx; this NIC could not absorb the traffic) at the physical port (ethtool "
     "rx/tx_pause_ctrl_phy).",
     Type::kCounter},
    {metric::kPcieSignalIntegrity,
     "PCIe physical-layer signal integrity errors: rx = transitions to recovery due to framing "
     "and CRC (DLLP/TLP) errors, tx = transitions to recovery initiated by the other side; rising "
     "= try another slot, current firmware and BIOS (ethtool rx/tx_pci_signal_integrity).",
     Type::kCounter},
    {metric::kModuleEvents,
     "Transceiver module events since the driver loaded: unplug = module ejected, bus_stuck = "
     "I2C bus (data or clock) short-wire detected, high_temperature = module too hot, "
     "bad_shorted = module cable shorted (ethtool module_unplug, module_bus_stuck, "
     "module_high_temp, module_bad_shorted).",
     Type::kCounter},
    {"rdma_roce_vport_bytes_total",
     "RDMA (RoCE, UD and RC) bytes received (rx) or transmitted (tx) by the vport, unicast or "
     "multicast (ethtool rx/tx_vport_rdma_unicast/multicast_bytes).",
     Type::kCounter},
    {"rdma_roce_vport_packets_total",
     "RDMA (RoCE, UD and RC) packets received (rx) or transmitted (tx) by the vport, unicast or "
     "multicast (ethtool rx/tx_vport_rdma_unicast/multicast_packets).",
     Type::kCounter},
}};

struct Mapping {
  FamilyId family;
  Labels extra;
  double scale = 1.0;
  bool wraps32 = false;  // rx_out_of_buffer
  // Several stats feed one series (ice counts PFC XON and XOFF frames apart): summed.
  bool summed = false;
  // A per-priority series exported only for priorities in use (see Export).
  bool needs_active_priority = false;
};

constexpr double kMicroseconds = 1e-6;

// "rx_prio3_pause" -> direction "rx", priority "3", rest "pause".
bool SplitPriority(std::string_view name, std::string* direction, std::string* priority,
                   std::string_view* rest) {
  if (name.size() < 10) return false;  // "rx_prio0_x"
  std::string_view dir = name.substr(0, 2);
  if ((dir != "rx" && dir != "tx") || name.substr(2, 5) != "_prio") return false;
  size_t pos = 7;
  size_t digits = 0;
  while (pos + digits < name.size() && name[pos + digits] >= '0' && name[pos + digits] <= '9') {
    ++digits;
  }
  if (digits == 0 || digits > 2 || pos + digits >= name.size() || name[pos + digits] != '_') {
    return false;
  }
  *direction = std::string(dir);
  *priority = std::string(name.substr(pos, digits));
  *rest = name.substr(pos + digits + 1);
  return true;
}

// mlx5's rx/tx_prio<p>_* names.
std::optional<Mapping> MapMlx5PriorityStat(std::string_view name) {
  std::string direction, priority;
  std::string_view rest;
  if (!SplitPriority(name, &direction, &priority, &rest)) return std::nullopt;
  // The pause names exist only for priorities with PFC enabled: their presence makes the
  // priority active, so they are never held back.
  if (rest == "pause") {
    return Mapping{kPfcPauseFrames, {{"direction", direction}, {"priority", priority}}};
  }
  if (rest == "pause_duration") {
    return Mapping{
        kPfcPauseDuration, {{"direction", direction}, {"priority", priority}}, kMicroseconds};
  }
  auto traffic = [&](FamilyId family, Labels extra) {
    Mapping m{family, std::move(extra)};
    m.needs_active_priority = true;
    return m;
  };
  if (rest == "bytes")
    return traffic(kPriorityBytes, {{"direction", direction}, {"priority", priority}});
  if (rest == "packets") {
    return traffic(kPriorityPackets, {{"direction", direction}, {"priority", priority}});
  }
  if (direction != "rx") return std::nullopt;
  if (rest == "pause_transition") return Mapping{kPfcPauseTransitions, {{"priority", priority}}};
  // counters.rst: buf_discard = lack of per-host receive buffers, cong_discard = per-host
  // congestion, discards = lack of (port) receive buffers.
  if (rest == "buf_discard") {
    return traffic(kPriorityDiscards, {{"reason", "host_buffer"}, {"priority", priority}});
  }
  if (rest == "cong_discard") {
    return traffic(kPriorityDiscards, {{"reason", "congestion"}, {"priority", priority}});
  }
  if (rest == "discards") {
    return traffic(kPriorityDiscards, {{"reason", "port_buffer"}, {"priority", priority}});
  }
  if (rest == "marked") return traffic(kPriorityEcnMarked, {{"priority", priority}});
  return std::nullopt;
}

// Stats named with one decimal index (a priority or a lane) in place of '#'.
struct IndexedStat {
  std::string_view pattern;
  FamilyId family;
  const char* index_label;  // "priority" or "lane"
  const char* direction;    // nullptr: no direction label
  double scale;
  bool summed;
  bool needs_active_priority;
};

// ice and bnxt_en list every priority whether PFC is on or not, so their per-priority PFC
// series are held back until the priority is in use (a counter of it non-zero). Not mapped,
// because the meaning differs: bnxt_en pfc_pri<p>_rx/tx_transitions count XON->XOFF and
// XOFF->XON (mlx5 rx_prio<p>_pause_transition counts XOFF->XON only), and bnxt_en
// rx/tx_bytes_pri<p>, _packets_pri<p> are the counters of the CoS queue the priority maps to
// (priorities sharing a queue would repeat one value).
constexpr IndexedStat kIndexedStats[] = {
    // mlx5 (en_stats.c pport_phy_statistical_err_lanes_stats_desc)
    {"rx_err_lane_#_phy", kPhyLaneErrors, "lane", nullptr, 1, false, false},
    // ice (ice_ethtool.c ice_get_strings): XON and XOFF frames per priority, PFC frames of the
    // priority = their sum, as mlx5 rx/tx_prio<p>_pause counts every PFC frame of it.
    {"rx_priority_#_xon.nic", kPfcPauseFrames, "priority", "rx", 1, true, true},
    {"rx_priority_#_xoff.nic", kPfcPauseFrames, "priority", "rx", 1, true, true},
    {"tx_priority_#_xon.nic", kPfcPauseFrames, "priority", "tx", 1, true, true},
    {"tx_priority_#_xoff.nic", kPfcPauseFrames, "priority", "tx", 1, true, true},
    // bnxt_en (bnxt_ethtool.c bnxt_port_stats_arr, bnxt_port_stats_ext_arr)
    {"rx_pfc_ena_frames_pri#", kPfcPauseFrames, "priority", "rx", 1, false, true},
    {"tx_pfc_ena_frames_pri#", kPfcPauseFrames, "priority", "tx", 1, false, true},
    {"pfc_pri#_rx_duration_us", kPfcPauseDuration, "priority", "rx", kMicroseconds, false, true},
    {"pfc_pri#_tx_duration_us", kPfcPauseDuration, "priority", "tx", kMicroseconds, false, true},
};

// `name` is `pattern` with '#' replaced by 1-2 digits (0-15: priorities 0-7, lanes 0-7 today).
bool MatchIndexed(std::string_view name, std::string_view pattern, std::string* index) {
  size_t hash = pattern.find('#');
  std::string_view head = pattern.substr(0, hash), tail = pattern.substr(hash + 1);
  if (name.size() < head.size() + tail.size() + 1 || name.substr(0, head.size()) != head ||
      name.substr(name.size() - tail.size()) != tail) {
    return false;
  }
  std::string_view digits = name.substr(head.size(), name.size() - head.size() - tail.size());
  if (digits.size() > 2) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  *index = std::string(digits);
  return true;
}

std::optional<Mapping> MapIndexedStat(std::string_view name) {
  std::string index;
  for (const auto& s : kIndexedStats) {
    if (!MatchIndexed(name, s.pattern, &index)) continue;
    Mapping m{s.family, {}, s.scale};
    if (s.direction != nullptr) m.extra.push_back({"direction", s.direction});
    m.extra.push_back({s.index_label, index});
    m.summed = s.summed;
    m.needs_active_priority = s.needs_active_priority;
    return m;
  }
  return std::nullopt;
}

struct ExactStat {
  std::string_view stat;
  FamilyId family;
  const char* label;
  const char* value;
  double scale;
  bool summed;
  const char* label2 = nullptr;  // a second label (cast of the vport RDMA counters)
  const char* value2 = nullptr;
};

constexpr ExactStat kExactStats[] = {
    {"tx_pause_storm_warning_events", kPfcStormEvents, "level", "warning", 1, false},
    {"tx_pause_storm_error_events", kPfcStormEvents, "level", "error", 1, false},
    {"rx_global_pause", kGlobalPauseFrames, "direction", "rx", 1, false},
    {"tx_global_pause", kGlobalPauseFrames, "direction", "tx", 1, false},
    {"rx_global_pause_duration", kGlobalPauseDuration, "direction", "rx", kMicroseconds, false},
    {"tx_global_pause_duration", kGlobalPauseDuration, "direction", "tx", kMicroseconds, false},
    {"rx_global_pause_transition", kGlobalPauseTransitions, nullptr, nullptr, 1, false},
    {"link_down_events_phy", kPhyLinkDown, nullptr, nullptr, 1, false},
    {"rx_symbol_err_phy", kPhySymbolErrors, nullptr, nullptr, 1, false},
    {"rx_crc_errors_phy", kPhyCrcErrors, nullptr, nullptr, 1, false},
    {"rx_corrected_bits_phy", kPhyFecCorrectedBits, nullptr, nullptr, 1, false},
    {"rx_pcs_symbol_err_phy", kPhyUncorrectableSymbolErrors, nullptr, nullptr, 1, false},
    {"rx_discards_phy", kPhyReceiveDiscards, nullptr, nullptr, 1, false},
    {"rx_buffer_passed_thres_phy", kPhyReceiveBufferFull, nullptr, nullptr, 1, false},
    {"rx_out_of_buffer", kNicOutOfBuffer, nullptr, nullptr, 1, false},
    {"outbound_pci_stalled_rd", kPcieOutboundStalled, "kind", "read", 0.01, false},
    {"outbound_pci_stalled_wr", kPcieOutboundStalled, "kind", "write", 0.01, false},
    {"outbound_pci_stalled_rd_events", kPcieOutboundStalledEvents, "kind", "read", 1, false},
    {"outbound_pci_stalled_wr_events", kPcieOutboundStalledEvents, "kind", "write", 1, false},
    {"tx_discards_phy", kPhyTransmitDiscards, nullptr, nullptr, 1, false},
    {"rx_pause_ctrl_phy", kPhyPauseControlFrames, "direction", "rx", 1, false},
    {"tx_pause_ctrl_phy", kPhyPauseControlFrames, "direction", "tx", 1, false},
    {"rx_pci_signal_integrity", kPcieSignalIntegrity, "direction", "rx", 1, false},
    {"tx_pci_signal_integrity", kPcieSignalIntegrity, "direction", "tx", 1, false},
    {"module_unplug", kModuleEvents, "event", "unplug", 1, false},
    {"module_bus_stuck", kModuleEvents, "event", "bus_stuck", 1, false},
    {"module_high_temp", kModuleEvents, "event", "high_temperature", 1, false},
    {"module_bad_shorted", kModuleEvents, "event", "bad_shorted", 1, false},
    {"rx_vport_rdma_unicast_bytes", kRoceVportBytes, "direction", "rx", 1, false, "cast",
     "unicast"},
    {"tx_vport_rdma_unicast_bytes", kRoceVportBytes, "direction", "tx", 1, false, "cast",
     "unicast"},
    {"rx_vport_rdma_multicast_bytes", kRoceVportBytes, "direction", "rx", 1, false, "cast",
     "multicast"},
    {"tx_vport_rdma_multicast_bytes", kRoceVportBytes, "direction", "tx", 1, false, "cast",
     "multicast"},
    {"rx_vport_rdma_unicast_packets", kRoceVportPackets, "direction", "rx", 1, false, "cast",
     "unicast"},
    {"tx_vport_rdma_unicast_packets", kRoceVportPackets, "direction", "tx", 1, false, "cast",
     "unicast"},
    {"rx_vport_rdma_multicast_packets", kRoceVportPackets, "direction", "rx", 1, false, "cast",
     "multicast"},
    {"tx_vport_rdma_multicast_packets", kRoceVportPackets, "direction", "tx", 1, false, "cast",
     "multicast"},
    // ice: 802.3x XON and XOFF frames apart; the global pause frames are their sum.
    {"link_xon_rx.nic", kGlobalPauseFrames, "direction", "rx", 1, true},
    {"link_xoff_rx.nic", kGlobalPauseFrames, "direction", "rx", 1, true},
    {"link_xon_tx.nic", kGlobalPauseFrames, "direction", "tx", 1, true},
    {"link_xoff_tx.nic", kGlobalPauseFrames, "direction", "tx", 1, true},
    // bnxt_en: 802.3x pause frames (PFC frames are counted apart, in rx/tx_pfc_frames).
    {"rx_pause_frames", kGlobalPauseFrames, "direction", "rx", 1, false},
    {"tx_pause_frames", kGlobalPauseFrames, "direction", "tx", 1, false},
};

std::optional<Mapping> MapStat(std::string_view name) {
  if (auto m = MapMlx5PriorityStat(name)) return m;
  for (const auto& e : kExactStats) {
    if (e.stat != name) continue;
    Mapping m{e.family, {}, e.scale};
    if (e.label != nullptr) m.extra.push_back({e.label, e.value});
    if (e.label2 != nullptr) m.extra.push_back({e.label2, e.value2});
    m.wraps32 = e.family == kNicOutOfBuffer;
    m.summed = e.summed;
    return m;
  }
  return MapIndexedStat(name);
}

std::string LabelOf(const Labels& labels, std::string_view name) {
  for (const auto& l : labels) {
    if (l.name == name) return l.value;
  }
  return "";
}

void Emit(FamilyId id, const Labels& labels, double value, MetricSink& sink) {
  const Family& family = kFamilies[id];
  if (family.type == Type::kGauge) {
    sink.Gauge(family.name, family.help, labels, value);
  } else {
    sink.Counter(family.name, family.help, labels, value);
  }
}

// Cardinality: per-priority series a driver lists for every priority (mlx5 traffic, discards
// and ECN marks: 64 series for 8 priorities; ice and bnxt_en PFC counters) are exported for the
// priorities in use: PFC enabled (mlx5 lists its pause names only then) or any per-priority
// counter non-zero. Counters only grow, so a priority that appears stays.
std::set<std::string> ActivePriorities(const EthtoolStats& stats,
                                       const std::vector<std::optional<Mapping>>& mappings) {
  std::set<std::string> active;
  for (size_t i = 0; i < mappings.size(); ++i) {
    const auto& mapping = mappings[i];
    if (!mapping) continue;
    std::string priority = LabelOf(mapping->extra, "priority");
    if (priority.empty()) continue;
    if (stats.values[i] != 0 || !mapping->needs_active_priority) active.insert(priority);
  }
  return active;
}

}  // namespace

void EthtoolCollector::Export(const Labels& labels, const std::string& netdev,
                              const EthtoolStats& stats, MetricSink& sink) {
  // Drivers have been known to repeat a name; a repeated series would be a duplicate sample.
  std::unordered_set<std::string_view> seen;
  std::set<std::string> generic_seen;
  size_t n = std::min(stats.names.size(), stats.values.size());
  // Each name is mapped once: the active priorities and the export both need the mapping.
  std::vector<std::optional<Mapping>> mappings(n);
  for (size_t i = 0; i < n; ++i)
    mappings[i] = MapStat(stats.names[i]);
  std::set<std::string> active_priorities = ActivePriorities(stats, mappings);
  // Summed series, in the order their first stat appears, emitted after the others.
  std::vector<std::pair<Mapping, double>> sums;
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = stats.names[i];
    if (!seen.insert(name).second) continue;
    uint64_t raw = stats.values[i];
    const auto& mapping = mappings[i];
    if (mapping) {
      if (mapping->needs_active_priority &&
          !active_priorities.count(LabelOf(mapping->extra, "priority"))) {
        continue;
      }
      if (mapping->wraps32 && raw <= UINT32_MAX) raw = wraps_.Extend(netdev + "/" + name, raw);
      double value = static_cast<double>(raw) * mapping->scale;
      if (mapping->summed) {
        auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& s) {
          return s.first.family == mapping->family && s.first.extra == mapping->extra;
        });
        if (it == sums.end()) {
          sums.emplace_back(*mapping, value);
        } else {
          it->second += value;
        }
        continue;
      }
      Labels all = labels;
      all.insert(all.end(), mapping->extra.begin(), mapping->extra.end());
      Emit(mapping->family, all, value, sink);
      continue;
    }
    if (!include_) continue;
    auto generic = generic_.find(name);
    if (generic == generic_.end()) {
      Generic g;
      g.included = std::regex_match(name, *include_);
      if (g.included) {
        g.metric = GenericMetricName("rdma_ethtool_", name, "");
        g.help = "ethtool -S statistic " + name +
                 " of the netdev (selected by --collector.ethtool.metrics-include; raw value, "
                 "type and unit not known to this exporter).";
      }
      generic = generic_.emplace(name, std::move(g)).first;
    }
    const Generic& g = generic->second;
    if (!g.included) continue;
    if (!generic_seen.insert(g.metric).second) continue;  // two names sanitized alike
    sink.Untyped(g.metric, g.help, labels, static_cast<double>(raw));
  }
  for (const auto& [mapping, value] : sums) {
    Labels all = labels;
    all.insert(all.end(), mapping.extra.begin(), mapping.extra.end());
    Emit(mapping.family, all, value, sink);
  }
}

bool EthtoolCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->ethtool == nullptr) return true;
  std::set<std::string> read;
  EthtoolStats stats;
  for (const auto& device : inventory.devices) {
    // A VF's ethtool set has no physical port or priority counters; its PF reports them.
    if (!device.physfn.empty()) continue;
    for (const auto& port : device.ports) {
      if (port.link_layer != "Ethernet") continue;
      // On a RoCE LAG port the bond has no statistics: each slave's are read.
      for (const auto& netdev : PhysicalNetdevs(port)) {
        if (!read.insert(netdev.name).second) continue;  // a netdev shared by two ports
        int err = kernel->ethtool->ReadStats(netdev.name, &stats);
        if (err != 0) {
          ctx.ReadFailed("ethtool:" + netdev.name, err);
          continue;
        }
        Export(PhysicalNetdevLabels(device, port, netdev), netdev.name, stats, sink);
      }
    }
  }
  wraps_.EndPoll();
  return true;
}

}  // namespace rdma_exporter
