#include "gpu_affinity.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/pci_topology.h"

namespace rdma_exporter {
namespace {

// Entry names of a procfs directory, sorted; 0 or an errno value.
int ListProcDir(const std::string& path, std::vector<std::string>* names) {
  names->clear();
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return errno;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] != '.') names->emplace_back(e->d_name);
  }
  closedir(dir);
  std::sort(names->begin(), names->end());
  return 0;
}

}  // namespace

bool GpuAffinityCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                   MetricSink& sink) {
  const std::string gpus_dir = procfs_root_ + "/driver/nvidia/gpus";
  std::vector<std::string> entries;
  if (int err = ListProcDir(gpus_dir, &entries); err != 0) {
    if (err != ENOENT) {
      ctx.ReadFailed(gpus_dir, err);
    } else if (!said_no_driver_) {
      LogInfo("no NVIDIA driver (procfs directory absent): no GPU affinity exported",
              {{"path", gpus_dir}});
      said_no_driver_ = true;
    }
    return true;
  }
  said_no_driver_ = false;

  // Every RDMA device with a PCI function of its own (VFs included: a pod's VF is its rail).
  struct Hca {
    const DeviceInfo* device;
    PciLocation location;
  };
  std::vector<Hca> hcas;
  for (const auto& device : inventory.devices) {
    if (!device.has_pci_link) continue;
    Hca hca{&device, {}};
    std::string link = JoinPath(device.dir, "device");
    if (int err = ResolvePciLocation(ctx.sysfs(), link, &hca.location); err != 0) {
      ctx.ReadFailed(link, err);
      continue;
    }
    hcas.push_back(std::move(hca));
  }

  for (const auto& entry : entries) {
    const std::string file = gpus_dir + "/" + entry + "/information";
    std::string text;
    if (int err = ReadWholeFile(file, &text); err != 0) {
      ctx.ReadFailed(file, err);  // ENOENT too: the driver writes it for every GPU
      continue;
    }
    auto gpu = ParseNvidiaGpuInformation(text);
    if (!gpu) {
      ctx.Malformed(file, text);
      continue;
    }
    PciLocation gpu_location;
    std::string link = "bus/pci/devices/" + gpu->pci_address;
    if (int err = ResolvePciLocation(ctx.sysfs(), link, &gpu_location); err != 0) {
      ctx.ReadFailed(link, err);
      continue;
    }
    // The nearest devices: all of them on a tie (two NICs behind the GPU's switch).
    std::vector<PciDistance> distances;
    for (const auto& hca : hcas)
      distances.push_back(ClassifyPciDistance(gpu_location, hca.location));
    if (distances.empty()) continue;
    PciDistance nearest = *std::min_element(distances.begin(), distances.end());
    for (size_t i = 0; i < hcas.size(); ++i) {
      if (distances[i] != nearest) continue;
      sink.Gauge(metric::kGpuAffinityInfo,
                 "The RDMA device(s) nearest each NVIDIA GPU in the PCIe tree (the GPU's rail), "
                 "with the distance in nvidia-smi topo terms: PIX (same PCIe switch), PXB, PHB, "
                 "NODE, SYS. Always 1.",
                 {{"device", hcas[i].device->name},
                  {"gpu_uuid", gpu->uuid},
                  {"gpu_pci_address", gpu->pci_address},
                  {"distance", std::string(PciDistanceName(nearest))}},
                 1);
    }
  }
  return true;
}

}  // namespace rdma_exporter
