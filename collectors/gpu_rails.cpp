#include "gpu_rails.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>

#include "rdma_exporter/file_util.h"

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

GpuRailsResult FindGpuRails(const Inventory& inventory, CollectContext& ctx,
                            const std::string& procfs_root, std::vector<GpuRail>* rails) {
  rails->clear();
  const std::string gpus_dir = procfs_root + "/driver/nvidia/gpus";
  std::vector<std::string> entries;
  if (int err = ListProcDir(gpus_dir, &entries); err != 0) {
    if (err == ENOENT) return GpuRailsResult::kNoDriver;
    ctx.ReadFailed(gpus_dir, err);
    return GpuRailsResult::kFailed;
  }

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
    if (hcas.empty()) continue;
    std::vector<PciDistance> distances;
    for (const auto& hca : hcas)
      distances.push_back(ClassifyPciDistance(gpu_location, hca.location));
    GpuRail rail{std::move(*gpu), *std::min_element(distances.begin(), distances.end()), {}};
    for (size_t i = 0; i < hcas.size(); ++i) {
      if (distances[i] == rail.distance) rail.devices.push_back(hcas[i].device);
    }
    rails->push_back(std::move(rail));
  }
  return GpuRailsResult::kOk;
}

}  // namespace rdma_exporter
