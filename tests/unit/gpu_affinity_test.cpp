// The GPU rail map: the NVIDIA driver's procfs text, PCIe distances in nvidia-smi's terms, and
// the gpu_affinity collector on trees laid out like DGX H100 (one PCIe switch per GPU and NIC
// pair, one root complex per switch, two sockets, storage NICs on switches without GPUs) and
// HGX H100 boards with four switches (two GPUs and two NICs each).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../../collectors/gpu_affinity.h"
#include "pci_topology_fixture.h"
#include "rdma_exporter/pci_topology.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

using testing::BuildDgxH100;
using testing::Count;
using testing::Information;
using testing::RunCollector;
using testing::TempDir;
using testing::Topology;
using testing::Uuid;
using testing::Value;

TEST(NvidiaGpuInformation, ReadsUuidBusLocationAndModel) {
  auto gpu = ParseNvidiaGpuInformation(
      Information("GPU-4f4e3c1a-7b2d-4c5e-9f10-2a3b4c5d6e7f", "0000:1B:00.0"));
  ASSERT_TRUE(gpu);
  EXPECT_EQ(gpu->uuid, "GPU-4f4e3c1a-7b2d-4c5e-9f10-2a3b4c5d6e7f");
  EXPECT_EQ(gpu->pci_address, "0000:1b:00.0");  // sysfs names are lower case
  EXPECT_EQ(gpu->model, "NVIDIA H100 80GB HBM3");
}

TEST(NvidiaGpuInformation, RejectsTextWithoutAUsableUuidOrAddress) {
  EXPECT_FALSE(ParseNvidiaGpuInformation(""));
  EXPECT_FALSE(ParseNvidiaGpuInformation("garbage\n\x01\x02:::\n"));
  EXPECT_FALSE(ParseNvidiaGpuInformation(Information("", "0000:1b:00.0")));
  EXPECT_FALSE(ParseNvidiaGpuInformation(Information("MIG-0a", "0000:1b:00.0")));
  EXPECT_FALSE(ParseNvidiaGpuInformation(Information("GPU-1", "1b:00.0")));
  EXPECT_FALSE(ParseNvidiaGpuInformation(Information("GPU-1", "0000:1b:00.9")));
  EXPECT_FALSE(ParseNvidiaGpuInformation(Information("GPU-1", "0000:1b:00.0/../x")));
  // A VMD domain has five hex digits.
  EXPECT_TRUE(ParseNvidiaGpuInformation(Information("GPU-1", "10000:01:00.0")));
}

PciLocation At(std::vector<std::string> path, int numa) {
  return {std::move(path), numa};
}

TEST(PciDistance, FollowsNvidiaSmiLegend) {
  // Root port 0000:15:01.0, switch upstream port 0000:16:00.0, downstream ports 0000:17:0x.0.
  auto gpu = At({"pci0000:15", "0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:18:00.0"}, 0);
  auto nic = At({"pci0000:15", "0000:15:01.0", "0000:16:00.0", "0000:17:01.0", "0000:19:00.0"}, 0);
  EXPECT_EQ(ClassifyPciDistance(gpu, nic), PciDistance::kPix);
  EXPECT_EQ(ClassifyPciDistance(nic, gpu), PciDistance::kPix);
  // The NIC on the first-level switch, the GPU behind a second switch below it.
  auto deep_gpu = At({"pci0000:15", "0000:15:01.0", "0000:16:00.0", "0000:17:02.0", "0000:1a:00.0",
                      "0000:1b:00.0", "0000:1c:00.0"},
                     0);
  EXPECT_EQ(ClassifyPciDistance(deep_gpu, nic), PciDistance::kPxb);
  // Two root ports of one root complex.
  auto other_port = At({"pci0000:15", "0000:15:03.0", "0000:20:00.0"}, 0);
  EXPECT_EQ(ClassifyPciDistance(gpu, other_port), PciDistance::kPhb);
  // Other root complexes: same NUMA node, then the other socket.
  auto same_node = At({"pci0000:37", "0000:37:01.0", "0000:38:00.0"}, 0);
  auto other_node = At({"pci0000:97", "0000:97:01.0", "0000:98:00.0"}, 1);
  EXPECT_EQ(ClassifyPciDistance(gpu, same_node), PciDistance::kNode);
  EXPECT_EQ(ClassifyPciDistance(gpu, other_node), PciDistance::kSys);
  // Without NUMA information (-1 on both: one node) different root complexes are NODE.
  EXPECT_EQ(ClassifyPciDistance(At({"pci0000:00", "0000:00:01.0"}, -1),
                                At({"pci0000:80", "0000:80:01.0"}, -1)),
            PciDistance::kNode);
  EXPECT_EQ(PciDistanceName(PciDistance::kPxb), "PXB");
}

// One poll of a gpu_affinity collector over the tree.
testing::CollectResult CollectOn(const Topology& t) {
  CollectorOptions options;
  options.procfs_root = t.proc();
  SysfsReader sysfs(t.sys());
  GpuAffinityCollector collector(options);
  return RunCollector(collector, sysfs);
}

TEST(GpuAffinityCollector, DgxH100EachGpuHasItsOwnComputeNicAndNoStorageNic) {
  Topology t;
  BuildDgxH100(t);
  auto result = CollectOn(t);
  EXPECT_EQ(result.failures, 0u);
  EXPECT_EQ(Count(result.families, "rdma_gpu_affinity_info"), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(
        Value(
            result.families, "rdma_gpu_affinity_info",
            {{"device", "mlx5_" + std::to_string(i)}, {"gpu_uuid", Uuid(i)}, {"distance", "PIX"}}),
        1.0)
        << "GPU " << i;
  }
  for (int i = 8; i < 12; ++i) {
    EXPECT_FALSE(Value(result.families, "rdma_gpu_affinity_info",
                       {{"device", "mlx5_" + std::to_string(i)}}));
  }
}

TEST(GpuAffinityCollector, HgxWithFourSwitchesGivesEachGpuBothNicsOfItsSwitch) {
  Topology t;
  const int buses[] = {0x18, 0x40, 0x98, 0xc0};
  for (int s = 0; s < 4; ++s) {
    auto c = Topology::Switch(buses[s], 4);
    t.Gpu(Uuid(2 * s), c[0], s / 2);
    t.Gpu(Uuid(2 * s + 1), c[1], s / 2);
    t.Hca("mlx5_" + std::to_string(2 * s), c[2], s / 2);
    t.Hca("mlx5_" + std::to_string(2 * s + 1), c[3], s / 2);
  }
  auto result = CollectOn(t);
  EXPECT_EQ(result.failures, 0u);
  EXPECT_EQ(Count(result.families, "rdma_gpu_affinity_info"), 16u);
  for (int g = 0; g < 8; ++g) {
    int s = g / 2;
    for (int n : {2 * s, 2 * s + 1}) {
      EXPECT_EQ(Value(result.families, "rdma_gpu_affinity_info",
                      {{"device", "mlx5_" + std::to_string(n)},
                       {"gpu_uuid", Uuid(g)},
                       {"distance", "PIX"}}),
                1.0)
          << "GPU " << g << " NIC " << n;
    }
  }
}

TEST(GpuAffinityCollector, NearestIsExportedWithItsDistanceWhenNoNicSharesASwitch) {
  Topology t;
  auto a = Topology::Switch(0x15, 1);
  auto b = Topology::Switch(0x97, 1);
  t.Gpu(Uuid(0), a[0], 0);
  t.Hca("mlx5_0", b[0], 1);
  auto result = CollectOn(t);
  EXPECT_EQ(Value(result.families, "rdma_gpu_affinity_info",
                  {{"device", "mlx5_0"}, {"gpu_pci_address", a[0].back()}, {"distance", "SYS"}}),
            1.0);
}

TEST(GpuAffinityCollector, NoNvidiaDriverExportsNothingAndIsNoError) {
  Topology t;
  auto c = Topology::Switch(0x15, 1);
  t.Hca("mlx5_0", c[0], 0);
  CollectorOptions options;
  options.procfs_root = t.proc();
  SysfsReader sysfs(t.sys());
  GpuAffinityCollector collector(options);  // the same one twice: "no driver" is said once
  for (int poll = 0; poll < 2; ++poll) {
    auto result = RunCollector(collector, sysfs);
    EXPECT_EQ(result.failures, 0u);
    EXPECT_EQ(Count(result.families, "rdma_gpu_affinity_info"), 0u);
  }
}

TEST(GpuAffinityCollector, BadGpuEntriesAreCountedAndTheOthersStillExported) {
  Topology t;
  BuildDgxH100(t);
  const std::string gpus = "proc/driver/nvidia/gpus/";
  // GPU 1: garbage; GPU 2: no sysfs function behind the address; GPU 3: no information file.
  auto c1 = Topology::Switch(0x37, 2)[0].back();
  auto c2 = Topology::Switch(0x48, 2)[0].back();
  auto c3 = Topology::Switch(0x59, 2)[0].back();
  t.dir().Write(gpus + c1 + "/information", "\xff\xfe not the driver's text\n");
  t.dir().Remove("sys/bus/pci/devices/" + c2);
  t.dir().Remove(gpus + c3 + "/information");
  auto result = CollectOn(t);
  EXPECT_EQ(result.failures, 3u);
  EXPECT_EQ(Count(result.families, "rdma_gpu_affinity_info"), 5u);
  EXPECT_TRUE(Value(result.families, "rdma_gpu_affinity_info", {{"gpu_uuid", Uuid(0)}}));
  EXPECT_FALSE(Value(result.families, "rdma_gpu_affinity_info", {{"gpu_uuid", Uuid(2)}}));
}

TEST(SysfsReaderRealPath, ResolvesLinksBelowTheRootAndRefusesEscapes) {
  TempDir dir;
  dir.Write("sys/devices/pci0000:00/0000:00:01.0/numa_node", "0\n");
  dir.Symlink("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  dir.Symlink("sys/bus/pci/devices/outside", "../../../../");
  SysfsReader sysfs(dir.path() + "/sys");
  std::string resolved;
  ASSERT_EQ(sysfs.RealPath("bus/pci/devices/0000:00:01.0", &resolved), 0);
  EXPECT_EQ(resolved, "devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(sysfs.RealPath("bus/pci/devices/outside", &resolved), EXDEV);
  EXPECT_EQ(sysfs.RealPath("bus/pci/devices/none", &resolved), ENOENT);
  PciLocation location;
  ASSERT_EQ(ResolvePciLocation(sysfs, "bus/pci/devices/0000:00:01.0", &location), 0);
  EXPECT_EQ(location.path, (std::vector<std::string>{"pci0000:00", "0000:00:01.0"}));
  EXPECT_EQ(location.numa_node, 0);
}

}  // namespace
}  // namespace rdma_exporter
