#include "pcie.h"

#include "common.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {

bool PcieCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  std::string value;
  for (const auto& device : inventory.devices) {
    // rxe and sub-functions have no PCI function of their own.
    if (!device.has_pci_link) continue;
    std::string pci = JoinPath(device.dir, "device");
    for (const char* kind : {"current", "max"}) {
      std::string speed_file = JoinPath(pci, std::string(kind) + "_link_speed");
      if (ctx.ReadOptional(speed_file, &value)) {
        if (auto speed = ParsePcieSpeed(value)) {
          sink.Gauge(metric::kPcieLinkSpeed,
                     "PCIe link speed of the device's PCI function in transfers per second "
                     "(16e9 = Gen4), current and max.",
                     With(DeviceLabels(device), "kind", kind), *speed);
        } else if (Trim(value) != "Unknown") {
          ctx.Malformed(speed_file, value);
        }
      }
      std::string width_file = JoinPath(pci, std::string(kind) + "_link_width");
      if (ctx.ReadOptional(width_file, &value)) {
        // Width 0 or 255 is what the kernel prints when the link status cannot be read.
        auto width = ParseU64(value);
        if (!width) {
          ctx.Malformed(width_file, value);
        } else if (*width > 0 && *width <= 32) {
          sink.Gauge(metric::kPcieLinkWidth,
                     "PCIe link width of the device's PCI function in lanes, current and max.",
                     With(DeviceLabels(device), "kind", kind), static_cast<double>(*width));
        }
      }
    }
    for (const char* severity : {"correctable", "nonfatal", "fatal"}) {
      std::string file = JoinPath(pci, std::string("aer_dev_") + severity);
      if (!ctx.ReadOptional(file, &value)) continue;  // no AER capability: no files
      if (auto total = ParseAerTotal(value)) {
        sink.Counter(metric::kPcieAerErrors,
                     "PCIe Advanced Error Reporting errors of the device's PCI function, by "
                     "severity (correctable, nonfatal, fatal).",
                     With(DeviceLabels(device), "severity", severity), static_cast<double>(*total));
      } else {
        ctx.Malformed(file, value);
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
