// Fixture trees for GPU and PCIe topology tests: a sysfs tree (PCI functions under their host
// bridges, RDMA devices on them) and a procfs with the NVIDIA driver's GPU list, laid out like
// DGX H100 (one PCIe switch per GPU and NIC pair) and HGX boards.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "test_util.h"

namespace rdma_exporter::testing {

// As nv-procfs.c writes it (an H100 SXM, driver 535).
inline std::string Information(const std::string& uuid, const std::string& bus_location) {
  return "Model: \t\t NVIDIA H100 80GB HBM3\n"
         "IRQ:   \t\t 612\n"
         "GPU UUID: \t " +
         uuid +
         "\n"
         "Video BIOS: \t 96.00.74.00.01\n"
         "Bus Type: \t PCIe\n"
         "DMA Size: \t 52 bits\n"
         "DMA Mask: \t 0xfffffffffffff\n"
         "Bus Location: \t " +
         bus_location +
         "\n"
         "Device Minor: \t 0\n"
         "GPU Firmware: \t 535.129.03\n"
         "GPU Excluded:\t No\n";
}

// A sysfs tree (root/sys) and procfs (root/proc) with PCI functions, RDMA devices and GPUs.
class Topology {
 public:
  // A PCI function at path (host bridge first), with its bus/pci/devices link and NUMA node.
  void Function(const std::vector<std::string>& path, int numa) {
    std::string dir = "sys/devices";
    for (const auto& c : path)
      dir += "/" + c;
    dir_.Write(dir + "/numa_node", std::to_string(numa) + "\n");
    dir_.Symlink("sys/bus/pci/devices/" + path.back(), "../../.." + dir.substr(3));
  }
  void Hca(const std::string& name, const std::vector<std::string>& path, int numa) {
    Function(path, numa);
    std::string dir = "devices";
    for (const auto& c : path)
      dir += "/" + c;
    std::string ib = dir + "/infiniband/" + name;
    dir_.Write("sys/" + ib + "/ports/1/link_layer", "InfiniBand\n");
    dir_.Write("sys/" + ib + "/ports/1/state", "4: ACTIVE\n");
    dir_.Symlink("sys/" + ib + "/device", "../../../" + path.back());
    dir_.Symlink("sys/class/infiniband/" + name, "../../" + ib);
  }
  void Gpu(const std::string& uuid, const std::vector<std::string>& path, int numa) {
    Function(path, numa);
    dir_.Write("proc/driver/nvidia/gpus/" + path.back() + "/information",
               Information(uuid, path.back()));
  }
  // One PCIe switch below its own root complex: children hang off downstream ports 0, 1, ...
  // Returns the paths of its children.
  static std::vector<std::vector<std::string>> Switch(int bus, int children) {
    char buf[32];
    auto addr = [&buf](int b, int dev) {
      std::snprintf(buf, sizeof(buf), "0000:%02x:%02x.0", b, dev);
      return std::string(buf);
    };
    std::snprintf(buf, sizeof(buf), "pci0000:%02x", bus);
    std::vector<std::string> up = {buf, addr(bus, 1), addr(bus + 1, 0)};
    std::vector<std::vector<std::string>> out;
    for (int i = 0; i < children; ++i) {
      auto path = up;
      path.push_back(addr(bus + 2, i));
      path.push_back(addr(bus + 3 + i, 0));
      out.push_back(path);
    }
    return out;
  }
  std::string sys() const { return dir_.path() + "/sys"; }
  std::string proc() const { return dir_.path() + "/proc"; }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
};

inline std::string Uuid(int i) {
  return "GPU-00000000-0000-0000-0000-00000000000" + std::to_string(i);
}

// DGX H100: GPU i and mlx5_i (compute, 400G) behind switch i; switches 0-3 on socket 0, 4-7 on
// socket 1, each under its own root complex; two dual-port storage NICs (mlx5_8..11) on
// switches of their own, one per socket.
inline void BuildDgxH100(Topology& t) {
  const int buses[] = {0x15, 0x37, 0x48, 0x59, 0x97, 0xa7, 0xc6, 0xd7};
  for (int i = 0; i < 8; ++i) {
    auto children = Topology::Switch(buses[i], 2);
    t.Gpu(Uuid(i), children[0], i < 4 ? 0 : 1);
    t.Hca("mlx5_" + std::to_string(i), children[1], i < 4 ? 0 : 1);
  }
  for (int s = 0; s < 2; ++s) {
    auto port = Topology::Switch(s == 0 ? 0x2a : 0xb8, 1)[0];
    t.Hca("mlx5_" + std::to_string(8 + 2 * s), port, s);
    port.back().back() = '1';  // function 1 of the dual-port card
    t.Hca("mlx5_" + std::to_string(9 + 2 * s), port, s);
  }
}

}  // namespace rdma_exporter::testing
