#include "verbs.h"

#include <optional>

#include "common.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter {

bool VerbsCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->verbs == nullptr) return true;
  for (const auto& device : inventory.devices) {
    VerbsDevice verbs;
    int err = kernel->verbs->ReadDevice(device.name, &verbs);
    if (err != 0) {
      ctx.ReadFailed("verbs:" + device.name, err);
      continue;
    }
    Labels labels = DeviceLabels(device);
    // Absent (a capture without -v) means unknown, not 0: no series.
    auto limit = [&](const char* name, const char* what, std::optional<uint64_t> value) {
      if (!value) return;
      sink.Gauge(
          name,
          std::string("Maximum number of ") + what + " the device supports (ibv_query_device).",
          labels, static_cast<double>(*value));
    };
    limit("rdma_device_max_qps", "queue pairs", verbs.max_qp);
    limit("rdma_device_max_cqs", "completion queues", verbs.max_cq);
    limit("rdma_device_max_mrs", "memory regions", verbs.max_mr);
    limit("rdma_device_max_pds", "protection domains", verbs.max_pd);
    limit("rdma_device_max_srqs", "shared receive queues", verbs.max_srq);
    for (const auto& port : verbs.ports) {
      Labels port_labels = {{"device", device.name}, {"port", std::to_string(port.port)}};
      if (port.active_mtu_bytes != 0) {
        sink.Gauge(metric::kPortActiveMtu,
                   "Active path MTU of the port in bytes (ibv_query_port active_mtu; RoCE: "
                   "derived from the netdev MTU, 4096 needs a netdev MTU of at least 4200).",
                   port_labels, port.active_mtu_bytes);
      }
      if (port.max_mtu_bytes != 0) {
        sink.Gauge("rdma_port_max_mtu_bytes",
                   "Largest path MTU the port supports in bytes (ibv_query_port max_mtu).",
                   port_labels, port.max_mtu_bytes);
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
