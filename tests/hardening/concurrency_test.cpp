// Concurrency of the HTTP server, the poller and SIGHUP reloads in one process: many clients
// scrape every endpoint while the poller runs every 100 ms and the web config is reloaded
// (users swapped) over and over. Run under TSan by scripts/sanitize.sh (CI); a race report makes
// the exporter exit non-zero (66), which the test checks. sanitize.sh also sends every report to
// build-tsan/sanitizer-reports/ and fails on any; run by hand, the report is on stderr, checked
// too.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "hardening_util.h"

namespace rdma_exporter::testing {
namespace {

TEST(Concurrency, ScrapesDuringPollsAndReloads) {
  TempDir dir;
  std::string hash = BcryptHash("s3cret", 4);
  std::string config = dir.path() + "/web.yml";
  auto write = [&](int generation) {
    std::ofstream(config) << "basic_auth_users:\n  prometheus: " << hash << "\n  user" << generation
                          << ": " << hash << "\n";
  };
  write(0);
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib"), "--poll-interval=100ms",
                            "--web.config.file=" + config, "--web.max-connections=32"});
  // /-/ready needs credentials: wait for the log line instead.
  for (int i = 0; i < 400 && exporter.process().stderr_text().find("first poll completed") ==
                                 std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(exporter.process().Running()) << exporter.process().stderr_text();

  const std::map<std::string, std::string> auth = {
      {"Authorization", "Basic cHJvbWV0aGV1czpzM2NyZXQ="}};  // prometheus:s3cret
  std::atomic<int> ok{0}, bad{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 6; ++t) {
    clients.emplace_back([&, t] {
      const char* paths[] = {"/metrics", "/", "/-/ready", "/-/healthy", "/nope"};
      for (int i = 0; i < 40; ++i) {
        std::string path = paths[(t + i) % 5];
        HttpResponse r = HttpGet(exporter.port(), path, auth);
        int want = path == "/nope" ? 404 : 200;
        (r.status == want ? ok : bad)++;
      }
    });
  }
  for (int i = 1; i <= 10; ++i) {
    write(i);
    kill(exporter.process().pid(), SIGHUP);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& c : clients)
    c.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(ok.load(), 240);
  EXPECT_EQ(exporter.process().Stop(), 0) << exporter.process().stderr_text();
  EXPECT_EQ(exporter.process().stderr_text().find("WARNING: ThreadSanitizer"), std::string::npos)
      << exporter.process().stderr_text();
}

}  // namespace
}  // namespace rdma_exporter::testing
