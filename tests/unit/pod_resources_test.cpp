// Pod attribution: the kubelet's pod-resources API served by a real gRPC server on a unix socket
// in the test's directory (the generated v1.PodResourcesLister service), answering with pods
// that hold SR-IOV VFs, shared device plugin resources and GPUs; then the hostile kubelets
// (hung, oversized, garbage, restarted) and the shared device plugin's config.
#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "../../collectors/pod_resources.h"
#include "pci_topology_fixture.h"
#include "pod_resources.grpc.pb.h"
#include "rdma_exporter/pod_resources.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

using namespace std::chrono_literals;
using testing::BindUnixSocket;
using testing::Count;
using testing::RunCollector;
using testing::TempDir;
using testing::Topology;
using testing::Uuid;
using testing::Value;

// A kubelet: serves `response`; while `hold` is set, List blocks until released (or the test
// ends), as a hung kubelet does.
class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  explicit FakeKubelet(std::string socket) : socket_(std::move(socket)) {}
  ~FakeKubelet() override { Stop(); }

  void Start() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(this);
    builder.SetMaxSendMessageSize(64 << 20);
    server_ = builder.BuildAndStart();
    ASSERT_TRUE(server_) << "gRPC server on " << socket_;
  }
  void Stop() {
    Release();
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + 1s);
    server_.reset();
  }
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    hold_ = true;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      hold_ = false;
    }
    released_.notify_all();
  }
  void Set(v1::ListPodResourcesResponse response) {
    std::lock_guard<std::mutex> lock(mu_);
    response_ = std::move(response);
  }
  int calls() const { return calls_; }
  int held_calls() const { return held_calls_; }

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* out) override {
    ++calls_;
    std::unique_lock<std::mutex> lock(mu_);
    if (hold_) {
      ++held_calls_;
      released_.wait(lock, [this] { return !hold_; });
    }
    *out = response_;
    return grpc::Status::OK;
  }

 private:
  std::string socket_;
  std::unique_ptr<grpc::Server> server_;
  std::mutex mu_;
  std::condition_variable released_;
  bool hold_ = false;
  v1::ListPodResourcesResponse response_;
  std::atomic<int> calls_{0}, held_calls_{0};
};

// Adds pod/container with one resource's device IDs. The kubelet also sends fields this client
// does not model (CPU IDs, NUMA topology); they are added as unknown fields, as they arrive.
void AddGrant(v1::ListPodResourcesResponse* response, const std::string& ns, const std::string& pod,
              const std::string& container, const std::string& resource,
              const std::vector<std::string>& ids) {
  v1::PodResources* p = nullptr;
  for (auto& existing : *response->mutable_pod_resources()) {
    if (existing.name() == pod && existing.namespace_() == ns) p = &existing;
  }
  if (p == nullptr) {
    p = response->add_pod_resources();
    p->set_name(pod);
    p->set_namespace_(ns);
  }
  auto* c = p->add_containers();
  c->set_name(container);
  c->GetReflection()->MutableUnknownFields(c)->AddVarint(3, 17);  // cpu_ids
  auto* d = c->add_devices();
  d->set_resource_name(resource);
  for (const auto& id : ids)
    d->add_device_ids(id);
  // topology { nodes { ID: 1 } }: a nested message, length-delimited
  d->GetReflection()->MutableUnknownFields(d)->AddLengthDelimited(3,
                                                                  std::string("\x0a\x02\x08\x01"));
}

TEST(PodResourcesClient, ListsEveryContainersDevicesAndSkipsFieldsItDoesNotModel) {
  TempDir dir;
  FakeKubelet kubelet(dir.path() + "/kubelet.sock");
  v1::ListPodResourcesResponse response;
  AddGrant(&response, "team-a", "train-0", "worker", "nvidia.com/gpu", {Uuid(0), Uuid(1)});
  AddGrant(&response, "team-a", "train-0", "worker", "rdma/hca", {"a1"});
  AddGrant(&response, "kube-system", "idle", "pause", "rdma/hca", {});  // no devices: left out
  kubelet.Set(response);
  kubelet.Start();

  PodResourcesClient client(dir.path() + "/kubelet.sock", 2s, 1 << 20);
  std::vector<ContainerDeviceGrant> grants;
  std::string reason, detail;
  ASSERT_TRUE(client.List(&grants, &reason, &detail)) << reason << ": " << detail;
  ASSERT_EQ(grants.size(), 2u);
  EXPECT_EQ(grants[0].pod_namespace, "team-a");
  EXPECT_EQ(grants[0].pod, "train-0");
  EXPECT_EQ(grants[0].container, "worker");
  EXPECT_EQ(grants[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(grants[0].device_ids, (std::vector<std::string>{Uuid(0), Uuid(1)}));
  EXPECT_EQ(grants[1].resource, "rdma/hca");
  // The connection is kept: a second call on the same client works without a new channel.
  ASSERT_TRUE(client.List(&grants, &reason, &detail));
  EXPECT_EQ(kubelet.calls(), 2);
}

TEST(PodResourcesClient, HungKubeletFailsAtTheDeadline) {
  TempDir dir;
  FakeKubelet kubelet(dir.path() + "/kubelet.sock");
  kubelet.Start();
  kubelet.Hold();
  PodResourcesClient client(dir.path() + "/kubelet.sock", 200ms, 1 << 20);
  std::vector<ContainerDeviceGrant> grants;
  std::string reason, detail;
  EXPECT_FALSE(client.List(&grants, &reason, &detail));
  EXPECT_EQ(reason, "deadline_exceeded");
  EXPECT_TRUE(grants.empty());
  kubelet.Release();
}

TEST(PodResourcesClient, OversizedReplyIsRefusedNotBuffered) {
  TempDir dir;
  FakeKubelet kubelet(dir.path() + "/kubelet.sock");
  v1::ListPodResourcesResponse response;
  std::vector<std::string> ids(20000, std::string(64, 'x'));  // ~1.3 MB
  AddGrant(&response, "ns", "big", "c", "rdma/hca", ids);
  kubelet.Set(response);
  kubelet.Start();
  PodResourcesClient client(dir.path() + "/kubelet.sock", 2s, 1 << 20);
  std::vector<ContainerDeviceGrant> grants;
  std::string reason, detail;
  EXPECT_FALSE(client.List(&grants, &reason, &detail));
  EXPECT_EQ(reason, "resource_exhausted") << detail;
  EXPECT_TRUE(grants.empty());
}

// Something that is not gRPC on the socket: accepts, writes garbage, closes.
TEST(PodResourcesClient, GarbageOnTheSocketIsAFailureNotAHang) {
  TempDir dir;
  const std::string path = dir.path() + "/kubelet.sock";
  int listener = BindUnixSocket(path, true);
  ASSERT_GE(listener, 0);
  std::atomic<bool> done{false};
  std::thread server([&] {
    while (!done) {
      int fd = accept(listener, nullptr, nullptr);
      if (fd < 0) break;
      const char junk[] = "HTTP/1.1 400 Bad Request\r\n\r\n\x00\xff\xfe garbage";
      (void)!write(fd, junk, sizeof(junk));
      close(fd);
    }
  });
  PodResourcesClient client(path, 2s, 1 << 20);
  std::vector<ContainerDeviceGrant> grants;
  std::string reason, detail;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(client.List(&grants, &reason, &detail));
  EXPECT_FALSE(reason.empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);  // bounded by the deadline
  done = true;
  shutdown(listener, SHUT_RDWR);
  close(listener);
  server.join();
}

// Waits (up to 10 s) until pred(state) holds; returns the state that satisfied it.
template <typename Pred>
std::shared_ptr<const PodResourcesWatcher::State> WaitFor(const PodResourcesWatcher& watcher,
                                                          Pred pred) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    auto state = watcher.Latest();
    if (pred(*state) || std::chrono::steady_clock::now() > deadline) return state;
    std::this_thread::sleep_for(10ms);
  }
}

TEST(PodResourcesWatcher, NoSocketThenKubeletStartsThenRestarts) {
  TempDir dir;
  const std::string path = dir.path() + "/kubelet.sock";
  PodResourcesWatcher watcher({path, 50ms, 500ms, 1 << 20});
  watcher.Start();
  using Status = PodResourcesWatcher::Status;
  auto state = WaitFor(watcher, [](const auto& s) { return s.status == Status::kNoSocket; });
  EXPECT_EQ(state->status, Status::kNoSocket);
  EXPECT_EQ(state->failures, 0u);  // no socket is not a failure

  v1::ListPodResourcesResponse response;
  AddGrant(&response, "ns", "p", "c", "rdma/hca", {"x"});
  {
    FakeKubelet kubelet(path);
    kubelet.Set(response);
    kubelet.Start();
    state = WaitFor(watcher, [](const auto& s) { return s.status == Status::kOk; });
    ASSERT_EQ(state->status, Status::kOk);
    ASSERT_EQ(state->grants.size(), 1u);
  }
  // A crashed kubelet leaves its socket file behind, and nothing accepts on it.
  unlink(path.c_str());
  int dead = BindUnixSocket(path, false);  // no listen()
  ASSERT_GE(dead, 0);
  state = WaitFor(watcher, [](const auto& s) { return s.status == Status::kFailed; });
  EXPECT_EQ(state->status, Status::kFailed);
  EXPECT_EQ(state->last_failure_reason, "unavailable");
  EXPECT_TRUE(state->grants.empty());  // pods are not kept past what the kubelet says
  EXPECT_GE(state->failures, 1u);

  // The restarted kubelet removes and re-creates its socket; the same watcher reconnects.
  close(dead);
  unlink(path.c_str());
  FakeKubelet restarted(path);
  AddGrant(&response, "ns", "q", "c", "rdma/hca", {"y"});
  restarted.Set(response);
  restarted.Start();
  state = WaitFor(watcher, [](const auto& s) { return s.status == Status::kOk; });
  ASSERT_EQ(state->status, Status::kOk);
  EXPECT_EQ(state->grants.size(), 2u);
}

// --- the collector on a DGX-H100-like node ---------------------------------------------------

// DGX H100 (8 GPUs, mlx5_0..7 compute rails, mlx5_8..11 storage) on RoCE, plus an SR-IOV VF
// of mlx5_0 (mlx5_12). Each device has vendor/device IDs, a driver and a netdev for the plugin
// selectors.
struct Node {
  Topology t;
  std::string vf_address;
  Node() {
    testing::BuildDgxH100(t);
    auto vf = Topology::Switch(0x15, 3)[2];  // a third function under GPU 0's switch
    vf_address = vf.back();
    t.Hca("mlx5_12", vf, 0);
    for (int i = 0; i <= 12; ++i) {
      std::string dev = "sys/class/infiniband/mlx5_" + std::to_string(i);
      bool storage = i >= 8 && i < 12;
      t.dir().Write(dev + "/device/vendor", "0x15b3\n");
      t.dir().Write(dev + "/device/device", storage ? "0x1017\n" : "0x101e\n");
      t.dir().Symlink(dev + "/device/driver", "../../../../bus/pci/drivers/mlx5_core");
      std::string netdev = (storage ? "stor" : "ibp") + std::to_string(i);
      t.dir().Write(dev + "/ports/1/link_layer", "Ethernet\n");
      t.dir().Write(dev + "/ports/1/gid_attrs/ndevs/0", netdev + "\n");
      t.dir().Write("sys/class/net/" + netdev + "/type", "1\n");
    }
  }
};

// Polls the collector (one poll per 20 ms) until pod_info has `want` series or 10 s pass.
testing::CollectResult PollUntil(PodResourcesCollector& collector, SysfsReader& sysfs,
                                 size_t want) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    auto result = RunCollector(collector, sysfs);
    if (Count(result.families, "rdma_pod_info") == want ||
        std::chrono::steady_clock::now() > deadline)
      return result;
    std::this_thread::sleep_for(20ms);
  }
}

std::optional<double> PodInfo(const testing::CollectResult& r, const std::string& device,
                              const std::string& pod, const std::string& via) {
  return Value(r.families, "rdma_pod_info",
               {{"device", device}, {"port", "1"}, {"pod", pod}, {"via", via}});
}

class PodResourcesCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.procfs_root = node_.t.proc();
    options_.pod_resources_socket = dir_.path() + "/kubelet.sock";
    options_.pod_resources_interval = 50ms;
  }
  // Starts the kubelet with one pod holding one rdma/hca share.
  void ServeOneSharedPod() {
    v1::ListPodResourcesResponse response;
    AddGrant(&response, "ns", "p", "c", "rdma/hca", {"7"});
    kubelet_ = std::make_unique<FakeKubelet>(options_.pod_resources_socket);
    kubelet_->Set(response);
    kubelet_->Start();
  }
  Node node_;
  std::unique_ptr<FakeKubelet> kubelet_;
  TempDir dir_;
  CollectorOptions options_;
};

TEST_F(PodResourcesCollectorTest, VfSharedAndGpuPodsAreAttributedToTheirPorts) {
  v1::ListPodResourcesResponse response;
  // A training pod with GPUs 2 and 5: its rails are mlx5_2 and mlx5_5.
  AddGrant(&response, "team-a", "train-0", "worker", "nvidia.com/gpu", {Uuid(2), Uuid(5)});
  // A pod with the VF.
  AddGrant(&response, "team-b", "infer-0", "server", "nvidia.com/sriov_rdma", {node_.vf_address});
  // A pod of the shared pool "compute" (device ID 101e: the eight compute HCAs and the VF).
  AddGrant(&response, "team-c", "bench-0", "ib", "rdma/compute", {"1", "2"});
  // A pod of the pool "storage" (two netdevs by name).
  AddGrant(&response, "team-c", "ckpt-0", "io", "rdma/storage", {"9"});
  // A pod of a resource nobody knows: no attribution.
  AddGrant(&response, "team-d", "other", "c", "example.com/foo", {"0000:15:00.0"});
  FakeKubelet kubelet(options_.pod_resources_socket);
  kubelet.Set(response);
  kubelet.Start();
  dir_.Write("config.json", R"({"periodicUpdateInterval": 300, "configList": [
      {"resourceName": "compute", "rdmaHcaMax": 63,
       "selectors": {"vendors": ["15b3"], "deviceIDs": ["101e"], "linkTypes": ["ether"]}},
      {"resourceName": "storage", "rdmaHcaMax": 63, "devices": ["stor8", "stor9"]}]})");
  options_.shared_device_plugin_config = dir_.path() + "/config.json";

  PodResourcesCollector collector(options_);
  SysfsReader sysfs(node_.t.sys());
  auto r = PollUntil(collector, sysfs, 2 + 1 + 9 + 2);
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Value(r.families, "rdma_exporter_pod_resources_up"), 1.0);
  EXPECT_EQ(Count(r.families, "rdma_pod_info"), 14u);
  EXPECT_EQ(Value(r.families, "rdma_pod_info",
                  {{"device", "mlx5_2"},
                   {"namespace", "team-a"},
                   {"pod", "train-0"},
                   {"container", "worker"},
                   {"resource", "nvidia.com/gpu"},
                   {"via", "gpu_affinity"}}),
            1.0);
  EXPECT_EQ(PodInfo(r, "mlx5_5", "train-0", "gpu_affinity"), 1.0);
  EXPECT_FALSE(PodInfo(r, "mlx5_0", "train-0", "gpu_affinity"));
  EXPECT_EQ(PodInfo(r, "mlx5_12", "infer-0", "vf"), 1.0);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(PodInfo(r, "mlx5_" + std::to_string(i), "bench-0", "shared"), 1.0) << i;
  EXPECT_EQ(PodInfo(r, "mlx5_12", "bench-0", "shared"), 1.0);
  EXPECT_FALSE(PodInfo(r, "mlx5_8", "bench-0", "shared"));  // 1017: not in the pool
  EXPECT_EQ(PodInfo(r, "mlx5_8", "ckpt-0", "shared"), 1.0);
  EXPECT_EQ(PodInfo(r, "mlx5_9", "ckpt-0", "shared"), 1.0);
  EXPECT_FALSE(PodInfo(r, "mlx5_10", "ckpt-0", "shared"));
  EXPECT_FALSE(Value(r.families, "rdma_pod_info", {{"pod", "other"}}));

  // The pod goes away: its series go with the kubelet's next answer.
  v1::ListPodResourcesResponse after;
  AddGrant(&after, "team-b", "infer-0", "server", "nvidia.com/sriov_rdma", {node_.vf_address});
  kubelet.Set(after);
  r = PollUntil(collector, sysfs, 1);
  EXPECT_EQ(Count(r.families, "rdma_pod_info"), 1u);
  EXPECT_EQ(PodInfo(r, "mlx5_12", "infer-0", "vf"), 1.0);
}

TEST_F(PodResourcesCollectorTest, WithoutThePluginConfigASharedPoolCoversEveryHca) {
  ServeOneSharedPod();
  PodResourcesCollector collector(options_);
  SysfsReader sysfs(node_.t.sys());
  auto r = PollUntil(collector, sysfs, 13);
  EXPECT_EQ(Count(r.families, "rdma_pod_info"), 13u);
  EXPECT_EQ(PodInfo(r, "mlx5_9", "p", "shared"), 1.0);
}

TEST_F(PodResourcesCollectorTest, BrokenPluginConfigIsCountedAndPoolsFallBackToEveryHca) {
  ServeOneSharedPod();
  dir_.Write("config.json", "{\"configList\": [{\"resourceName\": ");
  options_.shared_device_plugin_config = dir_.path() + "/config.json";
  PodResourcesCollector collector(options_);
  SysfsReader sysfs(node_.t.sys());
  auto r = PollUntil(collector, sysfs, 13);
  EXPECT_EQ(Count(r.families, "rdma_pod_info"), 13u);
  EXPECT_GE(r.failures, 1u);
}

TEST_F(PodResourcesCollectorTest, NoSocketExportsNothingAndIsNoError) {
  PodResourcesCollector collector(options_);
  SysfsReader sysfs(node_.t.sys());
  for (int poll = 0; poll < 5; ++poll) {
    auto r = RunCollector(collector, sysfs);
    EXPECT_EQ(r.failures, 0u);
    EXPECT_EQ(Count(r.families, "rdma_pod_info"), 0u);
    EXPECT_FALSE(Value(r.families, "rdma_exporter_pod_resources_up"));
    std::this_thread::sleep_for(60ms);
  }
}

// A kubelet that hangs never holds a poll: while its List call is blocked, polls return at once
// with the last answer, then the failure is counted and the pods are dropped.
TEST_F(PodResourcesCollectorTest, HungKubeletNeverDelaysAPoll) {
  v1::ListPodResourcesResponse response;
  AddGrant(&response, "ns", "p", "c", "nvidia.com/sriov_rdma", {node_.vf_address});
  FakeKubelet kubelet(options_.pod_resources_socket);
  kubelet.Set(response);
  kubelet.Start();
  options_.pod_resources_interval = 1s;  // deadline 2 s: a held call outlives several polls
  PodResourcesCollector collector(options_);
  SysfsReader sysfs(node_.t.sys());
  auto r = PollUntil(collector, sysfs, 1);
  ASSERT_EQ(Count(r.families, "rdma_pod_info"), 1u);

  kubelet.Hold();
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (kubelet.held_calls() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(kubelet.held_calls(), 1);
  // The List call is now blocked in the kubelet; polls go on with the last answer.
  for (int poll = 0; poll < 3; ++poll) {
    r = RunCollector(collector, sysfs);
    EXPECT_EQ(Count(r.families, "rdma_pod_info"), 1u);
  }
  EXPECT_EQ(kubelet.held_calls(), 1);  // still the same blocked call: no poll waited for it
  // At the deadline the call fails: counted once, pods dropped, up = 0.
  r = PollUntil(collector, sysfs, 0);
  EXPECT_EQ(Count(r.families, "rdma_pod_info"), 0u);
  EXPECT_EQ(Value(r.families, "rdma_exporter_pod_resources_up"), 0.0);
  EXPECT_GE((r.errors[{"pod_resources", "deadline_exceeded"}]), 1u);
  kubelet.Release();
}

// --- the shared device plugin's config ----------------------------------------------------

TEST(SharedDevicePluginConfig, ReadsPoolsWithDevicesSelectorsAndPrefix) {
  std::string error;
  auto pools = ParseSharedDevicePluginConfig(R"({
    "periodicUpdateInterval": 300,
    "configList": [
      {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000, "devices": ["ib0", "ib1"]},
      {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
       "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "drivers": ["mlx5_core"],
                     "ifNames": ["ib3", "ib4"], "linkTypes": ["infiniband"]}}]})",
                                             &error);
  ASSERT_TRUE(pools) << error;
  ASSERT_EQ(pools->size(), 2u);
  EXPECT_EQ((*pools)[0].resource, "rdma/hca_shared_devices_a");
  EXPECT_EQ((*pools)[0].if_names, (std::vector<std::string>{"ib0", "ib1"}));
  EXPECT_EQ((*pools)[1].resource, "rdma/hca_shared_devices_b");
  EXPECT_EQ((*pools)[1].vendors, std::vector<std::string>{"15b3"});
  EXPECT_EQ((*pools)[1].device_ids, std::vector<std::string>{"1017"});
  EXPECT_EQ((*pools)[1].drivers, std::vector<std::string>{"mlx5_core"});
  EXPECT_EQ((*pools)[1].if_names, (std::vector<std::string>{"ib3", "ib4"}));
  EXPECT_EQ((*pools)[1].link_types, std::vector<std::string>{"infiniband"});

  pools = ParseSharedDevicePluginConfig(
      R"({"resourcePrefix": "example.com", "configList": [{"resourceName": "hca"}]})", &error);
  ASSERT_TRUE(pools) << error;
  EXPECT_EQ((*pools)[0].resource, "example.com/hca");
}

TEST(SharedDevicePluginConfig, RejectsWhatIsNotAConfig) {
  std::string error;
  EXPECT_FALSE(ParseSharedDevicePluginConfig("", &error));
  EXPECT_FALSE(ParseSharedDevicePluginConfig("{\"configList\": [", &error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(ParseSharedDevicePluginConfig(R"({"configList": "hca"})", &error));
  EXPECT_FALSE(ParseSharedDevicePluginConfig(R"({"configList": [{"rdmaHcaMax": 5}]})", &error));
  EXPECT_FALSE(ParseSharedDevicePluginConfig("\xff\xfe", &error));
}

TEST(SharedDevicePluginConfig, SelectorsAreOrWithinAListAndAndBetweenLists) {
  HcaSelectorFacts hca{"15b3", "101b", "mlx5_core", {"ibp1"}, {"infiniband"}};
  SharedDevicePool pool;
  EXPECT_TRUE(SharedPoolCovers(pool, hca));  // no selectors: every device
  pool.vendors = {"8086", "15B3"};           // hex IDs compare without case
  pool.device_ids = {"1017", "101B"};
  EXPECT_TRUE(SharedPoolCovers(pool, hca));
  pool.link_types = {"ether"};
  EXPECT_FALSE(SharedPoolCovers(pool, hca));
  pool.link_types = {"ether", "infiniband"};
  pool.if_names = {"ibp0"};
  EXPECT_FALSE(SharedPoolCovers(pool, hca));
  pool.if_names = {"ibp0", "ibp1"};
  pool.drivers = {"irdma"};
  EXPECT_FALSE(SharedPoolCovers(pool, hca));
}

}  // namespace
}  // namespace rdma_exporter
