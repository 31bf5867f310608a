// What the doctor knows about the node beyond the samples: which driver runs a device.
#include "doctor_internal.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter::doctor {

bool IsRxeDevice(CliNode& node, const DeviceInfo& d) {
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
