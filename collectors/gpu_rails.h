// The rail of each NVIDIA GPU: the RDMA device(s) nearest to it in the PCIe tree. Shared by the
// gpu_affinity collector (which exports the map) and pod_resources (which follows a pod's GPUs
// to the HCAs its collective traffic uses).
#pragma once

#include <string>
#include <vector>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/pci_topology.h"

namespace rdma_exporter {

struct GpuRail {
  NvidiaGpu gpu;
  PciDistance distance = PciDistance::kSys;
  std::vector<const DeviceInfo*> devices;  // nearest first-come; all of them on a tie
};

enum class GpuRailsResult { kOk, kNoDriver, kFailed };
// GPUs from <procfs_root>/driver/nvidia/gpus/*/information, distances from sysfs; devices of
// inventory with a PCI function of their own (VFs included). Per-file failures are recorded in
// ctx and cost only that GPU or device. kNoDriver: the procfs directory does not exist.
GpuRailsResult FindGpuRails(const Inventory& inventory, CollectContext& ctx,
                            const std::string& procfs_root, std::vector<GpuRail>* rails);

}  // namespace rdma_exporter
