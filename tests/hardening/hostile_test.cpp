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
#include <thread>

#include "hardening_util.h"

namespace rdma_exporter::testing {
namespace {

using Clock = std::chrono::steady_clock;

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

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

TEST(Hostile, ThousandIdleConnectionsDoNotStarveAScraper) {
  RaiseFdLimit();
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib")});
  ASSERT_TRUE(exporter.ready()) << exporter.process().stderr_text();
  pid_t pid = exporter.process().pid();
  long rss_start = RssKb(pid);
  int fds_start = OpenFds(pid);

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
  EXPECT_LT(worst, 2000);
  std::cout << "1000 idle connections: worst scrape " << worst << " ms, RSS " << rss_start << " -> "
            << rss_loaded << " kB, fds " << fds_start << " -> " << fds_loaded << "\n";
  for (int fd : idle)
    close(fd);
  // Idle sockets are dropped after the read timeout at the latest; descriptors come back.
  int fds_end = 0;
  for (int i = 0; i < 100; ++i) {
    fds_end = OpenFds(pid);
    if (fds_end <= fds_start + 5) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_LE(fds_end, fds_start + 5);
  // One thread per connection: ~20 KiB resident each, far below this bound.
  EXPECT_LT(RssKb(pid), 256 * 1024);
  EXPECT_GT(ScrapeMs(exporter.port()), 0);
}

TEST(Hostile, SlowlorisIsCutAtTheReadTimeout) {
  RaiseFdLimit();
  ExporterProcess exporter({"--path.sysfs=" + FixturePath("mlx5-ib"), "--web.read-timeout=1s"});
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
  for (const auto& request : broken) {
    reply = Exchange(exporter.port(), request, timeout);
    EXPECT_EQ(reply.find("rdma_port_up"), std::string::npos) << request.substr(0, 40);
    ASSERT_TRUE(exporter.process().Running()) << request.substr(0, 40);
  }
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
