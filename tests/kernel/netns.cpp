#include "netns.h"

#include <fcntl.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <memory>

namespace rdma_exporter::testing {
namespace {

int Shell(const std::string& command, std::string* output = nullptr) {
  std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  std::string out;
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0)
    out.append(buf, n);
  int status = pclose(pipe);
  if (output != nullptr) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

NetnsWithVeth::NetnsWithVeth(std::string a, std::string b) {
  static std::atomic<int> counter{0};
  name_ = "rdmaexp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  std::string out;
  if (Shell("ip netns add " + name_, &out) != 0) {
    ADD_FAILURE() << "ip netns add failed: " << out;
    return;
  }
  if (Ip("link add " + a + " type veth peer name " + b) != 0 || Ip("link set lo up") != 0 ||
      Ip("link set " + a + " up") != 0 || Ip("link set " + b + " up") != 0) {
    ADD_FAILURE() << "cannot create veth pair in " << name_;
    return;
  }
  ok_ = true;
}

NetnsWithVeth::~NetnsWithVeth() {
  Leave();
  Shell("ip netns del " + name_);
}

void NetnsWithVeth::Enter() {
  if (original_ns_ < 0) original_ns_ = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  int fd = open(("/var/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << "cannot open namespace " << name_;
  ASSERT_EQ(setns(fd, CLONE_NEWNET), 0) << "setns failed";
  close(fd);
}

void NetnsWithVeth::Leave() {
  if (original_ns_ < 0) return;
  setns(original_ns_, CLONE_NEWNET);
  close(original_ns_);
  original_ns_ = -1;
}

int NetnsWithVeth::Ip(const std::string& args) const {
  return Shell("ip -n " + name_ + " " + args);
}

int NetnsWithVeth::Exec(const std::string& command, std::string* output) const {
  return Shell("ip netns exec " + name_ + " " + command, output);
}

}  // namespace rdma_exporter::testing
