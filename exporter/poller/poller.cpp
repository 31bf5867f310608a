#include "rdma_exporter/poller.h"
#include "rdma_exporter/host.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/scope_exit.h"
#include "rdma_exporter/version.h"

namespace rdma_exporter {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const std::string& Snapshot::gzip() const {
  std::call_once(gzip_once_, [this] { gzip_ = Gzip(text); });
  return gzip_;
}

const std::vector<prometheus::MetricFamily>& Snapshot::families() const {
  std::call_once(families_once_, [this] { families_ = ParseText(text); });
  return families_;
}

namespace {

// One deflate state (~270 KiB: window, hash chains, pending buffer) kept for the process:
// deflateInit2/deflateEnd per response allocated and freed it each time, and the heap grew and
// trimmed around it on every scrape. A second response compressing meanwhile uses its own.
class DeflateState {
 public:
  // Never destroyed (Gzip leaks its one instance): response threads may outlive exit.
  DeflateState() { ok_ = Init(&stream_); }
  DeflateState(const DeflateState&) = delete;
  DeflateState& operator=(const DeflateState&) = delete;

  // windowBits 15 + 16 selects the gzip wrapper. Level 1: the exposition's repeated metric and
  // label names compress almost as well as at the default level 6 at a fraction of the CPU.
  static bool Init(z_stream* zs) {
    return deflateInit2(zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  std::mutex& mu() { return mu_; }
  z_stream* stream() { return ok_ && deflateReset(&stream_) == Z_OK ? &stream_ : nullptr; }

 private:
  std::mutex mu_;
  z_stream stream_{};
  bool ok_ = false;
};

std::string Deflate(z_stream* zs, const std::string& data) {
  std::string out;
  // The exposition compresses 7-9 times: start at a fifth and grow, rather than reserving (and
  // zero-filling) deflateBound's input size, which the snapshot would then carry.
  out.resize(data.size() / 5 + 4096);
  zs->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs->avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (zs->total_out == out.size()) out.resize(out.size() * 2);
    zs->next_out = reinterpret_cast<Bytef*>(out.data() + zs->total_out);
    zs->avail_out = static_cast<uInt>(out.size() - zs->total_out);
    rc = deflate(zs, Z_FINISH);
  }
  if (rc != Z_STREAM_END) return "";
  out.resize(zs->total_out);
  return out;
}

}  // namespace

std::string Gzip(const std::string& data) {
  static DeflateState& shared = *new DeflateState;
  std::unique_lock lock(shared.mu(), std::try_to_lock);
  if (lock.owns_lock()) {
    if (z_stream* zs = shared.stream()) return Deflate(zs, data);
  }
  z_stream own{};
  if (!DeflateState::Init(&own)) return "";
  std::string out = Deflate(&own, data);
  deflateEnd(&own);
  return out;
}

size_t CountOpenFds() {
  // Linux 6.2 and later report the number of open descriptors as the size of /proc/self/fd:
  // one stat instead of listing thousands of entries (the exporter keeps its sysfs files open).
  struct stat st {};
  if (stat("/proc/self/fd", &st) == 0 && st.st_size > 0) return static_cast<size_t>(st.st_size);
  size_t fds = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') ++fds;
    }
    closedir(dir);
    --fds;  // the descriptor of the listing itself
  }
  return fds;
}

// /proc/self/stat through a descriptor kept open: one pread per poll instead of open, read until
// EOF and close (the kernel generates the whole file on each read at offset 0).
std::string ReadSelfStat() {
  static const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  char buf[4096];
  ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf), 0) : -1;
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The boot time (btime of /proc/stat), read once: it does not change while the system runs.
double BootTimeSeconds() {
  static const double boot_time = [] {
    std::ifstream proc_stat("/proc/stat");
    std::string key;
    double value = 0;
    while (proc_stat >> key) {
      if (key == "btime") {
        proc_stat >> value;
        break;
      }
    }
    return value;
  }();
  return boot_time;
}

void AddProcessMetrics(MetricSink& sink) {
  std::string stat = ReadSelfStat();
  // Fields after the ")" that closes the command name; field 3 (state) is the first.
  size_t close = stat.rfind(')');
  if (close != std::string::npos) {
    std::istringstream fields(stat.substr(close + 2));
    std::vector<std::string> f((std::istream_iterator<std::string>(fields)),
                               std::istream_iterator<std::string>());
    // f[i] is field i + 3 of proc(5): utime 14, stime 15, starttime 22, vsize 23, rss 24.
    if (f.size() > 21) {
      double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
      double page = static_cast<double>(sysconf(_SC_PAGESIZE));
      sink.Counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                   {}, (std::stod(f[11]) + std::stod(f[12])) / ticks);
      sink.Gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", {},
                 std::stod(f[20]));
      sink.Gauge("process_resident_memory_bytes", "Resident memory size in bytes.", {},
                 std::stod(f[21]) * page);
      sink.Gauge("process_start_time_seconds",
                 "Start time of the process since unix epoch in seconds.", {},
                 BootTimeSeconds() + std::stod(f[19]) / ticks);
    }
  }
  sink.Gauge("process_open_fds", "Number of open file descriptors.", {},
             static_cast<double>(CountOpenFds()));
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    sink.Gauge("process_max_fds", "Maximum number of open file descriptors.", {},
               static_cast<double>(limit.rlim_cur));
  }
}

Poller::Poller(std::unique_ptr<SysfsReader> sysfs, PollerConfig config)
    : sysfs_(std::move(sysfs)), config_(std::move(config)) {
  if (config_.make_kernel_readers) {
    kernel_ = std::make_unique<KernelReaders>(config_.make_kernel_readers(*sysfs_));
  }
}

std::shared_ptr<const Snapshot> Poller::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

std::pair<std::shared_ptr<const Snapshot>, std::shared_ptr<const Snapshot>> Poller::LatestTwo()
    const {
  std::lock_guard lock(mu_);
  return {latest_, previous_};
}

std::shared_ptr<const Snapshot> Poller::Collect() {
  std::unique_lock lock(mu_);
  if (collecting_) {
    // Wait for the running collection, whether it publishes a snapshot or fails.
    uint64_t waiting_for = attempts_ + 1;
    done_.wait(lock, [&] { return attempts_ >= waiting_for; });
    return latest_;
  }
  collecting_ = true;
  lock.unlock();
  std::shared_ptr<const Snapshot> snapshot;
  {
    // However the collection ends, the next caller must be able to start one: a flag left set
    // would make every later scrape with --poll-interval=0 wait forever.
    ScopeExit finished([&] {
      std::lock_guard guard(mu_);
      if (snapshot != nullptr) {
        previous_ = std::move(latest_);
        latest_ = snapshot;
        sequence_ = snapshot->sequence;
      }
      collecting_ = false;
      ++attempts_;
      done_.notify_all();
    });
    try {
      snapshot = CollectLocked();
    } catch (const std::exception& e) {
      PollFailed(e.what());
    } catch (...) {
      PollFailed("unknown exception");
    }
  }
  lock.lock();
  return latest_;
}

void Poller::PollFailed(std::string_view what) {
  // A bug, not bad input (collectors catch their own failures): keep serving the last snapshot
  // and count it where read errors are counted, so the next snapshot shows it.
  LogError("poll failed; serving the previous snapshot", {{"error", what}});
  errors_.Record("poller", "poll", "exception", what);
}

bool Poller::TrackDevices(const Inventory& inventory) {
  // A device that vanished must not be read through descriptors of its old files later (one that
  // came back as a new kernel object under the same name, a driver reload, had them closed by
  // DiscoverInventory before it was read).
  std::map<std::string, uint64_t> current;
  for (const auto& device : inventory.devices)
    current[device.name] = device.identity;
  bool changed = false;
  for (const auto& [name, identity] : device_identity_) {
    auto it = current.find(name);
    if (it == current.end()) {
      LogInfo("RDMA device vanished", {{"device", name}});
      sysfs_->CloseUnder(JoinPath("class/infiniband", name) + "/");
      changed = true;
    } else if (it->second != identity) {
      LogInfo("RDMA device re-registered", {{"device", name}});
      changed = true;
    }
  }
  for (const auto& [name, identity] : current) {
    if (!device_identity_.count(name)) {
      LogInfo("RDMA device found", {{"device", name}});
      changed = true;
    }
  }
  device_identity_ = std::move(current);
  return changed;
}

bool Poller::SlowCollectorsDue(bool devices_changed) {
  auto now = std::chrono::steady_clock::now();
  bool due = devices_changed || config_.slow_interval.count() == 0 || last_runs_.empty() ||
             now - last_slow_run_ >= config_.slow_interval;
  if (due) last_slow_run_ = now;
  return due;
}

std::shared_ptr<const Snapshot> Poller::CollectLocked() {
  auto poll_start = std::chrono::steady_clock::now();
  MetricSink& sink = self_sink_;
  sink.Clear();

  std::vector<DiscoveryError> discovery_errors;
  Inventory inventory =
      DiscoverInventory(*sysfs_, config_.filter, &discovery_errors, &inventory_cache_);
  for (const auto& e : discovery_errors) {
    errors_.Record("inventory", e.path, ErrnoReason(e.err), std::strerror(e.err));
  }
  bool devices_changed = TrackDevices(inventory);
  bool run_slow = SlowCollectorsDue(devices_changed);
  if (kernel_ != nullptr) kernel_->BeginPoll();
  last_runs_.resize(config_.collectors.size());
  collector_sinks_.resize(config_.collectors.size());

  for (size_t i = 0; i < config_.collectors.size(); ++i) {
    Collector& collector = *config_.collectors[i];
    std::optional<LastRun>& last = last_runs_[i];
    bool is_slow = collector.slow_changing();
    if (!is_slow || run_slow || !last) {
      auto start = std::chrono::steady_clock::now();
      CollectContext ctx(*sysfs_, errors_, collector.name(), kernel_.get());
      MetricSink& out = collector_sinks_[i];
      out.Clear();
      bool ok = false;
      try {
        ok = collector.Collect(inventory, ctx, out);
      } catch (const std::exception& e) {
        // Collectors do not throw by design; this is the last line of defence (e.g. bad_alloc).
        LogError("collector failed", {{"collector", collector.name()}, {"error", e.what()}});
      } catch (...) {
        LogError("collector failed", {{"collector", collector.name()}, {"error", "unknown"}});
      }
      last = LastRun{SecondsSince(start), ok};
    }
    Labels labels = {{"collector", std::string(collector.name())}};
    sink.Gauge("rdma_exporter_collector_duration_seconds",
               "Time a collector took the last time it ran (every poll, or every "
               "--poll-interval.slow for slow-changing data).",
               labels, last->duration_seconds);
    sink.Gauge("rdma_exporter_collector_success",
               "1 if the collector ran the last time (individual unreadable files are counted in "
               "rdma_exporter_read_errors_total instead), else 0.",
               labels, last->ok ? 1 : 0);
  }

  for (const auto& [key, total] : errors_.Totals()) {
    sink.Counter("rdma_exporter_read_errors_total",
                 "sysfs reads that failed or could not be parsed, by collector and reason; each "
                 "costs only the series of that file.",
                 {{"collector", key.first}, {"reason", key.second}}, static_cast<double>(total));
  }
  sink.Gauge("rdma_exporter_build_info", "Build information of rdma_exporter; value is always 1.",
             {{"version", kVersion}, {"revision", kRevision}, {"compiler", kCompiler}}, 1);
  sink.Gauge("rdma_exporter_devices", "RDMA devices seen in the last poll (after filters).", {},
             static_cast<double>(inventory.devices.size()));
  double now = WallClockSeconds();
  sink.Gauge("rdma_exporter_last_poll_timestamp_seconds",
             "Unix time at which the last poll finished.", {}, now);
  sink.Gauge("rdma_exporter_poll_duration_seconds", "Time the last poll took.", {},
             SecondsSince(poll_start));
  if (config_.self_metrics) config_.self_metrics(sink);
  if (config_.process_metrics) AddProcessMetrics(sink);

  // Collector order, then the poller's own: a family written by several collectors keeps its
  // samples in the order the collectors ran.
  std::vector<const MetricSink*> sinks;
  for (const auto& collector_sink : collector_sinks_)
    sinks.push_back(&collector_sink);
  sinks.push_back(&sink);
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->text = RenderText(sinks);
  snapshot->timestamp_seconds = now;
  snapshot->inventory = std::make_shared<const Inventory>(std::move(inventory));
  {
    std::lock_guard lock(mu_);
    snapshot->sequence = sequence_ + 1;
  }
  sysfs_->SweepUnused();
  return snapshot;
}

}  // namespace rdma_exporter
