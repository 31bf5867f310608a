// Checks of what this process (a container, a job's init container) can use of the devices: the
// /dev/infiniband nodes verbs opens, and the locked memory verbs pins.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "doctor_internal.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter::doctor {
namespace {

// The devices that have a uverbs node among `uverbs` (class/infiniband_verbs/uverbsN/ibdev);
// nullopt when class/infiniband_verbs cannot be listed.
std::optional<std::set<std::string>> DevicesWithUverbs(NodeView& v,
                                                       const std::vector<std::string>& uverbs) {
  std::vector<std::string> verbs_names;
  if (v.node.sysfs().ListDir("class/infiniband_verbs", &verbs_names) != 0) return std::nullopt;
  std::set<std::string> with_uverbs;
  for (const auto& n : verbs_names) {
    std::string ibdev;
    if (n.rfind("uverbs", 0) == 0 &&
        v.node.sysfs().ReadFile(JoinPath(JoinPath("class/infiniband_verbs", n), "ibdev"), &ibdev) ==
            0 &&
        std::find(uverbs.begin(), uverbs.end(), n) != uverbs.end()) {
      with_uverbs.insert(std::string(Trim(ibdev)));
    }
  }
  return with_uverbs;
}

}  // namespace

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
  auto with_uverbs = DevicesWithUverbs(v, uverbs);
  size_t devices = v.inventory.devices.size();
  for (const auto& d : v.inventory.devices) {
    if (with_uverbs && !with_uverbs->count(d.name)) {
      items.push_back({d.name, Status::kFail, "no uverbs device node in " + dir});
    }
  }
  if (!with_uverbs && uverbs.size() < devices) {
    items.push_back({dir, Status::kWarn,
                     std::to_string(uverbs.size()) + " uverbs nodes for " +
                         std::to_string(devices) + " RDMA devices"});
  }
  std::string list = opened.size() > 4 ? Count(opened.size(), "uverbs device node") : Join(opened);
  return Finish("uverbs_devices", std::move(items),
                list + " present and openable" + (with_uverbs ? " (one per device)" : ""));
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

}  // namespace rdma_exporter::doctor
