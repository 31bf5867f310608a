// Hot-plug churn: the simulator's "churn" scenario removes and re-adds an mlx5 PF with its VFs,
// swaps its files for malformed ones and removes its VFs and last port, every 4 ticks at 2 ms a
// tick, while the exporter collects on every scrape (--poll-interval=0) and is scraped in a
// tight loop. No crash, every scrape answered, descriptors and RSS bounded (measured after a
// warm-up and at the end), and no stale series once the device is gone.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "hardening_util.h"

namespace rdma_exporter::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> SimArgs(const std::string& root) {
  return {kSimulatorBin, "--root",         root,    "--devices",    "2",    "--ports",
          "2",           "--vfs",          "2",     "--link-layer", "roce", "--scenario",
          "churn",       "--fault-device", "mlx5_0"};
}

// The tree lives on tmpfs: re-creating a device is a few hundred file creations per cycle,
// ~6 ms on tmpfs but 10x that on a busy disk-backed /tmp.
class ShmDir {
 public:
  ShmDir() {
    char tmpl[] = "/dev/shm/rdma-churn-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) path_ = tmpl;
  }
  ~ShmDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool HasDeviceSeries(const std::string& text, const std::string& device) {
  return text.find("device=\"" + device + "\"") != std::string::npos;
}

TEST(Churn, ThousandsOfHotPlugCyclesWhileScraping) {
  ShmDir root;
  ASSERT_FALSE(root.path().empty());
  std::vector<std::string> args = SimArgs(root.path());
  args.insert(args.end(), {"--interval", "2ms"});
  Process sim(args);
  for (int i = 0; i < 400 && sim.stderr_text().find("serving") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_NE(sim.stderr_text().find("serving"), std::string::npos) << sim.stderr_text();

  // Each scrape is a new connection, and CivetWeb hands each to the next of its worker threads
  // (one per --web.max-connections): every worker that has served once keeps ~45 kB resident
  // (its stack pages and request buffer). With the default 32 workers that is over within the
  // warm-up (with the former 1,024, RSS climbed for ~1,000 scrapes: 22 -> 96 MB), and any later
  // growth is the collection path's own.
  ExporterProcess exporter({"--path.sysfs=" + root.path() + "/sys",
                            "--path.fixtures=" + root.path() + "/fixtures", "--poll-interval=0",
                            "--log.level=error"});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  pid_t pid = exporter.process().pid();

  auto scrape_for = [&](std::chrono::seconds duration, int* ok, int* failed) {
    auto end = Clock::now() + duration;
    while (Clock::now() < end) {
      HttpResponse r = HttpGet(exporter.port(), "/metrics");
      (r.status == 200 ? *ok : *failed)++;
    }
  };
  int ok = 0, failed = 0;
  scrape_for(std::chrono::seconds(2), &ok, &failed);  // warm-up: caches and fds settle
  long rss_start = RssKb(pid);
  int fds_start = OpenFds(pid);
  std::vector<std::pair<long, int>> samples;
  for (int i = 0; i < 6; ++i) {
    scrape_for(std::chrono::seconds(5), &ok, &failed);
    samples.emplace_back(RssKb(pid), OpenFds(pid));
    std::cout << "  after " << 5 * (i + 1) << " s: RSS " << samples.back().first << " kB, fds "
              << samples.back().second << "\n";
  }
  long rss_end = samples.back().first;
  int fds_end = samples.back().second;
  ASSERT_EQ(sim.Stop(), 0) << sim.stderr_text();
  std::string stopped = sim.stderr_text();
  unsigned long long ticks = 0;
  if (size_t pos = stopped.find("stopped after "); pos != std::string::npos)
    ticks = std::stoull(stopped.substr(pos + 14));
  std::cout << "churn: " << ticks << " ticks (" << ticks / 4 << " remove/re-add cycles of mlx5_0 "
            << "and its VFs), " << ok << " scrapes, RSS " << rss_start << " -> " << rss_end
            << " kB, fds " << fds_start << " -> " << fds_end << "\n";
  EXPECT_GE(ticks, 1000u) << "the simulator did not churn thousands of times";
  EXPECT_EQ(failed, 0);
  EXPECT_GT(ok, 100);
  EXPECT_TRUE(exporter.process().Running()) << exporter.process().stderr_text();
  // Bounded, not constant: the open-file cache follows the tree (which churns).
  for (const auto& [rss, fds] : samples) {
    EXPECT_LT(fds, 2048);
    EXPECT_LT(rss, 128 * 1024);  // the DaemonSet's memory limit
  }
  // No leak: hundreds of remove/re-add cycles after the first 10 s add no memory beyond
  // allocator noise (a leak of one device's worth per cycle would be tens of MB).
  long growth = rss_end - samples[1].first;
  std::cout << "RSS growth after 10 s: " << growth << " kB\n";
  EXPECT_LT(growth, 8 * 1024);
  EXPECT_LE(fds_end, std::max(fds_start, samples[2].second) + 512);

  // The malformed files were seen and counted, not exported.
  std::string text = HttpGet(exporter.port(), "/metrics").body;
  EXPECT_NE(text.find("rdma_exporter_read_errors_total{"), std::string::npos);

  // Stale series: tick 1 of the scenario has mlx5_0 and its VFs removed.
  std::string output;
  args = SimArgs(root.path());
  args.insert(args.end(), {"--ticks", "1"});
  ASSERT_EQ(RunCommand(args, &output), 0) << output;
  text = HttpGet(exporter.port(), "/metrics").body;
  EXPECT_FALSE(HasDeviceSeries(text, "mlx5_0")) << "stale series of a removed device";
  EXPECT_FALSE(HasDeviceSeries(text, "mlx5_2")) << "stale series of a removed VF";
  EXPECT_FALSE(HasDeviceSeries(text, "mlx5_3")) << "stale series of a removed VF";
  EXPECT_TRUE(HasDeviceSeries(text, "mlx5_1")) << text.substr(0, 2000);
  // Tick 2: back again.
  args = SimArgs(root.path());
  args.insert(args.end(), {"--ticks", "2"});
  ASSERT_EQ(RunCommand(args, &output), 0) << output;
  text = HttpGet(exporter.port(), "/metrics").body;
  EXPECT_TRUE(HasDeviceSeries(text, "mlx5_0"));
  EXPECT_TRUE(HasDeviceSeries(text, "mlx5_2"));
  EXPECT_EQ(exporter.process().Stop(), 0) << exporter.process().stderr_text();
}

}  // namespace
}  // namespace rdma_exporter::testing
