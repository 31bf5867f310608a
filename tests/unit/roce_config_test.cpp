#include "collectors/roce_config.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace fs = std::filesystem;

namespace rdma_exporter::testing {
namespace {

class FakeDcb : public DcbReader {
 public:
  std::map<std::string, DcbConfig> configs;
  int Read(const std::string& netdev, DcbConfig* out) override {
    auto it = configs.find(netdev);
    if (it == configs.end()) return ENODEV;
    *out = it->second;
    return 0;
  }
};

class FakeNetdev : public NetdevReader {
 public:
  std::map<std::string, uint32_t> mtu;
  int Read(const std::string& netdev, NetdevState* out) override {
    auto it = mtu.find(netdev);
    if (it == mtu.end()) return ENODEV;
    *out = NetdevState{};
    out->mtu = it->second;
    return 0;
  }
};

// The usual RoCE setup: PFC on priority 3 only, DSCP trust with the default map prio = DSCP >> 3.
DcbConfig GoodDcb() {
  DcbConfig dcb;
  dcb.supported = true;
  dcb.pfc_known = true;
  dcb.pfc_cap = 8;
  dcb.pfc_enabled = 1 << 3;
  for (int d = 0; d < 64; ++d)
    dcb.dscp_to_priority[d] = d >> 3;
  dcb.dscp_entries = 64;
  return dcb;
}

class RoceConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(FixturePath("mlx5-roce"), dir_.path(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    dcb_ = new FakeDcb;
    netdev_ = new FakeNetdev;
    kernel_.dcb.reset(dcb_);
    kernel_.netdev.reset(netdev_);
    dcb_->configs["ens1f0np0"] = GoodDcb();
    netdev_->mtu = {{"ens1f0np0", 9000}, {"ens1f0v0", 9000}, {"ens2f0np0", 9000}};
    SetEcn("ens1f0np0", "roce_np", 3, true);
    SetEcn("ens1f0np0", "roce_rp", 3, true);
  }

  void SetEcn(const std::string& netdev, const std::string& role, int prio, bool on) {
    fs::path dir = fs::path(dir_.path()) / "class/net" / netdev / "ecn" / role / "enable";
    fs::create_directories(dir);
    std::ofstream(dir / std::to_string(prio)) << (on ? "1\n" : "0\n");
  }

  CollectResult Run(std::optional<int> tc) {
    CollectorOptions options;
    options.nccl_ib_tc = tc;
    RoceConfigCollector collector(options);
    SysfsReader sysfs(dir_.path());
    std::vector<DiscoveryError> errors;
    Inventory inventory = DiscoverInventory(sysfs, {}, &errors);
    ErrorTracker tracker;
    CollectContext ctx(sysfs, tracker, collector.name(), &kernel_);
    MetricSink sink;
    EXPECT_TRUE(collector.Collect(inventory, ctx, sink));
    return {sink.Take(), ctx.failures(), tracker.Totals()};
  }

  static std::optional<double> Check(const CollectResult& r, const std::string& netdev,
                                     const std::string& check) {
    return Value(r.families, "rdma_roce_config_ok", {{"netdev", netdev}, {"check", check}});
  }

  TempDir dir_;
  KernelReaders kernel_;
  FakeDcb* dcb_;
  FakeNetdev* netdev_;
};

TEST_F(RoceConfigTest, HealthyPortPassesEveryCheckAndMapsTc106ToPriority3) {
  auto r = Run(106);  // DSCP 26 -> priority 3
  EXPECT_EQ(Value(r.families, "rdma_nccl_priority", {{"device", "mlx5_0"}, {"port", "1"}}), 3);
  for (const char* check : {"pfc_on_nccl_priority", "pfc_only_on_nccl_priority", "trust_dscp",
                            "ecn_np_on_nccl_priority", "ecn_rp_on_nccl_priority",
                            "mtu_at_least_4200", "roce_v2_gid_present"}) {
    EXPECT_EQ(Check(r, "ens1f0np0", check), 1) << check;
  }
  EXPECT_EQ(r.failures, 0u);
}

TEST_F(RoceConfigTest, PriorityFollowsTheLiveDscpMapNotTheDefault) {
  dcb_->configs["ens1f0np0"].dscp_to_priority[32] = 5;  // TC 128 -> DSCP 32 -> 5 here, not 4
  dcb_->configs["ens1f0np0"].pfc_enabled = 1 << 5;
  SetEcn("ens1f0np0", "roce_np", 5, true);
  auto r = Run(128);
  EXPECT_EQ(Value(r.families, "rdma_nccl_priority", {{"netdev", "ens1f0np0"}}), 5);
  EXPECT_EQ(Check(r, "ens1f0np0", "pfc_only_on_nccl_priority"), 1);
  EXPECT_EQ(Check(r, "ens1f0np0", "ecn_np_on_nccl_priority"), 1);
  EXPECT_EQ(Check(r, "ens1f0np0", "ecn_rp_on_nccl_priority"), std::nullopt);  // no file for 5
}

TEST_F(RoceConfigTest, PfcOnAnExtraPriorityFailsOnlyTheOnlyCheck) {
  dcb_->configs["ens1f0np0"].pfc_enabled = (1 << 3) | (1 << 0);
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "pfc_on_nccl_priority"), 1);
  EXPECT_EQ(Check(r, "ens1f0np0", "pfc_only_on_nccl_priority"), 0);
}

TEST_F(RoceConfigTest, PfcOnTheWrongPriorityFailsBoth) {
  dcb_->configs["ens1f0np0"].pfc_enabled = 1 << 0;
  SetEcn("ens1f0np0", "roce_np", 3, false);
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "pfc_on_nccl_priority"), 0);
  EXPECT_EQ(Check(r, "ens1f0np0", "pfc_only_on_nccl_priority"), 0);
  EXPECT_EQ(Check(r, "ens1f0np0", "ecn_np_on_nccl_priority"), 0);
}

TEST_F(RoceConfigTest, PcpTrustFailsTrustAndLeavesPriorityChecksUnknown) {
  DcbConfig pcp = GoodDcb();
  pcp.dscp_to_priority.fill(-1);
  pcp.dscp_entries = 0;
  dcb_->configs["ens1f0np0"] = pcp;
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "trust_dscp"), 0);
  EXPECT_EQ(Value(r.families, "rdma_nccl_priority"), std::nullopt);
  EXPECT_EQ(Check(r, "ens1f0np0", "pfc_on_nccl_priority"), std::nullopt);
  EXPECT_EQ(Check(r, "ens1f0np0", "mtu_at_least_4200"), 1);
}

TEST_F(RoceConfigTest, SmallMtuFailsAndThresholdIsConfigurable) {
  netdev_->mtu["ens1f0np0"] = 1500;
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "mtu_at_least_4200"), 0);
  netdev_->mtu["ens1f0np0"] = 4200;
  EXPECT_EQ(Check(Run(106), "ens1f0np0", "mtu_at_least_4200"), 1);
}

TEST_F(RoceConfigTest, WithoutTcOnlyTcIndependentChecksAreExported) {
  auto r = Run(std::nullopt);
  EXPECT_EQ(Value(r.families, "rdma_nccl_priority"), std::nullopt);
  EXPECT_EQ(Check(r, "ens1f0np0", "trust_dscp"), 1);
  EXPECT_EQ(Check(r, "ens1f0np0", "mtu_at_least_4200"), 1);
  EXPECT_EQ(Check(r, "ens1f0np0", "roce_v2_gid_present"), 1);
  EXPECT_EQ(Check(r, "ens1f0np0", "pfc_on_nccl_priority"), std::nullopt);
}

TEST_F(RoceConfigTest, DcbUnsupportedOrFailingLeavesDcbChecksUnknown) {
  DcbConfig unsupported;
  dcb_->configs["ens1f0np0"] = unsupported;
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "trust_dscp"), std::nullopt);
  EXPECT_EQ(Check(r, "ens1f0np0", "pfc_on_nccl_priority"), std::nullopt);
  EXPECT_EQ(Check(r, "ens1f0np0", "mtu_at_least_4200"), 1);
  dcb_->configs.clear();  // ENODEV
  r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "trust_dscp"), std::nullopt);
}

TEST_F(RoceConfigTest, VfGetsGidAndMtuChecksOnly) {
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0v0", "mtu_at_least_4200"), 1);
  EXPECT_NE(Check(r, "ens1f0v0", "roce_v2_gid_present"), std::nullopt);
  EXPECT_EQ(Check(r, "ens1f0v0", "trust_dscp"), std::nullopt);
  EXPECT_EQ(Value(r.families, "rdma_nccl_priority", {{"netdev", "ens1f0v0"}}), std::nullopt);
}

TEST_F(RoceConfigTest, OnlyLinkLocalRoceV2GidFailsTheGidCheck) {
  // Turn every routable RoCE v2 entry into RoCE v1: only the fe80 v2 GID is left.
  fs::path types = fs::path(dir_.path()) / "class/infiniband/mlx5_0/ports/1/gid_attrs/types";
  for (const auto& entry : fs::directory_iterator(types)) {
    std::string index = entry.path().filename();
    std::ifstream gid(fs::path(dir_.path()) / "class/infiniband/mlx5_0/ports/1/gids" / index);
    std::string g;
    gid >> g;
    if (g.rfind("fe80", 0) != 0) std::ofstream(entry.path()) << "IB/RoCE v1\n";
  }
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "roce_v2_gid_present"), 0);
}

TEST_F(RoceConfigTest, NoKernelReadersStillChecksTheGidTable) {
  kernel_.dcb.reset();
  kernel_.netdev.reset();
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "roce_v2_gid_present"), 1);
  EXPECT_EQ(Check(r, "ens1f0np0", "mtu_at_least_4200"), std::nullopt);
}

}  // namespace
}  // namespace rdma_exporter::testing

namespace rdma_exporter::testing {
namespace {

class CountingDcb : public DcbReader {
 public:
  int calls = 0;
  int Read(const std::string&, DcbConfig* out) override {
    ++calls;
    out->supported = true;
    return 0;
  }
};

TEST(PerPollDcbCache, QueriesEachNetdevOncePerPoll) {
  auto counting = std::make_unique<CountingDcb>();
  CountingDcb* raw = counting.get();
  PerPollDcbCache cache(std::move(counting));
  DcbConfig out;
  cache.BeginPoll();
  EXPECT_EQ(cache.Read("a", &out), 0);
  EXPECT_EQ(cache.Read("a", &out), 0);
  EXPECT_EQ(cache.Read("b", &out), 0);
  EXPECT_EQ(raw->calls, 2);
  EXPECT_TRUE(out.supported);
  cache.BeginPoll();
  EXPECT_EQ(cache.Read("a", &out), 0);
  EXPECT_EQ(raw->calls, 3);
}

// Active path MTU from the verbs reader: ibv_query_port active_mtu of each RoCE port.
class FakeVerbs : public VerbsReader {
 public:
  std::map<std::string, uint32_t> active_mtu;  // device -> port 1's active MTU
  int ReadDevice(const std::string& device, VerbsDevice* out) override {
    *out = VerbsDevice{};
    auto it = active_mtu.find(device);
    if (it == active_mtu.end()) return ENODEV;
    out->ports.push_back({1, it->second, 4096, 4});
    return 0;
  }
};

TEST_F(RoceConfigTest, ActiveMtu4096PassesAndSmallerFails) {
  auto* verbs = new FakeVerbs;
  kernel_.verbs.reset(verbs);
  verbs->active_mtu = {{"mlx5_0", 4096}, {"mlx5_1", 1024}};
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "active_mtu_at_least_4096"), 1);
  EXPECT_EQ(Check(r, "ens1f0v0", "active_mtu_at_least_4096"), 0);
  // mlx5_2 is unknown to verbs (ENODEV): the check is absent, not failed.
  EXPECT_EQ(Check(r, "ens2f0np0", "active_mtu_at_least_4096"), std::nullopt);
  EXPECT_EQ(Check(r, "ens2f0np0", "roce_v2_gid_present"), 0);
  verbs->active_mtu["mlx5_0"] = 2048;  // netdev MTU 4200 > x >= 2200
  EXPECT_EQ(Check(Run(106), "ens1f0np0", "active_mtu_at_least_4096"), 0);
}

TEST_F(RoceConfigTest, ActiveMtuCheckAbsentWithoutVerbs) {
  auto r = Run(106);
  EXPECT_EQ(Check(r, "ens1f0np0", "active_mtu_at_least_4096"), std::nullopt);
  EXPECT_EQ(Check(r, "ens1f0np0", "mtu_at_least_4200"), 1);
}

TEST(RoceConfigRxe, RxeCaptureActiveMtu1024FailsTheCheck) {
  // The capture's rxe ports run at active_mtu 1024 on eth0/eth1 with netdev MTU 1500.
  KernelReaders kernel;
  kernel.verbs = MakeVerbsFixtureReader(FixturePath("verbs"));
  RoceConfigCollector collector{CollectorOptions{}};
  SysfsReader sysfs(RxeCaptureSysfs());
  std::vector<DiscoveryError> errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &errors);
  ErrorTracker tracker;
  CollectContext ctx(sysfs, tracker, collector.name(), &kernel);
  MetricSink sink;
  ASSERT_TRUE(collector.Collect(inventory, ctx, sink));
  auto families = sink.Take();
  for (const char* netdev : {"eth0", "eth1"}) {
    EXPECT_EQ(Value(families, "rdma_roce_config_ok",
                    {{"netdev", netdev}, {"check", "active_mtu_at_least_4096"}}),
              0)
        << netdev;
  }
  EXPECT_EQ(ctx.failures(), 0u);
}

}  // namespace
}  // namespace rdma_exporter::testing
