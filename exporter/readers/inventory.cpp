#include "rdma_exporter/inventory.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <optional>

#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

// Hex digits of s without separators, lower-cased.
std::string HexDigits(std::string_view s) {
  std::string out;
  for (char c : Trim(s)) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
      out.push_back(c);
    } else if (c >= 'A' && c <= 'F') {
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    }
  }
  return out;
}

// The netdevs that may belong to a device: those of its PCI function when it has one,
// otherwise every netdev of the host.
std::string NetdevDir(const DeviceInfo& device) {
  return device.has_pci_link ? JoinPath(device.dir, "device/net") : std::string("class/net");
}

std::string FindIpoibNetdev(SysfsReader& sysfs, const DeviceInfo& device, const PortInfo& port) {
  std::string gid;
  if (sysfs.ReadFile(JoinPath(port.dir, "gids/0"), &gid) != 0 || !IsValidGid(gid) ||
      IsEmptyGid(gid)) {
    return "";
  }
  std::string guid = HexDigits(gid).substr(16);  // interface ID: the last 8 bytes
  std::string base = NetdevDir(device);
  std::vector<std::string> names;
  if (sysfs.ListDir(base, &names) != 0) return "";
  for (const auto& name : names) {
    std::string address;
    if (sysfs.ReadFile(JoinPath(JoinPath(base, name), "address"), &address) != 0) continue;
    std::string hex = HexDigits(address);
    // IPoIB hardware addresses are 20 bytes: 4 bytes QPN/flags, then the 16-byte port GID.
    if (hex.size() == 40 && hex.compare(24, 16, guid) == 0) return name;
  }
  return "";
}

std::string FindEthernetNetdev(SysfsReader& sysfs, const DeviceInfo& device, const PortInfo& port) {
  std::string value;
  // RoCE: the netdev of the default GID. EINVAL when the entry has no netdev.
  if (sysfs.ReadFile(JoinPath(port.dir, "gid_attrs/ndevs/0"), &value) == 0 &&
      !Trim(value).empty()) {
    return std::string(Trim(value));
  }
  // rxe: the netdev it was created on.
  if (sysfs.ReadFile(JoinPath(device.dir, "parent"), &value) == 0 && !Trim(value).empty()) {
    return std::string(Trim(value));
  }
  if (!device.has_pci_link) return "";
  // Last resort: the PCI function's netdev whose dev_port matches (dev_port is 0-based).
  std::string base = NetdevDir(device);
  std::vector<std::string> names;
  if (sysfs.ListDir(base, &names) != 0) return "";
  if (names.size() == 1) return names[0];
  for (const auto& name : names) {
    if (sysfs.ReadFile(JoinPath(JoinPath(base, name), "dev_port"), &value) != 0) continue;
    auto dev_port = ParseU64(value);
    if (dev_port && *dev_port + 1 == port.number) return name;
  }
  return "";
}

// The lower_<name> links of an upper netdev, in directory (name) order.
int ListLowerLinks(SysfsReader& sysfs, const std::string& dir, std::vector<std::string>* lowers) {
  std::vector<std::string> names;
  int err = sysfs.ListDir(dir, &names);
  if (err != 0) return err;
  constexpr std::string_view kLower = "lower_";
  for (const auto& name : names) {
    if (name.size() > kLower.size() && name.compare(0, kLower.size(), kLower) == 0) {
      lowers->push_back(name.substr(kLower.size()));
    }
  }
  return 0;
}

}  // namespace

std::vector<PhysicalNetdev> PhysicalNetdevs(const PortInfo& port) {
  std::vector<PhysicalNetdev> out;
  if (port.netdev.empty()) return out;
  if (port.bond_slaves.empty()) {
    out.push_back({port.netdev, ""});
    return out;
  }
  for (const auto& slave : port.bond_slaves)
    out.push_back({slave, port.netdev});
  return out;
}

std::vector<std::string> ReadLowerNetdevs(SysfsReader& sysfs, const std::string& netdev,
                                          std::vector<DiscoveryError>* errors) {
  std::vector<std::string> slaves;
  const std::string dir = JoinPath("class/net", netdev);
  std::string text;
  const std::string slaves_file = JoinPath(dir, "bonding/slaves");
  int err = sysfs.ReadFile(slaves_file, &text);
  if (err == 0) {
    // bond_sysfs.c prints "<slave> " per slave with the last space turned into a newline, and
    // "++more++" when a page cannot hold them all.
    for (std::string_view rest = text; !(rest = Trim(rest)).empty();) {
      size_t end = rest.find_first_of(" \t\n");
      std::string_view name = rest.substr(0, end);
      if (name != "++more++") slaves.emplace_back(name);
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end);
    }
    return slaves;
  }
  if (err != ENOENT) {
    errors->push_back({slaves_file, err});
    return slaves;
  }
  // Not a bond (a team, or a bond whose bonding/ group is missing): any upper device's lowers.
  err = ListLowerLinks(sysfs, dir, &slaves);
  if (err != 0 && err != ENOENT) errors->push_back({dir, err});
  return slaves;
}

bool DeviceFilter::Accepts(const std::string& device) const {
  if (include && !std::regex_match(device, *include)) return false;
  if (exclude && std::regex_match(device, *exclude)) return false;
  return true;
}

std::string FindNetdev(SysfsReader& sysfs, const DeviceInfo& device, const PortInfo& port) {
  if (port.link_layer == "InfiniBand") return FindIpoibNetdev(sysfs, device, port);
  return FindEthernetNetdev(sysfs, device, port);
}

namespace {

// Discovers one device afresh; nullopt when it vanished while being read.
std::optional<DeviceInfo> DiscoverDevice(SysfsReader& sysfs, const SysfsReader::DirEntry& entry,
                                         std::vector<DiscoveryError>* errors) {
  DeviceInfo device;
  device.name = entry.name;
  device.identity = entry.inode;
  device.dir = JoinPath("class/infiniband", entry.name);
  std::string target;
  if (sysfs.ReadAttributeLink(JoinPath(device.dir, "device"), &target) == 0) {
    device.has_pci_link = true;
    device.pci_address = std::string(Basename(target));
    if (sysfs.ReadAttributeLink(JoinPath(device.dir, "device/physfn"), &target) == 0) {
      device.physfn = std::string(Basename(target));
    }
  }
  device.has_hca_type = sysfs.AttributeExists(JoinPath(device.dir, "hca_type"));

  std::vector<std::string> ports;
  std::string ports_dir = JoinPath(device.dir, "ports");
  int err = sysfs.ListDir(ports_dir, &ports);
  if (err != 0) {
    if (err == ENOENT && !sysfs.Exists(device.dir)) return std::nullopt;  // vanished
    errors->push_back({ports_dir, err});
  }
  for (const auto& p : ports) {
    unsigned number = 0;
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), number);
    if (ec != std::errc() || ptr != p.data() + p.size()) continue;
    PortInfo port;
    port.number = number;
    port.dir = JoinPath(ports_dir, p);
    std::string link_layer;
    if (sysfs.ReadFile(JoinPath(port.dir, "link_layer"), &link_layer) == 0) {
      port.link_layer = std::string(Trim(link_layer));
    }
    device.ports.push_back(std::move(port));
  }
  std::sort(device.ports.begin(), device.ports.end(),
            [](const PortInfo& a, const PortInfo& b) { return a.number < b.number; });
  for (auto& port : device.ports) {
    port.netdev = FindNetdev(sysfs, device, port);
    if (port.link_layer == "Ethernet" && !port.netdev.empty()) {
      const std::string dir = JoinPath("class/net", port.netdev);
      if (sysfs.Exists(JoinPath(dir, "device"))) continue;  // a PCI function's own netdev
      port.bond_slaves = ReadLowerNetdevs(sysfs, port.netdev, errors);
      // A team that has no ports yet is missed until the next netdev change: rare next to
      // listing every virtual netdev (rxe on a veth) each poll.
      port.netdev_is_upper = !port.bond_slaves.empty() || sysfs.Exists(JoinPath(dir, "bonding"));
    }
  }
  return device;
}

}  // namespace

Inventory DiscoverInventory(SysfsReader& sysfs, const DeviceFilter& filter,
                            std::vector<DiscoveryError>* errors, InventoryCache* cache) {
  Inventory inventory;
  std::vector<DeviceInfo> previous;
  if (cache != nullptr) previous = std::move(cache->devices_);
  std::vector<SysfsReader::DirEntry> entries;
  int err = sysfs.ListDirEntries("class/infiniband", &entries);
  if (err != 0) {
    // No RDMA stack loaded is a valid state (ENOENT): an empty inventory, not an error.
    if (err != ENOENT) errors->push_back({"class/infiniband", err});
    return inventory;
  }
  bool netdevs_unchanged = false;
  if (cache != nullptr) {
    std::vector<SysfsReader::DirEntry> netdevs;
    err = sysfs.ListDirEntries("class/net", &netdevs);
    // No class/net is as stable as a listing; other failures discover every device afresh.
    bool known = err == 0 || err == ENOENT;
    netdevs_unchanged = known && cache->netdevs_known_ && netdevs == cache->netdevs_;
    cache->netdevs_ = std::move(netdevs);
    cache->netdevs_known_ = known;
  }
  auto prev = previous.begin();  // both sorted by name
  for (const auto& entry : entries) {
    // The filter runs before any file of the device is touched.
    if (!filter.Accepts(entry.name)) continue;
    while (prev != previous.end() && prev->name < entry.name)
      ++prev;
    DeviceInfo* known = prev != previous.end() && prev->name == entry.name ? &*prev : nullptr;
    if (known != nullptr && known->identity != entry.inode) {
      // Re-registered under the same name: its cached descriptors read the old object.
      sysfs.CloseUnder(JoinPath("class/infiniband", entry.name) + "/");
      known = nullptr;
    }
    if (known != nullptr && netdevs_unchanged) {
      for (auto& port : known->ports) {
        if (port.netdev_is_upper) port.bond_slaves = ReadLowerNetdevs(sysfs, port.netdev, errors);
      }
      inventory.devices.push_back(std::move(*known));
    } else if (auto device = DiscoverDevice(sysfs, entry, errors)) {
      inventory.devices.push_back(std::move(*device));
    }
  }
  if (cache != nullptr) cache->devices_ = inventory.devices;
  return inventory;
}

}  // namespace rdma_exporter
