// Poller: runs the enabled collectors, times each, and builds one immutable Snapshot whose text
// (and gzip) is rendered once. Every scrape is served from the last Snapshot, so N Prometheus
// replicas cost the node one poll. With poll interval 0 each scrape collects, and concurrent
// scrapes share one collection.
#pragma once

#include <prometheus/metric_family.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/error_tracker.h"
#include "rdma_exporter/inventory.h"
#include "rdma_exporter/sysfs_reader.h"

namespace rdma_exporter {

// One poll's exposition. Immutable once published; what not every scrape needs is made on first
// use and then shared by every later reader of the same snapshot.
struct Snapshot {
  std::string text;
  double timestamp_seconds = 0;
  uint64_t sequence = 0;  // 1 for the first poll
  // The devices and ports the poll found (the node page lists them); null in snapshots made
  // by hand (tests).
  std::shared_ptr<const Inventory> inventory;

  // gzip of text, compressed by the first scrape that accepts gzip ("" if zlib failed).
  const std::string& gzip() const;
  // text in prometheus-cpp's model (landing page, CLI, tests), parsed on first use.
  const std::vector<prometheus::MetricFamily>& families() const;

 private:
  mutable std::once_flag gzip_once_;
  mutable std::string gzip_;
  mutable std::once_flag families_once_;
  mutable std::vector<prometheus::MetricFamily> families_;
};

struct PollerConfig {
  std::vector<std::unique_ptr<Collector>> collectors;
  DeviceFilter filter;
  bool process_metrics = true;  // off in golden-file tests (values are not reproducible)
  // Builds the ethtool/DCB/netdev readers once the sysfs reader exists; unset = none (tests of
  // sysfs-only collectors).
  std::function<KernelReaders(SysfsReader&)> make_kernel_readers;
  // --poll-interval.slow: how often collectors with slow_changing() run (0 = every poll). They
  // also run whenever a device appears, vanishes or is re-registered, so their series never
  // outlive a device.
  std::chrono::milliseconds slow_interval{0};
  // Adds the exporter's own non-poll metrics (e.g. web config reloads); unset = none.
  std::function<void(MetricSink&)> self_metrics;
};

class Poller {
 public:
  Poller(std::unique_ptr<SysfsReader> sysfs, PollerConfig config);

  // Runs one full collection and publishes it. Thread-safe; concurrent callers share one
  // collection (the late ones wait for the running one and get its result). If the collection
  // throws, the error is logged and counted and the previous snapshot is returned (nullptr if
  // there is none yet); the next call collects again.
  std::shared_ptr<const Snapshot> Collect();
  // The last published snapshot, or nullptr before the first poll.
  std::shared_ptr<const Snapshot> Latest() const;
  // The last snapshot and the one published before it (nullptr before the second poll), read
  // together: the node page's rates are the counters' change between the two.
  std::pair<std::shared_ptr<const Snapshot>, std::shared_ptr<const Snapshot>> LatestTwo() const;

 private:
  // A collector's last run (a slow collector's output stays in its sink until it runs again).
  struct LastRun {
    double duration_seconds = 0;
    bool ok = false;
  };

  std::shared_ptr<const Snapshot> CollectLocked();
  // Returns true when the set of devices (or the identity of one) changed since the last poll.
  bool TrackDevices(const Inventory& inventory);
  bool SlowCollectorsDue(bool devices_changed);
  void PollFailed(std::string_view what);

  std::unique_ptr<SysfsReader> sysfs_;
  PollerConfig config_;
  std::unique_ptr<KernelReaders> kernel_;
  ErrorTracker errors_;
  InventoryCache inventory_cache_;
  std::map<std::string, uint64_t> device_identity_;  // name -> DeviceInfo::identity
  std::vector<std::optional<LastRun>> last_runs_;    // by collector index
  // Each collector writes into a sink of its own, kept from poll to poll (the sink remembers
  // its series' rendered labels); the poller's own metrics go to self_sink_.
  std::vector<MetricSink> collector_sinks_;  // by collector index
  MetricSink self_sink_;
  std::chrono::steady_clock::time_point last_slow_run_;

  mutable std::mutex mu_;
  std::condition_variable done_;
  bool collecting_ = false;
  uint64_t sequence_ = 0;
  uint64_t attempts_ = 0;  // collections finished, published or failed
  std::shared_ptr<const Snapshot> latest_;
  std::shared_ptr<const Snapshot> previous_;  // published before latest_
};

// gzip (RFC 1952) of data, for clients sending Accept-Encoding: gzip.
std::string Gzip(const std::string& data);

// Standard process_* metrics of the running process, from /proc/self.
void AddProcessMetrics(MetricSink& sink);
// Open descriptors of this process: the size of /proc/self/fd (Linux 6.2+), else its listing.
size_t CountOpenFds();

}  // namespace rdma_exporter
