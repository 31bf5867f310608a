#include "rdma_netlink.h"

#include <algorithm>
#include <cerrno>

#include "common.h"
#include "hw_counters.h"

namespace rdma_exporter {

bool RdmaNetlinkCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                   MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->rdma_nl == nullptr) return true;
  for (const auto& device : inventory.devices) {
    std::map<std::string, uint64_t> counts;
    int err = kernel->rdma_nl->ReadResources(device.name, &counts);
    if (err != 0) {
      // ENODEV: netlink does not know the device (another namespace, or a fixture tree without
      // netlink data). Either way the counters below would fail the same way.
      ctx.ReadFailed("rdma_netlink:" + device.name, err);
      continue;
    }
    for (const auto& [type, count] : counts) {
      sink.Gauge("rdma_resources",
                 "RDMA objects currently allocated on the device by type (pd, cq, qp, cm_id, mr, "
                 "ctx, srq), kernel users included (rdma resource show).",
                 With(DeviceLabels(device), "type", type), static_cast<double>(count));
    }

    for (const auto& port : device.ports) {
      // No hw_counters directory: the driver has no port counters, and STAT_GET would fail.
      std::vector<std::string> files;
      if (ctx.sysfs().ListDir(JoinPath(port.dir, "hw_counters"), &files) != 0) continue;
      std::sort(files.begin(), files.end());
      std::vector<std::pair<std::string, uint64_t>> counters;
      err = kernel->rdma_nl->ReadHwCounters(device.name, port.number, &counters);
      if (err != 0) {
        ctx.ReadFailed("rdma_netlink:" + device.name + "/" + std::to_string(port.number), err);
        continue;
      }
      Labels labels = PortLabels(device, port);
      for (const auto& [name, value] : counters) {
        if (std::binary_search(files.begin(), files.end(), name)) continue;  // hw_counters has it
        const char* help = HwCounterHelp(name);
        sink.Counter(GenericMetricName("rdma_hw_", name, "_total"),
                     help != nullptr ? std::string(help)
                                     : "Driver hw counter " + name +
                                           " (optional, RDMA netlink; not known to this "
                                           "exporter version; raw value).",
                     labels, static_cast<double>(value));
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
