// What the snapshot checks know about the node beyond the samples: port subjects and device
// labels; and the checks in the report's order.
#include <algorithm>

#include "rdma_exporter/health_checks.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter::doctor {

bool Printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

std::string LabelOf(const LabelMap& labels, const char* name) {
  auto it = labels.find(name);
  return it == labels.end() ? std::string() : it->second;
}

LabelMap SnapshotView::Port(const DeviceInfo& d, const PortInfo& p) {
  return {{"device", d.name}, {"port", std::to_string(p.number)}};
}

std::string SnapshotView::Subject(const DeviceInfo& d, const PortInfo& p) {
  return d.name + "/" + std::to_string(p.number) + (p.netdev.empty() ? "" : " (" + p.netdev + ")");
}

std::string SnapshotView::Subject(const DeviceInfo& d, const PortInfo& p, const PhysicalNetdev& n) {
  if (n.bond.empty()) return Subject(d, p);
  return d.name + "/" + std::to_string(p.number) + " (" + n.bond + ": " + n.name + ")";
}

std::string SnapshotView::DeviceLabel(const DeviceInfo& d, const char* label) const {
  const auto* s = FindSample(now, metric::kDeviceInfo, {{"device", d.name}});
  if (s == nullptr) return "";
  auto it = s->labels.find(label);
  if (it == s->labels.end()) return "";
  // An HCA type names groups of ports; a malformed one is no type.
  if (std::string_view(label) == "hca_type" && !Printable(it->second)) return "";
  return it->second;
}

std::vector<Check> RunSnapshotChecks(const SnapshotView& v) {
  using CheckFn = Check (*)(const SnapshotView&);
  static const std::pair<const char*, CheckFn> kChecks[] = {
      {"port_active", PortActive},
      {"link_layer", LinkLayer},
      {"port_rate_uniform", PortRateUniform},
      {"pcie_link", PcieLink},
      {"roce_v2_gid", RoceV2Gid},
      {"netdev_mtu", NetdevMtu},
      {"pfc", Pfc},
      {"trust_dscp", TrustDscp},
      {"ecn", Ecn},
      {"pfc_storm", PfcStorm},
      {"error_counters", ErrorCounters},
  };
  std::vector<Check> checks;
  for (const auto& [name, fn] : kChecks) {
    try {
      checks.push_back(fn(v));
    } catch (const std::exception& e) {
      // A check never takes the others down: whatever it tripped on is its reason.
      checks.push_back(Check{name, Status::kFail, std::string("check failed: ") + e.what(), {}});
    }
  }
  return checks;
}

}  // namespace rdma_exporter::doctor
