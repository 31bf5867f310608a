// doctor: the node checklist of the deployment guide (shared/seed) and the NCCL field guide, one
// PASS/WARN/FAIL line per check. Everything it knows about devices comes from the exporter's
// collectors (the same samples /metrics serves, roce_config's checks included); only the kernel
// modules, /dev/infiniband and the process limits are looked at directly.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ostream>
#include <set>
#include <thread>

#include "rdma_exporter/cli.h"
#include "rdma_exporter/counter_readers.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

enum class Status { kPass = 0, kWarn = 1, kFail = 2 };

const char* StatusName(Status s) {
  return s == Status::kPass ? "PASS" : s == Status::kWarn ? "WARN" : "FAIL";
}

struct Item {
  std::string subject;  // mlx5_0/1 (ens1f0np0), mlx5_0, ib_uverbs, node
  Status status;
  std::string reason;
};

struct Check {
  std::string name;
  Status status = Status::kPass;
  std::string reason;
  std::vector<Item> items;
};

// The check's status is its worst item's; the reason lists the FAIL then the WARN items (items
// with the same reason share one entry: "mlx5_0/1, mlx5_1/1: MTU 1500 < 4200"), or is `summary`
// when every item passes (or is appended when `keep_summary`: versions worth seeing anyway).
Check Finish(std::string name, std::vector<Item> items, const std::string& summary,
             bool keep_summary = false) {
  Check check{std::move(name), Status::kPass, "", std::move(items)};
  for (Status level : {Status::kFail, Status::kWarn}) {
    std::vector<std::pair<std::string, std::string>> groups;  // reason -> subjects
    for (const auto& item : check.items) {
      if (item.status != level) continue;
      check.status = std::max(check.status, level);
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const auto& g) { return g.first == item.reason; });
      if (it == groups.end()) {
        groups.emplace_back(item.reason, item.subject);
      } else {
        it->second += ", " + item.subject;
      }
    }
    for (const auto& [reason, subjects] : groups) {
      check.reason += (check.reason.empty() ? "" : "; ") + subjects + ": " + reason;
    }
  }
  if (check.reason.empty()) {
    check.reason = summary;
  } else if (keep_summary && !summary.empty()) {
    check.reason += "; " + summary;
  }
  return check;
}

// "1 port", "3 ports".
std::string Count(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep = ", ") {
  std::string out;
  for (const auto& p : parts)
    out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string Bytes(uint64_t b) {
  if (b >= (uint64_t{1} << 20)) return Number(static_cast<double>(b) / (1 << 20)) + " MiB";
  return Number(static_cast<double>(b) / 1024) + " KiB";
}

const char* PortStateName(double v) {
  static const char* kNames[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  int i = static_cast<int>(v);
  return i >= 0 && i <= 5 ? kNames[i] : "unknown";
}

const char* PhysStateName(double v) {
  static const char* kNames[] = {"?",
                                 "Sleep",
                                 "Polling",
                                 "Disabled",
                                 "PortConfigurationTraining",
                                 "LinkUp",
                                 "LinkErrorRecovery",
                                 "PhyTest"};
  int i = static_cast<int>(v);
  return i >= 1 && i <= 7 ? kNames[i] : "unknown";
}

// Firmware versions, HCA types: one word of printable ASCII.
bool Printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

using LabelMap = std::map<std::string, std::string>;

// Everything the checks look at.
struct NodeView {
  const CliOptions& options;
  const ProcessEnv& env;
  CliNode& node;
  const SampleIndex& now;     // the last collection
  const SampleIndex& before;  // the first one (== now when not sampled)
  double sample_seconds;      // 0: one collection
  std::string tc_origin;      // " (NCCL_IB_TC=106 from the environment)" or ""
  std::string tc_problem;     // why the environment's NCCL_IB_TC was not used

  const Inventory& inventory() const { return node.inventory(); }
  static LabelMap Port(const DeviceInfo& d, const PortInfo& p) {
    return {{"device", d.name}, {"port", std::to_string(p.number)}};
  }
  static std::string Subject(const DeviceInfo& d, const PortInfo& p) {
    return d.name + "/" + std::to_string(p.number) +
           (p.netdev.empty() ? "" : " (" + p.netdev + ")");
  }
  std::string DeviceLabel(const DeviceInfo& d, const char* label) const {
    const auto* s = now.Find("rdma_device_info", {{"device", d.name}});
    if (s == nullptr) return "";
    auto it = s->labels.find(label);
    if (it == s->labels.end()) return "";
    // An HCA type names groups of ports; a malformed one is no type.
    if (std::string_view(label) == "hca_type" && !Printable(it->second)) return "";
    return it->second;
  }
  static bool IsRoce(const PortInfo& p) { return p.link_layer == "Ethernet"; }
  // The kernel writes InfiniBand, Ethernet or Unknown; anything else is a bad read.
  static bool KnownLinkLayer(const PortInfo& p) {
    return p.link_layer == "InfiniBand" || p.link_layer == "Ethernet";
  }
  // Soft-RoCE: no PCI function, and rxe's `parent` attribute naming its netdev (systemd or
  // `rdma link add` may name the device anything).
  bool IsRxe(const DeviceInfo& d) const {
    return !d.has_pci_link &&
           (d.name.rfind("rxe", 0) == 0 || node.sysfs().Exists(JoinPath(d.dir, "parent")));
  }
  // The kernel module driving a device: the PCI function's driver link (mlx5_core), else
  // guessed from the PCI vendor (Mellanox 0x15b3: mlx5 unless named mlx4) or rxe's `parent`;
  // "" when unknown. Device names are not trusted alone (systemd renames HCAs).
  std::string DriverOf(const DeviceInfo& d) const {
    if (IsRxe(d)) return "rdma_rxe";
    if (!d.has_pci_link) return "";
    std::string target;
    if (node.sysfs().ReadLink(JoinPath(d.dir, "device/driver"), &target) == 0) {
      return std::string(Basename(target));
    }
    std::string vendor;
    if (node.sysfs().ReadFile(JoinPath(d.dir, "device/vendor"), &vendor) == 0 &&
        Trim(vendor) == "0x15b3") {
      return d.name.rfind("mlx4", 0) == 0 ? "mlx4_core" : "mlx5_core";
    }
    return d.name.rfind("mlx5", 0) == 0 ? "mlx5_core" : "";
  }
};

// Text as printed: bytes outside printable ASCII as \xNN (files may hold anything).
std::string Sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    }
  }
  return out;
}

// A label of a sample, "" when absent (collectors always set them; the doctor must not throw).
std::string LabelOf(const std::map<std::string, std::string>& labels, const char* name) {
  auto it = labels.find(name);
  return it == labels.end() ? std::string() : it->second;
}

// ---- process and node --------------------------------------------------------------------

// The driver modules the devices need: mlx5_core and mlx5_ib for ConnectX, rdma_rxe for
// Soft-RoCE, the PCI driver of another vendor's HCA. With no device at all the ConnectX ones (the
// deployment guide's hardware), since a missing driver is then the first suspect.
std::vector<std::string> DriverModules(const NodeView& v) {
  std::vector<std::string> out;
  auto add = [&](const std::string& m) {
    if (!m.empty() && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  };
  for (const auto& d : v.inventory().devices)
    add(v.DriverOf(d));
  if (v.inventory().devices.empty()) add("mlx5_core");
  return out;
}

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
    items.push_back({"/sys/module", Status::kWarn,
                     "missing under --path.sysfs: cannot tell which modules are loaded (is "
                     "sysfs fully mounted?)"});
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
  std::vector<std::string> drivers;
  bool have_modules = v.node.sysfs().Exists("module");
  std::string in_tree =
      v.env.kernel_release.empty() ? "in-tree" : "in-tree (kernel " + v.env.kernel_release + ")";
  for (const auto& module : DriverModules(v)) {
    if (v.inventory().devices.empty()) break;
    std::string dir = JoinPath("module", module);
    std::string version;
    if (!have_modules) {
      items.push_back({module, Status::kWarn, "version unknown: no /sys/module"});
    } else if (!v.node.sysfs().Exists(dir)) {
      items.push_back({module, Status::kWarn, "version unknown: module not loaded"});
    } else if (v.node.sysfs().ReadFile(JoinPath(dir, "version"), &version) == 0 &&
               !Trim(version).empty()) {
      // MLNX_OFED's (DOCA-OFED) modules carry their own version; in-tree ones follow the kernel.
      drivers.push_back(module + " " + std::string(Trim(version)));
    } else {
      drivers.push_back(module + " " + in_tree);
    }
  }
  // firmware -> devices, per HCA type; devices of one type should run one firmware.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> by_type;
  std::vector<std::string> software;
  for (const auto& d : v.inventory().devices) {
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
                        (!fw_parts.empty()               ? Join(fw_parts, "; ")
                         : v.inventory().devices.empty() ? "no devices"
                                                         : "no firmware versions");
  return Finish("driver_firmware", std::move(items), summary, true);
}

Check UverbsDevices(NodeView& v) {
  std::vector<Item> items;
  std::string dir = JoinPath(v.options.dev_root, "infiniband");
  std::vector<std::string> names;
  SysfsReader dev(v.options.dev_root);  // plain directory listing, not sysfs
  int err = dev.ListDir("infiniband", &names);
  std::vector<std::string> uverbs;
  for (const auto& n : names) {
    if (n.rfind("uverbs", 0) == 0) uverbs.push_back(n);
  }
  if (err != 0 || uverbs.empty()) {
    std::string what = err != 0 ? std::strerror(err) : "no uverbs* device nodes";
    items.push_back({dir, Status::kFail,
                     what + " (a container needs /dev/infiniband: the RDMA device plugin's "
                            "rdma/hca resource or a hostPath mount)"});
    return Finish("uverbs_devices", std::move(items), "");
  }
  std::vector<std::string> opened;
  for (const auto& n : uverbs) {
    std::string path = JoinPath(dir, n);
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
      items.push_back({path, Status::kFail, std::string("cannot open: ") + std::strerror(errno)});
      continue;
    }
    close(fd);
    opened.push_back(n);
  }
  // Which device each uverbs node belongs to (class/infiniband_verbs/uverbsN/ibdev).
  std::set<std::string> with_uverbs;
  std::vector<std::string> verbs_names;
  bool mapped = v.node.sysfs().ListDir("class/infiniband_verbs", &verbs_names) == 0;
  for (const auto& n : verbs_names) {
    std::string ibdev;
    if (n.rfind("uverbs", 0) == 0 &&
        v.node.sysfs().ReadFile(JoinPath(JoinPath("class/infiniband_verbs", n), "ibdev"), &ibdev) ==
            0 &&
        std::find(uverbs.begin(), uverbs.end(), n) != uverbs.end()) {
      with_uverbs.insert(std::string(Trim(ibdev)));
    }
  }
  size_t devices = v.inventory().devices.size();
  for (const auto& d : v.inventory().devices) {
    if (mapped && !with_uverbs.count(d.name)) {
      items.push_back({d.name, Status::kFail, "no uverbs device node in " + dir});
    }
  }
  if (!mapped && uverbs.size() < devices) {
    items.push_back({dir, Status::kWarn,
                     std::to_string(uverbs.size()) + " uverbs nodes for " +
                         std::to_string(devices) + " RDMA devices"});
  }
  std::string list = opened.size() > 4 ? Count(opened.size(), "uverbs device node") : Join(opened);
  return Finish("uverbs_devices", std::move(items),
                list + " present and openable" + (mapped ? " (one per device)" : ""));
}

Check Memlock(NodeView& v) {
  // ibv_reg_mr pins memory against RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK. NCCL
  // registers all its communication buffers; with the usual 64 KiB or 8 MiB default it fails
  // with ENOMEM ("unhandled system error", nccl-tests#206 at 8 MiB). UCX turns its IB transports
  // off below 512 MiB; NCCL's own guidance is unlimited.
  constexpr uint64_t kMinimum = uint64_t{512} << 20;
  std::vector<Item> items;
  const ProcessEnv& env = v.env;
  std::string limit = env.memlock_bytes ? Bytes(*env.memlock_bytes) : "unlimited";
  if (env.cap_ipc_lock) {
    return Finish("memlock", {},
                  "CAP_IPC_LOCK: the locked-memory limit (" + limit + ") does not apply");
  }
  if (!env.memlock_bytes) return Finish("memlock", {}, "RLIMIT_MEMLOCK unlimited");
  std::string fix =
      "set unlimited (ulimit -l unlimited, LimitMEMLOCK=infinity, or give the "
      "container IPC_LOCK)";
  if (*env.memlock_bytes < kMinimum) {
    items.push_back({"RLIMIT_MEMLOCK", Status::kFail,
                     limit +
                         " < 512 MiB: memory registration (ibv_reg_mr) fails with ENOMEM, "
                         "NCCL reports \"unhandled system error\"; " +
                         fix});
  } else {
    items.push_back({"RLIMIT_MEMLOCK", Status::kWarn,
                     limit + ": NCCL pins all its buffers and may need more; " + fix});
  }
  return Finish("memlock", std::move(items), "");
}

Check DevicesPresent(NodeView& v) {
  std::vector<Item> items;
  std::vector<std::string> list;
  size_t ports = 0;
  for (const auto& d : v.inventory().devices) {
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
  bool filtered = !v.options.device_include.empty() || !v.options.device_exclude.empty();
  // What lspci shows and ibv_devices does not: a Mellanox network function (PF) on the PCI bus,
  // bound to mlx5_core (or to no driver), without an RDMA device — mlx5_ib not loaded, or RDMA
  // disabled on the function. VFs (often given to VMs through vfio-pci) are not expected to have
  // one here. Skipped with device filters: the operator chose which devices matter.
  std::vector<std::string> functions;
  SysfsReader& sysfs = v.node.sysfs();
  if (!filtered && sysfs.ListDir("bus/pci/devices", &functions) == 0) {
    for (const auto& bdf : functions) {
      std::string dir = JoinPath("bus/pci/devices", bdf);
      std::string vendor, pci_class, target;
      if (sysfs.ReadFile(JoinPath(dir, "vendor"), &vendor) != 0 || Trim(vendor) != "0x15b3" ||
          sysfs.ReadFile(JoinPath(dir, "class"), &pci_class) != 0 ||
          Trim(pci_class).rfind("0x02", 0) != 0 || sysfs.Exists(JoinPath(dir, "physfn")) ||
          sysfs.Exists(JoinPath(dir, "infiniband"))) {
        continue;
      }
      std::string driver;
      if (sysfs.ReadLink(JoinPath(dir, "driver"), &target) == 0) {
        driver = std::string(Basename(target));
      }
      if (!driver.empty() && driver != "mlx5_core") continue;
      items.push_back({bdf, Status::kFail,
                       "Mellanox network function without an RDMA device (" +
                           (driver.empty() ? std::string("no driver bound") : "mlx5_core bound") +
                           "): mlx5_ib not loaded, or RDMA disabled on it"});
    }
  }
  if (list.empty()) {
    items.push_back(
        {JoinPath(v.options.sysfs_root, "class/infiniband"), Status::kFail,
         std::string("no RDMA devices") + (filtered ? " (after the device filters)" : "")});
  }
  return Finish(
      "devices_present", std::move(items),
      std::to_string(list.size()) + " devices, " + std::to_string(ports) + " ports: " + Join(list));
}

// ---- ports ---------------------------------------------------------------------------------

Check PortActive(NodeView& v) {
  std::vector<Item> items;
  size_t ok = 0;
  for (const auto& d : v.inventory().devices) {
    for (const auto& p : d.ports) {
      auto state = v.now.Value("rdma_port_state", NodeView::Port(d, p));
      auto phys = v.now.Value("rdma_port_physical_state", NodeView::Port(d, p));
      if (state && phys && *state == 4 && *phys == 5) {
        ++ok;
        items.push_back({NodeView::Subject(d, p), Status::kPass, "ACTIVE/LinkUp"});
        continue;
      }
      std::string s = state ? std::string("state ") + PortStateName(*state) : "state unreadable";
      std::string ph =
          phys ? std::string("phys_state ") + PhysStateName(*phys) : "phys_state unreadable";
      items.push_back({NodeView::Subject(d, p), Status::kFail, s + ", " + ph});
    }
  }
  return Finish("port_active", std::move(items),
                ok == 0 ? "no ports" : "all " + std::to_string(ok) + " ports ACTIVE/LinkUp");
}

Check LinkLayer(NodeView& v) {
  std::vector<Item> items;
  std::map<std::string, std::vector<std::string>> by_layer;
  for (const auto& d : v.inventory().devices) {
    for (const auto& p : d.ports) {
      std::string port = d.name + "/" + std::to_string(p.number);
      if (!NodeView::KnownLinkLayer(p)) {
        items.push_back({port, Status::kWarn,
                         p.link_layer.empty() ? "link_layer unreadable"
                                              : "link_layer \"" + p.link_layer + "\""});
        continue;
      }
      by_layer[p.link_layer == "Ethernet" ? "Ethernet (RoCE)" : p.link_layer].push_back(port);
      items.push_back({port, Status::kPass, p.link_layer});
    }
  }
  std::vector<std::string> parts;
  for (const auto& [layer, ports] : by_layer)
    parts.push_back(layer + ": " + Join(ports));
  if (by_layer.size() > 1) {
    items.push_back({"node", Status::kWarn,
                     "InfiniBand and RoCE ports mixed (" + Join(parts, "; ") +
                         "): one NCCL job cannot use both, set NCCL_IB_HCA to one kind"});
  }
  return Finish("link_layer", std::move(items), parts.empty() ? "no ports" : Join(parts, "; "));
}

std::string RateText(double bytes_per_second, double width) {
  return Number(bytes_per_second * 8 / 1e9) + " Gb/s " + Number(width) + "X";
}

Check PortRateUniform(NodeView& v) {
  // ACTIVE ports grouped by HCA type and link layer; each group should run one rate and width
  // (a downgraded port slows every NCCL ring through it).
  struct Entry {
    std::string subject;
    std::string rate;  // "400 Gb/s 4X"
    double speed;      // bytes per second, to break ties
  };
  std::map<std::string, std::vector<Entry>> groups;
  for (const auto& d : v.inventory().devices) {
    std::string type = v.DeviceLabel(d, "hca_type");
    if (type.empty()) type = v.IsRxe(d) ? "rxe" : "unknown HCA type";
    for (const auto& p : d.ports) {
      auto state = v.now.Value("rdma_port_state", NodeView::Port(d, p));
      auto rate = v.now.Value("rdma_port_rate_bytes_per_second", NodeView::Port(d, p));
      auto width = v.now.Value("rdma_port_link_width_lanes", NodeView::Port(d, p));
      if (!state || *state != 4 || !rate || !width) continue;  // port_active reports those
      groups[type + " " + p.link_layer].push_back(
          {d.name + "/" + std::to_string(p.number), RateText(*rate, *width), *rate});
    }
  }
  std::vector<Item> items;
  std::vector<std::string> parts;
  for (const auto& [group, entries] : groups) {
    // The reference is the most common rate; on a tie the fastest (a downgrade only slows).
    std::map<std::string, std::pair<size_t, double>> count;
    for (const auto& e : entries) {
      ++count[e.rate].first;
      count[e.rate].second = e.speed;
    }
    std::string common =
        std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        })->first;
    parts.push_back(group + ": " + Count(count[common].first, "port") + " at " + common);
    for (const auto& e : entries) {
      if (e.rate == common) {
        items.push_back({e.subject, Status::kPass, e.rate});
      } else {
        items.push_back(
            {e.subject, Status::kFail, e.rate + ", the other " + group + " ports run " + common});
      }
    }
  }
  return Finish("port_rate_uniform", std::move(items),
                parts.empty() ? "no ACTIVE ports to compare" : Join(parts, "; "));
}

Check PcieLink(NodeView& v) {
  std::vector<Item> items;
  std::vector<std::string> ok;
  for (const auto& d : v.inventory().devices) {
    auto get = [&](const char* family, const char* kind) {
      return v.now.Value(family, {{"device", d.name}, {"kind", kind}});
    };
    auto cur_speed = get("rdma_pcie_link_transfers_per_second", "current");
    auto max_speed = get("rdma_pcie_link_transfers_per_second", "max");
    auto cur_width = get("rdma_pcie_link_width_lanes", "current");
    auto max_width = get("rdma_pcie_link_width_lanes", "max");
    if (!cur_speed || !max_speed || !cur_width || !max_width) {
      // VFs report no link (Unknown / width 0), rxe has no PCI function; a PF must.
      if (d.has_pci_link && d.physfn.empty()) {
        items.push_back({d.name, Status::kWarn,
                         "PCIe link speed/width unreadable (current/max_link_speed, "
                         "current/max_link_width)"});
      }
      continue;
    }
    auto text = [](double speed, double width) {
      return Number(speed / 1e9) + " GT/s x" + Number(width);
    };
    std::string current = text(*cur_speed, *cur_width);
    if (*cur_speed < *max_speed || *cur_width < *max_width) {
      items.push_back({d.name + " (" + d.pci_address + ")", Status::kFail,
                       "PCIe " + current + ", capable of " + text(*max_speed, *max_width) +
                           " (downtrained: reseat or check the slot/riser)"});
    } else {
      items.push_back({d.name, Status::kPass, current});
      ok.push_back(d.name + " " + current);
    }
  }
  return Finish("pcie_link", std::move(items),
                ok.empty() ? "no device reports its PCIe link" : "at max: " + Join(ok));
}

// ---- RoCE configuration (roce_config, dcb, ecn, netdev collectors) ------------------------

// Ports whose link layer could not be read: the RoCE checks cannot tell whether they apply.
void UnknownLinkLayer(NodeView& v, std::vector<Item>* items) {
  for (const auto& d : v.inventory().devices) {
    for (const auto& p : d.ports) {
      if (!NodeView::KnownLinkLayer(p)) {
        items->push_back({NodeView::Subject(d, p), Status::kWarn,
                          "link layer unknown: cannot tell whether this is a RoCE port"});
      }
    }
  }
}

Check RoceV2Gid(NodeView& v) {
  std::vector<Item> items;
  UnknownLinkLayer(v, &items);
  size_t n = 0;
  for (const auto& d : v.inventory().devices) {
    for (const auto& p : d.ports) {
      if (!NodeView::IsRoce(p)) continue;
      ++n;
      LabelMap key = NodeView::Port(d, p);
      key["check"] = "roce_v2_gid_present";
      auto ok = v.now.Value("rdma_roce_config_ok", key);
      if (!ok) {
        items.push_back({NodeView::Subject(d, p), Status::kFail, "GID table unreadable"});
      } else if (*ok == 0) {
        items.push_back({NodeView::Subject(d, p), Status::kFail,
                         "no routable RoCE v2 GID: NCCL finds no GID to use; fix: give "
                         "the netdev an IP address (ip addr add ... dev <netdev>)"});
      } else {
        std::string where;
        for (const auto& g : v.now.All("rdma_gid_info")) {
          const auto& l = g.labels;
          if (LabelOf(l, "device") == d.name && LabelOf(l, "port") == key["port"] &&
              LabelOf(l, "gid_type") == "RoCE v2" && LabelOf(l, "gid").rfind("fe80", 0) != 0) {
            where = "index " + LabelOf(l, "index") + " " + LabelOf(l, "gid");
            break;
          }
        }
        items.push_back({NodeView::Subject(d, p), Status::kPass, "RoCE v2 GID " + where});
      }
    }
  }
  return Finish("roce_v2_gid", std::move(items),
                n == 0 ? "no RoCE ports"
                       : "a routable RoCE v2 GID on all " + std::to_string(n) + " RoCE ports");
}

Check NetdevMtu(NodeView& v) {
  std::vector<Item> items;
  UnknownLinkLayer(v, &items);
  unsigned min_mtu = v.options.collector_options.roce_min_mtu;
  size_t n = 0;
  for (const auto& d : v.inventory().devices) {
    for (const auto& p : d.ports) {
      if (!NodeView::IsRoce(p)) continue;
      ++n;
      auto mtu = v.now.Value("rdma_netdev_mtu_bytes", NodeView::Port(d, p));
      auto active = v.now.Value("rdma_port_active_mtu_bytes", NodeView::Port(d, p));
      std::string subject = NodeView::Subject(d, p);
      if (p.netdev.empty()) {
        items.push_back({subject, Status::kWarn, "no netdev found for this RoCE port"});
      } else if (!mtu) {
        items.push_back({subject, Status::kWarn, "netdev MTU unknown"});
      } else if (*mtu < min_mtu) {
        items.push_back({subject, Status::kFail,
                         "MTU " + Number(*mtu) + " < " + std::to_string(min_mtu) +
                             ": the RoCE path MTU cannot reach 4096; fix: ip link set dev "
                             "<netdev> mtu " +
                             std::to_string(min_mtu) + " (and the switch ports)"});
      } else if (active && *active < 4096) {
        items.push_back({subject, Status::kWarn,
                         "MTU " + Number(*mtu) + " but active path MTU " + Number(*active)});
      } else {
        items.push_back({subject, Status::kPass, "MTU " + Number(*mtu)});
      }
    }
  }
  return Finish("netdev_mtu", std::move(items),
                n == 0 ? "no RoCE ports"
                       : "MTU >= " + std::to_string(min_mtu) + " on all " + std::to_string(n) +
                             " RoCE netdevs");
}

// RoCE ports whose DCB lives on them (PFs); *why set for ports whose DCB cannot be checked.
struct DcbPort {
  const DeviceInfo* device;
  const PortInfo* port;
  LabelMap key;  // device, port, netdev
};

std::vector<DcbPort> DcbPorts(NodeView& v, std::vector<Item>* items) {
  std::vector<DcbPort> out;
  UnknownLinkLayer(v, items);
  std::set<std::string> seen;
  for (const auto& d : v.inventory().devices) {
    if (!d.physfn.empty()) continue;  // a VF's QoS is its PF's
    for (const auto& p : d.ports) {
      if (!NodeView::IsRoce(p)) continue;
      if (p.netdev.empty()) {
        items->push_back({NodeView::Subject(d, p), Status::kWarn,
                          "no netdev found for this RoCE port: its QoS cannot be read"});
        continue;
      }
      if (!seen.insert(p.netdev).second) continue;
      LabelMap key = {{"device", d.name}, {"port", std::to_string(p.number)}, {"netdev", p.netdev}};
      auto supported = v.now.Value("rdma_dcb_supported", key);
      if (!supported) {
        items->push_back({NodeView::Subject(d, p), Status::kWarn, "DCB not readable"});
      } else if (*supported == 0) {
        items->push_back({NodeView::Subject(d, p), Status::kWarn,
                          "the netdev has no DCB (not a lossless-capable NIC)"});
      } else {
        out.push_back({&d, &p, key});
      }
    }
  }
  return out;
}

std::string PriorityList(NodeView& v, const char* family, const LabelMap& key,
                         const LabelMap& extra = {}) {
  std::vector<std::string> on;
  for (int prio = 0; prio < 8; ++prio) {
    LabelMap k = key;
    k.insert(extra.begin(), extra.end());
    k["priority"] = std::to_string(prio);
    auto value = v.now.Value(family, k);
    if (value && *value == 1) on.push_back(std::to_string(prio));
  }
  return on.empty() ? "none" : Join(on, ",");
}

// The NCCL priority of a port (roce_config's rdma_nccl_priority), or a reason why not.
std::optional<int> NcclPriority(NodeView& v, const LabelMap& key, std::string* why) {
  if (!v.options.collector_options.nccl_ib_tc) {
    *why = v.tc_problem.empty()
               ? "give --nccl.ib-tc (the jobs' NCCL_IB_TC) to check the NCCL priority"
               : v.tc_problem;
    return std::nullopt;
  }
  auto prio = v.now.Value("rdma_nccl_priority", key);
  if (!prio) {
    *why = "NCCL priority unknown (PCP trust, or no DSCP entry for DSCP " +
           std::to_string(*v.options.collector_options.nccl_ib_tc >> 2) + ")";
    return std::nullopt;
  }
  return static_cast<int>(*prio);
}

// The PFC bitmap of mlnx_qos --pfc with only `prio` on: "0,0,0,1,0,0,0,0" for 3.
std::string PfcBitmap(int prio) {
  std::string out;
  for (int i = 0; i < 8; ++i)
    out += std::string(i == 0 ? "" : ",") + (i == prio ? "1" : "0");
  return out;
}

// How to put PFC on `prio` only: iproute2's dcb (any DCB-capable NIC), or MLNX_OFED's mlnx_qos.
std::string PfcFix(int prio) {
  std::string p = std::to_string(prio);
  return "fix: dcb pfc set dev <netdev> prio-pfc all:off " + p +
         ":on, or mlnx_qos -i <netdev> --pfc " + PfcBitmap(prio) + "; and the same on the switch";
}

Check Pfc(NodeView& v) {
  std::vector<Item> items;
  auto ports = DcbPorts(v, &items);
  for (const auto& dp : ports) {
    std::string subject = NodeView::Subject(*dp.device, *dp.port);
    std::string enabled = PriorityList(v, "rdma_pfc_enabled", dp.key);
    std::string why;
    auto prio = NcclPriority(v, dp.key, &why);
    if (!prio) {
      items.push_back({subject, Status::kWarn, "PFC on priorities " + enabled + "; " + why});
      continue;
    }
    LabelMap k = dp.key;
    k["priority"] = std::to_string(*prio);
    auto on = v.now.Value("rdma_pfc_enabled", k);
    std::string p = std::to_string(*prio);
    if (!on || *on != 1) {
      items.push_back({subject, Status::kFail,
                       "PFC off on NCCL priority " + p + " (PFC on: " + enabled +
                           "): RoCE drops packets under congestion; " + PfcFix(*prio)});
    } else if (enabled != p) {
      items.push_back({subject, Status::kWarn,
                       "PFC on priorities " + enabled + ", not only on NCCL priority " + p +
                           " (pauses spread to the other traffic); " + PfcFix(*prio)});
    } else {
      items.push_back({subject, Status::kPass, "PFC on priority " + p + " only"});
    }
  }
  size_t n = ports.size();
  return Finish("pfc", std::move(items),
                n == 0 ? "no RoCE PF ports"
                       : "PFC on the NCCL priority only on all " + std::to_string(n) +
                             " RoCE PF ports" + v.tc_origin);
}

Check TrustDscp(NodeView& v) {
  std::vector<Item> items;
  auto ports = DcbPorts(v, &items);
  for (const auto& dp : ports) {
    std::string subject = NodeView::Subject(*dp.device, *dp.port);
    LabelMap k = dp.key;
    k["mode"] = "dscp";
    if (v.now.Value("rdma_qos_trust_info", k)) {
      items.push_back({subject, Status::kPass, "trust dscp"});
      continue;
    }
    // Upstream mlx5 trusts DSCP as soon as the APP table has a DSCP entry: mapping the NCCL
    // DSCP to the priority PFC should protect is the generic fix. Which priority that is the
    // operator decides (under PCP trust the doctor cannot derive it).
    auto tc = v.options.collector_options.nccl_ib_tc;
    std::string dscp = tc ? std::to_string(*tc >> 2) : "<dscp>";
    items.push_back({subject, Status::kFail,
                     "trust pcp: the DSCP of NCCL_IB_TC does not select the priority; fix: "
                     "mlnx_qos -i <netdev> --trust dscp, or dcb app add dev <netdev> dscp-prio " +
                         dscp + ":<priority> (a DSCP entry switches mlx5 to DSCP trust)"});
  }
  size_t n = ports.size();
  return Finish(
      "trust_dscp", std::move(items),
      n == 0 ? "no RoCE PF ports" : "trust dscp on all " + std::to_string(n) + " RoCE PF ports");
}

Check Ecn(NodeView& v) {
  std::vector<Item> items;
  auto ports = DcbPorts(v, &items);
  for (const auto& dp : ports) {
    std::string subject = NodeView::Subject(*dp.device, *dp.port);
    std::string np = PriorityList(v, "rdma_ecn_enabled", dp.key, {{"role", "np"}});
    std::string rp = PriorityList(v, "rdma_ecn_enabled", dp.key, {{"role", "rp"}});
    if (!v.now.Find("rdma_ecn_enabled", dp.key)) {
      items.push_back({subject, Status::kWarn,
                       "no MLNX_OFED ecn/ files: ECN cannot be checked on this driver"});
      continue;
    }
    std::string why;
    auto prio = NcclPriority(v, dp.key, &why);
    if (!prio) {
      items.push_back(
          {subject, Status::kWarn, "ECN np on priorities " + np + ", rp on " + rp + "; " + why});
      continue;
    }
    std::string p = std::to_string(*prio);
    LabelMap k = dp.key;
    k["priority"] = p;
    k["role"] = "np";
    bool np_on = v.now.Value("rdma_ecn_enabled", k).value_or(0) == 1;
    k["role"] = "rp";
    bool rp_on = v.now.Value("rdma_ecn_enabled", k).value_or(0) == 1;
    if (np_on && rp_on) {
      items.push_back({subject, Status::kPass, "ECN np and rp on priority " + p});
    } else {
      std::string fix;
      for (const char* role : {"np", "rp"}) {
        if ((role[0] == 'n' ? np_on : rp_on)) continue;
        fix += std::string(fix.empty() ? "fix: " : " and ") + "echo 1 > /sys/class/net/<netdev>/" +
               "ecn/roce_" + role + "/enable/" + p;
      }
      items.push_back({subject, Status::kFail,
                       std::string("ECN ") + (np_on ? "" : "np ") +
                           (!np_on && !rp_on ? "and " : "") + (rp_on ? "" : "rp ") +
                           "off on NCCL priority " + p +
                           ": no DCQCN congestion control, PFC pauses instead; " + fix});
    }
  }
  size_t n = ports.size();
  return Finish("ecn", std::move(items),
                n == 0 ? "no RoCE PF ports"
                       : "ECN on the NCCL priority on all " + std::to_string(n) + " RoCE PF ports" +
                             v.tc_origin);
}

// ---- over the sampling window -------------------------------------------------------------

std::string LabelSuffix(const LabelMap& labels) {
  std::vector<std::string> extra;
  for (const auto& [name, value] : labels) {
    if (name != "device" && name != "port" && name != "netdev") extra.push_back(name + "=" + value);
  }
  return extra.empty() ? "" : "{" + Join(extra, ",") + "}";
}

std::string SubjectOf(const LabelMap& labels) {
  auto get = [&](const char* n) {
    auto it = labels.find(n);
    return it == labels.end() ? std::string() : it->second;
  };
  std::string s = get("device");
  if (!get("port").empty()) s += "/" + get("port");
  if (!get("netdev").empty()) s += " (" + get("netdev") + ")";
  return s;
}

// The subject of a sample: its port as the other checks name it ("mlx5_0/1 (ens1f0np0)"), or
// its device for device-level samples (PCIe).
std::string SubjectFor(const NodeView& v, const LabelMap& labels) {
  std::string device = LabelOf(labels, "device"), port = LabelOf(labels, "port");
  for (const auto& d : v.inventory().devices) {
    if (d.name != device) continue;
    for (const auto& p : d.ports) {
      if (std::to_string(p.number) == port) return NodeView::Subject(d, p);
    }
  }
  return SubjectOf(labels);
}

// Samples grouped by subject, in the order subjects first appear.
template <typename T>
class BySubject {
 public:
  T& operator[](const std::string& subject) {
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const auto& e) { return e.first == subject; });
    if (it != entries_.end()) return it->second;
    entries_.emplace_back(subject, T{});
    return entries_.back().second;
  }
  const std::vector<std::pair<std::string, T>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, T>> entries_;
};

Check PfcStorm(NodeView& v) {
  // One item per port: FAIL for pause-storm watchdog events during the sample or a priority
  // paused most of it, WARN for events only before the sample, PASS otherwise.
  struct Port {
    std::vector<std::string> recent, earlier, paused;
  };
  BySubject<Port> ports;
  for (const auto& s : v.now.All("rdma_pfc_storm_events_total")) {
    Port& port = ports[SubjectFor(v, s.labels)];
    double before = v.before.Value("rdma_pfc_storm_events_total", s.labels).value_or(s.value);
    std::string severity = LabelOf(s.labels, "severity");
    if (s.value > before) {
      port.recent.push_back(Number(s.value - before) + " " + severity);
    } else if (s.value > 0) {
      port.earlier.push_back(Number(s.value) + " " + severity);
    }
  }
  // A port paused most of the window is in a storm even before the watchdog counts one.
  if (v.sample_seconds > 0) {
    for (const auto& s : v.now.All("rdma_pfc_pause_duration_seconds_total")) {
      auto before = v.before.Value("rdma_pfc_pause_duration_seconds_total", s.labels);
      if (!before) continue;
      double share = (s.value - *before) / v.sample_seconds;
      if (share >= 0.5) {
        ports[SubjectFor(v, s.labels)].paused.push_back(
            "priority " + LabelOf(s.labels, "priority") + " " + LabelOf(s.labels, "direction") +
            " paused " + Number(std::min(100.0, std::round(share * 100))) + "%");
      }
    }
  }
  std::vector<Item> items;
  std::string window = "the last " + Number(v.sample_seconds) + " s";
  for (const auto& [subject, port] : ports.entries()) {
    if (!port.recent.empty() || !port.paused.empty()) {
      std::string reason;
      if (!port.recent.empty()) {
        reason = Join(port.recent, " and ") + " pause-storm events in " + window;
        if (!port.paused.empty()) reason += ", " + Join(port.paused) + " of it";
      } else {
        reason = Join(port.paused) + " of " + window;
      }
      items.push_back({subject, Status::kFail, reason});
    } else if (!port.earlier.empty()) {
      items.push_back(
          {subject, Status::kWarn,
           Join(port.earlier, " and ") + " pause-storm events since the driver loaded, " +
               (v.sample_seconds > 0 ? "none during the sample" : "not sampled (--sample=0)")});
    } else {
      items.push_back({subject, Status::kPass, "no pause-storm events"});
    }
  }
  size_t n = ports.entries().size();
  return Finish("pfc_storm", std::move(items),
                n == 0 ? "no pause-storm counters (mlx5 ethtool) on these ports"
                       : "no pause-storm events on " + Count(n, "port"));
}

Check ErrorCounters(NodeView& v) {
  // Counters whose rise means the link or a QP just broke: FAIL. The others rise now and then on
  // healthy fabrics (a symbol error, a retransmit): WARN, to be watched.
  static const std::vector<std::string> kFail = {
      "rdma_port_link_downed_total",      "rdma_hw_req_transport_retries_exceeded_total",
      "rdma_hw_retry_exceeded_err_total", "rdma_phy_link_down_events_total",
      "rdma_netdev_carrier_down_total",
  };
  static const std::vector<std::string> kWarn = {
      "rdma_port_symbol_errors_total",
      "rdma_port_link_error_recovery_total",
      "rdma_port_receive_errors_total",
      "rdma_port_receive_remote_physical_errors_total",
      "rdma_port_receive_switch_relay_errors_total",
      "rdma_port_transmit_discards_total",
      "rdma_port_transmit_constraint_errors_total",
      "rdma_port_receive_constraint_errors_total",
      "rdma_port_local_link_integrity_errors_total",
      "rdma_port_excessive_buffer_overrun_errors_total",
      "rdma_hw_local_ack_timeout_err_total",
      "rdma_hw_packet_seq_err_total",
      "rdma_hw_out_of_sequence_total",
      "rdma_hw_out_of_buffer_total",
      "rdma_hw_req_cqe_error_total",
      "rdma_hw_resp_cqe_error_total",
      "rdma_hw_rx_icrc_encapsulated_total",
      "rdma_hw_rcvd_seq_err_total",
      "rdma_hw_completer_retry_err_total",
      "rdma_netdev_receive_errors_total",
      "rdma_netdev_transmit_errors_total",
      "rdma_priority_discards_total",
      "rdma_pcie_aer_errors_total",
  };
  // Per port (or device): the counters that rose, and the saturated ones.
  struct Port {
    Status status = Status::kPass;
    std::vector<std::string> rose, saturated;
  };
  BySubject<Port> ports;
  size_t watched = 0;
  auto scan = [&](const std::string& family, Status level) {
    for (const auto& s : v.now.All(family)) {
      ++watched;
      if (v.sample_seconds <= 0) continue;
      auto before = v.before.Value(family, s.labels);
      if (!before || s.value <= *before) continue;
      std::string name = family;
      for (std::string_view prefix : {"rdma_port_", "rdma_hw_", "rdma_"}) {
        if (name.rfind(prefix, 0) == 0) {
          name = name.substr(prefix.size());
          break;
        }
      }
      name = name.substr(0, name.size() - 6);  // _total
      Status status = level;
      if (family == "rdma_pcie_aer_errors_total" && LabelOf(s.labels, "severity") == "fatal") {
        status = Status::kFail;
      }
      Port& port = ports[SubjectFor(v, s.labels)];
      port.status = std::max(port.status, status);
      port.rose.push_back(name + LabelSuffix(s.labels) + " +" + Number(s.value - *before));
    }
  };
  for (const auto& f : kFail)
    scan(f, Status::kFail);
  for (const auto& f : kWarn)
    scan(f, Status::kWarn);
  // A saturated PMA error counter cannot rise: the check is blind to it until it is cleared.
  // Data, packet and wait counters are not watched (and port_xmit_wait sits at all-ones on busy
  // ports), so their saturation is only shown by show-counters.
  for (const auto& s : v.now.All("rdma_port_counters_saturated")) {
    if (s.value != 1) continue;
    std::string counter = LabelOf(s.labels, "counter");
    const PmaCounterSpec* spec = FindPmaCounter(counter);
    if (spec == nullptr) continue;
    std::string metric(spec->metric);
    bool watched_error = std::find(kFail.begin(), kFail.end(), metric) != kFail.end() ||
                         std::find(kWarn.begin(), kWarn.end(), metric) != kWarn.end();
    if (!watched_error) continue;
    Port& port = ports[SubjectFor(v, s.labels)];
    port.status = std::max(port.status, Status::kWarn);
    port.saturated.push_back(counter);
  }
  std::vector<Item> items;
  for (const auto& [subject, port] : ports.entries()) {
    std::vector<std::string> parts;
    if (!port.rose.empty()) parts.push_back(Join(port.rose));
    if (!port.saturated.empty()) {
      parts.push_back(Join(port.saturated, " and ") +
                      " saturated (stuck at the all-ones value of their IBTA width, a rise "
                      "cannot be seen until cleared: perfquery -R on InfiniBand)");
    }
    items.push_back({subject, port.status, Join(parts, ", ")});
  }
  if (watched == 0 && !v.inventory().devices.empty()) {
    items.push_back({"node", Status::kWarn, "no error counter could be read"});
  }
  std::string summary = v.inventory().devices.empty() ? "no devices"
                        : v.sample_seconds > 0
                            ? "none of " + std::to_string(watched) + " error counters rose in " +
                                  Number(v.sample_seconds) + " s"
                            : "not sampled (--sample=0)";
  return Finish("error_counters", std::move(items), summary);
}

void PrintText(const std::vector<Check>& checks, std::ostream& out) {
  int counts[3] = {0, 0, 0};
  for (const auto& c : checks) {
    ++counts[static_cast<int>(c.status)];
    std::string name = c.name;
    if (name.size() < 18) name.resize(18, ' ');
    out << StatusName(c.status) << "  " << name << " " << Sanitize(c.reason) << "\n";
  }
  out << "doctor: " << checks.size() << " checks, " << counts[0] << " PASS, " << counts[1]
      << " WARN, " << counts[2] << " FAIL\n";
}

void PrintJson(const std::vector<Check>& checks, std::ostream& out) {
  int counts[3] = {0, 0, 0};
  out << "{\"checks\":[";
  for (size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i];
    ++counts[static_cast<int>(c.status)];
    out << (i == 0 ? "" : ",") << "\n  {\"check\":" << JsonString(c.name)
        << ",\"status\":" << JsonString(StatusName(c.status))
        << ",\"reason\":" << JsonString(Sanitize(c.reason)) << ",\"items\":[";
    for (size_t j = 0; j < c.items.size(); ++j) {
      const auto& item = c.items[j];
      out << (j == 0 ? "" : ",") << "{\"subject\":" << JsonString(Sanitize(item.subject))
          << ",\"status\":" << JsonString(StatusName(item.status))
          << ",\"reason\":" << JsonString(Sanitize(item.reason)) << "}";
    }
    out << "]}";
  }
  out << "\n],\"pass\":" << counts[0] << ",\"warn\":" << counts[1] << ",\"fail\":" << counts[2]
      << "}\n";
}

}  // namespace

int Doctor(const CliOptions& given, const ProcessEnv& env, std::ostream& out, std::ostream& err) {
  // Without --nccl.ib-tc, the environment's NCCL_IB_TC (an init container or a debug shell in
  // the job's pod has the job's).
  CliOptions options = given;
  std::string tc_origin, tc_problem;
  if (!options.collector_options.nccl_ib_tc && env.nccl_ib_tc) {
    const std::string& text = *env.nccl_ib_tc;
    unsigned tc = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), tc);
    if (ec == std::errc() && ptr == text.data() + text.size() && tc <= 255) {
      options.collector_options.nccl_ib_tc = static_cast<int>(tc);
      tc_origin = " (NCCL_IB_TC=" + text + " from the environment)";
    } else {
      tc_problem =
          "NCCL_IB_TC=\"" + text + "\" of the environment is not 0..255; give --nccl.ib-tc";
    }
  }
  CliNode node(options);
  if (!node.Discover(err)) return 1;
  auto collectors =
      node.MakeCollectors({"device", "port", "counters", "hw_counters", "pcie", "gid", "netdev",
                           "ethtool", "dcb", "ecn", "roce_config", "verbs"});
  SampleIndex before(node.Collect(collectors));
  double sample = 0;
  std::optional<SampleIndex> after;
  if (options.sample_seconds > 0 && !node.inventory().devices.empty()) {
    auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(options.sample_seconds));
    after.emplace(node.Collect(collectors));
    sample = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Reported rounded: the window is what was asked for, give or take the collection.
    sample = std::round(sample * 10) / 10;
  }
  NodeView view{options, env, node, after ? *after : before, before, sample, tc_origin, tc_problem};
  using CheckFn = Check (*)(NodeView&);
  static const std::pair<const char*, CheckFn> kChecks[] = {
      {"kernel_modules", KernelModules},
      {"driver_firmware", DriverFirmware},
      {"uverbs_devices", UverbsDevices},
      {"memlock", Memlock},
      {"devices_present", DevicesPresent},
      {"port_active", PortActive},
      {"link_layer", LinkLayer},
      {"port_rate_uniform", PortRateUniform},
      {"pcie_link", PcieLink},
      {"roce_v2_gid", RoceV2Gid},
      {"netdev_mtu", NetdevMtu},
      {"pfc", Pfc},
      {"trust_dscp", TrustDscp},
      {"ecn", Ecn},
      {"pfc_storm", PfcStorm},
      {"error_counters", ErrorCounters},
  };
  std::vector<Check> checks;
  for (const auto& [name, fn] : kChecks) {
    try {
      checks.push_back(fn(view));
    } catch (const std::exception& e) {
      // A check never takes the others down: whatever it tripped on is its reason.
      checks.push_back(Check{name, Status::kFail, std::string("check failed: ") + e.what(), {}});
    }
  }
  if (options.json) {
    PrintJson(checks, out);
  } else {
    PrintText(checks, out);
  }
  for (const auto& c : checks) {
    if (c.status == Status::kFail) return 1;
  }
  return 0;
}

}  // namespace rdma_exporter
