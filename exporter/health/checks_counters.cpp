// Checks of counters over the sampling window (--sample): pause storms and error counters that
// rose, and error counters that cannot rise any more (saturated).
#include <algorithm>
#include <array>
#include <cmath>

#include "rdma_exporter/counter_readers.h"
#include "rdma_exporter/health_checks.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter::doctor {
namespace {

// Counters whose rise means the link or a QP just broke: FAIL. The others rise now and then on
// healthy fabrics (a symbol error, a retransmit): WARN, to be watched.
constexpr std::array kFailCounters = {
    metric::kPortLinkDowned,     metric::kHwReqTransportRetriesExceeded,
    metric::kHwRetryExceededErr, metric::kPhyLinkDownEvents,
    metric::kNetdevCarrierDown,
};
constexpr std::array kWarnCounters = {
    metric::kPortSymbolErrors,
    metric::kPortLinkErrorRecovery,
    metric::kPortReceiveErrors,
    metric::kPortReceiveRemotePhysicalErrors,
    metric::kPortReceiveSwitchRelayErrors,
    metric::kPortTransmitDiscards,
    metric::kPortTransmitConstraintErrors,
    metric::kPortReceiveConstraintErrors,
    metric::kPortLocalLinkIntegrityErrors,
    metric::kPortExcessiveBufferOverrunErrors,
    metric::kHwLocalAckTimeoutErr,
    metric::kHwPacketSeqErr,
    metric::kHwOutOfSequence,
    metric::kHwOutOfBuffer,
    metric::kHwReqCqeError,
    metric::kHwRespCqeError,
    metric::kHwRxIcrcEncapsulated,
    metric::kHwRcvdSeqErr,
    metric::kHwCompleterRetryErr,
    metric::kNetdevReceiveErrors,
    metric::kNetdevTransmitErrors,
    metric::kPriorityDiscards,
    metric::kPcieAerErrors,
    metric::kPcieSignalIntegrity,
    metric::kModuleEvents,
};

bool IsWatchedErrorCounter(std::string_view family) {
  auto in = [&](const auto& list) {
    return std::find(list.begin(), list.end(), family) != list.end();
  };
  return in(kFailCounters) || in(kWarnCounters);
}

// How a counter is named in a reason: its family without the prefix and _total
// (rdma_port_symbol_errors_total -> symbol_errors, rdma_netdev_carrier_down_total ->
// netdev_carrier_down).
std::string CounterName(std::string_view family) {
  for (std::string_view prefix : {metric::kPortPrefix, metric::kHwPrefix, metric::kPrefix}) {
    if (family.substr(0, prefix.size()) == prefix) {
      family.remove_prefix(prefix.size());
      break;
    }
  }
  constexpr std::string_view kTotal = "_total";
  if (family.size() >= kTotal.size() && family.substr(family.size() - kTotal.size()) == kTotal) {
    family.remove_suffix(kTotal.size());
  }
  return std::string(family);
}

// The labels other than the port's, as "{priority=3,direction=rx}", "" when none.
std::string LabelSuffix(const LabelMap& labels) {
  std::vector<std::string> extra;
  for (const auto& [name, value] : labels) {
    if (name != "device" && name != "port" && name != "netdev" && name != "bond") {
      extra.push_back(name + "=" + value);
    }
  }
  return extra.empty() ? "" : "{" + Join(extra, ",") + "}";
}

// "mlx5_0/1 (ens1f0np0)" from a sample's labels alone.
std::string SubjectOf(const LabelMap& labels) {
  std::string s = LabelOf(labels, "device");
  if (!LabelOf(labels, "port").empty()) s += "/" + LabelOf(labels, "port");
  if (!LabelOf(labels, "netdev").empty()) s += " (" + LabelOf(labels, "netdev") + ")";
  return s;
}

// The subject of a sample: its port as the other checks name it ("mlx5_0/1 (ens1f0np0)"; a
// RoCE LAG slave's sample "mlx5_bond_0/1 (bond0: ens1f0np0)"), or its device for device-level
// samples (PCIe).
std::string SubjectFor(const SnapshotView& v, const LabelMap& labels) {
  std::string device = LabelOf(labels, "device"), port = LabelOf(labels, "port");
  PhysicalNetdev slave{LabelOf(labels, "netdev"), LabelOf(labels, "bond")};
  for (const auto& d : v.inventory.devices) {
    if (d.name != device) continue;
    for (const auto& p : d.ports) {
      if (std::to_string(p.number) == port) return SnapshotView::Subject(d, p, slave);
    }
  }
  return SubjectOf(labels);
}

// Samples grouped by subject, in the order subjects first appear.
template <typename T>
class BySubject {
 public:
  T& operator[](const std::string& subject) {
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const auto& e) { return e.first == subject; });
    if (it != entries_.end()) return it->second;
    entries_.emplace_back(subject, T{});
    return entries_.back().second;
  }
  const std::vector<std::pair<std::string, T>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, T>> entries_;
};

// A port's pause-storm watchdog events during the sample (recent) and before it (earlier), and
// the priorities it paused most of the sample.
struct StormPort {
  std::vector<std::string> recent, earlier, paused;
};

BySubject<StormPort> StormPorts(const SnapshotView& v) {
  BySubject<StormPort> ports;
  for (const auto& s : AllSamples(v.now, metric::kPfcStormEvents)) {
    StormPort& port = ports[SubjectFor(v, s.labels)];
    double before = SampleValue(v.before, metric::kPfcStormEvents, s.labels).value_or(s.value);
    std::string level = LabelOf(s.labels, "level");
    if (s.value > before) {
      port.recent.push_back(Number(s.value - before) + " " + level);
    } else if (s.value > 0) {
      port.earlier.push_back(Number(s.value) + " " + level);
    }
  }
  // A port paused most of the window is in a storm even before the watchdog counts one.
  if (v.sample_seconds <= 0) return ports;
  for (const auto& s : AllSamples(v.now, metric::kPfcPauseDuration)) {
    auto before = SampleValue(v.before, metric::kPfcPauseDuration, s.labels);
    if (!before) continue;
    double share = (s.value - *before) / v.sample_seconds;
    if (share >= 0.5) {
      ports[SubjectFor(v, s.labels)].paused.push_back(
          "priority " + LabelOf(s.labels, "priority") + " " + LabelOf(s.labels, "direction") +
          " paused " + Number(std::min(100.0, std::round(share * 100))) + "%");
    }
  }
  return ports;
}

// The netdevs of the RoCE PF ports, once each, with their labels: the ethtool counters of a port
// are read on its PF's netdev (VFs have none), on each slave for a RoCE LAG port.
std::vector<std::pair<std::string, LabelMap>> RocePfPorts(const SnapshotView& v) {
  std::vector<std::pair<std::string, LabelMap>> out;
  std::vector<std::string> netdevs;
  for (const auto& d : v.inventory.devices) {
    if (!d.physfn.empty()) continue;
    for (const auto& p : d.ports) {
      if (!SnapshotView::IsRoce(p)) continue;
      for (const auto& n : PhysicalNetdevs(p)) {
        if (std::find(netdevs.begin(), netdevs.end(), n.name) != netdevs.end()) continue;
        netdevs.push_back(n.name);
        LabelMap key = SnapshotView::Port(d, p);
        key["netdev"] = n.name;
        out.emplace_back(SnapshotView::Subject(d, p, n), std::move(key));
      }
    }
  }
  return out;
}

// A priority kept paused sends pause frames at least once per pause time: one frame holds the
// link for at most 65535 quanta of 512 bit times (335 us at 100 Gb/s, 1.3 ms at 25 Gb/s), so a
// storm is thousands of frames a second per priority and more, while congestion on a healthy
// lossless fabric gives tens to a few hundred.
constexpr double kStormPauseFramesPerSecond = 500;

// The PFC pause frames of a port's netdev that rose during the sample: "priority 3 rx +120", and
// whether any priority rose at a storm's rate.
std::vector<std::string> PauseFramesRisen(const SnapshotView& v, const LabelMap& key,
                                          bool* storm_rate) {
  std::vector<std::string> risen;
  *storm_rate = false;
  for (const auto& s : AllSamples(v.now, metric::kPfcPauseFrames)) {
    if (LabelOf(s.labels, "device") != LabelOf(key, "device") ||
        LabelOf(s.labels, "port") != LabelOf(key, "port") ||
        LabelOf(s.labels, "netdev") != LabelOf(key, "netdev")) {
      continue;
    }
    auto before = SampleValue(v.before, metric::kPfcPauseFrames, s.labels);
    if (!before || s.value <= *before) continue;
    double rise = s.value - *before;
    *storm_rate = *storm_rate || rise / v.sample_seconds >= kStormPauseFramesPerSecond;
    risen.push_back("priority " + LabelOf(s.labels, "priority") + " " +
                    LabelOf(s.labels, "direction") + " +" + Number(rise));
  }
  return risen;
}

// A port whose NIC has no pause-storm watchdog (ice, bnxt_en): a priority paused most of the
// sample is caught by StormPorts (bnxt_en counts pause time); with pause frames alone (ice) a
// storm is told from congestion by the frame rate.
Item WithoutWatchdog(const SnapshotView& v, const std::string& subject, const LabelMap& key,
                     const std::string& window) {
  bool has_time = FindSample(v.now, metric::kPfcPauseDuration, key) != nullptr;
  bool has_frames = FindSample(v.now, metric::kPfcPauseFrames, key) != nullptr;
  if (!has_time && !has_frames) {
    return {subject, Status::kSkip,
            NotChecked("no per-priority PFC counters (ethtool) for this NIC")};
  }
  std::string counted = has_time ? "pause time" : "pause frames";
  if (v.sample_seconds <= 0) {
    return {subject, Status::kSkip,
            NotChecked("no pause-storm watchdog on this NIC; give --sample to watch its PFC " +
                       counted)};
  }
  if (has_time) {
    return {subject, Status::kPass, "no priority paused most of " + window};
  }
  bool storm_rate = false;
  std::vector<std::string> risen = PauseFramesRisen(v, key, &storm_rate);
  if (risen.empty()) return {subject, Status::kPass, "no PFC pause frames in " + window};
  std::string frames = Join(risen) + " PFC pause frames in " + window;
  if (!storm_rate) {
    return {subject, Status::kPass,
            frames + ", below the " + Number(kStormPauseFramesPerSecond) + "/s of a storm"};
  }
  return {subject, Status::kWarn,
          frames +
              ": at a pause storm's rate (this NIC counts no pause time or storm events, "
              "so a storm cannot be told from heavy congestion); check the switch's PFC "
              "watchdog"};
}

// Per port (or device): the error counters that rose during the sample, and the saturated ones.
class ErrorScan {
 public:
  explicit ErrorScan(const SnapshotView& v) : v_(v) {}

  // The samples of `family` that rose, at `level` (a fatal PCIe AER error always FAILs).
  void Rises(std::string_view family, Status level) {
    for (const auto& s : AllSamples(v_.now, family)) {
      ++watched_;
      if (v_.sample_seconds <= 0) continue;
      auto before = SampleValue(v_.before, family, s.labels);
      if (!before || s.value <= *before) continue;
      Status status = level;
      if (family == metric::kPcieAerErrors && LabelOf(s.labels, "class") == "fatal") {
        status = Status::kFail;
      }
      Port& port = ports_[SubjectFor(v_, s.labels)];
      port.status = std::max(port.status, status);
      port.rose.push_back(CounterName(family) + LabelSuffix(s.labels) + " +" +
                          Number(s.value - *before));
    }
  }

  // A saturated PMA error counter cannot rise: the check is blind to it until it is cleared.
  // Data, packet and wait counters are not watched (and port_xmit_wait sits at all-ones on busy
  // ports), so their saturation is only shown by show-counters.
  void Saturated() {
    for (const auto& s : AllSamples(v_.now, metric::kPortCountersSaturated)) {
      if (s.value != 1) continue;
      std::string counter = LabelOf(s.labels, "counter");
      const PmaCounterSpec* spec = FindPmaCounter(counter);
      if (spec == nullptr || !IsWatchedErrorCounter(spec->metric)) continue;
      Port& port = ports_[SubjectFor(v_, s.labels)];
      port.status = std::max(port.status, Status::kWarn);
      port.saturated.push_back(counter);
    }
  }

  // Counter samples seen (whether they rose or not).
  size_t watched() const { return watched_; }

  std::vector<Item> Items() const {
    std::vector<Item> items;
    for (const auto& [subject, port] : ports_.entries()) {
      std::vector<std::string> parts;
      if (!port.rose.empty()) parts.push_back(Join(port.rose));
      if (!port.saturated.empty()) {
        parts.push_back(Join(port.saturated, " and ") +
                        " saturated (stuck at the all-ones value of their IBTA width, a rise "
                        "cannot be seen until cleared: perfquery -R on InfiniBand)");
      }
      items.push_back({subject, port.status, Join(parts, ", ")});
    }
    return items;
  }

 private:
  struct Port {
    Status status = Status::kPass;
    std::vector<std::string> rose, saturated;
  };
  const SnapshotView& v_;
  BySubject<Port> ports_;
  size_t watched_ = 0;
};

}  // namespace

Check PfcStorm(const SnapshotView& v) {
  // One item per RoCE PF port (where the NIC's port counters are): FAIL for pause-storm watchdog
  // events during the sample or a priority paused most of it, WARN for events only before it.
  // NICs without the watchdog (ice, bnxt_en) are judged by what they count; without any
  // per-priority PFC counter the port is not checked.
  BySubject<StormPort> storms = StormPorts(v);
  std::vector<Item> items;
  std::string window = "the last " + Number(v.sample_seconds) + " s";
  for (const auto& [subject, key] : RocePfPorts(v)) {
    const StormPort* port = nullptr;
    for (const auto& [s, p] : storms.entries()) {
      if (s == subject) port = &p;
    }
    if (port != nullptr && (!port->recent.empty() || !port->paused.empty())) {
      std::string reason;
      if (!port->recent.empty()) {
        reason = Join(port->recent, " and ") + " pause-storm events in " + window;
        if (!port->paused.empty()) reason += ", " + Join(port->paused) + " of it";
      } else {
        reason = Join(port->paused) + " of " + window;
      }
      items.push_back({subject, Status::kFail, reason});
    } else if (port != nullptr && !port->earlier.empty()) {
      items.push_back(
          {subject, Status::kWarn,
           Join(port->earlier, " and ") + " pause-storm events since the driver loaded, " +
               (v.sample_seconds > 0 ? "none during the sample" : "not sampled (--sample=0)")});
    } else if (FindSample(v.now, metric::kPfcStormEvents, key)) {
      items.push_back({subject, Status::kPass, "no pause-storm events"});
    } else {
      items.push_back(WithoutWatchdog(v, subject, key, window));
    }
  }
  size_t n = items.size();
  return Finish("pfc_storm", std::move(items),
                n == 0 ? "no RoCE PF ports" : "no pause-storm events on " + Count(n, "port"));
}

Check ErrorCounters(const SnapshotView& v) {
  ErrorScan scan(v);
  for (std::string_view family : kFailCounters)
    scan.Rises(family, Status::kFail);
  for (std::string_view family : kWarnCounters)
    scan.Rises(family, Status::kWarn);
  scan.Saturated();
  std::vector<Item> items = scan.Items();
  if (scan.watched() == 0 && !v.inventory.devices.empty()) {
    items.push_back({"node", Status::kSkip, NotChecked("no error counter could be read")});
  }
  std::string summary = v.inventory.devices.empty() ? "no devices"
                        : v.sample_seconds > 0
                            ? "none of " + std::to_string(scan.watched()) +
                                  " error counters rose in " + Number(v.sample_seconds) + " s"
                            : "not sampled (--sample=0)";
  return Finish("error_counters", std::move(items), summary);
}

}  // namespace rdma_exporter::doctor
