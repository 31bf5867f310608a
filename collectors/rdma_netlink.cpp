#include "rdma_netlink.h"

#include <cerrno>

#include "common.h"

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
      // netlink data).
      ctx.ReadFailed("rdma_netlink:" + device.name, err);
      continue;
    }
    for (const auto& [type, count] : counts) {
      sink.Gauge("rdma_resources",
                 "RDMA objects currently allocated on the device by type (pd, cq, qp, cm_id, mr, "
                 "ctx, srq), kernel users included (rdma resource show).",
                 With(DeviceLabels(device), "type", type), static_cast<double>(count));
    }
  }
  return true;
}

}  // namespace rdma_exporter
