// Hostile HTTP clients against the built exporter (defaults unless a test says otherwise):
// 1,000 idle connections, slowloris, oversized request heads and URLs, malformed requests.
// Throughout, a well-behaved client's /metrics scrapes must succeed within a bounded latency,
// and the process's memory and descriptors must stay bounded.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <thread>

#include "hardening_util.h"

namespace rdma_exporter::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Sends raw bytes and returns what comes back until the server closes or timeout passes.
std::string Exchange(int port, const std::string& request, std::chrono::milliseconds timeout) {
  int fd = Connect(port);
  if (fd < 0) return "<connect failed>";
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early on an oversized head
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  auto deadline = Clock::now() + timeout;
  char buf[4096];
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

// Latency of a well-behaved scrape (ms); -1 if it did not return 200.
double ScrapeMs(int port) {
  auto start = Clock::now();
  HttpResponse r = HttpGet(port, "/metrics");
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return r.status == 200 && r.body.find("rdma_port_up") != std::string::npos ? ms : -1;
}

void RaiseFdLimit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

// True once the server has closed its end (EOF or reset); never blocks.
bool ClosedByServer(int fd) {
  char buf[512];
  ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

// Waits until every fd was closed by the server or timeout passed; returns how many were.
size_t WaitClosed(const std::vector<int>& fds, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  size_t closed = 0;
  while (true) {
    closed = static_cast<size_t>(std::count_if(fds.begin(), fds.end(), ClosedByServer));
    if (closed == fds.size() || Clock::now() >= deadline) return closed;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Waits until the process has at most limit descriptors open; returns the last count.
int WaitFdsAtMost(pid_t pid, int limit, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  int fds = OpenFds(pid);
  while (fds > limit && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    fds = OpenFds(pid);
  }
  return fds;
}

// Default flags: 32 worker threads, and the accept gate holding connections until their request
// head is complete, so 1,000 idle clients never reach a worker.
TEST(Hostile, ThousandIdleConnectionsDoNotStarveAScraper) {
  RaiseFdLimit();
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib")});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  pid_t pid = exporter.process().pid();
  long rss_start = RssKb(pid);
  int fds_start = OpenFds(pid);

  auto opened = Clock::now();
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    int fd = Connect(exporter.port());
    if (fd >= 0) idle.push_back(fd);
  }
  EXPECT_EQ(idle.size(), 1000u);
  // Scrape while all of them are open (the read timeout, 5 s, has not expired yet).
  std::vector<double> ms;
  for (int i = 0; i < 10; ++i)
    ms.push_back(ScrapeMs(exporter.port()));
  long rss_loaded = RssKb(pid);
  int fds_loaded = OpenFds(pid);
  double worst = *std::max_element(ms.begin(), ms.end());
  EXPECT_GT(*std::min_element(ms.begin(), ms.end()), 0) << "a scrape failed";
  EXPECT_LT(worst, 5000) << "a scrape waited for the read timeout";
  std::cout << "1000 idle connections: worst scrape " << worst << " ms, RSS " << rss_start << " -> "
            << rss_loaded << " kB, fds " << fds_start << " -> " << fds_loaded << "\n";
  // The server closes them at the read timeout (5 s) and its descriptors come back.
  EXPECT_EQ(WaitClosed(idle, std::chrono::seconds(10)), idle.size());
  double closed_after = std::chrono::duration<double>(Clock::now() - opened).count();
  EXPECT_LE(WaitFdsAtMost(pid, fds_start + 5, std::chrono::seconds(5)), fds_start + 5);
  std::cout << "idle connections closed by the server after " << closed_after << " s\n";
  for (int fd : idle)
    close(fd);
  EXPECT_LT(RssKb(pid), 256 * 1024);
  EXPECT_GT(ScrapeMs(exporter.port()), 0);
}

// 1,000 clients sending a header byte every 500 ms (default flags): scrapes are served meanwhile
// and every slow client is cut at the read timeout.
TEST(Hostile, ThousandSlowlorisConnectionsDoNotStarveAScraper) {
  RaiseFdLimit();
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib")});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  pid_t pid = exporter.process().pid();
  int fds_start = OpenFds(pid);
  std::vector<int> slow;
  for (int i = 0; i < 1000; ++i) {
    int fd = Connect(exporter.port());
    if (fd >= 0) {
      send(fd, "GET /metrics HTTP/1.1\r\nX-Slow: ", 31, MSG_NOSIGNAL);
      slow.push_back(fd);
    }
  }
  ASSERT_EQ(slow.size(), 1000u);
  auto start = Clock::now();
  std::vector<bool> closed(slow.size(), false);
  size_t closed_count = 0;
  double worst = 0;
  double min = 1e9;
  while (Clock::now() - start < std::chrono::seconds(10) && closed_count < slow.size()) {
    for (size_t i = 0; i < slow.size(); ++i) {
      if (closed[i]) continue;
      if (ClosedByServer(slow[i]) || send(slow[i], "a", 1, MSG_NOSIGNAL) < 0) {
        closed[i] = true;
        ++closed_count;
      }
    }
    double ms = ScrapeMs(exporter.port());
    worst = std::max(worst, ms);
    min = std::min(min, ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  double cut_after = std::chrono::duration<double>(Clock::now() - start).count();
  std::cout << "1000 slowloris: " << closed_count << "/" << slow.size() << " cut after "
            << cut_after << " s, worst scrape meanwhile " << worst << " ms\n";
  EXPECT_EQ(closed_count, slow.size()) << "slow clients still connected after 10 s";
  EXPECT_GT(min, 0) << "a scrape failed";
  EXPECT_LT(worst, 5000) << "a scrape waited for the read timeout";
  for (int fd : slow)
    close(fd);
  EXPECT_LE(WaitFdsAtMost(pid, fds_start + 5, std::chrono::seconds(5)), fds_start + 5);
}

// One worker, read timeout 30 s: without the gate the first idle connection would hold the only
// worker for 30 s and the scrape (10 s receive timeout) would fail. This is also the proof that
// CivetWeb calls our accept().
TEST(Hostile, IdleConnectionsNeverHoldAWorker) {
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib"), "--web.max-connections=1",
                            "--web.read-timeout=30s"});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) {
    int fd = Connect(exporter.port());
    if (fd >= 0) idle.push_back(fd);
    // Half of them start a request head.
    if (fd >= 0 && i % 2 == 0) send(fd, "GET / HTTP/1.1\r\n", 16, MSG_NOSIGNAL);
  }
  for (int i = 0; i < 5; ++i)
    EXPECT_GT(ScrapeMs(exporter.port()), 0);
  for (int fd : idle)
    close(fd);
}

// --web.max-pending-connections=16: one address may hold 4 pending connections; a fifth closes
// its oldest, long before the read timeout. Scrapes from the same address still get in.
TEST(Hostile, PendingConnectionsOfOnePeerAreBounded) {
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib"),
                            "--web.max-pending-connections=16", "--web.read-timeout=30s",
                            "--poll-interval=200ms"});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  std::vector<int> idle;
  for (int i = 0; i < 10; ++i) {
    int fd = Connect(exporter.port());
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  std::vector<int> oldest(idle.begin(), idle.begin() + 6);
  EXPECT_EQ(WaitClosed(oldest, std::chrono::seconds(5)), 6u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (size_t i = 6; i < idle.size(); ++i)
    EXPECT_FALSE(ClosedByServer(idle[i])) << i;
  EXPECT_GT(ScrapeMs(exporter.port()), 0);
  for (int fd : idle)
    close(fd);
  // Counted (self metrics are taken at each poll, every 200 ms here): the 6 above, and a seventh
  // for the scrape's own connection, which found the address at its bound.
  std::string body;
  std::string line = "rdma_exporter_web_pending_connections_closed_total{reason=\"limit\"} 7\n";
  std::string none = "rdma_exporter_web_pending_connections 0\n";
  for (int i = 0;
       i < 50 && (body.find(line) == std::string::npos || body.find(none) == std::string::npos);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    body = HttpGet(exporter.port(), "/metrics").body;
  }
  EXPECT_NE(body.find(line), std::string::npos) << body.substr(body.find("rdma_exporter_web"), 400);
  EXPECT_NE(body.find(none), std::string::npos);
}

// Keep-alive: two requests on one connection, both answered.
TEST(Hostile, KeepAliveScrapesAreServed) {
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib")});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  int fd = Connect(exporter.port());
  ASSERT_GE(fd, 0);
  for (int round = 0; round < 2; ++round) {
    std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n";
    ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    std::string reply;
    size_t want = std::string::npos;
    char buf[65536];
    auto deadline = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < deadline && reply.size() != want) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
      size_t end = reply.find("\r\n\r\n");
      size_t length = reply.find("Content-Length: ");
      if (end != std::string::npos && length != std::string::npos && length < end) {
        want = end + 4 + std::stoul(reply.substr(length + 16));
      }
    }
    EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << round << ": " << reply.substr(0, 100);
    EXPECT_EQ(reply.size(), want) << round;
    EXPECT_NE(reply.find("rdma_port_up"), std::string::npos) << round;
  }
  close(fd);
}

// A head larger than max_request_size that never ends: an error reply at once, not a hang until
// the read timeout.
TEST(Hostile, EndlessRequestHeadGetsAnError) {
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib"), "--web.read-timeout=30s"});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  std::string head = "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(20000, 'a');
  std::string reply = Exchange(exporter.port(), head, std::chrono::milliseconds(10000));
  // CivetWeb answers 400 (HTTP/1.0) when its 16 KiB buffer fills without an end of head.
  EXPECT_EQ(reply.rfind("HTTP/1.", 0), 0u) << reply.substr(0, 200);
  EXPECT_EQ(reply.substr(8, 2), " 4") << reply.substr(0, 200);
  EXPECT_TRUE(exporter.process().Running());
}

// HTTPS: idle TCP connections and clients stuck in the middle of a ClientHello do not starve a
// scraper, and are closed at the read timeout.
TEST(Hostile, IdleTlsConnectionsDoNotStarveAScraper) {
  RaiseFdLimit();
  TempDir pki;
  MakePki(pki.path());
  std::string config = pki.path() + "/web.yml";
  std::ofstream(config) << "tls_server_config:\n  cert_file: " << pki.path()
                        << "/server.pem\n  key_file: " << pki.path() << "/server.key\n";
  std::vector<std::string> ca = {"--cacert", pki.path() + "/ca.pem"};
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib"), "--web.config.file=" + config,
                            "--web.read-timeout=3s"},
                           true, ca);
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    int fd = Connect(exporter.port());
    if (fd < 0) continue;
    // Every other one sends a TLS record header announcing 512 bytes, and stops there.
    if (i % 2 == 0) send(fd, "\x16\x03\x01\x02\x00\x01", 6, MSG_NOSIGNAL);
    idle.push_back(fd);
  }
  EXPECT_EQ(idle.size(), 1000u);
  double worst = 0;
  for (int i = 0; i < 5; ++i) {
    auto start = Clock::now();
    CurlResult r = Curl(ca, exporter.url("/metrics"));
    worst =
        std::max(worst, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    EXPECT_EQ(r.status, 200) << r.out;
    EXPECT_NE(r.out.find("rdma_port_up"), std::string::npos);
  }
  std::cout << "1000 idle TLS connections: worst curl scrape " << worst << " ms\n";
  EXPECT_LT(worst, 3000) << "a scrape waited for the read timeout";
  EXPECT_EQ(WaitClosed(idle, std::chrono::seconds(8)), idle.size());
  for (int fd : idle)
    close(fd);
}

TEST(Hostile, SlowlorisIsCutAtTheReadTimeout) {
  RaiseFdLimit();
  ExporterProcess exporter(
      {"--path.sysfs=" + FixturePath("mlx5-ib"), "--web.read-timeout=1s", "--poll-interval=200ms"});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  // 200 clients each sending a header byte every 100 ms, never finishing the head.
  std::vector<int> slow;
  for (int i = 0; i < 200; ++i) {
    int fd = Connect(exporter.port());
    if (fd >= 0) {
      send(fd, "GET /metrics HTTP/1.1\r\nX-Slow: ", 31, MSG_NOSIGNAL);
      slow.push_back(fd);
    }
  }
  auto start = Clock::now();
  std::vector<bool> closed(slow.size(), false);
  size_t closed_count = 0;
  double worst = 0;
  while (Clock::now() - start < std::chrono::seconds(4) && closed_count < slow.size()) {
    for (size_t i = 0; i < slow.size(); ++i) {
      if (closed[i]) continue;
      if (send(slow[i], "a", 1, MSG_NOSIGNAL) < 0) {
        closed[i] = true;
        ++closed_count;
        continue;
      }
      pollfd p{slow[i], POLLIN, 0};
      char buf[512];
      if (poll(&p, 1, 0) > 0 && recv(slow[i], buf, sizeof(buf), MSG_DONTWAIT) <= 0) {
        closed[i] = true;
        ++closed_count;
      }
    }
    worst = std::max(worst, ScrapeMs(exporter.port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  double cut_after = std::chrono::duration<double>(Clock::now() - start).count();
  std::cout << "slowloris: " << closed_count << "/" << slow.size() << " cut after " << cut_after
            << " s, worst scrape meanwhile " << worst << " ms\n";
  EXPECT_EQ(closed_count, slow.size()) << "slow clients still connected after 4 s";
  EXPECT_GT(worst, 0);
  EXPECT_LT(worst, 2000);
  for (int fd : slow)
    close(fd);
  // Counted as closed at the read timeout (self metrics are taken at each poll).
  std::string line =
      "rdma_exporter_web_pending_connections_closed_total{reason=\"read_timeout\"} 200\n";
  std::string body;
  for (int i = 0; i < 50 && body.find(line) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    body = HttpGet(exporter.port(), "/metrics").body;
  }
  EXPECT_NE(body.find(line), std::string::npos);
}

TEST(Hostile, OversizedAndMalformedRequestsAreRefused) {
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib")});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  pid_t pid = exporter.process().pid();
  long rss_start = RssKb(pid);
  auto timeout = std::chrono::milliseconds(3000);

  // A 1 MiB header and a 100 kB URL: refused (4xx) or cut, never served.
  std::string big_header =
      "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1 << 20, 'a') + "\r\n\r\n";
  std::string reply = Exchange(exporter.port(), big_header, timeout);
  EXPECT_EQ(reply.find("HTTP/1.1 200"), std::string::npos) << reply.substr(0, 200);
  std::string big_url = "GET /metrics?" + std::string(100000, 'q') + " HTTP/1.1\r\nHost: x\r\n\r\n";
  reply = Exchange(exporter.port(), big_url, timeout);
  EXPECT_EQ(reply.find("HTTP/1.1 200"), std::string::npos) << reply.substr(0, 200);
  // Many headers, each small.
  std::string many = "GET /metrics HTTP/1.1\r\n";
  for (int i = 0; i < 2000; ++i)
    many += "X-" + std::to_string(i) + ": v\r\n";
  reply = Exchange(exporter.port(), many + "\r\n", timeout);
  EXPECT_EQ(reply.find("HTTP/1.1 200"), std::string::npos) << reply.substr(0, 200);

  // Broken requests: never served, the server lives on.
  const std::vector<std::string> broken = {
      "\r\n\r\n",
      "GET\r\n\r\n",
      "GET /metrics HTTP/9.9\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nNoColonHeader\r\n\r\n",
      "GET /%00%ff%zz HTTP/1.1\r\n\r\n",
      std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11),  // TLS to plain HTTP
      std::string(4096, '\0'),
      "G\xff\xfeT / HTTP/1.1\r\n\r\n",
      "POST /metrics HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789",
  };
  int error_pages = 0;
  for (const auto& request : broken) {
    reply = Exchange(exporter.port(), request, timeout);
    EXPECT_EQ(reply.find("rdma_port_up"), std::string::npos) << request.substr(0, 40);
    ASSERT_TRUE(exporter.process().Running()) << request.substr(0, 40);
    // CivetWeb's own error answers (400, 505, ...) carry nosniff too, once.
    if (reply.rfind("HTTP/1.1 4", 0) == 0 || reply.rfind("HTTP/1.1 5", 0) == 0) {
      ++error_pages;
      size_t first = reply.find("X-Content-Type-Options: nosniff");
      EXPECT_NE(first, std::string::npos) << reply.substr(0, 300);
      EXPECT_EQ(reply.find("X-Content-Type-Options", first + 1), std::string::npos)
          << reply.substr(0, 300);
    }
  }
  EXPECT_GE(error_pages, 1) << "CivetWeb answered no broken request with an error page";
  // Odd but parseable GETs (CivetWeb may serve them or refuse them): only survival matters.
  const std::vector<std::string> odd = {
      "GET /metrics\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzzz\r\n",
      "GET http://evil/metrics HTTP/1.1\r\n\r\n",
  };
  for (const auto& request : odd) {
    Exchange(exporter.port(), request, timeout);
    ASSERT_TRUE(exporter.process().Running()) << request.substr(0, 40);
  }
  double ms = ScrapeMs(exporter.port());
  EXPECT_GT(ms, 0);
  long rss_end = RssKb(pid);
  std::cout << "oversized/malformed: RSS " << rss_start << " -> " << rss_end << " kB, scrape after "
            << ms << " ms\n";
  EXPECT_LT(rss_end, rss_start + 64 * 1024);
}

}  // namespace
}  // namespace rdma_exporter::testing
