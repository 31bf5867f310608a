#include "pod_qps.h"

#include <unistd.h>

#include <cerrno>
#include <map>

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/pod_resources.h"

namespace rdma_exporter {
namespace {

// The initial PID namespace's inode number (PROC_PID_INIT_INO in the kernel, fixed since 3.8).
constexpr std::string_view kHostPidNamespace = "pid:[4026531836]";

// The PID namespace of this process, as /proc/self/ns/pid names it; empty when unreadable.
std::string OwnPidNamespace(const std::string& procfs_root) {
  char target[64];
  ssize_t n = readlink((procfs_root + "/self/ns/pid").c_str(), target, sizeof(target));
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

}  // namespace

bool PodQpsCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  RdmaNetlinkReader* nl = ctx.kernel() != nullptr ? ctx.kernel()->rdma_nl.get() : nullptr;
  if (nl == nullptr) return true;
  std::string pid_ns = OwnPidNamespace(procfs_root_);
  if (pid_ns != kHostPidNamespace) {
    if (!said_not_host_pid_ns_) {
      LogInfo(
          "not in the host PID namespace: the kernel hides other pods' QPs, so no "
          "rdma_pod_qps (deploy/kubernetes/overlays/pod-qps runs with hostPID)",
          {{"pid_namespace", pid_ns.empty() ? "unreadable" : pid_ns}});
      said_not_host_pid_ns_ = true;
    }
    return true;
  }
  said_not_host_pid_ns_ = false;

  std::map<uint32_t, std::string> pod_of_pid;  // read once per pid per collection
  for (const auto& device : inventory.devices) {
    std::vector<RdmaQpOwner> qps;
    if (int err = nl->ReadQps(device.name, &qps); err != 0) {
      ctx.ReadFailed("netlink:res_qp/" + device.name, err);
      continue;
    }
    std::map<std::pair<uint32_t, std::string>, uint64_t> counts;  // (port, pod uid) -> QPs
    for (const auto& qp : qps) {
      if (qp.pid == 0 || qp.port == 0) continue;  // kernel QPs; QPs not bound to a port yet
      auto [it, inserted] = pod_of_pid.try_emplace(qp.pid);
      if (inserted) {
        std::string text;
        const std::string file = procfs_root_ + "/" + std::to_string(qp.pid) + "/cgroup";
        int err = ReadWholeFile(file, &text);
        // ENOENT/ESRCH: the process exited after the dump; its QPs are gone too.
        if (err == 0) {
          it->second = PodUidFromCgroup(text);
        } else if (err != ENOENT && err != ESRCH) {
          ctx.ReadFailed(file, err);
        }
      }
      if (!it->second.empty()) ++counts[{qp.port, it->second}];
    }
    for (const auto& [key, count] : counts) {
      sink.Gauge(
          metric::kPodQps,
          "QPs on the port held by processes of a pod (by pod UID; join kube_pod_info on "
          "uid). From RDMA netlink RES_QP and each process's pod cgroup.",
          {{"device", device.name}, {"port", std::to_string(key.first)}, {"pod_uid", key.second}},
          static_cast<double>(count));
    }
  }
  return true;
}

}  // namespace rdma_exporter
