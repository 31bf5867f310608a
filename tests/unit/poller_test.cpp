#include "rdma_exporter/poller.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <thread>

#include "collectors/hw_counters.h"
#include "collectors/port_state.h"
#include "process.h"
#include "rdma_exporter/unique_fd.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace rdma_exporter {
namespace {

using testing::FaultyReader;
using testing::Gunzip;
using testing::RxeCaptureSysfs;
using testing::TempDir;

PollerConfig AllCollectors() {
  PollerConfig config;
  for (const auto& f : CollectorRegistry())
    config.collectors.push_back(f.create(CollectorOptions{}));
  config.process_metrics = false;
  return config;
}

// Exposition text without the families whose values depend on timing.
std::string StableText(const std::string& text) {
  std::istringstream in(text);
  std::ostringstream out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("rdma_exporter_collector_duration_seconds") != std::string::npos ||
        line.find("rdma_exporter_last_poll_timestamp_seconds") != std::string::npos ||
        line.find("rdma_exporter_poll_duration_seconds") != std::string::npos ||
        line.find("rdma_exporter_build_info") != std::string::npos) {
      continue;
    }
    out << line << "\n";
  }
  return out.str();
}

void ExpectMatchesGolden(const std::string& text, const std::string& name) {
  std::string path = std::string(RDMA_TEST_GOLDEN) + "/" + name;
  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << text;
    GTEST_SKIP() << "golden file rewritten: " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with UPDATE_GOLDEN=1)";
  std::string golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, golden) << "exposition differs from " << path;
}

TEST(Poller, NoSnapshotBeforeTheFirstPoll) {
  Poller poller(std::make_unique<SysfsReader>(RxeCaptureSysfs()), AllCollectors());
  EXPECT_EQ(poller.Latest(), nullptr);
  auto snapshot = poller.Collect();
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->sequence, 1u);
  EXPECT_EQ(poller.Latest(), snapshot);
}

TEST(Poller, RxeCaptureExpositionMatchesGolden) {
  Poller poller(std::make_unique<SysfsReader>(RxeCaptureSysfs()), AllCollectors());
  ExpectMatchesGolden(StableText(poller.Collect()->text), "rxe-capture.prom");
}

TEST(Poller, Mlx5RoceFixtureExpositionMatchesGolden) {
  Poller poller(std::make_unique<SysfsReader>(testing::FixturePath("mlx5-roce")), AllCollectors());
  ExpectMatchesGolden(StableText(poller.Collect()->text), "mlx5-roce.prom");
}

TEST(Poller, Mlx5IbFixtureExpositionMatchesGolden) {
  Poller poller(std::make_unique<SysfsReader>(testing::FixturePath("mlx5-ib")), AllCollectors());
  ExpectMatchesGolden(StableText(poller.Collect()->text), "mlx5-ib.prom");
}

TEST(Poller, GzipBodyInflatesToTheText) {
  Poller poller(std::make_unique<SysfsReader>(RxeCaptureSysfs()), AllCollectors());
  auto snapshot = poller.Collect();
  ASSERT_FALSE(snapshot->gzip().empty());
  EXPECT_LT(snapshot->gzip().size(), snapshot->text.size());
  EXPECT_EQ(testing::Gunzip(snapshot->gzip()), snapshot->text);
}

// Gzip keeps one deflate state for the process: each output must still be a whole gzip member
// of its own input - for input that does not compress (the output outgrows its first guess),
// empty input, and responses compressed at the same time on several threads.
TEST(Poller, GzipIsCorrectAcrossReuseGrowthAndThreads) {
  std::string noise(300000, '\0');
  uint32_t x = 12345;
  for (char& c : noise) {
    x = x * 1103515245 + 12345;
    c = static_cast<char>(x >> 24);
  }
  EXPECT_EQ(Gunzip(Gzip(noise)), noise);
  ASSERT_FALSE(Gzip("").empty());  // testing::Gunzip answers "" for a failure too
  EXPECT_EQ(Gunzip(Gzip("")), "");
  std::string text;
  for (int i = 0; i < 20000; ++i)
    text += "rdma_port_state{device=\"mlx5_" + std::to_string(i % 64) + "\"} 4\n";
  EXPECT_EQ(Gunzip(Gzip(text)), text);
  std::vector<std::future<bool>> results;
  for (int t = 0; t < 4; ++t) {
    results.push_back(std::async(std::launch::async, [&, t] {
      bool ok = true;
      for (int i = 0; i < 20; ++i) {
        std::string input = (t % 2 == 0 ? text : noise) + std::to_string(i);
        ok = ok && Gunzip(Gzip(input)) == input;
      }
      return ok;
    }));
  }
  for (auto& r : results)
    EXPECT_TRUE(r.get());
}

// A collector that takes a while and counts how often it ran.
class SlowCollector : public Collector {
 public:
  explicit SlowCollector(std::atomic<int>* runs) : runs_(runs) {}
  std::string_view name() const override { return "slow"; }
  std::string_view description() const override { return "test"; }
  bool Collect(const Inventory&, CollectContext&, MetricSink& sink) override {
    ++*runs_;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    sink.Gauge("rdma_test_runs", "runs", {}, *runs_);
    return true;
  }

 private:
  std::atomic<int>* runs_;
};

TEST(Poller, ConcurrentCollectsShareOneCollection) {
  std::atomic<int> runs{0};
  PollerConfig config;
  config.collectors.push_back(std::make_unique<SlowCollector>(&runs));
  config.process_metrics = false;
  Poller poller(std::make_unique<SysfsReader>(RxeCaptureSysfs()), std::move(config));
  std::vector<std::thread> threads;
  std::vector<uint64_t> sequences(6);
  for (size_t i = 0; i < sequences.size(); ++i) {
    threads.emplace_back([&, i] { sequences[i] = poller.Collect()->sequence; });
    if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& t : threads)
    t.join();
  // The first collection is running when the other five arrive: they all get its result.
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(std::set<uint64_t>(sequences.begin(), sequences.end()).size(), 1u);
}

// Runs poller.Collect() on its own thread; false if it has not returned after `limit` (the
// thread is then left blocked, detached: the test has failed anyway).
bool CollectReturnsWithin(Poller& poller, std::chrono::seconds limit,
                          std::shared_ptr<const Snapshot>* out) {
  auto done = std::make_shared<std::promise<std::shared_ptr<const Snapshot>>>();
  auto result = done->get_future();
  std::thread([&poller, done] {
    try {
      done->set_value(poller.Collect());
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  }).detach();
  if (result.wait_for(limit) != std::future_status::ready) return false;
  *out = result.get();
  return true;
}

TEST(Poller, APollThatThrowsKeepsTheLastSnapshotAndTheNextPollRuns) {
  // Before the fix, a collection that threw left the "collecting" flag set: every later
  // Collect() (each scrape with --poll-interval=0) waited forever.
  int calls = 0;
  PollerConfig config = AllCollectors();
  config.self_metrics = [&calls](MetricSink&) {
    if (++calls == 2) throw std::out_of_range("stod");
  };
  Poller poller(std::make_unique<SysfsReader>(RxeCaptureSysfs()), std::move(config));
  std::shared_ptr<const Snapshot> first, second, third;
  ASSERT_TRUE(CollectReturnsWithin(poller, std::chrono::seconds(10), &first));
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(CollectReturnsWithin(poller, std::chrono::seconds(10), &second));
  EXPECT_EQ(second, first) << "a failed poll serves the previous snapshot";
  ASSERT_TRUE(CollectReturnsWithin(poller, std::chrono::seconds(10), &third))
      << "the poll after a failed one never ran";
  ASSERT_NE(third, nullptr);
  EXPECT_EQ(third->sequence, first->sequence + 1);
  EXPECT_NE(third->text.find(
                "rdma_exporter_read_errors_total{collector=\"poller\",reason=\"exception\"} 1"),
            std::string::npos);
}

TEST(Poller, AFirstPollThatThrowsReturnsNoSnapshotAndTheNextOneRuns) {
  int calls = 0;
  PollerConfig config = AllCollectors();
  config.self_metrics = [&calls](MetricSink&) {
    if (++calls == 1) throw 42;  // not even a std::exception
  };
  Poller poller(std::make_unique<SysfsReader>(RxeCaptureSysfs()), std::move(config));
  std::shared_ptr<const Snapshot> first, second;
  ASSERT_TRUE(CollectReturnsWithin(poller, std::chrono::seconds(10), &first));
  EXPECT_EQ(first, nullptr);
  EXPECT_EQ(poller.Latest(), nullptr);
  ASSERT_TRUE(CollectReturnsWithin(poller, std::chrono::seconds(10), &second));
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->sequence, 1u);
}

class ThrowingCollector : public Collector {
 public:
  std::string_view name() const override { return "throwing"; }
  std::string_view description() const override { return "throws a non-std exception"; }
  bool Collect(const Inventory&, CollectContext&, MetricSink&) override { throw 7; }
};

TEST(Poller, ACollectorThrowingANonStdExceptionFailsOnlyItself) {
  PollerConfig config = AllCollectors();
  config.collectors.push_back(std::make_unique<ThrowingCollector>());
  Poller poller(std::make_unique<SysfsReader>(RxeCaptureSysfs()), std::move(config));
  std::shared_ptr<const Snapshot> snapshot;
  ASSERT_TRUE(CollectReturnsWithin(poller, std::chrono::seconds(10), &snapshot));
  ASSERT_NE(snapshot, nullptr);
  EXPECT_NE(snapshot->text.find("rdma_exporter_collector_success{collector=\"throwing\"} 0"),
            std::string::npos);
  EXPECT_NE(snapshot->text.find("rdma_exporter_collector_success{collector=\"port\"} 1"),
            std::string::npos);
}

TEST(Poller, AFailingFileCostsOnlyItsSeriesAndIsCounted) {
  auto reader = std::make_unique<FaultyReader>(RxeCaptureSysfs());
  reader->read_faults["class/infiniband/rxe0/ports/1/hw_counters/rdma_sends"] = EIO;
  reader->read_faults["class/infiniband/rxe1/ports/1/state"] = EINVAL;
  Poller poller(std::move(reader), AllCollectors());
  std::string text = poller.Collect()->text;
  EXPECT_EQ(text.find("rdma_hw_rdma_sends_total{device=\"rxe0\""), std::string::npos);
  EXPECT_NE(text.find("rdma_hw_rdma_sends_total{device=\"rxe1\",port=\"1\"} 200"),
            std::string::npos);
  EXPECT_NE(text.find("rdma_hw_rdma_recvs_total{device=\"rxe0\",port=\"1\"} 3110"),
            std::string::npos);
  EXPECT_EQ(text.find("rdma_port_state{device=\"rxe1\""), std::string::npos);
  EXPECT_EQ(text.find("rdma_port_up{device=\"rxe1\""), std::string::npos);
  EXPECT_NE(text.find("rdma_port_state{device=\"rxe0\",port=\"1\"} 4"), std::string::npos);
  EXPECT_NE(text.find("rdma_exporter_read_errors_total{collector=\"hw_counters\",reason=\"io\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("rdma_exporter_read_errors_total{collector=\"port\",reason=\"invalid\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("rdma_exporter_collector_success{collector=\"hw_counters\"} 1"),
            std::string::npos);
}

TEST(Poller, ReRegisteredDeviceIsReadThroughNewFiles) {
  TempDir dir;
  fs::copy(RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  Poller poller(std::make_unique<SysfsReader>(dir.path()), AllCollectors());
  EXPECT_NE(poller.Collect()->text.find("rdma_hw_rdma_sends_total{device=\"rxe1\",port=\"1\"} 200"),
            std::string::npos);
  // Replace rxe1 by a copy with a different counter (new inodes, as a driver reload gives: the
  // device directory and its class/infiniband link, made beside the old one and renamed over
  // it so that its inode number cannot be the old one's).
  std::string dev = dir.path() + "/devices/virtual/infiniband/rxe1";
  fs::copy(dev, dev + ".new", fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(dev);
  fs::rename(dev + ".new", dev);
  std::string link = dir.path() + "/class/infiniband/rxe1";
  fs::create_symlink(fs::read_symlink(link), link + ".new");
  fs::rename(link + ".new", link);
  std::ofstream(dev + "/ports/1/hw_counters/rdma_sends") << "7\n";
  EXPECT_NE(poller.Collect()->text.find("rdma_hw_rdma_sends_total{device=\"rxe1\",port=\"1\"} 7"),
            std::string::npos);
}

TEST(Poller, VanishedDeviceSeriesDisappearAndReturn) {
  TempDir dir;
  fs::copy(RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  Poller poller(std::make_unique<SysfsReader>(dir.path()), AllCollectors());
  EXPECT_NE(poller.Collect()->text.find("device=\"rxe1\""), std::string::npos);
  fs::rename(dir.path() + "/class/infiniband/rxe1", dir.path() + "/rxe1.link");
  std::string text = poller.Collect()->text;
  EXPECT_EQ(text.find("device=\"rxe1\""), std::string::npos);
  EXPECT_NE(text.find("device=\"rxe0\""), std::string::npos);
  EXPECT_NE(text.find("rdma_exporter_devices 1"), std::string::npos);
  fs::rename(dir.path() + "/rxe1.link", dir.path() + "/class/infiniband/rxe1");
  EXPECT_NE(poller.Collect()->text.find("rdma_port_up{device=\"rxe1\",port=\"1\"} 1"),
            std::string::npos);
}

TEST(Poller, CountOpenFdsFollowsOpenAndClose) {
  size_t before = CountOpenFds();
  // The listing the fallback (and this check) uses, without its own descriptor.
  auto listed = [] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd"))
      ++n;
    return n - 1;
  };
  EXPECT_EQ(before, listed());
  std::vector<UniqueFd> fds;
  for (int i = 0; i < 40; ++i)
    fds.emplace_back(open("/proc/self/stat", O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(CountOpenFds(), before + 40);
  fds.clear();
  EXPECT_EQ(CountOpenFds(), before);
}

// Counts its runs; slow-changing or not as told.
class CountingCollector : public Collector {
 public:
  CountingCollector(std::string name, bool slow) : name_(std::move(name)), slow_(slow) {}
  std::string_view name() const override { return name_; }
  std::string_view description() const override { return "test"; }
  bool slow_changing() const override { return slow_; }
  bool Collect(const Inventory& inventory, CollectContext&, MetricSink& sink) override {
    ++runs;
    for (const auto& device : inventory.devices) {
      sink.Gauge("rdma_test_" + name_ + "_run", "run", {{"device", device.name}}, runs);
    }
    return true;
  }
  int runs = 0;

 private:
  std::string name_;
  bool slow_;
};

struct TieredPoller {
  explicit TieredPoller(const std::string& root, std::chrono::milliseconds slow_interval) {
    PollerConfig config;
    auto fast_collector = std::make_unique<CountingCollector>("fast", false);
    auto slow_collector = std::make_unique<CountingCollector>("slow", true);
    fast = fast_collector.get();
    slow = slow_collector.get();
    config.collectors.push_back(std::move(fast_collector));
    config.collectors.push_back(std::move(slow_collector));
    config.process_metrics = false;
    config.slow_interval = slow_interval;
    poller = std::make_unique<Poller>(std::make_unique<SysfsReader>(root), std::move(config));
  }
  CountingCollector* fast;
  CountingCollector* slow;
  std::unique_ptr<Poller> poller;
};

TEST(Poller, SlowCollectorsRunOncePerSlowIntervalAndTheirSeriesAreServedBetween) {
  TieredPoller t(RxeCaptureSysfs(), std::chrono::hours(1));
  for (int i = 0; i < 3; ++i) {
    std::string text = t.poller->Collect()->text;
    // The first run's output, every poll.
    EXPECT_NE(text.find("rdma_test_slow_run{device=\"rxe1\"} 1"), std::string::npos) << text;
    EXPECT_NE(text.find("rdma_exporter_collector_success{collector=\"slow\"} 1"),
              std::string::npos);
  }
  EXPECT_EQ(t.fast->runs, 3);
  EXPECT_EQ(t.slow->runs, 1);
}

TEST(Poller, SlowIntervalZeroRunsSlowCollectorsEveryPoll) {
  TieredPoller t(RxeCaptureSysfs(), std::chrono::milliseconds(0));
  for (int i = 0; i < 3; ++i)
    t.poller->Collect();
  EXPECT_EQ(t.slow->runs, 3);
  EXPECT_NE(t.poller->Latest()->text.find("rdma_test_slow_run{device=\"rxe0\"} 3"),
            std::string::npos);
}

TEST(Poller, SlowIntervalElapsedRunsSlowCollectorsAgain) {
  TieredPoller t(RxeCaptureSysfs(), std::chrono::milliseconds(200));
  t.poller->Collect();
  t.poller->Collect();
  EXPECT_EQ(t.slow->runs, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  t.poller->Collect();
  EXPECT_EQ(t.slow->runs, 2);
}

TEST(Poller, DeviceChangesRefreshSlowCollectorsSoNoSeriesOutlivesItsDevice) {
  TempDir dir;
  fs::copy(RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  TieredPoller t(dir.path(), std::chrono::hours(1));
  t.poller->Collect();
  fs::rename(dir.path() + "/class/infiniband/rxe1", dir.path() + "/rxe1.link");
  std::string text = t.poller->Collect()->text;
  EXPECT_EQ(t.slow->runs, 2);
  EXPECT_EQ(text.find("device=\"rxe1\""), std::string::npos) << text;
  t.poller->Collect();  // nothing changed: served from the cache
  EXPECT_EQ(t.slow->runs, 2);
  fs::rename(dir.path() + "/rxe1.link", dir.path() + "/class/infiniband/rxe1");
  text = t.poller->Collect()->text;
  EXPECT_EQ(t.slow->runs, 3);
  EXPECT_NE(text.find("rdma_test_slow_run{device=\"rxe1\"} 3"), std::string::npos) << text;
}

TEST(Poller, ExcludedDeviceIsNeverRead) {
  auto reader = std::make_unique<FaultyReader>(RxeCaptureSysfs());
  FaultyReader* raw = reader.get();
  PollerConfig config = AllCollectors();
  config.filter.exclude.emplace("rxe1");
  Poller poller(std::move(reader), std::move(config));
  std::string text = poller.Collect()->text;
  EXPECT_EQ(text.find("device=\"rxe1\""), std::string::npos);
  for (const auto& path : raw->reads) {
    EXPECT_EQ(path.find("rxe1"), std::string::npos) << path;
  }
}

}  // namespace
}  // namespace rdma_exporter

namespace rdma_exporter {
namespace {

// Removes a device the first time one of its hw counters is read, as `rdma link delete` during a
// poll does.
class VanishingReader : public SysfsReader {
 public:
  VanishingReader(std::string root, std::string device_link)
      : SysfsReader(root), link_(JoinPath(root, device_link)) {}
  using SysfsReader::ReadFile;
  int ReadFile(const std::string& path, std::string* out, FileRef* ref) override {
    if (!gone_ && path.find("rxe1/ports/1/hw_counters/") != std::string::npos) {
      std::filesystem::remove(link_);
      gone_ = true;
    }
    if (gone_ && path.find("rxe1") != std::string::npos) return ENOENT;
    return SysfsReader::ReadFile(path, out, ref);
  }

 private:
  std::string link_;
  bool gone_ = false;
};

TEST(Poller, DeviceRemovedDuringAPollIsNotCountedAsReadErrors) {
  testing::TempDir dir;
  fs::copy(testing::RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  Poller poller(std::make_unique<VanishingReader>(dir.path(), "class/infiniband/rxe1"),
                AllCollectors());
  std::string text = poller.Collect()->text;
  EXPECT_EQ(text.find("rdma_exporter_read_errors_total{"), std::string::npos) << text;
  EXPECT_EQ(poller.Collect()->text.find("device=\"rxe1\""), std::string::npos);
}

}  // namespace
}  // namespace rdma_exporter
