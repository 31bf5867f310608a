// DiscoverInventory, FindNetdev and DeviceFilter on the fixture trees and the rxe capture.
#include "rdma_exporter/inventory.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
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
  int ListDirEntries(const std::string& path, std::vector<DirEntry>* entries) override {
    if (path == fail_path) {
      entries->clear();
      return fail_err;
    }
    return SysfsReader::ListDirEntries(path, entries);
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

// ---------------------------------------------------------------------------------------------
// InventoryCache: what an unchanged node costs per poll, and every change still seen in one poll

// Counts the listings and reads discovery asks for.
class CountingReader : public SysfsReader {
 public:
  using SysfsReader::SysfsReader;
  std::vector<std::string> listed, read;
  int ListDirEntries(const std::string& path, std::vector<DirEntry>* entries) override {
    listed.push_back(path);
    return SysfsReader::ListDirEntries(path, entries);
  }
  using SysfsReader::ReadFile;
  int ReadFile(const std::string& path, std::string* out, FileRef* ref) override {
    read.push_back(path);
    return SysfsReader::ReadFile(path, out, ref);
  }
  void Reset() {
    listed.clear();
    read.clear();
  }
};

// The inventory as comparable text: every field discovery fills.
std::string Describe(const Inventory& inventory) {
  std::string out;
  for (const auto& d : inventory.devices) {
    out += d.name + " " + d.dir + " " + d.pci_address + " " + d.physfn + " " +
           std::to_string(d.has_pci_link) + std::to_string(d.has_hca_type) + "\n";
    for (const auto& p : d.ports) {
      out += "  " + std::to_string(p.number) + " " + p.dir + " " + p.link_layer + " " + p.netdev +
             " " + std::to_string(p.netdev_is_upper);
      for (const auto& slave : p.bond_slaves)
        out += " " + slave;
      out += "\n";
    }
  }
  return out;
}

Inventory DiscoverCached(SysfsReader& reader, InventoryCache& cache,
                         const DeviceFilter& filter = {}) {
  std::vector<DiscoveryError> errors;
  Inventory inventory = DiscoverInventory(reader, filter, &errors, &cache);
  EXPECT_TRUE(errors.empty());
  reader.SweepUnused();  // as the poller does at the end of each poll
  return inventory;
}

TEST(InventoryCache, UnchangedNodeCostsTwoListingsAndTheSameInventory) {
  for (const char* tree : {"mlx5-roce", "mlx5-ib", "mlx5-lag"}) {
    SCOPED_TRACE(tree);
    CountingReader reader(FixturePath(tree));
    InventoryCache cache;
    Inventory first = DiscoverCached(reader, cache);
    ASSERT_FALSE(first.devices.empty());
    EXPECT_EQ(Describe(first), Describe(Discover(reader)));  // the same as without a cache
    reader.Reset();
    Inventory second = DiscoverCached(reader, cache);
    EXPECT_EQ(Describe(second), Describe(first));
    EXPECT_EQ(reader.listed, (std::vector<std::string>{"class/infiniband", "class/net"}));
    // Only a LAG port's bonding/slaves is read again (enslaving changes no listing); the
    // fixtures' RoCE netdevs have no `device` link but are no upper devices either.
    for (const auto& path : reader.read)
      EXPECT_NE(path.find("/bonding/slaves"), std::string::npos) << path;
    EXPECT_EQ(reader.read.size(), std::string(tree) == "mlx5-lag" ? 1u : 0u);
  }
}

TEST(InventoryCache, EnslavingIsSeenInTheNextPoll) {
  TempDir tmp;
  CopyTree(FixturePath("mlx5-lag"), tmp);
  SysfsReader reader(tmp.path());
  InventoryCache cache;
  Inventory first = DiscoverCached(reader, cache);
  const PortInfo* port = &Find(first, "mlx5_bond_0")->ports[0];
  ASSERT_EQ(port->bond_slaves, (std::vector<std::string>{"ens1f0np0", "ens1f1np1"}));
  tmp.Write("class/net/bond0/bonding/slaves", "ens1f1np1\n");
  Inventory second = DiscoverCached(reader, cache);
  EXPECT_EQ(Find(second, "mlx5_bond_0")->ports[0].bond_slaves,
            (std::vector<std::string>{"ens1f1np1"}));
}

TEST(InventoryCache, RenamedNetdevIsSeenInTheNextPoll) {
  TempDir tmp;
  CopyTree(Ib(), tmp);
  // Without the pkey child (ib0.8001 would sort before the new name and match the GUID too).
  tmp.Remove("devices/pci0000:00/0000:00:02.0/0000:17:00.0/net/ib0.8001");
  tmp.Remove("class/net/ib0.8001");
  SysfsReader reader(tmp.path());
  InventoryCache cache;
  Inventory first = DiscoverCached(reader, cache);
  const std::string old_name = Find(first, "mlx5_0")->ports[0].netdev;
  ASSERT_FALSE(old_name.empty());
  // udev renames an IPoIB netdev after it is created: the class/net link and the device's
  // net/<name> directory both change name.
  std::string link = tmp.path() + "/class/net/" + old_name;
  std::string target = fs::read_symlink(link);
  fs::path dir = fs::path(link).parent_path() / target;
  fs::rename(dir, dir.parent_path() / "ibp1s0");
  fs::remove(link);
  fs::create_symlink(fs::path(target).parent_path() / "ibp1s0", tmp.path() + "/class/net/ibp1s0");
  Inventory second = DiscoverCached(reader, cache);
  EXPECT_EQ(Find(second, "mlx5_0")->ports[0].netdev, "ibp1s0");
}

TEST(InventoryCache, ReRegisteredDeviceIsDiscoveredAfreshAndItsFilesReopened) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  SysfsReader reader(tmp.path());
  InventoryCache cache;
  Inventory first = DiscoverCached(reader, cache);
  std::string value;
  ASSERT_EQ(reader.ReadFile("class/infiniband/mlx5_0/ports/1/state", &value), 0);
  const uint64_t identity = Find(first, "mlx5_0")->identity;
  ASSERT_NE(identity, 0u);
  // A driver reload: new device directory (a port more) and a new class link. The new link is
  // made beside the old one and renamed over it, so it cannot reuse the old inode number.
  std::string link = tmp.path() + "/class/infiniband/mlx5_0";
  fs::path dir = fs::path(link).parent_path() / fs::read_symlink(link);
  fs::copy(dir, dir.string() + ".new",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::copy(dir.string() + ".new/ports/1", dir.string() + ".new/ports/2",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::ofstream(dir.string() + ".new/ports/1/state") << "1: DOWN\n";
  fs::remove_all(dir);
  fs::rename(dir.string() + ".new", dir);
  fs::create_symlink(fs::read_symlink(link), link + ".new");
  fs::rename(link + ".new", link);
  Inventory second = DiscoverCached(reader, cache);
  const DeviceInfo* device = Find(second, "mlx5_0");
  ASSERT_NE(device, nullptr);
  EXPECT_NE(device->identity, identity);
  EXPECT_EQ(device->ports.size(), 2u);
  // The cached descriptor of the old state file was closed: the new file is read.
  ASSERT_EQ(reader.ReadFile("class/infiniband/mlx5_0/ports/1/state", &value), 0);
  EXPECT_EQ(value, "1: DOWN\n");
}

TEST(InventoryCache, AddedAndRemovedDevicesAreSeenInTheNextPoll) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  SysfsReader reader(tmp.path());
  InventoryCache cache;
  ASSERT_EQ(Names(DiscoverCached(reader, cache)),
            (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  fs::rename(tmp.path() + "/class/infiniband/mlx5_1", tmp.path() + "/mlx5_1.link");
  EXPECT_EQ(Names(DiscoverCached(reader, cache)), (std::vector<std::string>{"mlx5_0", "mlx5_2"}));
  fs::rename(tmp.path() + "/mlx5_1.link", tmp.path() + "/class/infiniband/mlx5_1");
  Inventory back = DiscoverCached(reader, cache);
  EXPECT_EQ(Describe(back), Describe(Discover(reader)));
}

TEST(InventoryCache, UnlistableClassNetDiscoversAfreshEveryPoll) {
  UnlistableReader reader(Roce());
  reader.fail_path = "class/net";
  reader.fail_err = EACCES;
  InventoryCache cache;
  std::vector<DiscoveryError> errors;
  Inventory first = DiscoverInventory(reader, {}, &errors, &cache);
  Inventory second = DiscoverInventory(reader, {}, &errors, &cache);
  EXPECT_EQ(Describe(second), Describe(first));
  EXPECT_EQ(Describe(second), Describe(Discover(reader)));
}

}  // namespace
}  // namespace rdma_exporter::testing
