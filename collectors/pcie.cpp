#include "pcie.h"

#include "common.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

// A <prefix>link_speed file ("16.0 GT/s PCIe") as transfers per second; "Unknown" (no link
// status, VFs) exports nothing and is not an error.
void ExportLinkSpeed(CollectContext& ctx, MetricSink& sink, const std::string& file,
                     std::string_view metric, const std::string& help, const Labels& labels) {
  std::string value;
  if (!ctx.ReadOptional(file, &value)) return;
  if (auto speed = ParsePcieSpeed(value)) {
    sink.Gauge(metric, help, labels, *speed);
  } else if (Trim(value) != "Unknown") {
    ctx.Malformed(file, value);
  }
}

// A <prefix>link_width file in lanes. Width 0 or 255 is what the kernel prints when the link
// status cannot be read: nothing is exported.
void ExportLinkWidth(CollectContext& ctx, MetricSink& sink, const std::string& file,
                     std::string_view metric, const std::string& help, const Labels& labels) {
  std::string value;
  if (!ctx.ReadOptional(file, &value)) return;
  auto width = ParseU64(value);
  if (!width) {
    ctx.Malformed(file, value);
  } else if (*width > 0 && *width <= 32) {
    sink.Gauge(metric, help, labels, static_cast<double>(*width));
  }
}

// The parent of the PCI function (`device/..`, resolved through the link) is the port the card
// is plugged into (root port or switch downstream port): the link trains to the lower
// capability of both ends. A function directly under a root complex (pci0000:xx) has no such
// files, so nothing is exported; nor for a VF, whose link is its PF's (it reports none itself).
void ExportUpstream(CollectContext& ctx, MetricSink& sink, const DeviceInfo& device) {
  if (!device.physfn.empty()) return;
  std::string upstream = JoinPath(device.dir, "device/..");
  ExportLinkSpeed(ctx, sink, JoinPath(upstream, "max_link_speed"),
                  "rdma_pcie_upstream_max_link_transfers_per_second",
                  "Maximum PCIe link speed of the port upstream of the device's PCI function "
                  "(the slot) in transfers per second; the link trains to min(card, slot).",
                  DeviceLabels(device));
  ExportLinkWidth(ctx, sink, JoinPath(upstream, "max_link_width"),
                  "rdma_pcie_upstream_max_link_width_lanes",
                  "Maximum PCIe link width of the port upstream of the device's PCI function "
                  "(the slot) in lanes; the link trains to min(card, slot).",
                  DeviceLabels(device));
}

}  // namespace

bool PcieCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  std::string value;
  for (const auto& device : inventory.devices) {
    // rxe and sub-functions have no PCI function of their own.
    if (!device.has_pci_link) continue;
    std::string pci = JoinPath(device.dir, "device");
    for (const char* kind : {"current", "max"}) {
      Labels labels = With(DeviceLabels(device), "kind", kind);
      ExportLinkSpeed(ctx, sink, JoinPath(pci, std::string(kind) + "_link_speed"),
                      metric::kPcieLinkSpeed,
                      "PCIe link speed of the device's PCI function in transfers per second "
                      "(16e9 = Gen4), current and max.",
                      labels);
      ExportLinkWidth(
          ctx, sink, JoinPath(pci, std::string(kind) + "_link_width"), metric::kPcieLinkWidth,
          "PCIe link width of the device's PCI function in lanes, current and max.", labels);
    }
    ExportUpstream(ctx, sink, device);
    for (const char* aer_class : {"correctable", "nonfatal", "fatal"}) {
      std::string file = JoinPath(pci, std::string("aer_dev_") + aer_class);
      if (!ctx.ReadOptional(file, &value)) continue;  // no AER capability: no files
      if (auto total = ParseAerTotal(value)) {
        sink.Counter(metric::kPcieAerErrors,
                     "PCIe Advanced Error Reporting errors of the device's PCI function, by "
                     "class (correctable, nonfatal, fatal).",
                     // `class`, not AER's own word `severity`: that is the alert routing label,
                     // and a metric label of that name collides with it in every rule.
                     With(DeviceLabels(device), "class", aer_class), static_cast<double>(*total));
      } else {
        ctx.Malformed(file, value);
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
