// The collector interface. One collector per data source, each in collectors/<name>.{h,cpp},
// registered in one table (collectors/registry.cpp). A collector never throws: a failed read
// costs only the series it would have produced and is reported through CollectContext.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_exporter/error_tracker.h"
#include "rdma_exporter/inventory.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/metrics.h"
#include "rdma_exporter/sysfs_reader.h"

namespace rdma_exporter {

// What a collector gets for one collection.
class CollectContext {
 public:
  CollectContext(SysfsReader& sysfs, ErrorTracker& errors, std::string_view collector,
                 KernelReaders* kernel = nullptr)
      : sysfs_(sysfs), errors_(errors), collector_(collector), kernel_(kernel) {}

  SysfsReader& sysfs() { return sysfs_; }
  // ethtool / DCB / netdev readers; nullptr in tests of sysfs-only collectors.
  KernelReaders* kernel() { return kernel_; }
  // Reads a file; on failure records the error (logged once per cause, counted) and returns
  // false.
  bool Read(const std::string& path, std::string* out) { return Read(path, out, nullptr); }
  // Read through a FileRef the caller keeps for path (SysfsReader::FileRef).
  bool Read(const std::string& path, std::string* out, SysfsReader::FileRef* ref);
  // Like Read but a missing file (ENOENT) is normal and not recorded.
  bool ReadOptional(const std::string& path, std::string* out);
  // Records a failure for path: errno value (reason derived from it).
  void ReadFailed(const std::string& path, int err);
  // Records a file whose content could not be parsed.
  void Malformed(const std::string& path, std::string_view content);
  // Records a failure that is not an errno value (a gRPC status): reason is a snake_case word.
  void Failed(const std::string& path, std::string_view reason, std::string_view detail);
  size_t failures() const { return failures_; }

 private:
  SysfsReader& sysfs_;
  ErrorTracker& errors_;
  std::string collector_;
  KernelReaders* kernel_;
  size_t failures_ = 0;
};

// Where the hw_counters collector reads port hw counters (--collector.hw_counters.source).
enum class HwCounterSource {
  kAuto,     // RDMA netlink STAT_GET when the kernel answers it for the port, else sysfs
  kNetlink,  // STAT_GET only (a failure is an error, no fallback)
  kSysfs,    // the hw_counters/ files only
};

// Settings of individual collectors, from flags.
struct CollectorOptions {
  // --collector.ethtool.metrics-include: other ethtool stats exported under generic names.
  std::optional<std::regex> ethtool_metrics_include;
  // --nccl.ib-tc: the NCCL_IB_TC value of the cluster; unset = NCCL priority check disabled.
  std::optional<int> nccl_ib_tc;
  // --roce.min-mtu: the smallest acceptable RoCE netdev MTU (the deployment guide's 4200).
  unsigned roce_min_mtu = 4200;
  HwCounterSource hw_counters_source = HwCounterSource::kAuto;
  // --path.procfs: where the gpu_affinity collector finds /proc/driver/nvidia.
  std::string procfs_root = "/proc";
  // --collector.pod_resources.*: the kubelet's pod-resources socket, how often it is asked, and
  // the RDMA shared device plugin's config file (empty: a shared pool covers every HCA).
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::chrono::milliseconds pod_resources_interval{10000};
  std::string shared_device_plugin_config;
  // On with the ib_peer collector (the same umad access): the counters collector reads the
  // 64-bit PortXmitWait from the port's own PMA where its ClassPortInfo declares it.
  bool pma_xmit_wait = false;
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual bool enabled_by_default() const { return true; }
  // Slow-changing data (identity, configuration): collected every --poll-interval.slow instead
  // of every poll, and whenever the set of devices changes; the poller serves the last output
  // in between.
  virtual bool slow_changing() const { return false; }
  // Adds this collector's samples for the inventory. Returns false if the collector as a whole
  // failed (per-file failures are reported through ctx and do not make the collector fail).
  virtual bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) = 0;
};

struct CollectorFactory {
  std::string_view name;
  std::string_view description;
  bool enabled_by_default;
  std::unique_ptr<Collector> (*create)(const CollectorOptions&);
};

// Every collector the binary knows, in a stable order.
const std::vector<CollectorFactory>& CollectorRegistry();

}  // namespace rdma_exporter
