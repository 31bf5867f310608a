// Where GPUs and RDMA devices sit in the PCIe tree: the NVIDIA driver's procfs description of
// each GPU, and the distance between two PCI functions in nvidia-smi's (and NVML's) terms, from
// the canonical sysfs paths of the functions. The rail of a GPU is the RDMA device(s) nearest to
// it: the NIC its collective traffic leaves through with GPUDirect RDMA.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_exporter/sysfs_reader.h"

namespace rdma_exporter {

// One GPU of /proc/driver/nvidia/gpus/<bus id>/information (written by nv-procfs.c:
// "GPU UUID: \t GPU-...", "Bus Location: \t 0000:1b:00.0", "Model: \t\t NVIDIA H100 ...").
struct NvidiaGpu {
  std::string uuid;
  std::string pci_address;  // lower-case domain:bus:device.function, as sysfs names it
  std::string model;
};
// nullopt when the UUID or the bus location is missing or not of the expected form.
std::optional<NvidiaGpu> ParseNvidiaGpuInformation(std::string_view text);

// nvidia-smi topo -m's legend, nearest first.
enum class PciDistance {
  kPix,   // at most one PCIe switch between the two (PIX)
  kPxb,   // several switches, not through the host bridge (PXB)
  kPhb,   // through the host bridge (root complex) both hang off (PHB)
  kNode,  // across host bridges of one NUMA node (NODE)
  kSys,   // across NUMA nodes, the CPUs' interconnect (SYS)
};
std::string_view PciDistanceName(PciDistance distance);  // "PIX", "PXB", ...

// Where a PCI function is: its canonical sysfs path below devices/, split at '/'
// ({"pci0000:00", "0000:00:01.0", "0000:01:00.0", ...}: host bridge, then each bridge down to
// the function itself), and its NUMA node (-1: the platform does not say).
struct PciLocation {
  std::vector<std::string> path;
  int numa_node = -1;
};
// Resolves link (relative to the sysfs root: "bus/pci/devices/<address>" or
// "class/infiniband/<dev>/device"). EINVAL when it does not resolve to a PCI function below
// devices/pci*. Returns 0 or an errno value.
[[nodiscard]] int ResolvePciLocation(SysfsReader& sysfs, const std::string& link, PciLocation* out);

PciDistance ClassifyPciDistance(const PciLocation& a, const PciLocation& b);

}  // namespace rdma_exporter
