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

}  // namespace
}  // namespace rdma_exporter
