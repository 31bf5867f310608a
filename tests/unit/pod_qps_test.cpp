// QPs per pod: the pod UID from a process's cgroup (systemd and cgroupfs drivers, cgroup v1 and
// v2), and the pod_qps collector over the Soft-RoCE capture with RES_QP answers and a procfs of
// the test's making.
#include <gtest/gtest.h>

#include <cerrno>
#include <map>

#include "../../collectors/pod_qps.h"
#include "rdma_exporter/pod_resources.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

using testing::Count;
using testing::RunCollector;
using testing::RxeCaptureSysfs;
using testing::TempDir;
using testing::Value;

constexpr char kUid[] = "5f2c8f4a-1b2c-4d5e-8f90-123456789abc";

TEST(PodUidFromCgroup, ReadsEveryKubeletLayout) {
  // cgroup v2, systemd driver (containerd), burstable and guaranteed QoS.
  EXPECT_EQ(PodUidFromCgroup("0::/kubepods.slice/kubepods-burstable.slice/"
                             "kubepods-burstable-pod5f2c8f4a_1b2c_4d5e_8f90_123456789abc.slice/"
                             "cri-containerd-0a1b2c.scope\n"),
            kUid);
  EXPECT_EQ(PodUidFromCgroup("0::/kubepods.slice/"
                             "kubepods-pod5f2c8f4a_1b2c_4d5e_8f90_123456789abc.slice/"
                             "cri-containerd-0a1b2c.scope\n"),
            kUid);
  // cgroupfs driver, cgroup v1: several hierarchies, any of them names the pod.
  EXPECT_EQ(PodUidFromCgroup("12:pids:/kubepods/besteffort/"
                             "pod5f2c8f4a-1b2c-4d5e-8f90-123456789abc/3f4e5d\n"
                             "11:memory:/kubepods/besteffort/"
                             "pod5f2c8f4a-1b2c-4d5e-8f90-123456789abc/3f4e5d\n"),
            kUid);
  // Not in a pod: a system service, a user session, the root, garbage.
  EXPECT_EQ(PodUidFromCgroup("0::/system.slice/rdma-exporter.service\n"), "");
  EXPECT_EQ(PodUidFromCgroup("0::/user.slice/user-0.slice/session-3.scope\n"), "");
  EXPECT_EQ(PodUidFromCgroup("0::/\n"), "");
  EXPECT_EQ(PodUidFromCgroup(""), "");
  EXPECT_EQ(PodUidFromCgroup("\xff\xfe::kubepods/podnot-a-uid\n"), "");
  // A pod-like name outside kubepods is not a pod.
  EXPECT_EQ(PodUidFromCgroup("0::/machine.slice/pod5f2c8f4a-1b2c-4d5e-8f90-123456789abc\n"), "");
  EXPECT_EQ(PodUidFromCgroup("0::/kubepods/besteffort/pod5f2c8f4a-1b2c-4d5e-8f90-123456789abcd\n"),
            "");
}

class FakeQps : public RdmaNetlinkReader {
 public:
  std::map<std::string, std::vector<RdmaQpOwner>> qps;
  std::map<std::string, int> errors;
  int ReadResources(const std::string&, std::map<std::string, uint64_t>*) override {
    return ENODEV;
  }
  int ReadHwCounters(const std::string&, unsigned,
                     std::vector<std::pair<std::string, uint64_t>>*) override {
    return ENODEV;
  }
  int ReadQps(const std::string& device, std::vector<RdmaQpOwner>* out) override {
    if (auto e = errors.find(device); e != errors.end()) return e->second;
    *out = qps[device];
    return 0;
  }
};

// A procfs: self/ns/pid names the namespace, <pid>/cgroup per process.
struct Procfs {
  TempDir dir;
  explicit Procfs(const std::string& pid_ns = "pid:[4026531836]") {
    dir.Symlink("self/ns/pid", pid_ns);
  }
  void Process(uint32_t pid, const std::string& cgroup) {
    dir.Write(std::to_string(pid) + "/cgroup", cgroup);
  }
};

std::string PodCgroup(const std::string& uid) {
  std::string escaped = uid;
  for (char& c : escaped)
    if (c == '-') c = '_';
  return "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + escaped +
         ".slice/cri-containerd-77.scope\n";
}

// A pod_qps collector over the Soft-RoCE capture, with the QPs `qps` answers and `proc`.
struct QpsNode {
  Procfs proc;
  FakeQps* qps;
  KernelReaders kernel;
  std::unique_ptr<PodQpsCollector> collector;
  SysfsReader sysfs{RxeCaptureSysfs()};
  explicit QpsNode(const std::string& pid_ns = "pid:[4026531836]") : proc(pid_ns) {
    auto fake = std::make_unique<FakeQps>();
    qps = fake.get();
    kernel.rdma_nl = std::move(fake);
    CollectorOptions options;
    options.procfs_root = proc.dir.path();
    collector = std::make_unique<PodQpsCollector>(options);
  }
  testing::CollectResult Poll() { return RunCollector(*collector, sysfs, {}, &kernel); }
};

TEST(PodQpsCollector, CountsEachPodsQpsPerPortAndLeavesOutTheRest) {
  QpsNode node;
  const std::string other = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";
  node.proc.Process(100, PodCgroup(kUid));
  node.proc.Process(200, PodCgroup(other));
  node.proc.Process(300, "0::/system.slice/opensm.service\n");  // a host daemon: not a pod
  node.qps->qps["rxe0"] = {
      {1, 0},                                  // kernel QP (GSI)
      {1, 100}, {1, 100}, {1, 100}, {0, 100},  // created, not bound to a port yet
      {1, 200}, {1, 300}, {1, 999}};           // exited between the dump and the cgroup read
  node.qps->qps["rxe1"] = {{1, 100}};
  auto r = node.Poll();
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Count(r.families, "rdma_pod_qps"), 3u);
  EXPECT_EQ(
      Value(r.families, "rdma_pod_qps", {{"device", "rxe0"}, {"port", "1"}, {"pod_uid", kUid}}),
      3.0);
  EXPECT_EQ(Value(r.families, "rdma_pod_qps", {{"device", "rxe0"}, {"pod_uid", other}}), 1.0);
  EXPECT_EQ(Value(r.families, "rdma_pod_qps", {{"device", "rxe1"}, {"pod_uid", kUid}}), 1.0);
}

TEST(PodQpsCollector, OutsideTheHostPidNamespaceExportsNothingAndIsNoError) {
  QpsNode node("pid:[4026532281]");  // a container's own PID namespace
  node.proc.Process(100, PodCgroup(kUid));
  node.qps->qps["rxe0"] = {{1, 100}};
  for (int poll = 0; poll < 2; ++poll) {  // said once, nothing exported either time
    auto r = node.Poll();
    EXPECT_EQ(r.failures, 0u);
    EXPECT_EQ(Count(r.families, "rdma_pod_qps"), 0u);
  }
}

TEST(PodQpsCollector, AFailedDumpCostsOnlyThatDevice) {
  QpsNode node;
  node.proc.Process(100, PodCgroup(kUid));
  node.proc.Process(101, "garbage\n\xff");
  node.qps->errors["rxe0"] = EBUSY;
  node.qps->qps["rxe1"] = {{1, 100}, {1, 101}};
  auto r = node.Poll();
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ((r.errors[{"pod_qps", "busy"}]), 1u);
  EXPECT_EQ(Count(r.families, "rdma_pod_qps"), 1u);
  EXPECT_EQ(Value(r.families, "rdma_pod_qps", {{"device", "rxe1"}, {"pod_uid", kUid}}), 1.0);
}

}  // namespace
}  // namespace rdma_exporter
