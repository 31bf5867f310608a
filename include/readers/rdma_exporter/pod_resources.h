// Which pods hold which devices: the kubelet's pod-resources API (gRPC v1.PodResourcesLister/List
// on a unix socket), polled on a thread of its own so a slow or hung kubelet never delays a poll
// or a scrape, and the RDMA shared device plugin's configuration (which HCAs a resource covers).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace rdma_exporter {

// The devices of one extended resource given to one container.
struct ContainerDeviceGrant {
  std::string pod_namespace;
  std::string pod;
  std::string container;
  std::string resource;                 // "nvidia.com/gpu", "rdma/hca", "nvidia.com/sriov_rdma"
  std::vector<std::string> device_ids;  // GPU UUIDs, VF PCI addresses, opaque shared IDs
};

// One kubelet connection. The gRPC channel is created on the first call and kept (it reconnects
// by itself after a kubelet restart). Not thread-safe: one caller.
class PodResourcesClient {
 public:
  PodResourcesClient(std::string socket_path, std::chrono::milliseconds deadline,
                     int max_response_bytes);
  ~PodResourcesClient();
  PodResourcesClient(const PodResourcesClient&) = delete;
  PodResourcesClient& operator=(const PodResourcesClient&) = delete;

  // Every container's device grants (containers without devices left out). On failure returns
  // false and sets *reason (snake_case status: "deadline_exceeded", "unavailable",
  // "resource_exhausted", ...) and *detail (gRPC's message).
  bool List(std::vector<ContainerDeviceGrant>* out, std::string* reason, std::string* detail);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Polls a PodResourcesClient every interval on its own thread, started by Start(). A missing
// socket means "not a Kubernetes node, or the kubelet is not up yet": checked again each
// interval, logged once.
class PodResourcesWatcher {
 public:
  struct Options {
    std::string socket_path;
    std::chrono::milliseconds interval{10000};
    std::chrono::milliseconds deadline{2000};
    // A larger reply fails with "resource_exhausted": memory stays bounded whatever the kubelet
    // (or whatever listens on its socket) sends.
    int max_response_bytes = 4 << 20;
  };
  enum class Status { kStarting, kNoSocket, kOk, kFailed };
  struct State {
    Status status = Status::kStarting;
    std::vector<ContainerDeviceGrant> grants;  // of the last successful List; empty otherwise
    uint64_t failures = 0;                     // failed List calls since start
    std::string last_failure_reason;
    uint64_t generation = 0;  // incremented by every List attempt and socket check
  };

  explicit PodResourcesWatcher(Options options);
  ~PodResourcesWatcher();  // stops the thread (waits at most for one deadline)
  PodResourcesWatcher(const PodResourcesWatcher&) = delete;
  PodResourcesWatcher& operator=(const PodResourcesWatcher&) = delete;

  void Start();  // idempotent
  std::shared_ptr<const State> Latest() const;

 private:
  void Run();
  Options options_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::shared_ptr<const State> state_;
  std::thread thread_;
};

// One resource of the RDMA shared device plugin's config.json: "<prefix>/<resourceName>" and
// the selectors that decide which HCAs it covers.
struct SharedDevicePool {
  std::string resource;  // with its prefix: "rdma/hca_shared_devices_a"
  std::vector<std::string> vendors, device_ids, drivers, if_names, link_types;
};
// nullopt and *error set when the text is not such a configuration.
std::optional<std::vector<SharedDevicePool>> ParseSharedDevicePluginConfig(std::string_view json,
                                                                           std::string* error);

// What the plugin's selectors look at, for one RDMA device.
struct HcaSelectorFacts {
  std::string vendor;     // "15b3" (sysfs device/vendor without 0x)
  std::string device_id;  // "101b"
  std::string driver;     // "mlx5_core"
  std::vector<std::string> netdevs;
  std::vector<std::string> link_types;  // "ether", "infiniband", one per netdev
};
// True when every non-empty selector list of the pool has a value of the device (the plugin's
// rule: OR within a list, AND between lists).
bool SharedPoolCovers(const SharedDevicePool& pool, const HcaSelectorFacts& hca);

// The pod UID of a process from its /proc/<pid>/cgroup: the kubelet's pod cgroup, with the
// systemd driver ".../kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope", with
// cgroupfs ".../kubepods/burstable/pod<uid>/<container id>" (cgroup v2 "0::" and v1 lines).
// Empty when the process is in no pod.
std::string PodUidFromCgroup(std::string_view proc_pid_cgroup);

}  // namespace rdma_exporter
