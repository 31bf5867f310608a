#include "gpu_affinity.h"

#include "gpu_rails.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter {

bool GpuAffinityCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                   MetricSink& sink) {
  std::vector<GpuRail> rails;
  if (FindGpuRails(inventory, ctx, procfs_root_, &rails) == GpuRailsResult::kNoDriver) {
    if (!said_no_driver_) {
      LogInfo("no NVIDIA driver (procfs directory absent): no GPU affinity exported",
              {{"path", procfs_root_ + "/driver/nvidia/gpus"}});
      said_no_driver_ = true;
    }
    return true;
  }
  said_no_driver_ = false;
  for (const auto& rail : rails) {
    for (const DeviceInfo* device : rail.devices) {
      sink.Gauge(metric::kGpuAffinityInfo,
                 "The RDMA device(s) nearest each NVIDIA GPU in the PCIe tree (the GPU's rail), "
                 "with the distance in nvidia-smi topo terms: PIX (same PCIe switch), PXB, PHB, "
                 "NODE, SYS. Always 1.",
                 {{"device", device->name},
                  {"gpu_uuid", rail.gpu.uuid},
                  {"gpu_pci_address", rail.gpu.pci_address},
                  {"distance", std::string(PciDistanceName(rail.distance))}},
                 1);
    }
  }
  return true;
}

}  // namespace rdma_exporter
