// pod_resources: which pods can use which RDMA ports, from the kubelet's pod-resources API.
// A pod reaches a port through an SR-IOV VF given to it (via="vf": the device ID is the VF's PCI
// address), a resource of the RDMA shared device plugin (via="shared": every HCA the pool's
// selectors cover), or its GPUs (via="gpu_affinity": the HCAs nearest each GPU, its rail). The
// kubelet is asked on a thread of its own every --collector.pod_resources.interval, so a slow
// kubelet never delays a poll; each poll exports what it last answered.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/metrics.h"
#include "rdma_exporter/pod_resources.h"

namespace rdma_exporter {

class PodResourcesCollector : public Collector {
 public:
  explicit PodResourcesCollector(const CollectorOptions& options) : options_(options) {}
  std::string_view name() const override { return "pod_resources"; }
  std::string_view description() const override {
    return "The pods that can use each RDMA port (SR-IOV VFs, shared device plugin pools, GPU "
           "rails), from the kubelet's pod-resources API";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  // Recomputes attributions_ from the kubelet's answer (on a new answer or a changed inventory).
  void Attribute(const std::vector<ContainerDeviceGrant>& grants, const Inventory& inventory,
                 CollectContext& ctx);

  CollectorOptions options_;
  // Started by the first Collect: building the registry constructs every collector once, and
  // that must not start threads.
  std::unique_ptr<PodResourcesWatcher> watcher_;
  uint64_t seen_generation_ = 0;
  std::string seen_inventory_;
  uint64_t reported_failures_ = 0;
  bool said_no_driver_ = false;
  std::vector<Labels> attributions_;  // the rdma_pod_info label sets
};

}  // namespace rdma_exporter
