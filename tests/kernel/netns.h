// Network namespaces for the kernel tests: a namespace of the test's own with a veth pair in
// it, entered by the calling thread. Nothing leaves the namespace. Needs root (CAP_NET_ADMIN,
// CAP_SYS_ADMIN): in CI (CI set) a missing privilege fails the test, elsewhere it skips with a
// message saying so.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#define RDMA_REQUIRE_ROOT()                                                            \
  do {                                                                                 \
    if (geteuid() != 0) {                                                              \
      if (std::getenv("CI") != nullptr) FAIL() << "kernel tests need root in CI";      \
      GTEST_SKIP() << "needs root to create a network namespace (CI runs it as root)"; \
    }                                                                                  \
  } while (0)

namespace rdma_exporter::testing {

class NetnsWithVeth {
 public:
  // Creates namespace rdmaexp-<pid>-<n> holding veth pair `a` <-> `b`, both up.
  NetnsWithVeth(std::string a = "rdx0", std::string b = "rdx1");
  ~NetnsWithVeth();  // leaves (if entered) and deletes the namespace
  NetnsWithVeth(const NetnsWithVeth&) = delete;
  NetnsWithVeth& operator=(const NetnsWithVeth&) = delete;

  // Moves the calling thread into the namespace (sockets created afterwards live there).
  void Enter();
  void Leave();
  // Runs `ip -n <ns> <args>`; returns its exit status.
  int Ip(const std::string& args) const;
  // Runs a command inside the namespace (`ip netns exec <ns> <command>`); returns its status.
  int Exec(const std::string& command, std::string* output = nullptr) const;
  const std::string& name() const { return name_; }
  bool ok() const { return ok_; }

 private:
  std::string name_;
  bool ok_ = false;
  int original_ns_ = -1;
};

}  // namespace rdma_exporter::testing
