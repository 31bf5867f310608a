// Checks of the driver stack: the kernel modules, driver and firmware versions, and the RDMA
// devices the drivers made (or failed to make).
#include <algorithm>
#include <cstring>
#include <map>

#include "doctor_internal.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter::doctor {
namespace {

// The driver modules the devices need: mlx5_core and mlx5_ib for ConnectX, rdma_rxe for
// Soft-RoCE, the PCI driver of another vendor's HCA. With no device at all the ConnectX ones (the
// deployment guide's hardware), since a missing driver is then the first suspect.
std::vector<std::string> DriverModules(const NodeView& v) {
  std::vector<std::string> out;
  auto add = [&](const std::string& m) {
    if (!m.empty() && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  };
  for (const auto& d : v.inventory.devices)
    add(v.DriverOf(d));
  if (v.inventory.devices.empty()) add("mlx5_core");
  return out;
}

// Driver versions: "mlx5_core 24.10-1.1.4" (MLNX_OFED) or "mlx5_core in-tree (kernel ...)";
// a module whose version cannot be known is a WARN item.
std::vector<std::string> DriverVersions(NodeView& v, std::vector<Item>* items) {
  std::vector<std::string> drivers;
  if (v.inventory.devices.empty()) return drivers;
  bool have_modules = v.node.sysfs().Exists("module");
  std::string in_tree =
      v.env.kernel_release.empty() ? "in-tree" : "in-tree (kernel " + v.env.kernel_release + ")";
  for (const auto& module : DriverModules(v)) {
    std::string dir = JoinPath("module", module);
    std::string version;
    if (!have_modules) {
      items->push_back({module, Status::kSkip, NotChecked("version unknown, no /sys/module")});
    } else if (!v.node.sysfs().Exists(dir)) {
      items->push_back({module, Status::kWarn, "version unknown: module not loaded"});
    } else if (v.node.sysfs().ReadFile(JoinPath(dir, "version"), &version) == 0 &&
               !Trim(version).empty()) {
      // MLNX_OFED's (DOCA-OFED) modules carry their own version; in-tree ones follow the kernel.
      drivers.push_back(module + " " + std::string(Trim(version)));
    } else {
      drivers.push_back(module + " " + in_tree);
    }
  }
  return drivers;
}

// Whether a PCI function's netdev is a slave of a RoCE LAG port's bond: under LAG the second
// PF has no RDMA device of its own (mlx5_bond_N, on the first PF, serves both).
bool ServedByLag(NodeView& v, const std::string& function_dir) {
  std::vector<std::string> netdevs;
  if (v.node.sysfs().ListDir(JoinPath(function_dir, "net"), &netdevs) != 0) return false;
  for (const auto& d : v.inventory.devices) {
    for (const auto& p : d.ports) {
      for (const auto& slave : p.bond_slaves) {
        if (std::find(netdevs.begin(), netdevs.end(), slave) != netdevs.end()) return true;
      }
    }
  }
  return false;
}

// PCI functions of a Mellanox network PF without an RDMA device: what lspci shows and
// ibv_devices does not.
void FunctionsWithoutRdmaDevice(NodeView& v, std::vector<Item>* items) {
  // Bound to mlx5_core (or to no driver), without an RDMA device: mlx5_ib not loaded, or RDMA
  // disabled on the function. VFs (often given to VMs through vfio-pci) are not expected to have
  // one here, nor the PFs of a RoCE LAG other than the first.
  std::vector<std::string> functions;
  SysfsReader& sysfs = v.node.sysfs();
  if (sysfs.ListDir("bus/pci/devices", &functions) != 0) return;
  for (const auto& bdf : functions) {
    std::string dir = JoinPath("bus/pci/devices", bdf);
    std::string vendor, pci_class, target;
    if (sysfs.ReadFile(JoinPath(dir, "vendor"), &vendor) != 0 || Trim(vendor) != "0x15b3" ||
        sysfs.ReadFile(JoinPath(dir, "class"), &pci_class) != 0 ||
        Trim(pci_class).rfind("0x02", 0) != 0 || sysfs.Exists(JoinPath(dir, "physfn")) ||
        sysfs.Exists(JoinPath(dir, "infiniband")) || ServedByLag(v, dir)) {
      continue;
    }
    std::string driver;
    if (sysfs.ReadLink(JoinPath(dir, "driver"), &target) == 0) {
      driver = std::string(Basename(target));
    }
    if (!driver.empty() && driver != "mlx5_core") continue;
    items->push_back({bdf, Status::kFail,
                      "Mellanox network function without an RDMA device (" +
                          (driver.empty() ? std::string("no driver bound") : "mlx5_core bound") +
                          "): mlx5_ib not loaded, or RDMA disabled on it"});
  }
}

}  // namespace

Check KernelModules(NodeView& v) {
  struct Module {
    std::string name;
    Status missing;
    std::string why;
  };
  std::vector<Module> modules = {
      {"ib_core", Status::kFail, "the RDMA core"},
      {"ib_uverbs", Status::kFail, "user-space verbs for NCCL and perftest"},
      {"rdma_ucm", Status::kWarn, "librdmacm for perftest -R, UCX, rping"},
  };
  for (const auto& driver : DriverModules(v)) {
    if (driver == "mlx5_core") {
      modules.push_back({"mlx5_core", Status::kFail, "the ConnectX driver"});
      modules.push_back({"mlx5_ib", Status::kFail, "RDMA on ConnectX"});
    } else if (driver == "rdma_rxe") {
      modules.push_back({"rdma_rxe", Status::kFail, "Soft-RoCE"});
    } else {
      modules.push_back({driver, Status::kFail, "the HCA driver"});
    }
  }
  std::vector<Item> items;
  SysfsReader& sysfs = v.node.sysfs();
  if (!sysfs.Exists("module")) {
    // Every kernel has /sys/module; without it (a partial mount, a capture) nothing can be said.
    items.push_back({"/sys/module", Status::kSkip,
                     NotChecked("missing under --path.sysfs: cannot tell which modules are "
                                "loaded (is sysfs fully mounted?)")});
    return Finish("kernel_modules", std::move(items), "");
  }
  std::vector<std::string> loaded;
  for (const auto& m : modules) {
    // A loaded module, or a built-in one with parameters, has a directory here.
    if (sysfs.Exists(JoinPath("module", m.name))) {
      loaded.push_back(m.name);
      items.push_back({m.name, Status::kPass, "loaded"});
    } else {
      items.push_back({m.name, m.missing, "not loaded: " + m.why + " (modprobe " + m.name + ")"});
    }
  }
  return Finish("kernel_modules", std::move(items), Join(loaded) + " loaded");
}

Check DriverFirmware(NodeView& v) {
  std::vector<Item> items;
  std::vector<std::string> drivers = DriverVersions(v, &items);
  // firmware -> devices, per HCA type; devices of one type should run one firmware.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> by_type;
  std::vector<std::string> software;
  for (const auto& d : v.inventory.devices) {
    std::string fw = v.DeviceLabel(d, "fw_ver");
    std::string type = v.DeviceLabel(d, "hca_type");
    if (!Printable(type)) type = "";
    if (!fw.empty() && !Printable(fw)) {
      items.push_back({d.name, Status::kWarn, "malformed firmware version \"" + fw + "\""});
      continue;
    }
    if (fw.empty()) {
      if (d.has_pci_link) {
        items.push_back({d.name, Status::kWarn, "no firmware version reported (fw_ver)"});
      } else {
        software.push_back(d.name);
      }
      continue;
    }
    by_type[type][fw].push_back(d.name);
    items.push_back({d.name, Status::kPass, "fw " + fw});
  }
  std::vector<std::string> fw_parts;
  for (const auto& [type, versions] : by_type) {
    for (const auto& [fw, devices] : versions) {
      fw_parts.push_back((type.empty() ? "" : type + " ") + "fw " + fw + " (" + Join(devices) +
                         ")");
    }
    if (versions.size() > 1) {
      std::vector<std::string> list;
      for (const auto& [fw, devices] : versions)
        list.push_back(fw + " on " + Join(devices));
      items.push_back({type.empty() ? "firmware" : type, Status::kWarn,
                       "different firmware on one HCA type: " + Join(list, ", ")});
    }
  }
  if (!software.empty()) fw_parts.push_back(Join(software) + ": software device, no firmware");
  std::string summary = (drivers.empty() ? "" : "driver " + Join(drivers) + "; ") +
                        (!fw_parts.empty()             ? Join(fw_parts, "; ")
                         : v.inventory.devices.empty() ? "no devices"
                                                       : "no firmware versions");
  return Finish("driver_firmware", std::move(items), summary, true);
}

Check DevicesPresent(NodeView& v) {
  std::vector<Item> items;
  std::vector<std::string> list;
  size_t ports = 0;
  for (const auto& d : v.inventory.devices) {
    std::string type = v.DeviceLabel(d, "hca_type");
    std::string what = type.empty() ? (v.IsRxe(d) ? "rxe" : "") : type;
    if (!d.physfn.empty()) what += what.empty() ? "VF" : " VF";
    list.push_back(d.name + (what.empty() ? "" : " (" + what + ")"));
    ports += d.ports.size();
    if (d.ports.empty()) items.push_back({d.name, Status::kFail, "no ports"});
  }
  for (const auto& e : v.node.discovery_errors()) {
    items.push_back({JoinPath("/sys", e.path), Status::kFail,
                     std::string("unreadable: ") + std::strerror(e.err)});
  }
  // Skipped with device filters: the operator chose which devices matter.
  bool filtered = !v.options.device_include.empty() || !v.options.device_exclude.empty();
  if (!filtered) FunctionsWithoutRdmaDevice(v, &items);
  if (list.empty()) {
    items.push_back(
        {JoinPath(v.options.sysfs_root, "class/infiniband"), Status::kFail,
         std::string("no RDMA devices") + (filtered ? " (after the device filters)" : "")});
  }
  return Finish(
      "devices_present", std::move(items),
      std::to_string(list.size()) + " devices, " + std::to_string(ports) + " ports: " + Join(list));
}

}  // namespace rdma_exporter::doctor
