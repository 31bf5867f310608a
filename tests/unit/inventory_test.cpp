// DiscoverInventory, FindNetdev and DeviceFilter on the fixture trees and the rxe capture.
#include "rdma_exporter/inventory.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

namespace fs = std::filesystem;

std::string Roce() {
  return FixturePath("mlx5-roce");
}
std::string Ib() {
  return FixturePath("mlx5-ib");
}

Inventory Discover(SysfsReader& reader, const DeviceFilter& filter = {},
                   std::vector<DiscoveryError>* errors_out = nullptr) {
  std::vector<DiscoveryError> errors;
  Inventory inventory = DiscoverInventory(reader, filter, &errors);
  if (errors_out != nullptr) *errors_out = errors;
  return inventory;
}

std::vector<std::string> Names(const Inventory& inventory) {
  std::vector<std::string> names;
  for (const auto& d : inventory.devices)
    names.push_back(d.name);
  return names;
}

const DeviceInfo* Find(const Inventory& inventory, const std::string& name) {
  for (const auto& d : inventory.devices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

void CopyTree(const std::string& from, const TempDir& to) {
  fs::copy(from, to.path(), fs::copy_options::copy_symlinks | fs::copy_options::recursive);
}

TEST(DiscoverInventory, RoceTreeDevicesPciAddressesAndVfParent) {
  SysfsReader reader(Roce());
  std::vector<DiscoveryError> errors;
  Inventory inv = Discover(reader, {}, &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(Names(inv), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  const DeviceInfo& d0 = inv.devices[0];
  EXPECT_EQ(d0.dir, "class/infiniband/mlx5_0");
  EXPECT_TRUE(d0.has_pci_link);
  EXPECT_TRUE(d0.has_hca_type);
  EXPECT_EQ(d0.pci_address, "0000:3b:00.0");
  EXPECT_EQ(d0.physfn, "");
  ASSERT_EQ(d0.ports.size(), 1u);
  EXPECT_EQ(d0.ports[0].number, 1u);
  EXPECT_EQ(d0.ports[0].dir, "class/infiniband/mlx5_0/ports/1");
  EXPECT_EQ(d0.ports[0].link_layer, "Ethernet");
  const DeviceInfo& d1 = inv.devices[1];
  EXPECT_EQ(d1.pci_address, "0000:3b:00.1");
  EXPECT_EQ(d1.physfn, "0000:3b:00.0");
  EXPECT_TRUE(d1.has_hca_type);
  EXPECT_EQ(inv.devices[2].pci_address, "0000:5e:00.0");
  EXPECT_EQ(inv.devices[2].physfn, "");
}

TEST(DiscoverInventory, RoceNetdevsFromDefaultGidThenPciFunction) {
  SysfsReader reader(Roce());
  Inventory inv = Discover(reader);
  ASSERT_EQ(inv.devices.size(), 3u);
  EXPECT_EQ(inv.devices[0].ports[0].netdev, "ens1f0np0");
  EXPECT_EQ(inv.devices[1].ports[0].netdev, "ens1f0v0");
  EXPECT_EQ(inv.devices[2].ports[0].netdev, "ens2f0np0");
}

TEST(DiscoverInventory, PortsAreSortedNumericallyOnTwelvePortDevice) {
  SysfsReader reader(Ib());
  Inventory inv = Discover(reader);
  const DeviceInfo* d2 = Find(inv, "mlx5_2");
  ASSERT_NE(d2, nullptr);
  std::vector<unsigned> numbers;
  for (const auto& p : d2->ports)
    numbers.push_back(p.number);
  EXPECT_EQ(numbers, (std::vector<unsigned>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(d2->ports[9].dir, "class/infiniband/mlx5_2/ports/10");
  for (const auto& p : d2->ports)
    EXPECT_EQ(p.link_layer, "InfiniBand");
}

TEST(DiscoverInventory, IpoibNetdevIsMatchedByPortGuidNotByChildInterface) {
  SysfsReader reader(Ib());
  std::vector<DiscoveryError> errors;
  Inventory inv = Discover(reader, {}, &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(Names(inv), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  EXPECT_EQ(inv.devices[0].ports[0].netdev, "ib0");
  EXPECT_EQ(inv.devices[1].ports[0].netdev, "ib1");
  for (const auto& p : inv.devices[2].ports)
    EXPECT_EQ(p.netdev, "") << p.number;
  EXPECT_EQ(inv.devices[1].pci_address, "0000:2a:00.0");
  EXPECT_TRUE(inv.devices[2].has_hca_type);
}

TEST(DiscoverInventory, RxeCaptureHasNoPciLinkNoHcaTypeAndParentNetdev) {
  SysfsReader reader(RxeCaptureSysfs());
  std::vector<DiscoveryError> errors;
  Inventory inv = Discover(reader, {}, &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(Names(inv), (std::vector<std::string>{"rxe0", "rxe1"}));
  for (const auto& d : inv.devices) {
    EXPECT_FALSE(d.has_pci_link) << d.name;
    EXPECT_FALSE(d.has_hca_type) << d.name;
    EXPECT_EQ(d.pci_address, "") << d.name;
    EXPECT_EQ(d.physfn, "") << d.name;
    ASSERT_EQ(d.ports.size(), 1u);
    EXPECT_EQ(d.ports[0].link_layer, "Ethernet");
  }
  EXPECT_EQ(inv.devices[0].ports[0].netdev, "eth0");
  EXPECT_EQ(inv.devices[1].ports[0].netdev, "eth1");
}

TEST(DiscoverInventory, MissingClassInfinibandIsEmptyAndNotAnError) {
  TempDir tmp;
  tmp.Write("class/net/eth0/address", "52:54:00:12:34:56\n");
  SysfsReader reader(tmp.path());
  std::vector<DiscoveryError> errors;
  Inventory inv = Discover(reader, {}, &errors);
  EXPECT_TRUE(inv.devices.empty());
  EXPECT_TRUE(errors.empty());
}

class UnlistableReader : public SysfsReader {
 public:
  using SysfsReader::SysfsReader;
  std::string fail_path;
  int fail_err = 0;
  int ListDir(const std::string& path, std::vector<std::string>* names) override {
    if (path == fail_path) {
      names->clear();
      return fail_err;
    }
    return SysfsReader::ListDir(path, names);
  }
};

TEST(DiscoverInventory, UnreadableClassInfinibandIsReportedAsError) {
  UnlistableReader reader(Roce());
  reader.fail_path = "class/infiniband";
  reader.fail_err = EACCES;
  std::vector<DiscoveryError> errors;
  Inventory inv = Discover(reader, {}, &errors);
  EXPECT_TRUE(inv.devices.empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "class/infiniband");
  EXPECT_EQ(errors[0].err, EACCES);
}

TEST(DiscoverInventory, UnlistablePortsDirIsReportedAndDeviceKeptWithoutPorts) {
  UnlistableReader reader(Roce());
  reader.fail_path = "class/infiniband/mlx5_0/ports";
  reader.fail_err = EIO;
  std::vector<DiscoveryError> errors;
  Inventory inv = Discover(reader, {}, &errors);
  ASSERT_EQ(Names(inv), (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  EXPECT_TRUE(inv.devices[0].ports.empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "class/infiniband/mlx5_0/ports");
  EXPECT_EQ(errors[0].err, EIO);
}

TEST(DiscoverInventory, NonNumericPortEntriesAreIgnored) {
  TempDir tmp;
  CopyTree(Ib(), tmp);
  tmp.Write("class/infiniband/mlx5_0/ports/README", "x\n");
  SysfsReader reader(tmp.path());
  Inventory inv = Discover(reader);
  ASSERT_EQ(inv.devices[0].ports.size(), 1u);
  EXPECT_EQ(inv.devices[0].ports[0].number, 1u);
}

// ---------------------------------------------------------------------------------------------
// FindNetdev rules

TEST(FindNetdev, RoceDefaultGidNetdevWinsOverPciFunctionNetdev) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  // RoCE LAG: the default GID names the bond, the PCI function only has its slave.
  tmp.Write("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "bond0\n");
  SysfsReader reader(tmp.path());
  Inventory inv = Discover(reader);
  EXPECT_EQ(inv.devices[0].ports[0].netdev, "bond0");
  EXPECT_EQ(FindNetdev(reader, inv.devices[0], inv.devices[0].ports[0]), "bond0");
}

TEST(FindNetdev, FallbackPicksThePciNetdevWhoseDevPortMatches) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  const std::string pci = "devices/pci0000:00/0000:00:02.0/0000:5e:00.0";
  // A second netdev that sorts first but belongs to dev_port 1 (port 2).
  tmp.Write(pci + "/net/ens2d1/address", "0c:42:a1:12:34:57\n");
  tmp.Write(pci + "/net/ens2d1/dev_port", "1\n");
  SysfsReader reader(tmp.path());
  Inventory inv = Discover(reader);
  const DeviceInfo* d2 = Find(inv, "mlx5_2");
  ASSERT_NE(d2, nullptr);
  EXPECT_EQ(d2->ports[0].netdev, "ens2f0np0");
  PortInfo port2 = d2->ports[0];
  port2.number = 2;
  EXPECT_EQ(FindNetdev(reader, *d2, port2), "ens2d1");
  port2.number = 3;
  EXPECT_EQ(FindNetdev(reader, *d2, port2), "");
}

TEST(FindNetdev, IpoibWithoutMatchingGuidHasNoNetdev) {
  TempDir tmp;
  CopyTree(Ib(), tmp);
  const std::string pci = "devices/pci0000:00/0000:00:02.0/0000:17:00.0";
  tmp.Write(pci + "/net/ib0/address",
            "00:00:10:87:fe:80:00:00:00:00:00:00:a0:88:c2:03:00:45:99:99\n");
  tmp.Write(pci + "/net/ib0.8001/address",
            "00:00:11:07:fe:80:00:00:00:00:00:00:a0:88:c2:03:00:45:99:99\n");
  SysfsReader reader(tmp.path());
  Inventory inv = Discover(reader);
  EXPECT_EQ(inv.devices[0].ports[0].netdev, "");
  EXPECT_EQ(inv.devices[1].ports[0].netdev, "ib1");
}

TEST(FindNetdev, IpoibChildIsUsedWhenItIsTheOnlyMatch) {
  TempDir tmp;
  CopyTree(Ib(), tmp);
  tmp.Remove("devices/pci0000:00/0000:00:02.0/0000:17:00.0/net/ib0");
  SysfsReader reader(tmp.path());
  Inventory inv = Discover(reader);
  EXPECT_EQ(inv.devices[0].ports[0].netdev, "ib0.8001");
}

TEST(FindNetdev, IpoibWithZeroDefaultGidHasNoNetdev) {
  TempDir tmp;
  CopyTree(Ib(), tmp);
  tmp.Write("class/infiniband/mlx5_0/ports/1/gids/0", "0000:0000:0000:0000:0000:0000:0000:0000\n");
  SysfsReader reader(tmp.path());
  Inventory inv = Discover(reader);
  EXPECT_EQ(inv.devices[0].ports[0].netdev, "");
}

TEST(FindNetdev, RxeUsesParentFile) {
  SysfsReader reader(RxeCaptureSysfs());
  Inventory inv = Discover(reader);
  ASSERT_EQ(inv.devices.size(), 2u);
  EXPECT_EQ(FindNetdev(reader, inv.devices[1], inv.devices[1].ports[0]), "eth1");
}

// ---------------------------------------------------------------------------------------------
// DeviceFilter

TEST(DeviceFilter, EmptyFilterAcceptsEverything) {
  DeviceFilter filter;
  EXPECT_TRUE(filter.Accepts("mlx5_0"));
  EXPECT_TRUE(filter.Accepts("rxe0"));
}

TEST(DeviceFilter, RegexesMustMatchTheWholeName) {
  DeviceFilter filter;
  filter.exclude = std::regex("mlx5_1");
  EXPECT_FALSE(filter.Accepts("mlx5_1"));
  EXPECT_TRUE(filter.Accepts("mlx5_10"));
  EXPECT_TRUE(filter.Accepts("xmlx5_1"));
  DeviceFilter include;
  include.include = std::regex("mlx5");
  EXPECT_FALSE(include.Accepts("mlx5_0"));
  include.include = std::regex("mlx5_.*");
  EXPECT_TRUE(include.Accepts("mlx5_0"));
  EXPECT_FALSE(include.Accepts("rxe0"));
}

TEST(DeviceFilter, ExcludeWinsOverInclude) {
  DeviceFilter filter;
  filter.include = std::regex("mlx5_[0-9]+");
  filter.exclude = std::regex("mlx5_2");
  EXPECT_TRUE(filter.Accepts("mlx5_0"));
  EXPECT_FALSE(filter.Accepts("mlx5_2"));
}

TEST(DeviceFilter, IncludeAndExcludeApplyToDiscovery) {
  SysfsReader reader(Roce());
  DeviceFilter include;
  include.include = std::regex("mlx5_[01]");
  EXPECT_EQ(Names(Discover(reader, include)), (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  DeviceFilter exclude;
  exclude.exclude = std::regex("mlx5_1");
  EXPECT_EQ(Names(Discover(reader, exclude)), (std::vector<std::string>{"mlx5_0", "mlx5_2"}));
  DeviceFilter none;
  none.include = std::regex("mlx5");
  EXPECT_TRUE(Discover(reader, none).devices.empty());
}

TEST(DeviceFilter, ExcludedDeviceIsNotReadDuringDiscovery) {
  FaultyReader reader(Ib());
  DeviceFilter filter;
  filter.exclude = std::regex("mlx5_1");
  Inventory inv = Discover(reader, filter);
  EXPECT_EQ(Names(inv), (std::vector<std::string>{"mlx5_0", "mlx5_2"}));
  size_t other_reads = 0;
  for (const auto& path : reader.reads) {
    EXPECT_NE(path.rfind("class/infiniband/mlx5_1/", 0), 0u) << path;
    if (path.rfind("class/infiniband/mlx5_0/", 0) == 0) ++other_reads;
  }
  EXPECT_GT(other_reads, 0u);
}

}  // namespace
}  // namespace rdma_exporter::testing
