#include "rdma_exporter/node_status.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/metrics.h"
#include "rdma_exporter/port_state.h"
#include "rdma_exporter/sample_index.h"

namespace rdma_exporter {
namespace {

// dashboards/out/node-page-thresholds.json as {"name", value} pairs, written by CMake.
struct NamedThreshold {
  std::string_view name;
  double value;
};
constexpr NamedThreshold kMixin[] = {
#include "node_page_thresholds.inc"
};

// A missing name stops the build (a throw in a constant expression), so the JSON and this
// struct cannot drift apart silently.
constexpr double Mixin(std::string_view name) {
  for (const auto& t : kMixin) {
    if (t.name == name) return t.value;
  }
  throw "threshold missing from dashboards/out/node-page-thresholds.json";
}

constexpr PageThresholds kMixinThresholds{
    Mixin("pfcTxPauseWarnRatio"),
    Mixin("pfcTxPauseCritRatio"),
    Mixin("ncclRxPauseWarnRatio"),
    Mixin("bitErrorRateWarn"),
    Mixin("bitErrorRateCrit"),
    Mixin("receiveErrorsPerSecond"),
    Mixin("transmitDiscardsPerSecond"),
    Mixin("receiveDiscardsPerSecond"),
    Mixin("outOfBufferPerSecond"),
    Mixin("localAckTimeoutsPerSecond"),
    Mixin("packetSeqErrorsPerSecond"),
    Mixin("retriesExceededPerSecond"),
    Mixin("transmitWaitRatio"),
    Mixin("xmitWaitBytesPerTick"),
    Mixin("moduleLaneRxPowerRatio"),
    Mixin("pollStaleSeconds"),
    Mixin("minEvents"),
    Mixin("localAckTimeoutsMinEvents"),
    Mixin("packetSeqErrorsMinEvents"),
};

using Sample = SampleIndex::Sample;

std::string PortKey(const std::string& device, const std::string& port) {
  return device + "/" + port;
}

std::string Percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f%%", ratio * 100);
  return buf;
}

std::string Short(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

// The samples of one port, by family, each with its value in the snapshot before (same labels).
struct PortSamples {
  struct Entry {
    const Sample* now;
    std::optional<double> before;
  };
  std::map<std::string_view, std::vector<Entry>> by_family;

  const std::vector<Entry>& Of(std::string_view family) const {
    static const std::vector<Entry> kNone;
    auto it = by_family.find(family);
    return it == by_family.end() ? kNone : it->second;
  }
  std::optional<double> Value(std::string_view family) const {
    const auto& e = Of(family);
    if (e.empty()) return std::nullopt;
    return e.front().now->value;
  }
};

// Families the page reads per port.
const std::set<std::string_view>& PortFamilies() {
  static const std::set<std::string_view> kFamilies = {
      metric::kPortState,
      metric::kPortPhysicalState,
      metric::kPortRate,
      metric::kPortLinkWidth,
      metric::kPortCountersSaturated,
      metric::kPortSymbolErrors,
      metric::kPortReceiveErrors,
      metric::kPortTransmitDiscards,
      metric::kPortLinkDowned,
      metric::kHwOutOfBuffer,
      metric::kHwLocalAckTimeoutErr,
      metric::kHwPacketSeqErr,
      metric::kHwReqTransportRetriesExceeded,
      metric::kHwRetryExceededErr,
      metric::kPfcPauseDuration,
      metric::kNcclPriority,
      metric::kRoceConfigOk,
      metric::kPhyLinkDownEvents,
      metric::kModuleTemperature,
      metric::kModuleTemperatureThreshold,
      metric::kModuleRxPower,
      metric::kModuleRxPowerThreshold,
      metric::kModuleFlags,
      metric::kPodInfo,
      metric::kPortPeerInfo,
      "rdma_port_data_transmitted_bytes_total",
      "rdma_port_data_received_bytes_total",
      "rdma_port_transmit_wait_ticks_total",
      "rdma_phy_uncorrectable_symbol_errors_total",
      "rdma_phy_receive_discards_total",
  };
  return kFamilies;
}

bool SameLabels(const Sample& a, const Sample& b) {
  return a.labels == b.labels;
}

// Groups the snapshot's port samples by port, pairing each with its previous value.
std::unordered_map<std::string, PortSamples> GroupByPort(const SampleIndex& now,
                                                         const SampleIndex* before) {
  std::unordered_map<std::string, PortSamples> ports;
  for (std::string_view family : PortFamilies()) {
    const auto& samples = AllSamples(now, family);
    const auto* previous = before != nullptr ? &AllSamples(*before, family) : nullptr;
    for (size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      auto device = s.labels.find("device");
      auto port = s.labels.find("port");
      if (device == s.labels.end() || port == s.labels.end()) continue;
      std::optional<double> was;
      if (previous != nullptr) {
        // Series keep their order from poll to poll: the same index first, then a search.
        if (i < previous->size() && SameLabels((*previous)[i], s)) {
          was = (*previous)[i].value;
        } else {
          for (const auto& p : *previous) {
            if (SameLabels(p, s)) {
              was = p.value;
              break;
            }
          }
        }
      }
      ports[PortKey(device->second, port->second)].by_family[family].push_back({&s, was});
    }
  }
  return ports;
}

// The increase of the sum of a family's series (LAG slaves: one per netdev) between the two
// snapshots; nullopt without a previous value for every series or after a counter reset.
std::optional<double> SumIncrease(const PortSamples& p, std::string_view family, double window) {
  const auto& entries = p.Of(family);
  if (entries.empty() || window <= 0) return std::nullopt;
  double sum = 0;
  for (const auto& e : entries) {
    if (!e.before || e.now->value < *e.before) return std::nullopt;
    sum += e.now->value - *e.before;
  }
  return sum;
}

std::optional<double> SumRate(const PortSamples& p, std::string_view family, double window) {
  auto increase = SumIncrease(p, family, window);
  if (!increase) return std::nullopt;
  return *increase / window;
}

// The worst series' rate of a family among the series whose `label` is `value`.
std::optional<double> MaxRate(const PortSamples& p, std::string_view family, const char* label,
                              const std::string& value, double window, const char* label2 = nullptr,
                              const std::string& value2 = "") {
  std::optional<double> worst;
  if (window <= 0) return worst;
  for (const auto& e : p.Of(family)) {
    if (doctor::LabelOf(e.now->labels, label) != value) continue;
    if (label2 != nullptr && doctor::LabelOf(e.now->labels, label2) != value2) continue;
    if (!e.before || e.now->value < *e.before) continue;
    double rate = (e.now->value - *e.before) / window;
    worst = std::max(worst.value_or(rate), rate);
  }
  return worst;
}

std::optional<double> Threshold(const PortSamples& p, std::string_view family,
                                const char* threshold) {
  for (const auto& e : p.Of(family)) {
    if (doctor::LabelOf(e.now->labels, "threshold") == threshold) return e.now->value;
  }
  return std::nullopt;
}

void Raise(PortHealth& port, Level level, std::string finding) {
  port.level = std::max(port.level, level);
  port.findings.push_back(std::move(finding));
}

// Levels of one signal: above `warn` (and `crit`) with at least `min_events` events behind it.
struct Grade {
  double warn;
  std::optional<double> crit;
  double min_events;
};

// A signal (value per second, or a ratio, from `events` events) with the level its alert gives
// it.
void Signal(PortHealth& port, std::string name, std::optional<double> value, double events,
            const char* unit, const Grade& grade) {
  if (!value) return;
  Level level = Level::kOk;
  if (events >= grade.min_events) {
    if (grade.crit && *value > *grade.crit) {
      level = Level::kCritical;
    } else if (*value > grade.warn) {
      level = Level::kWarning;
    }
  }
  if (level != Level::kOk) {
    Raise(port, level,
          name + " " + Short(*value) + (std::string_view(unit) == "BER" ? " BER" : unit));
  }
  port.signals.push_back({std::move(name), *value, events, unit, level});
}

// A counter's per-second rate between the snapshots, graded.
void RateSignal(PortHealth& port, const PortSamples& p, std::string name, std::string_view family,
                double window, const Grade& grade) {
  auto increase = SumIncrease(p, family, window);
  if (!increase) return;
  Signal(port, std::move(name), *increase / window, *increase, "/s", grade);
}

std::string RateText(double bytes_per_second, std::optional<double> width) {
  std::string text = doctor::Number(bytes_per_second * 8 / 1e9) + " Gb/s";
  if (width) text += " " + doctor::Number(*width) + "X";
  return text;
}

void LinkAndRate(PortHealth& h, const PortSamples& p, bool is_vf) {
  auto state = p.Value(metric::kPortState);
  auto phys = p.Value(metric::kPortPhysicalState);
  h.state = state ? std::string(PortStateName(*state)) : "";
  h.phys_state = phys ? std::string(PhysStateName(*phys)) : "";
  bool active = state && *state == static_cast<double>(PortState::kActive);
  bool link_up = phys && *phys == static_cast<double>(PhysState::kLinkUp);
  if (!active || !link_up) {
    // RdmaPortDown: critical on a rail (a PF); an SR-IOV VF whose PF is up is a pod's matter.
    Raise(h, is_vf ? Level::kWarning : Level::kCritical,
          (h.state.empty() ? "state unknown" : h.state) + "/" +
              (h.phys_state.empty() ? "unknown" : h.phys_state));
  }
  if (auto rate = p.Value(metric::kPortRate); rate && *rate > 0) {
    h.rate = RateText(*rate, p.Value(metric::kPortLinkWidth));
  }
}

void Traffic(PortHealth& h, const PortSamples& p, double window, const PageThresholds& t) {
  auto rate = p.Value(metric::kPortRate);
  if (!rate || *rate <= 0) return;
  if (auto tx = SumRate(p, "rdma_port_data_transmitted_bytes_total", window)) {
    h.tx_utilisation = *tx / *rate;
  }
  if (auto rx = SumRate(p, "rdma_port_data_received_bytes_total", window)) {
    h.rx_utilisation = *rx / *rate;
  }
  // Effective BER: InfiniBand symbol errors or Ethernet PHY uncorrectable symbols per bit.
  bool ib = h.link_layer == "InfiniBand";
  std::string_view symbols = ib ? metric::kPortSymbolErrors
                                : std::string_view("rdma_phy_uncorrectable_symbol_errors_total");
  if (auto errors = SumIncrease(p, symbols, window)) {
    Signal(h, ib ? "symbol_error" : "rx_pcs_symbol_err_phy", *errors / window / (*rate * 8),
           *errors, "BER", {t.bit_error_rate_warn, t.bit_error_rate_crit, t.min_events});
  }
  if (auto ticks = SumIncrease(p, "rdma_port_transmit_wait_ticks_total", window)) {
    // A share of time: the ticks are many, never "a few events".
    Signal(h, "port_xmit_wait", *ticks / window * t.xmit_wait_bytes_per_tick / *rate, *ticks,
           " of time", {t.transmit_wait_ratio, std::nullopt, 0});
  }
}

void Pause(PortHealth& h, const PortSamples& p, double window, const PageThresholds& t) {
  for (const char* direction : {"tx", "rx"}) {
    std::optional<double> worst =
        MaxRate(p, metric::kPfcPauseDuration, "direction", direction, window);
    (std::string_view(direction) == "tx" ? h.tx_pause : h.rx_pause) = worst;
  }
  if (h.tx_pause && *h.tx_pause > t.pfc_tx_pause_warn_ratio) {
    // RdmaPfcStorm / RdmaPfcStormWarning: the NIC pauses its switch (its receiver is stuck).
    Raise(h, *h.tx_pause > t.pfc_tx_pause_crit_ratio ? Level::kCritical : Level::kWarning,
          "sends PFC pause " + Percent(*h.tx_pause) + " of the time");
  }
  if (auto prio = p.Value(metric::kNcclPriority)) {
    h.nccl_priority = static_cast<int>(*prio);
    auto rx = MaxRate(p, metric::kPfcPauseDuration, "direction", "rx", window, "priority",
                      std::to_string(*h.nccl_priority));
    if (rx && *rx > t.nccl_rx_pause_warn_ratio) {
      Raise(h, Level::kWarning,
            "NCCL priority " + std::to_string(*h.nccl_priority) + " paused " + Percent(*rx) +
                " of the time");
    }
  }
}

void Errors(PortHealth& h, const PortSamples& p, double window, const PageThresholds& t) {
  auto signal = [&](const char* name, std::string_view family, const Grade& grade) {
    RateSignal(h, p, name, family, window, grade);
  };
  signal("port_rcv_errors", metric::kPortReceiveErrors,
         {t.receive_errors_per_second, std::nullopt, t.min_events});
  signal("port_xmit_discards", metric::kPortTransmitDiscards,
         {t.transmit_discards_per_second, std::nullopt, t.min_events});
  signal("rx_discards_phy", "rdma_phy_receive_discards_total",
         {t.receive_discards_per_second, std::nullopt, t.min_events});
  // RdmaLinkDowned: any drop.
  signal("link_downed", metric::kPortLinkDowned, {0, std::nullopt, 1});
  signal("link_down_events_phy", metric::kPhyLinkDownEvents, {0, std::nullopt, 1});
  signal("out_of_buffer", metric::kHwOutOfBuffer,
         {t.out_of_buffer_per_second, std::nullopt, t.min_events});
  signal("local_ack_timeout_err", metric::kHwLocalAckTimeoutErr,
         {t.local_ack_timeouts_per_second, std::nullopt, t.local_ack_timeouts_min_events});
  signal("packet_seq_err", metric::kHwPacketSeqErr,
         {t.packet_seq_errors_per_second, std::nullopt, t.packet_seq_errors_min_events});
  // A QP out of retries is an NCCL job failing now (RdmaTransportRetries, critical): any.
  Grade any_retries{t.retries_exceeded_per_second, t.retries_exceeded_per_second, 1};
  signal("req_transport_retries_exceeded", metric::kHwReqTransportRetriesExceeded, any_retries);
  signal("retry_exceeded_err", metric::kHwRetryExceededErr, any_retries);
  for (const auto& e : p.Of(metric::kPortCountersSaturated)) {
    // RdmaPortCounterSaturated is info: listed, no level (the counter is blind, not the port).
    if (e.now->value != 0) h.saturated.push_back(doctor::LabelOf(e.now->labels, "counter"));
  }
}

void RoceChecks(PortHealth& h, const PortSamples& p) {
  std::vector<std::string> failing;
  for (const auto& e : p.Of(metric::kRoceConfigOk)) {
    std::string check = doctor::LabelOf(e.now->labels, "check");
    std::string netdev = doctor::LabelOf(e.now->labels, "netdev");
    std::string name = netdev.empty() || netdev == h.netdev ? check : netdev + ": " + check;
    h.roce_checks.emplace_back(name, e.now->value != 0);
    if (e.now->value == 0) failing.push_back(name);
  }
  // RdmaRoceConfigCheckFailing (warning).
  if (!failing.empty()) Raise(h, Level::kWarning, "RoCE check failing: " + doctor::Join(failing));
}

void Module(PortHealth& h, const PortSamples& p) {
  if (auto temp = p.Value(metric::kModuleTemperature)) {
    h.module_temperature_celsius = temp;
    auto warn = Threshold(p, metric::kModuleTemperatureThreshold, "high_warning");
    if (warn && *temp > *warn) {
      Raise(h, Level::kWarning, "optic at " + Short(*temp) + " °C, above its warning");
    }
  }
  std::optional<double> lowest;
  for (const auto& e : p.Of(metric::kModuleRxPower))
    lowest = std::min(lowest.value_or(e.now->value), e.now->value);
  if (lowest) {
    h.module_min_rx_power_watts = lowest;
    auto warn = Threshold(p, metric::kModuleRxPowerThreshold, "low_warning");
    if (warn && *lowest < *warn) {
      Raise(h, Level::kWarning,
            "optic rx power " + Short(*lowest * 1e3) + " mW, below its low warning");
    }
  }
  for (const auto& e : p.Of(metric::kModuleFlags)) {
    if (e.now->value != 0 && doctor::LabelOf(e.now->labels, "level") == "alarm") {
      Raise(h, Level::kWarning,
            "optic " + doctor::LabelOf(e.now->labels, "quantity") + " alarm raised");
    }
  }
}

void Pcie(PortHealth& h, const SampleIndex& now, const DeviceInfo& d) {
  auto get = [&](std::string_view family, const char* kind) {
    return SampleValue(now, family, {{"device", d.name}, {"kind", kind}});
  };
  auto speed = get(metric::kPcieLinkSpeed, "current");
  auto width = get(metric::kPcieLinkWidth, "current");
  auto max_speed = get(metric::kPcieLinkSpeed, "max");
  auto max_width = get(metric::kPcieLinkWidth, "max");
  if (!speed || !width) return;
  auto text = [](double s, double w) {
    return doctor::Number(s / 1e9) + " GT/s x" + doctor::Number(w);
  };
  h.pcie = text(*speed, *width);
  if (!max_speed || !max_width) return;
  // As the pcie_link check: the slot may cap what the card could run.
  const auto [want_speed, want_width] =
      doctor::PcieTrainTarget(now, d.name, *max_speed, *max_width);
  if (*speed < want_speed || *width < want_width) {
    h.pcie_capable = text(want_speed, want_width);
    // RdmaPcieDowntrained (warning).
    Raise(h, Level::kWarning, "PCIe " + h.pcie + ", capable of " + h.pcie_capable);
  }
}

// The most common rate of the ACTIVE ports of each (HCA type, link layer); on a tie the fastest.
void ExpectedRates(std::vector<PortHealth>& ports, const std::vector<std::string>& groups,
                   const std::vector<double>& speeds) {
  std::map<std::string, std::map<std::string, std::pair<size_t, double>>> count;
  for (size_t i = 0; i < ports.size(); ++i) {
    if (ports[i].state != "ACTIVE" || ports[i].rate.empty()) continue;
    auto& c = count[groups[i]][ports[i].rate];
    ++c.first;
    c.second = speeds[i];
  }
  for (size_t i = 0; i < ports.size(); ++i) {
    auto it = count.find(groups[i]);
    if (it == count.end() || ports[i].state != "ACTIVE") continue;
    ports[i].expected_rate = doctor::ReferenceRate(it->second);
    if (ports[i].rate != ports[i].expected_rate) {
      // RdmaPortRateBelowExpected (warning).
      Raise(ports[i], Level::kWarning,
            "runs " + ports[i].rate + ", its siblings " + ports[i].expected_rate);
    }
  }
}

void Collectors(NodeHealth& node, const SampleIndex& now) {
  std::map<std::string, double> errors;
  for (const auto& s : AllSamples(now, "rdma_exporter_read_errors_total"))
    errors[doctor::LabelOf(s.labels, "collector")] += s.value;
  for (const auto& s : AllSamples(now, "rdma_exporter_collector_success")) {
    CollectorHealth c;
    c.name = doctor::LabelOf(s.labels, "collector");
    c.success = s.value != 0;
    c.duration_seconds =
        SampleValue(now, "rdma_exporter_collector_duration_seconds", {{"collector", c.name}})
            .value_or(0);
    c.read_errors = errors[c.name];
    if (!c.success) {
      // RdmaExporterCollectorFailing (warning).
      node.level = std::max(node.level, Level::kWarning);
      node.findings.push_back("collector " + c.name + " failing");
    }
    node.collectors.push_back(std::move(c));
  }
}

void AppendJsonNumber(std::ostringstream& out, double v) {
  if (!std::isfinite(v)) {
    out << "null";
    return;
  }
  std::string s;
  AppendValue(&s, v);
  out << s;
}

void AppendOptional(std::ostringstream& out, const char* name, const std::optional<double>& v) {
  out << ",\"" << name << "\":";
  if (v) {
    AppendJsonNumber(out, *v);
  } else {
    out << "null";
  }
}

void AppendStrings(std::ostringstream& out, const std::vector<std::string>& list) {
  out << "[";
  for (size_t i = 0; i < list.size(); ++i)
    out << (i == 0 ? "" : ",") << JsonString(doctor::Sanitize(list[i]));
  out << "]";
}

}  // namespace

const char* LevelName(Level level) {
  switch (level) {
    case Level::kOk:
      return "ok";
    case Level::kWarning:
      return "warning";
    case Level::kCritical:
      break;
  }
  return "critical";
}

const char* LevelHeadline(Level level) {
  switch (level) {
    case Level::kOk:
      return "healthy: ready for NCCL traffic";
    case Level::kWarning:
      return "degraded: NCCL runs, slower or at risk";
    case Level::kCritical:
      break;
  }
  return "failing: NCCL jobs on this node will stall or fail";
}

const PageThresholds& MixinThresholds() {
  return kMixinThresholds;
}

NodeHealth BuildNodeHealth(const NodeHealthInput& in) {
  const PageThresholds& t = in.thresholds != nullptr ? *in.thresholds : MixinThresholds();
  static const std::vector<prometheus::MetricFamily> kEmpty;
  static const Inventory kNoDevices;
  const Inventory& inventory = in.inventory != nullptr ? *in.inventory : kNoDevices;
  SampleIndex now(in.now != nullptr ? *in.now : kEmpty);
  std::optional<SampleIndex> before;
  if (in.before != nullptr) before.emplace(*in.before);

  NodeHealth node;
  node.node = in.node;
  node.sequence = in.sequence;
  node.poll_timestamp = in.now_timestamp;
  node.poll_duration_seconds =
      SampleValue(now, "rdma_exporter_poll_duration_seconds", {}).value_or(0);
  node.window_seconds = before ? in.now_timestamp - in.before_timestamp : 0;
  double window = node.window_seconds;

  auto ports = GroupByPort(now, before ? &*before : nullptr);
  std::vector<std::string> groups;
  std::vector<double> speeds;
  for (const auto& d : inventory.devices) {
    std::string hca =
        doctor::LabelOf(FindSample(now, metric::kDeviceInfo, {{"device", d.name}}) != nullptr
                            ? FindSample(now, metric::kDeviceInfo, {{"device", d.name}})->labels
                            : LabelMap{},
                        "hca_type");
    for (const auto& p : d.ports) {
      PortHealth h;
      h.device = d.name;
      h.port = p.number;
      h.netdev = p.netdev;
      h.link_layer = p.link_layer;
      static const PortSamples kNone;
      auto it = ports.find(PortKey(d.name, std::to_string(p.number)));
      const PortSamples& samples = it != ports.end() ? it->second : kNone;
      LinkAndRate(h, samples, !d.physfn.empty());
      Traffic(h, samples, window, t);
      Pause(h, samples, window, t);
      Errors(h, samples, window, t);
      RoceChecks(h, samples);
      Module(h, samples);
      Pcie(h, now, d);
      for (const auto& e : samples.Of(metric::kPortPeerInfo)) {
        std::string name = doctor::LabelOf(e.now->labels, "peer_description");
        if (name.empty()) name = doctor::LabelOf(e.now->labels, "peer_chassis_id");
        h.peers.push_back(name + " " + doctor::LabelOf(e.now->labels, "peer_port"));
      }
      for (const auto& e : samples.Of(metric::kPodInfo)) {
        std::string pod = doctor::LabelOf(e.now->labels, "namespace") + "/" +
                          doctor::LabelOf(e.now->labels, "pod");
        if (std::find(h.pods.begin(), h.pods.end(), pod) == h.pods.end()) h.pods.push_back(pod);
      }
      groups.push_back((hca.empty() ? "unknown" : hca) + " " + p.link_layer);
      speeds.push_back(samples.Value(metric::kPortRate).value_or(0));
      node.ports.push_back(std::move(h));
    }
  }
  ExpectedRates(node.ports, groups, speeds);

  doctor::SnapshotView view{inventory,
                            now,
                            before ? *before : now,
                            window,
                            in.nccl_ib_tc,
                            in.roce_min_mtu,
                            "",
                            "",
                            [](const DeviceInfo& d) { return !d.has_pci_link; }};
  node.checks = doctor::RunSnapshotChecks(view);
  Collectors(node, now);

  for (const auto& p : node.ports)
    node.level = std::max(node.level, p.level);
  // The checks are shown with their own PASS/WARN/FAIL; the node's level is the alert rules'
  // (a WARN such as "InfiniBand and RoCE ports mixed" is advice, not an alert).
  node.level_without_age = node.level;
  SetPollAge(node, in.wall_clock, t);
  return node;
}

void SetPollAge(NodeHealth& node, double wall_clock, const PageThresholds& t) {
  node.poll_age_seconds = std::max(0.0, wall_clock - node.poll_timestamp);
  node.level = node.level_without_age;
  node.stale = node.poll_age_seconds > t.poll_stale_seconds;
  // RdmaExporterPollStale: everything shown is old.
  if (node.stale) node.level = Level::kCritical;
}

std::string NodeHealthJson(const NodeHealth& h) {
  std::ostringstream out;
  out << "{\"node\":" << JsonString(doctor::Sanitize(h.node))
      << ",\"level\":" << JsonString(LevelName(h.level)) << ",\"sequence\":" << h.sequence
      << ",\"poll_timestamp_seconds\":";
  AppendJsonNumber(out, h.poll_timestamp);
  out << ",\"poll_age_seconds\":";
  AppendJsonNumber(out, h.poll_age_seconds);
  out << ",\"poll_duration_seconds\":";
  AppendJsonNumber(out, h.poll_duration_seconds);
  out << ",\"window_seconds\":";
  AppendJsonNumber(out, h.window_seconds);
  out << ",\"poll_stale\":" << (h.stale ? "true" : "false") << ",\"findings\":";
  AppendStrings(out, h.findings);
  out << ",\"ports\":[";
  for (size_t i = 0; i < h.ports.size(); ++i) {
    const auto& p = h.ports[i];
    out << (i == 0 ? "" : ",") << "\n{\"device\":" << JsonString(doctor::Sanitize(p.device))
        << ",\"port\":" << p.port << ",\"netdev\":" << JsonString(doctor::Sanitize(p.netdev))
        << ",\"link_layer\":" << JsonString(doctor::Sanitize(p.link_layer))
        << ",\"level\":" << JsonString(LevelName(p.level)) << ",\"findings\":";
    AppendStrings(out, p.findings);
    out << ",\"state\":" << JsonString(p.state) << ",\"phys_state\":" << JsonString(p.phys_state)
        << ",\"rate\":" << JsonString(p.rate)
        << ",\"expected_rate\":" << JsonString(p.expected_rate);
    AppendOptional(out, "tx_utilisation", p.tx_utilisation);
    AppendOptional(out, "rx_utilisation", p.rx_utilisation);
    AppendOptional(out, "tx_pause_ratio", p.tx_pause);
    AppendOptional(out, "rx_pause_ratio", p.rx_pause);
    out << ",\"nccl_priority\":";
    if (p.nccl_priority) {
      out << *p.nccl_priority;
    } else {
      out << "null";
    }
    out << ",\"signals\":[";
    for (size_t j = 0; j < p.signals.size(); ++j) {
      const auto& s = p.signals[j];
      out << (j == 0 ? "" : ",") << "{\"name\":" << JsonString(s.name) << ",\"value\":";
      AppendJsonNumber(out, s.value);
      out << ",\"events\":";
      AppendJsonNumber(out, s.events);
      out << ",\"unit\":" << JsonString(s.unit) << ",\"level\":" << JsonString(LevelName(s.level))
          << "}";
    }
    out << "],\"saturated_counters\":";
    AppendStrings(out, p.saturated);
    out << ",\"roce_checks\":{";
    for (size_t j = 0; j < p.roce_checks.size(); ++j) {
      out << (j == 0 ? "" : ",") << JsonString(doctor::Sanitize(p.roce_checks[j].first)) << ":"
          << (p.roce_checks[j].second ? "true" : "false");
    }
    out << "},\"pcie\":" << JsonString(p.pcie)
        << ",\"pcie_capable\":" << JsonString(p.pcie_capable);
    AppendOptional(out, "module_temperature_celsius", p.module_temperature_celsius);
    AppendOptional(out, "module_min_rx_power_watts", p.module_min_rx_power_watts);
    out << ",\"peers\":";
    AppendStrings(out, p.peers);
    out << ",\"pods\":";
    AppendStrings(out, p.pods);
    out << "}";
  }
  out << "],\n\"checks\":[";
  for (size_t i = 0; i < h.checks.size(); ++i) {
    const auto& c = h.checks[i];
    out << (i == 0 ? "" : ",") << "\n{\"check\":" << JsonString(c.name)
        << ",\"status\":" << JsonString(doctor::StatusName(c.status))
        << ",\"reason\":" << JsonString(doctor::Sanitize(c.reason)) << "}";
  }
  out << "],\n\"collectors\":[";
  for (size_t i = 0; i < h.collectors.size(); ++i) {
    const auto& c = h.collectors[i];
    out << (i == 0 ? "" : ",") << "{\"name\":" << JsonString(c.name)
        << ",\"success\":" << (c.success ? "true" : "false") << ",\"duration_seconds\":";
    AppendJsonNumber(out, c.duration_seconds);
    out << ",\"read_errors\":";
    AppendJsonNumber(out, c.read_errors);
    out << "}";
  }
  out << "]}\n";
  return out.str();
}

}  // namespace rdma_exporter
