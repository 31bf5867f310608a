// The HTTP layer in-process: the exception barrier
// at CivetWeb's C callback and the accept gate (exporter/http/accept_gate.cpp) across restarts.
// Listens on 127.0.0.1 (a free port).
#include "rdma_exporter/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "process.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/metric_names.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

TEST(HttpServer, AnExceptionInAHandlerIsA500AndTheServerKeepsServing) {
  // Without the barrier the exception unwinds through CivetWeb's C frames: std::terminate.
  PollerConfig poller_config;
  poller_config.process_metrics = false;
  Poller poller(std::make_unique<SysfsReader>(testing::RxeCaptureSysfs()),
                std::move(poller_config));
  poller.Collect();
  HttpConfig config;
  int port = testing::FreeLoopbackPort();
  config.civetweb_ports = "127.0.0.1:" + std::to_string(port);
  config.max_connections = 4;
  config.on_request_for_testing = [](std::string_view path) {
    if (path == "/throw") throw std::runtime_error("handler bug");
    if (path == "/throw-int") throw 42;
  };
  InitHttpLibrary(false);
  HttpServer server(config, poller);
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  EXPECT_EQ(testing::HttpGet(port, "/throw").status, 500);
  EXPECT_EQ(testing::HttpGet(port, "/throw-int").status, 500);
  auto metrics = testing::HttpGet(port, "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("rdma_exporter_devices"), std::string::npos);
  server.Stop();
}

int ConnectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Blocks up to 5 s for EOF (or a reset) from the server.
bool ServerCloses(int fd) {
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buf[64];
  ssize_t n = recv(fd, buf, sizeof(buf), 0);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

// One worker and a 30 s read timeout: idle and half-sent connections wait in the gate, not on
// the worker; stopping the server (as a reload does) closes them, and a restarted server on the
// same port gates again.
TEST(HttpServer, IdleConnectionsWaitInTheGateAndStopClosesThem) {
  PollerConfig poller_config;
  poller_config.process_metrics = false;
  Poller poller(std::make_unique<SysfsReader>(testing::RxeCaptureSysfs()),
                std::move(poller_config));
  poller.Collect();
  HttpConfig config;
  int port = testing::FreeLoopbackPort();
  config.civetweb_ports = "127.0.0.1:" + std::to_string(port);
  config.max_connections = 1;
  config.read_timeout = std::chrono::seconds(30);
  InitHttpLibrary(false);
  HttpServer server(config, poller);
  std::string error;
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(server.Start(&error)) << error;
    std::vector<int> idle;
    for (int i = 0; i < 8; ++i) {
      int fd = ConnectLoopback(port);
      ASSERT_GE(fd, 0);
      if (i % 2 == 1) send(fd, "GET / HTTP/1.1\r\nHost", 20, MSG_NOSIGNAL);
      idle.push_back(fd);
    }
    EXPECT_EQ(testing::HttpGet(port, "/metrics").status, 200) << round;
    EXPECT_EQ(testing::HttpGet(port, "/-/healthy").status, 200) << round;
    server.Stop();
    for (int fd : idle) {
      EXPECT_TRUE(ServerCloses(fd)) << round;
      close(fd);
    }
  }
}

// Reads one response from fd: the head (status line and headers) and a Content-Length body.
struct RawResponse {
  std::string head;
  std::string body;
  bool complete = false;
};

RawResponse ReadResponse(int fd, bool head_only = false) {
  RawResponse r;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string data;
  char buf[16384];
  size_t end = std::string::npos;
  while ((end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return r;
    data.append(buf, static_cast<size_t>(n));
  }
  r.head = data.substr(0, end + 2);
  size_t length_at = r.head.find("\r\nContent-Length: ");
  if (length_at == std::string::npos) return r;
  size_t length = std::stoul(r.head.substr(length_at + 18));
  r.body = data.substr(end + 4);
  if (head_only) length = 0;
  while (r.body.size() < length) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return r;
    r.body.append(buf, static_cast<size_t>(n));
  }
  r.complete = r.body.size() == length;
  return r;
}

bool SendAll(int fd, std::string_view data) {
  return send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
}

// The server writes each response head itself (one write instead of CivetWeb's send per
// header line): its Connection header must say what CivetWeb then does with the connection,
// and a small or large body, HEAD and keep-alive must come out as before.
TEST(HttpServer, TheResponseHeadTellsWhatHappensToTheConnection) {
  PollerConfig poller_config;
  for (const auto& factory : CollectorRegistry())
    poller_config.collectors.push_back(factory.create(CollectorOptions{}));
  poller_config.process_metrics = false;
  // A port with 2,000 hardware counters: a /metrics body larger than one write.
  testing::TempDir tree;
  tree.Write("class/infiniband/mlx5_0/node_type", "1: CA\n");
  tree.Write("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  for (int i = 0; i < 2000; ++i)
    tree.Write("class/infiniband/mlx5_0/ports/1/hw_counters/counter_" + std::to_string(i), "7\n");
  Poller poller(std::make_unique<SysfsReader>(tree.path()), std::move(poller_config));
  poller.Collect();
  HttpConfig config;
  int port = testing::FreeLoopbackPort();
  config.civetweb_ports = "127.0.0.1:" + std::to_string(port);
  config.max_connections = 4;
  InitHttpLibrary(false);
  HttpServer server(config, poller);
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  std::string metrics = testing::HttpGet(port, "/metrics").body;
  // Larger than one write (kSingleWriteBody): the body follows its head in a second write.
  ASSERT_GT(metrics.size(), 64u * 1024);

  // HTTP/1.1: kept alive; three requests on one connection, small and large bodies and HEAD.
  int fd = ConnectLoopback(port);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, "GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n"));
  RawResponse healthy = ReadResponse(fd);
  ASSERT_TRUE(healthy.complete) << healthy.head;
  EXPECT_EQ(healthy.head.substr(0, 17), "HTTP/1.1 200 OK\r\n");
  EXPECT_NE(healthy.head.find("\r\nConnection: keep-alive\r\n"), std::string::npos);
  EXPECT_NE(healthy.head.find("\r\nDate: "), std::string::npos);
  EXPECT_NE(healthy.head.find("\r\nX-Content-Type-Options: nosniff\r\n"), std::string::npos);
  EXPECT_EQ(healthy.body, "Healthy\n");
  ASSERT_TRUE(SendAll(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  RawResponse full = ReadResponse(fd);
  ASSERT_TRUE(full.complete) << full.head;
  EXPECT_EQ(full.body.size(), metrics.size());
  EXPECT_NE(full.body.find("counter_1999"), std::string::npos);
  ASSERT_TRUE(SendAll(fd, "HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  RawResponse head = ReadResponse(fd, /*head_only=*/true);
  EXPECT_NE(head.head.find("\r\nContent-Length: "), std::string::npos) << head.head;
  EXPECT_TRUE(head.body.empty());
  ASSERT_TRUE(SendAll(fd, "GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: x, Keep-Alive\r\n\r\n"));
  RawResponse missing = ReadResponse(fd);
  EXPECT_EQ(missing.head.substr(0, 22), "HTTP/1.1 404 Not Found");
  EXPECT_NE(missing.head.find("\r\nConnection: keep-alive\r\n"), std::string::npos);
  close(fd);

  // HTTP/1.0 without a Connection header, and HTTP/1.1 asking to close: "close", then closed.
  for (std::string_view request : {"GET /-/healthy HTTP/1.0\r\n\r\n",
                                   "GET /-/healthy HTTP/1.1\r\nConnection: close\r\n\r\n"}) {
    fd = ConnectLoopback(port);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, request));
    RawResponse r = ReadResponse(fd);
    EXPECT_TRUE(r.complete) << request;
    EXPECT_NE(r.head.find("\r\nConnection: close\r\n"), std::string::npos) << r.head;
    EXPECT_TRUE(ServerCloses(fd)) << request;
    close(fd);
  }
  server.Stop();
}

}  // namespace
}  // namespace rdma_exporter
