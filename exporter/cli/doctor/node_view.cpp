// What the checks know about the node beyond the samples: port subjects, device labels, which
// driver runs a device.
#include <algorithm>

#include "doctor_internal.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter::doctor {

bool Printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

std::string LabelOf(const LabelMap& labels, const char* name) {
  auto it = labels.find(name);
  return it == labels.end() ? std::string() : it->second;
}

LabelMap NodeView::Port(const DeviceInfo& d, const PortInfo& p) {
  return {{"device", d.name}, {"port", std::to_string(p.number)}};
}

std::string NodeView::Subject(const DeviceInfo& d, const PortInfo& p) {
  return d.name + "/" + std::to_string(p.number) + (p.netdev.empty() ? "" : " (" + p.netdev + ")");
}

std::string NodeView::Subject(const DeviceInfo& d, const PortInfo& p, const PhysicalNetdev& n) {
  if (n.bond.empty()) return Subject(d, p);
  return d.name + "/" + std::to_string(p.number) + " (" + n.bond + ": " + n.name + ")";
}

std::string NodeView::DeviceLabel(const DeviceInfo& d, const char* label) const {
  const auto* s = FindSample(now, metric::kDeviceInfo, {{"device", d.name}});
  if (s == nullptr) return "";
  auto it = s->labels.find(label);
  if (it == s->labels.end()) return "";
  // An HCA type names groups of ports; a malformed one is no type.
  if (std::string_view(label) == "hca_type" && !Printable(it->second)) return "";
  return it->second;
}

bool NodeView::IsRxe(const DeviceInfo& d) const {
  return !d.has_pci_link &&
         (d.name.rfind("rxe", 0) == 0 || node.sysfs().Exists(JoinPath(d.dir, "parent")));
}

std::string NodeView::DriverOf(const DeviceInfo& d) const {
  if (IsRxe(d)) return "rdma_rxe";
  if (!d.has_pci_link) return "";
  std::string target;
  if (node.sysfs().ReadLink(JoinPath(d.dir, "device/driver"), &target) == 0) {
    return std::string(Basename(target));
  }
  std::string vendor;
  if (node.sysfs().ReadFile(JoinPath(d.dir, "device/vendor"), &vendor) == 0 &&
      Trim(vendor) == "0x15b3") {
    return d.name.rfind("mlx4", 0) == 0 ? "mlx4_core" : "mlx5_core";
  }
  return d.name.rfind("mlx5", 0) == 0 ? "mlx5_core" : "";
}

}  // namespace rdma_exporter::doctor
