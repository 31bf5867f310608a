// gpu_affinity: which RDMA device(s) each NVIDIA GPU is nearest to in the PCIe tree, i.e. the
// rail its GPUDirect RDMA traffic uses (what `nvidia-smi topo -m` shows as PIX/PXB/...). GPUs
// come from the driver's procfs (their UUIDs are nowhere in sysfs); distances from the
// canonical sysfs paths of both functions and their NUMA nodes. No driver: nothing exported,
// one log line.
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class GpuAffinityCollector : public Collector {
 public:
  explicit GpuAffinityCollector(const CollectorOptions& options)
      : procfs_root_(options.procfs_root) {}
  std::string_view name() const override { return "gpu_affinity"; }
  std::string_view description() const override {
    return "The RDMA device(s) nearest each NVIDIA GPU in the PCIe tree (its rail), from the "
           "driver's procfs and sysfs";
  }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  std::string procfs_root_;
  bool said_no_driver_ = false;
};

}  // namespace rdma_exporter
