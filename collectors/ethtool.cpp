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

// Meanings and units from the mlx5 counters documentation and en_stats.c (reference §3.1).
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
  kFamilyCount,
};

constexpr std::array<Family, kFamilyCount> kFamilies = {{
    {"rdma_pfc_pause_frames_total",
     "PFC pause frames on the priority: rx = received from the link partner (it asked this port "
     "to stop sending), tx = sent by this NIC (its receive buffer for the priority was filling). "
     "Only priorities with PFC enabled have series (ethtool rx/tx_prio<p>_pause).",
     Type::kCounter},
    {metric::kPfcPauseDuration,
     "Time the priority spent paused by PFC, in seconds: rx = this port was held off by the link "
     "partner, tx = this NIC held the partner off (ethtool rx/tx_prio<p>_pause_duration, "
     "microseconds).",
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
     "Received packets of the priority discarded by the NIC: buffer = lack of per-host receive "
     "buffer (rx_prio<p>_buf_discard, indexed by traffic class), congestion = per-host "
     "congestion, WRED (rx_prio<p>_cong_discard), other = lack of port receive buffers "
     "(rx_prio<p>_discards).",
     Type::kCounter},
    {"rdma_priority_ecn_marked_packets_total",
     "Received packets of the priority ECN-marked by the NIC due to per-host congestion (ethtool "
     "rx_prio<p>_marked).",
     Type::kCounter},
    {"rdma_global_pause_frames_total",
     "IEEE 802.3x global pause frames received (rx) or sent (tx); only while global pause is "
     "enabled (ethtool rx/tx_global_pause).",
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
}};

struct Mapping {
  FamilyId family;
  Labels extra;
  double scale = 1.0;
  bool wraps32 = false;  // rx_out_of_buffer
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

std::optional<Mapping> MapStat(std::string_view name) {
  std::string direction, priority;
  std::string_view rest;
  if (SplitPriority(name, &direction, &priority, &rest)) {
    bool rx = direction == "rx";
    if (rest == "pause") {
      return Mapping{kPfcPauseFrames, {{"direction", direction}, {"priority", priority}}};
    }
    if (rest == "pause_duration") {
      return Mapping{
          kPfcPauseDuration, {{"direction", direction}, {"priority", priority}}, kMicroseconds};
    }
    if (rest == "bytes") {
      return Mapping{kPriorityBytes, {{"direction", direction}, {"priority", priority}}};
    }
    if (rest == "packets") {
      return Mapping{kPriorityPackets, {{"direction", direction}, {"priority", priority}}};
    }
    if (!rx) return std::nullopt;
    if (rest == "pause_transition") return Mapping{kPfcPauseTransitions, {{"priority", priority}}};
    if (rest == "buf_discard") {
      return Mapping{kPriorityDiscards, {{"reason", "buffer"}, {"priority", priority}}};
    }
    if (rest == "cong_discard") {
      return Mapping{kPriorityDiscards, {{"reason", "congestion"}, {"priority", priority}}};
    }
    if (rest == "discards") {
      return Mapping{kPriorityDiscards, {{"reason", "other"}, {"priority", priority}}};
    }
    if (rest == "marked") return Mapping{kPriorityEcnMarked, {{"priority", priority}}};
    return std::nullopt;
  }

  struct Exact {
    std::string_view stat;
    FamilyId family;
    const char* label;
    const char* value;
    double scale;
  };
  static constexpr Exact kExact[] = {
      {"tx_pause_storm_warning_events", kPfcStormEvents, "severity", "warning", 1},
      {"tx_pause_storm_error_events", kPfcStormEvents, "severity", "error", 1},
      {"rx_global_pause", kGlobalPauseFrames, "direction", "rx", 1},
      {"tx_global_pause", kGlobalPauseFrames, "direction", "tx", 1},
      {"rx_global_pause_duration", kGlobalPauseDuration, "direction", "rx", kMicroseconds},
      {"tx_global_pause_duration", kGlobalPauseDuration, "direction", "tx", kMicroseconds},
      {"rx_global_pause_transition", kGlobalPauseTransitions, nullptr, nullptr, 1},
      {"link_down_events_phy", kPhyLinkDown, nullptr, nullptr, 1},
      {"rx_symbol_err_phy", kPhySymbolErrors, nullptr, nullptr, 1},
      {"rx_crc_errors_phy", kPhyCrcErrors, nullptr, nullptr, 1},
      {"rx_corrected_bits_phy", kPhyFecCorrectedBits, nullptr, nullptr, 1},
      {"rx_pcs_symbol_err_phy", kPhyUncorrectableSymbolErrors, nullptr, nullptr, 1},
      {"rx_discards_phy", kPhyReceiveDiscards, nullptr, nullptr, 1},
      {"rx_buffer_passed_thres_phy", kPhyReceiveBufferFull, nullptr, nullptr, 1},
      {"rx_out_of_buffer", kNicOutOfBuffer, nullptr, nullptr, 1},
      {"outbound_pci_stalled_rd", kPcieOutboundStalled, "kind", "read", 0.01},
      {"outbound_pci_stalled_wr", kPcieOutboundStalled, "kind", "write", 0.01},
      {"outbound_pci_stalled_rd_events", kPcieOutboundStalledEvents, "kind", "read", 1},
      {"outbound_pci_stalled_wr_events", kPcieOutboundStalledEvents, "kind", "write", 1},
  };
  for (const auto& e : kExact) {
    if (e.stat != name) continue;
    Mapping m{e.family, {}, e.scale};
    if (e.label != nullptr) m.extra.push_back({e.label, e.value});
    m.wraps32 = e.family == kNicOutOfBuffer;
    return m;
  }
  return std::nullopt;
}

bool IsPriorityTraffic(FamilyId family) {
  return family == kPriorityBytes || family == kPriorityPackets || family == kPriorityDiscards ||
         family == kPriorityEcnMarked;
}

std::string LabelOf(const Labels& labels, std::string_view name) {
  for (const auto& l : labels) {
    if (l.name == name) return l.value;
  }
  return "";
}

}  // namespace

void EthtoolCollector::Export(const Labels& labels, const std::string& netdev,
                              const EthtoolStats& stats, MetricSink& sink) {
  // Drivers have been known to repeat a name; a repeated series would be a duplicate sample.
  std::unordered_set<std::string_view> seen;
  std::set<std::string> generic_seen;
  size_t n = std::min(stats.names.size(), stats.values.size());
  // Cardinality: the per-priority traffic families (bytes, packets, discards, ECN marks: 64
  // series for 8 priorities) are exported for the priorities in use - PFC enabled (its pause
  // names are present) or any per-priority counter non-zero. Counters only grow, so a priority
  // that appears stays.
  std::set<std::string> active_priorities;
  for (size_t i = 0; i < n; ++i) {
    std::string direction, priority;
    std::string_view rest;
    if (!SplitPriority(stats.names[i], &direction, &priority, &rest)) continue;
    if (stats.values[i] != 0 || rest.substr(0, 5) == "pause") active_priorities.insert(priority);
  }
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = stats.names[i];
    if (!seen.insert(name).second) continue;
    uint64_t raw = stats.values[i];
    auto mapping = MapStat(name);
    if (mapping) {
      if (IsPriorityTraffic(mapping->family) &&
          !active_priorities.count(LabelOf(mapping->extra, "priority"))) {
        continue;
      }
      if (mapping->wraps32 && raw <= UINT32_MAX) raw = wraps_.Extend(netdev + "/" + name, raw);
      Labels all = labels;
      all.insert(all.end(), mapping->extra.begin(), mapping->extra.end());
      const Family& family = kFamilies[mapping->family];
      double value = static_cast<double>(raw) * mapping->scale;
      if (family.type == Type::kGauge) {
        sink.Gauge(family.name, family.help, all, value);
      } else {
        sink.Counter(family.name, family.help, all, value);
      }
      continue;
    }
    if (!include_ || !std::regex_match(name, *include_)) continue;
    std::string metric = GenericMetricName("rdma_ethtool_", name, "");
    if (!generic_seen.insert(metric).second) continue;  // two names sanitized alike
    sink.Untyped(metric,
                 "ethtool -S statistic " + name +
                     " of the netdev (selected by --collector.ethtool.metrics-include; raw "
                     "value, type and unit not known to this exporter).",
                 labels, static_cast<double>(raw));
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
