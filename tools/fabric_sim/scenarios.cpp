#include "scenarios.h"

#include <algorithm>
#include <iterator>

#include "fabric_sim.h"

namespace rdma_fabric_sim {

namespace {

// The table is split into groups only to keep each function short; Scenarios() joins them in
// --help order.

// Healthy, and the link and PCIe faults of the fault port.
std::vector<Scenario> LinkScenarios() {
  using K = EffectKind;
  return {
      {"healthy", "all links up, steady traffic, rare errors", {}},
      {"link-down",
       "fault port goes DOWN/Disabled at tick 3 and stays down",
       {{K::kLinkDown, nullptr, 3, kForever, 0, 0}}},
      {"flap",
       "fault port toggles down/up every 2 ticks from tick 2",
       {{K::kLinkFlap, nullptr, 2, kForever, 2, 0}}},
      {"downgrade",
       "fault port rate drops to half width at tick 3",
       {{K::kHalfWidth, nullptr, 3, kForever, 0, 0}}},
      {"pcie-downtrain",
       "fault device PCIe link x16 32.0 GT/s -> x8 16.0 GT/s at tick 3",
       {{K::kPcieDowntrain, nullptr, 3, kForever, 0, 0},
        {K::kSet, "ethtool/outbound_pci_stalled_rd", 3, kForever, 45, 0},
        {K::kSet, "ethtool/outbound_pci_stalled_wr", 3, kForever, 35, 0},
        {K::kAddRate, "ethtool/outbound_pci_stalled_rd_events", 3, kForever, 1, 1},
        {K::kAddRate, "ethtool/outbound_pci_stalled_wr_events", 3, kForever, 1, 1}}},
  };
}

// Counters of the fault port (or its PCI function) that rise, stick or wrap.
std::vector<Scenario> CounterScenarios() {
  using K = EffectKind;
  return {
      {"symbol-errors",
       "fault port physical errors and PCIe correctable AER errors rise every tick",
       {{K::kAdd, "counters/symbol_error", 1, kForever, 5, 20},
        {K::kAdd, "counters/link_error_recovery", 1, kForever, 1, 1},
        {K::kAdd, "counters/port_rcv_errors", 1, kForever, 3, 10},
        {K::kAdd, "aer_dev_correctable/RxErr", 1, kForever, 1, 5},
        {K::kAdd, "aer_dev_correctable/BadTLP", 1, kForever, 0, 2},
        {K::kAdd, "aer_dev_correctable/BadDLLP", 1, kForever, 0, 2}}},
      {"congestion",
       "fault port ECN/CNP counters rise fast (RoCE: also ethtool rx_prio3_marked and "
       "rx_prio3_cong_discard)",
       {{K::kAdd, "hw_counters/np_ecn_marked_roce_packets", 1, kForever, 20000, 50000},
        {K::kAdd, "hw_counters/np_cnp_sent", 1, kForever, 10000, 25000},
        {K::kAdd, "hw_counters/rp_cnp_handled", 1, kForever, 10000, 25000},
        {K::kAdd, "counters/port_xmit_wait", 1, kForever, 100000, 1000000},
        {K::kAdd, "ethtool/rx_prio3_marked", 1, kForever, 20000, 50000},
        {K::kAdd, "ethtool/rx_prio3_cong_discard", 1, kForever, 100, 2000},
        // E810 (irdma, ice): the same signals under their names, and priority-3 XOFF.
        {K::kAdd, "hw_counters/RxECNMrkd", 1, kForever, 20000, 50000},
        {K::kAdd, "hw_counters/cnpSent", 1, kForever, 10000, 25000},
        {K::kAdd, "hw_counters/cnpHandled", 1, kForever, 10000, 25000},
        {K::kAddRate, "ethtool/tx_priority_3_xoff.nic", 1, kForever, 2000, 8000},
        {K::kAddRate, "ethtool/rx_priority_3_xoff.nic", 1, kForever, 1000, 4000}}},
      {"out-of-buffer",
       "fault port hw_counters/out_of_buffer rises",
       {{K::kAdd, "hw_counters/out_of_buffer", 1, kForever, 500, 5000}}},
      {"retransmits",
       "fault port transport retry / sequence error counters rise",
       {{K::kAdd, "hw_counters/local_ack_timeout_err", 1, kForever, 1, 10},
        {K::kAdd, "hw_counters/packet_seq_err", 1, kForever, 5, 50},
        {K::kAdd, "hw_counters/req_transport_retries_exceeded", 1, kForever, 1, 2},
        {K::kAdd, "hw_counters/retry_exceeded_err", 1, kForever, 1, 2},
        {K::kAdd, "hw_counters/rcvd_seq_err", 1, kForever, 5, 50},
        {K::kAdd, "hw_counters/completer_retry_err", 1, kForever, 1, 10}}},
      {"saturated",
       "fault port symbol_error stuck at 65535 and link_downed at 255 (IBTA all-ones)",
       {{K::kSet, "counters/symbol_error", 0, kForever, 65535, 0},
        {K::kSet, "counters/link_downed", 0, kForever, 255, 0}}},
      {"wrap",
       "fault port rx_write_requests starts at 2^32-1000, +400/tick, wraps at tick 3",
       {{K::kFreeze, "hw_counters/rx_write_requests", 0, kForever, 0, 0},
        {K::kSet, "hw_counters/rx_write_requests", 0, 1, (uint64_t{1} << 32) - 1000, 0},
        {K::kAdd, "hw_counters/rx_write_requests", 1, kForever, 400, 400}}},
  };
}

// The fault device leaving sysfs (and coming back).
std::vector<Scenario> PresenceScenarios() {
  using K = EffectKind;
  return {
      {"vanish",
       "fault device disappears at tick 3 and comes back (counters reset) at tick 6",
       {{K::kVanish, nullptr, 3, 6, 0, 0}}},
      {"churn",
       "every 4 ticks from tick 1: fault device and VFs removed, re-added, files malformed, "
       "VFs and last port removed (robustness tests)",
       {{K::kChurn, nullptr, 1, kForever, 0, 0}}},
  };
}

// RoCE lossless-fabric faults. The fault device must be a RoCE PF (kRoceOnly).
std::vector<Scenario> RoceScenarios() {
  using K = EffectKind;
  return {
      {"pfc-storm",
       "RoCE port*: PFC pause storm on priority 3 (tx pause 50-80% of the time), storm "
       "warning/error events, rx_prio3_buf_discard rises",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0},
        {K::kAddRate, "ethtool/tx_prio3_pause", 1, kForever, 10000, 25000},
        {K::kAddRate, "ethtool/tx_prio3_pause_duration", 1, kForever, 500000, 800000},
        {K::kAddRate, "ethtool/rx_prio3_pause", 1, kForever, 5000, 15000},
        {K::kAddRate, "ethtool/rx_prio3_pause_duration", 1, kForever, 100000, 300000},
        {K::kAddRate, "ethtool/rx_prio3_pause_transition", 1, kForever, 100, 1000},
        {K::kAdd, "ethtool/tx_pause_storm_warning_events", 2, kForever, 1, 1},
        {K::kAdd, "ethtool/tx_pause_storm_error_events", 4, kForever, 1, 1},
        {K::kAddRate, "ethtool/rx_prio3_buf_discard", 1, kForever, 1000, 10000},
        {K::kAddRate, "ethtool/rx_buffer_passed_thres_phy", 1, kForever, 50, 200},
        // E810: ice counts PFC frames only (XOFF starts a pause, XON ends it early).
        {K::kAddRate, "ethtool/tx_priority_3_xoff.nic", 1, kForever, 10000, 25000},
        {K::kAddRate, "ethtool/rx_priority_3_xoff.nic", 1, kForever, 5000, 15000},
        {K::kAddRate, "ethtool/rx_priority_3_xon.nic", 1, kForever, 100, 1000},
        {K::kAddRate, "ethtool/rx_dropped.nic", 1, kForever, 1000, 10000}}},
      {"misconfig",
       "RoCE port*: PFC on priority 0 not 3, trust pcp, MTU 1500, ECN off on priority 3, "
       "no RoCE v2 GIDs",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0},
        {K::kPfcMask, nullptr, 0, kForever, 0x01, 0},
        {K::kTrustPcp, nullptr, 0, kForever, 0, 0},
        {K::kMtu, nullptr, 0, kForever, 1500, 0},
        {K::kEcnOff, nullptr, 0, kForever, 3, 0},
        {K::kNoRoceV2Gid, nullptr, 0, kForever, 0, 0}}},
      {"pfc-off",
       "RoCE port*: PFC off on every priority; priority 3 drops instead of pausing",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0}, {K::kPfcMask, nullptr, 0, kForever, 0, 0}}},
      {"mtu",
       "RoCE port*: netdev MTU 1500",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0}, {K::kMtu, nullptr, 0, kForever, 1500, 0}}},
      {"no-rocev2-gid",
       "RoCE port*: the RoCE v2 GID entries are deleted",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0}, {K::kNoRoceV2Gid, nullptr, 0, kForever, 0, 0}}},
      {"bad-lane",
       "RoCE port* (mlx5): failing optic, lane 3 corrects 20k-60k bits/s (the others a few "
       "hundred), rare symbol errors",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0},
        {K::kAddRate, "ethtool/rx_err_lane_3_phy", 1, kForever, 20000, 60000},
        {K::kAddRate, "ethtool/rx_symbol_err_phy", 1, kForever, 0, 2}}},
      {"degrading-optic",
       "RoCE port* (mlx5): the transceiver's lane 2 receive power falls 15 % a tick from tick 2 "
       "(below the module's low warning after ~14 ticks, its low alarm after ~20)",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0}, {K::kOpticDecay, nullptr, 2, kForever, 2, 0}}},
      {"module-unplug",
       "RoCE port* (mlx5): transceiver pulled at tick 3 (module_unplug +1, link down), "
       "re-seated at tick 6",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0},
        {K::kAdd, "ethtool/module_unplug", 3, 4, 1, 1},
        {K::kLinkDown, nullptr, 3, 6, 0, 0}}},
  };
}

}  // namespace

const std::vector<Scenario>& Scenarios() {
  static const std::vector<Scenario> kTable = [] {
    std::vector<Scenario> all;
    for (auto group : {LinkScenarios, CounterScenarios, PresenceScenarios, RoceScenarios}) {
      std::vector<Scenario> part = group();
      all.insert(all.end(), std::make_move_iterator(part.begin()),
                 std::make_move_iterator(part.end()));
    }
    return all;
  }();
  return kTable;
}

const Scenario* FindScenario(const std::string& name) {
  for (const Scenario& s : Scenarios()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

bool InRange(const Effect& e, uint64_t tick) {
  const auto t = static_cast<int64_t>(tick);
  return t >= e.from && (e.to == kForever || t < e.to);
}

bool IsRoceOnly(const Scenario& s) {
  return std::any_of(s.effects.begin(), s.effects.end(),
                     [](const Effect& e) { return e.kind == EffectKind::kRoceOnly; });
}

FaultState EvalFault(const Scenario* scenario, uint64_t t) {
  FaultState s;
  if (scenario == nullptr) return s;
  for (const Effect& e : scenario->effects) {
    if (!InRange(e, t)) continue;
    switch (e.kind) {
      case EffectKind::kLinkDown:
        s.port_up = false;
        break;
      case EffectKind::kLinkFlap: {
        const uint64_t period = e.lo == 0 ? 1 : e.lo;
        const uint64_t phase = (t - static_cast<uint64_t>(e.from)) / period;
        if (phase % 2 == 0) s.port_up = false;
        break;
      }
      case EffectKind::kHalfWidth:
        s.half_width = true;
        break;
      case EffectKind::kPcieDowntrain:
        s.downtrained = true;
        break;
      case EffectKind::kVanish:
        s.present = false;
        break;
      case EffectKind::kChurn:
        if ((t - static_cast<uint64_t>(e.from)) % 4 == 0) s.present = false;
        break;
      case EffectKind::kPfcMask:
        s.pfc_mask = static_cast<uint8_t>(e.lo);
        break;
      case EffectKind::kTrustPcp:
        s.trust_dscp = false;
        break;
      case EffectKind::kMtu:
        s.mtu = static_cast<int>(e.lo);
        break;
      case EffectKind::kEcnOff:
        s.ecn_mask = static_cast<uint8_t>(s.ecn_mask & ~(1u << (e.lo & 7)));
        break;
      case EffectKind::kNoRoceV2Gid:
        s.rocev2_gids = false;
        break;
      case EffectKind::kOpticDecay:
        s.optic_decay_ticks = static_cast<int>(t - static_cast<uint64_t>(e.from));
        s.optic_lane = static_cast<int>(e.lo);
        break;
      default:
        break;
    }
  }
  return s;
}

const std::vector<std::string>& ScenarioNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Scenario& s : Scenarios())
      names.emplace_back(s.name);
    return names;
  }();
  return kNames;
}

}  // namespace rdma_fabric_sim
