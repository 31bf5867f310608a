// Inventory: the RDMA devices and ports of this node, discovered from sysfs.
//
// Rebuilt on every poll from the /sys/class/infiniband listing, so devices that appear or vanish
// are seen within one poll. With an InventoryCache an unchanged node costs two directory
// listings per poll (class/infiniband and class/net) and one read per RoCE LAG port; without one
// every device and port is discovered afresh. The device include/exclude filters are applied to
// the directory listing, before any file of an excluded device is opened.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "rdma_exporter/sysfs_reader.h"

namespace rdma_exporter {

struct PortInfo {
  unsigned number = 0;
  std::string dir;         // sysfs path of ports/<N>, relative to the sysfs root
  std::string link_layer;  // "InfiniBand", "Ethernet" or "" if unreadable
  std::string netdev;      // ibdev2netdev logic; empty when none
  // RoCE LAG (mlx5_bond_0 on bond0): the port's netdev is a bond, which has no ethtool
  // statistics, DCB or ECN of its own; these are its slaves (lower netdevs), in kernel order,
  // which do. Empty when the netdev is not an upper device.
  std::vector<std::string> bond_slaves;
  // The netdev is an upper device (a bond, or a virtual netdev with lower netdevs when it was
  // discovered): its lower netdevs are read again every poll.
  bool netdev_is_upper = false;
};

// A netdev holding a port's physical-port state (ethtool statistics, DCB, ECN): the port's own
// netdev, or on a RoCE LAG port each slave of its bond.
struct PhysicalNetdev {
  std::string name;
  std::string bond;  // the port's netdev when `name` is one of its slaves, else empty
};
// The port's physical netdevs: its bond's slaves, or its netdev; none when it has no netdev.
std::vector<PhysicalNetdev> PhysicalNetdevs(const PortInfo& port);

struct DeviceInfo {
  std::string name;         // mlx5_0
  std::string dir;          // class/infiniband/mlx5_0
  std::string pci_address;  // 0000:3b:00.0, empty without a device/ link (rxe, SFs)
  std::string physfn;       // parent PF's PCI address for an SR-IOV VF, else empty
  bool has_pci_link = false;
  bool has_hca_type = false;  // mlx5 (and mlx4): hw q-counters are 32-bit firmware values
  // Inode of class/infiniband/<name>: a re-registered device (driver reload, `rdma link
  // add` after delete) has a new one.
  uint64_t identity = 0;
  std::vector<PortInfo> ports;
};

struct DeviceFilter {
  std::optional<std::regex> include;
  std::optional<std::regex> exclude;
  bool Accepts(const std::string& device) const;
};

struct Inventory {
  std::vector<DeviceInfo> devices;
};

// Discovers all devices. A device whose directory cannot be listed is skipped (and reported
// through *errors as "<path>: <errno>" pairs so the caller can count them).
struct DiscoveryError {
  std::string path;
  int err = 0;
};
// What discovery found in the previous poll, kept by the poller. A device's ports, links and
// netdev are reused while its identity (class/infiniband inode) and the class/net listing
// (names and inodes: netdevs created, removed or renamed) are unchanged; a RoCE LAG port's
// bond slaves are re-read every poll (enslaving changes neither listing). A device whose
// identity changed has its cached files closed (SysfsReader::CloseUnder) before it is read.
class InventoryCache {
 private:
  friend Inventory DiscoverInventory(SysfsReader&, const DeviceFilter&,
                                     std::vector<DiscoveryError>*, InventoryCache*);
  std::vector<SysfsReader::DirEntry> netdevs_;
  bool netdevs_known_ = false;
  std::vector<DeviceInfo> devices_;  // sorted by name, as the listing
};

Inventory DiscoverInventory(SysfsReader& sysfs, const DeviceFilter& filter,
                            std::vector<DiscoveryError>* errors, InventoryCache* cache = nullptr);

// The netdev of a port, by the logic of Mellanox's ibdev2netdev: RoCE ports name it in
// gid_attrs/ndevs/0; rxe names it in the device's `parent` file; IPoIB netdevs are matched by
// the port GID's GUID against the last 8 bytes of the netdev's 20-byte hardware address.
std::string FindNetdev(SysfsReader& sysfs, const DeviceInfo& device, const PortInfo& port);

// The lower netdevs of an upper netdev (a bond or team, as in RoCE LAG): the bonding driver's
// class/net/<netdev>/bonding/slaves (space-separated, kernel order), else the netdev's
// lower_<name> links (created for every upper device by net/core/dev.c). Empty for a netdev
// without lower netdevs. Discovery asks only for netdevs without a `device` link (a PCI
// function's own netdev is never an upper device). Read errors other than ENOENT are appended
// to *errors.
std::vector<std::string> ReadLowerNetdevs(SysfsReader& sysfs, const std::string& netdev,
                                          std::vector<DiscoveryError>* errors);

}  // namespace rdma_exporter
