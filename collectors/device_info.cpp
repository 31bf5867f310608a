#include "device_info.h"

#include "common.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {

bool DeviceInfoCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                  MetricSink& sink) {
  std::string value;
  // Optional attributes (rxe has no hca_type/board_id, fw_ver is empty) become empty labels.
  auto attr = [&](const DeviceInfo& device, const char* file) -> std::string {
    if (!ctx.ReadOptional(JoinPath(device.dir, file), &value)) return "";
    return std::string(Trim(value));
  };
  for (const auto& device : inventory.devices) {
    std::string node_type = attr(device, "node_type");
    if (auto parsed = ParseNumberedName(node_type)) node_type = std::string(parsed->name);
    std::string numa_node;
    if (device.has_pci_link) numa_node = attr(device, "device/numa_node");
    sink.Gauge(metric::kDeviceInfo,
               "Descriptive labels of an RDMA device; value is always 1. physfn is the PCI "
               "address of the parent PF of an SR-IOV VF, empty otherwise.",
               {{"device", device.name},
                {"node_guid", attr(device, "node_guid")},
                {"sys_image_guid", attr(device, "sys_image_guid")},
                {"fw_ver", attr(device, "fw_ver")},
                {"board_id", attr(device, "board_id")},
                {"hca_type", attr(device, "hca_type")},
                {"node_type", node_type},
                {"pci_address", device.pci_address},
                {"numa_node", numa_node},
                {"physfn", device.physfn}},
               1);
  }
  return true;
}

}  // namespace rdma_exporter
