// Verbs and RDMA netlink readers (fixture and kernel) and the verbs / rdma_netlink collectors,
// checked against the real Soft-RoCE capture (tests/fixtures/{verbs,rdma} hold its
// `ibv_devinfo -v`, `rdma resource show` and `rdma statistic show` output; the sysfs tree is
// RxeCaptureSysfs()).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <set>

#include "collectors/hw_counters.h"
#include "collectors/rdma_netlink.h"
#include "collectors/verbs.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

using Families = std::vector<prometheus::MetricFamily>;

// The statistic line of rxe0/1 after the capture's traffic (cmd/30-rdma-stat-after.txt).
const std::vector<std::pair<std::string, uint64_t>> kRxe0Stats = {
    {"sent_pkts", 181252},       {"rcvd_pkts", 181252},
    {"duplicate_request", 1723}, {"out_of_seq_request", 0},
    {"rcvd_rnr_err", 0},         {"send_rnr_err", 0},
    {"rcvd_seq_err", 0},         {"ack_deferred", 1},
    {"retry_exceeded_err", 0},   {"retry_rnr_exceeded_err", 0},
    {"completer_retry_err", 46}, {"send_err", 0},
    {"link_downed", 0},          {"rdma_sends", 3110},
    {"rdma_recvs", 3110},
};

struct Run {
  Families families;
  size_t failures = 0;
  std::map<std::pair<std::string, std::string>, uint64_t> errors;
};

// Runs collectors (sharing one sink, as the poller merges them) over a sysfs tree with kernel.
Run RunWith(std::vector<Collector*> collectors, const std::string& sysfs_root,
            KernelReaders* kernel) {
  SysfsReader sysfs(sysfs_root);
  std::vector<DiscoveryError> discovery;
  Inventory inventory = DiscoverInventory(sysfs, {}, &discovery);
  ErrorTracker tracker;
  MetricSink merged;
  size_t failures = 0;
  if (kernel != nullptr) kernel->BeginPoll();
  for (Collector* collector : collectors) {
    CollectContext ctx(sysfs, tracker, collector->name(), kernel);
    MetricSink sink;
    EXPECT_TRUE(collector->Collect(inventory, ctx, sink));
    merged.Merge(sink.Take());
    failures += ctx.failures();
  }
  return {merged.Take(), failures, tracker.Totals()};
}

KernelReaders FixtureReaders() {
  KernelReaders kernel;
  kernel.verbs = MakeVerbsFixtureReader(FixturePath("verbs"));
  kernel.rdma_nl = MakeRdmaNetlinkFixtureReader(FixturePath("rdma"));
  return kernel;
}

void ExpectPromtoolClean(const Families& families) {
  TempDir tmp;
  std::string file = tmp.path() + "/metrics.prom";
  std::ofstream(file) << RenderText(families);
  std::string command = "promtool check metrics < '" + file + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0)
    output.append(buf, n);
  int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "promtool check metrics:\n"
                                                             << output << "\n"
                                                             << RenderText(families);
}

// ---------------------------------------------------------------------------------------------
// Verbs fixture reader

TEST(VerbsFixtureReader, RxeCaptureLimitsAndPortMtus) {
  auto reader = MakeVerbsFixtureReader(FixturePath("verbs"));
  VerbsDevice dev;
  ASSERT_EQ(reader->ReadDevice("rxe0", &dev), 0);
  EXPECT_EQ(dev.max_qp, 1048560u);
  EXPECT_EQ(dev.max_cq, 1048576u);
  EXPECT_EQ(dev.max_mr, 524287u);
  EXPECT_EQ(dev.max_pd, 1048576u);
  EXPECT_EQ(dev.max_srq, 917503u);
  EXPECT_EQ(dev.max_qp_wr, 1048576u);
  EXPECT_EQ(dev.max_cqe, 32767u);
  ASSERT_EQ(dev.ports.size(), 1u);
  EXPECT_EQ(dev.ports[0].port, 1u);
  EXPECT_EQ(dev.ports[0].active_mtu_bytes, 1024u);
  EXPECT_EQ(dev.ports[0].max_mtu_bytes, 4096u);
  EXPECT_EQ(dev.ports[0].state, 4);  // PORT_ACTIVE (4)

  ASSERT_EQ(reader->ReadDevice("rxe1", &dev), 0);
  ASSERT_EQ(dev.ports.size(), 1u);
  EXPECT_EQ(dev.ports[0].active_mtu_bytes, 1024u);
}

// `ibv_devinfo` without -v: the device block has no max_* lines (only the port section's state
// and MTUs). The limits are unknown, not 0.
const char kDevinfoWithoutVerbose[] =
    "hca_id:\trxe0\n"
    "\ttransport:\t\t\tInfiniBand (0)\n"
    "\tfw_ver:\t\t\t\t0.0.0\n"
    "\tnode_guid:\t\t\t5054:00ff:fe12:3456\n"
    "\tsys_image_guid:\t\t\t5054:00ff:fe12:3456\n"
    "\tvendor_id:\t\t\t0xffffff\n"
    "\tvendor_part_id:\t\t\t0\n"
    "\thw_ver:\t\t\t\t0x0\n"
    "\tphys_port_cnt:\t\t\t1\n"
    "\t\tport:\t1\n"
    "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
    "\t\t\tmax_mtu:\t\t4096 (5)\n"
    "\t\t\tactive_mtu:\t\t1024 (3)\n"
    "\t\t\tsm_lid:\t\t\t0\n"
    "\t\t\tport_lid:\t\t0\n"
    "\t\t\tport_lmc:\t\t0x00\n"
    "\t\t\tlink_layer:\t\tEthernet\n\n";

TEST(VerbsFixtureReader, CaptureWithoutVerboseLeavesLimitsAbsent) {
  TempDir dir;
  dir.Write("rxe0", kDevinfoWithoutVerbose);
  VerbsDevice dev;
  ASSERT_EQ(MakeVerbsFixtureReader(dir.path())->ReadDevice("rxe0", &dev), 0);
  EXPECT_FALSE(dev.max_qp.has_value());
  EXPECT_FALSE(dev.max_cq.has_value());
  EXPECT_FALSE(dev.max_mr.has_value());
  EXPECT_FALSE(dev.max_pd.has_value());
  EXPECT_FALSE(dev.max_srq.has_value());
  EXPECT_FALSE(dev.max_qp_wr.has_value());
  EXPECT_FALSE(dev.max_cqe.has_value());
  ASSERT_EQ(dev.ports.size(), 1u);
  EXPECT_EQ(dev.ports[0].active_mtu_bytes, 1024u);
  EXPECT_EQ(dev.ports[0].state, 4);
}

TEST(VerbsFixtureReader, UnknownDeviceIsEnodev) {
  auto reader = MakeVerbsFixtureReader(FixturePath("verbs"));
  VerbsDevice dev;
  EXPECT_EQ(reader->ReadDevice("mlx5_0", &dev), ENODEV);
  EXPECT_EQ(reader->ReadDevice("../rdma/res", &dev), ENODEV);
  EXPECT_EQ(MakeVerbsFixtureReader("/nonexistent-dir")->ReadDevice("rxe0", &dev), ENODEV);
  EXPECT_TRUE(dev.ports.empty());
}

TEST(VerbsFixtureReader, MultiDeviceFilePicksTheBlockOfTheDeviceAndRejectsGarbage) {
  TempDir dir;
  dir.Write("mlx5_0",
            "hca_id:\tmlx5_1\n\tmax_qp:\t\t\t1\n\t\tport:\t1\n\t\t\tactive_mtu:\t\t256 (1)\n\n"
            "hca_id:\tmlx5_0\n\tmax_qp:\t\t\t131072\n\tmax_cq:\t\t\t16777216\n"
            "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
            "\t\t\tactive_mtu:\t\t4096 (5)\n\t\tport:\t2\n\t\t\tactive_mtu:\t\t2048 (4)\n");
  dir.Write("mlx5_9", "hca_id:\tmlx5_9\n\t\tport:\t1\n\t\t\tactive_mtu:\t\tgarbage\n");
  dir.Write("mlx5_8", "hca_id:\tmlx5_1\n\tmax_qp:\t\t\t1\n");
  auto reader = MakeVerbsFixtureReader(dir.path());
  VerbsDevice dev;
  ASSERT_EQ(reader->ReadDevice("mlx5_0", &dev), 0);
  EXPECT_EQ(dev.max_qp, 131072u);
  EXPECT_EQ(dev.max_cq, 16777216u);
  ASSERT_EQ(dev.ports.size(), 2u);
  EXPECT_EQ(dev.ports[0].active_mtu_bytes, 4096u);
  EXPECT_EQ(dev.ports[0].state, 1);
  EXPECT_EQ(dev.ports[1].port, 2u);
  EXPECT_EQ(dev.ports[1].active_mtu_bytes, 2048u);
  EXPECT_EQ(reader->ReadDevice("mlx5_9", &dev), EINVAL);
  EXPECT_TRUE(dev.ports.empty());
  EXPECT_EQ(reader->ReadDevice("mlx5_8", &dev), ENODEV);  // no hca_id block of its own
}

TEST(PerPollVerbsCache, QueriesEachDeviceOncePerPoll) {
  class Counting : public VerbsReader {
   public:
    int* calls;
    explicit Counting(int* c) : calls(c) {}
    int ReadDevice(const std::string& device, VerbsDevice* out) override {
      ++*calls;
      *out = VerbsDevice{};
      if (device != "rxe0") return ENODEV;
      out->max_qp = 7;
      return 0;
    }
  };
  int calls = 0;
  PerPollVerbsCache cache(std::make_unique<Counting>(&calls));
  VerbsDevice dev;
  cache.BeginPoll();
  EXPECT_EQ(cache.ReadDevice("rxe0", &dev), 0);
  EXPECT_EQ(cache.ReadDevice("rxe0", &dev), 0);
  EXPECT_EQ(dev.max_qp, 7u);
  EXPECT_EQ(cache.ReadDevice("rxe9", &dev), ENODEV);
  EXPECT_EQ(cache.ReadDevice("rxe9", &dev), ENODEV);
  EXPECT_EQ(calls, 2);
  cache.BeginPoll();
  EXPECT_EQ(cache.ReadDevice("rxe0", &dev), 0);
  EXPECT_EQ(calls, 3);
}

// ---------------------------------------------------------------------------------------------
// RDMA netlink fixture reader

TEST(RdmaNetlinkFixtureReader, RxeCaptureResourceSummary) {
  auto reader = MakeRdmaNetlinkFixtureReader(FixturePath("rdma"));
  std::map<std::string, uint64_t> counts;
  ASSERT_EQ(reader->ReadResources("rxe0", &counts), 0);
  std::map<std::string, uint64_t> expected = {{"pd", 1}, {"cq", 1},  {"qp", 1}, {"cm_id", 0},
                                              {"mr", 0}, {"ctx", 0}, {"srq", 0}};
  EXPECT_EQ(counts, expected);
  ASSERT_EQ(reader->ReadResources("rxe1", &counts), 0);
  EXPECT_EQ(counts, expected);
  EXPECT_EQ(reader->ReadResources("mlx5_0", &counts), ENODEV);
  EXPECT_TRUE(counts.empty());
}

TEST(RdmaNetlinkFixtureReader, RxeCaptureStatisticOfEachPort) {
  auto reader = MakeRdmaNetlinkFixtureReader(FixturePath("rdma"));
  std::vector<std::pair<std::string, uint64_t>> stats;
  ASSERT_EQ(reader->ReadHwCounters("rxe0", 1, &stats), 0);
  EXPECT_EQ(stats, kRxe0Stats);
  ASSERT_EQ(reader->ReadHwCounters("rxe1", 1, &stats), 0);
  ASSERT_EQ(stats.size(), 15u);
  EXPECT_EQ(stats[0], std::make_pair(std::string("sent_pkts"), uint64_t{1000}));
  EXPECT_EQ(stats[13], std::make_pair(std::string("rdma_sends"), uint64_t{200}));
  EXPECT_EQ(reader->ReadHwCounters("rxe0", 2, &stats), ENODEV);
  EXPECT_EQ(reader->ReadHwCounters("rxe", 1, &stats), ENODEV);
  EXPECT_TRUE(stats.empty());
}

TEST(RdmaNetlinkFixtureReader, DuringTrafficCountsMissingFilesAndGarbage) {
  TempDir dir;
  // cmd/22-rdma-res-during.txt (ib_write_bw running on rxe0).
  dir.Write("res",
            "0: rxe0: pd 3 cq 3 qp 3 cm_id 0 mr 2 ctx 2 srq 0 \n"
            "1: rxe1: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0 \n"
            "2: mlx5_0: pd 1 cq garbage\n");
  auto reader = MakeRdmaNetlinkFixtureReader(dir.path());
  std::map<std::string, uint64_t> counts;
  ASSERT_EQ(reader->ReadResources("rxe0", &counts), 0);
  EXPECT_EQ(counts["qp"], 3u);
  EXPECT_EQ(counts["mr"], 2u);
  EXPECT_EQ(counts["ctx"], 2u);
  EXPECT_EQ(reader->ReadResources("mlx5_0", &counts), EINVAL);
  std::vector<std::pair<std::string, uint64_t>> stats;
  EXPECT_EQ(reader->ReadHwCounters("rxe0", 1, &stats), ENODEV);  // no statistic file
  auto none = MakeRdmaNetlinkFixtureReader("/nonexistent-dir");
  EXPECT_EQ(none->ReadResources("rxe0", &counts), ENODEV);
}

// ---------------------------------------------------------------------------------------------
// Fixture selection

TEST(MakeKernelReaders, FixtureModeHasVerbsAndNetlinkReadersOnlyWithTheirCaptures) {
  SysfsReader sysfs(RxeCaptureSysfs());
  KernelReaders with = MakeKernelReaders(FixturePath(""), sysfs);
  ASSERT_NE(with.verbs, nullptr);
  ASSERT_NE(with.rdma_nl, nullptr);
  VerbsDevice dev;
  EXPECT_EQ(with.verbs->ReadDevice("rxe0", &dev), 0);
  std::map<std::string, uint64_t> counts;
  EXPECT_EQ(with.rdma_nl->ReadResources("rxe1", &counts), 0);

  TempDir demo;  // the demo fabric's fixtures: ethtool/ and dcb/ only
  demo.Write("ethtool/eth0", "NIC statistics:\n");
  KernelReaders without = MakeKernelReaders(demo.path(), sysfs);
  EXPECT_EQ(without.verbs, nullptr);
  EXPECT_EQ(without.rdma_nl, nullptr);
}

// ---------------------------------------------------------------------------------------------
// verbs collector

// Without -v the capture shows no limits: no rdma_device_max_* series (not 0), the port MTUs
// are still there, and nothing counts as a failure.
TEST(VerbsCollector, CaptureWithoutVerboseExportsNoLimitSeries) {
  TempDir dir;
  dir.Write("rxe0", kDevinfoWithoutVerbose);
  std::string rxe1 = kDevinfoWithoutVerbose;
  rxe1.replace(rxe1.find("rxe0"), 4, "rxe1");
  dir.Write("rxe1", rxe1);
  KernelReaders kernel;
  kernel.verbs = MakeVerbsFixtureReader(dir.path());
  VerbsCollector collector;
  auto r = RunWith({&collector}, RxeCaptureSysfs(), &kernel);
  EXPECT_EQ(r.failures, 0u);
  for (const char* family : {"rdma_device_max_qps", "rdma_device_max_cqs", "rdma_device_max_mrs",
                             "rdma_device_max_pds", "rdma_device_max_srqs"}) {
    EXPECT_EQ(Count(r.families, family), 0u) << family;
  }
  EXPECT_EQ(Value(r.families, "rdma_port_active_mtu_bytes", {{"device", "rxe1"}, {"port", "1"}}),
            1024);
}

TEST(VerbsCollector, RxeCaptureMtusAndLimits) {
  KernelReaders kernel = FixtureReaders();
  VerbsCollector collector;
  auto r = RunWith({&collector}, RxeCaptureSysfs(), &kernel);
  EXPECT_EQ(r.failures, 0u);
  for (const char* dev : {"rxe0", "rxe1"}) {
    EXPECT_EQ(Value(r.families, "rdma_port_active_mtu_bytes", {{"device", dev}, {"port", "1"}}),
              1024);
    EXPECT_EQ(Value(r.families, "rdma_port_max_mtu_bytes", {{"device", dev}, {"port", "1"}}), 4096);
    EXPECT_EQ(Value(r.families, "rdma_device_max_qps", {{"device", dev}}), 1048560);
    EXPECT_EQ(Value(r.families, "rdma_device_max_cqs", {{"device", dev}}), 1048576);
    EXPECT_EQ(Value(r.families, "rdma_device_max_mrs", {{"device", dev}}), 524287);
    EXPECT_EQ(Value(r.families, "rdma_device_max_pds", {{"device", dev}}), 1048576);
    EXPECT_EQ(Value(r.families, "rdma_device_max_srqs", {{"device", dev}}), 917503);
  }
  // Cardinality: 5 device series + 2 per port.
  size_t samples = 0;
  for (const auto& family : r.families)
    samples += family.metric.size();
  EXPECT_EQ(samples, 2u * (5 + 2));
  ExpectPromtoolClean(r.families);
}

TEST(VerbsCollector, NoKernelReadersNoSeries) {
  VerbsCollector collector;
  auto r = RunWith({&collector}, RxeCaptureSysfs(), nullptr);
  EXPECT_TRUE(r.families.empty());
  KernelReaders empty;
  r = RunWith({&collector}, RxeCaptureSysfs(), &empty);
  EXPECT_TRUE(r.families.empty());
  EXPECT_EQ(r.failures, 0u);
}

class FakeVerbs : public VerbsReader {
 public:
  std::map<std::string, int> errors;
  std::map<std::string, VerbsDevice> devices;
  int ReadDevice(const std::string& device, VerbsDevice* out) override {
    *out = VerbsDevice{};
    if (auto it = errors.find(device); it != errors.end()) return it->second;
    auto it = devices.find(device);
    if (it == devices.end()) return ENODEV;
    *out = it->second;
    return 0;
  }
};

TEST(VerbsCollector, UnopenableDeviceCostsOnlyItsSeries) {
  auto fake = std::make_unique<FakeVerbs>();
  fake->errors["rxe0"] = EACCES;  // no access to /dev/infiniband/uverbs0
  VerbsDevice rxe1;
  rxe1.max_qp = 5;
  rxe1.ports.push_back({1, 4096, 4096, 4});
  fake->devices["rxe1"] = rxe1;
  KernelReaders kernel;
  kernel.verbs = std::move(fake);
  VerbsCollector collector;
  auto r = RunWith({&collector}, RxeCaptureSysfs(), &kernel);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ((r.errors[{"verbs", "permission"}]), 1u);
  EXPECT_EQ(Value(r.families, "rdma_device_max_qps", {{"device", "rxe0"}}), std::nullopt);
  EXPECT_EQ(Value(r.families, "rdma_device_max_qps", {{"device", "rxe1"}}), 5);
  EXPECT_EQ(Value(r.families, "rdma_port_active_mtu_bytes", {{"device", "rxe1"}}), 4096);
}

// ---------------------------------------------------------------------------------------------
// rdma_netlink collector

TEST(RdmaNetlinkCollector, RxeCaptureResourcesAndHwCountersFromStatisticWithoutDuplicates) {
  KernelReaders kernel = FixtureReaders();
  HwCountersCollector hw;
  RdmaNetlinkCollector nl;
  auto r = RunWith({&hw, &nl}, RxeCaptureSysfs(), &kernel);
  EXPECT_EQ(r.failures, 0u);
  for (const char* type : {"pd", "cq", "qp"}) {
    EXPECT_EQ(Value(r.families, "rdma_resources", {{"device", "rxe0"}, {"type", type}}), 1) << type;
  }
  for (const char* type : {"cm_id", "mr", "ctx", "srq"}) {
    EXPECT_EQ(Value(r.families, "rdma_resources", {{"device", "rxe1"}, {"type", type}}), 0) << type;
  }
  EXPECT_EQ(Count(r.families, "rdma_resources"), 14u);
  // hw_counters reads both ports through STAT_GET (the statistic capture), never also the files.
  EXPECT_EQ(Value(r.families, "rdma_exporter_hw_counters_ports", {{"source", "netlink"}}), 2);
  EXPECT_EQ(Value(r.families, "rdma_exporter_hw_counters_ports", {{"source", "sysfs"}}), 0);
  EXPECT_EQ(Count(r.families, "rdma_hw_counters_lifespan_seconds"), 0u);
  for (const auto& family : r.families) {
    std::set<std::vector<std::pair<std::string, std::string>>> label_sets;
    for (const auto& metric : family.metric) {
      std::vector<std::pair<std::string, std::string>> labels;
      for (const auto& l : metric.label)
        labels.emplace_back(l.name, l.value);
      EXPECT_TRUE(label_sets.insert(labels).second) << "duplicate series in " << family.name;
    }
  }
  // The sysfs tree was captured with the statistic: the values agree.
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", {{"device", "rxe0"}}), 181252);
  EXPECT_EQ(Value(r.families, "rdma_hw_duplicate_request_total", {{"device", "rxe0"}}), 1723);
  ExpectPromtoolClean(r.families);
}

class FakeNetlink : public RdmaNetlinkReader {
 public:
  std::map<std::string, std::map<std::string, uint64_t>> resources;
  std::map<std::string, std::vector<std::pair<std::string, uint64_t>>> counters;  // "dev/port"
  int counter_calls = 0;
  int ReadResources(const std::string& device, std::map<std::string, uint64_t>* out) override {
    auto it = resources.find(device);
    if (it == resources.end()) return ENODEV;
    *out = it->second;
    return 0;
  }
  int ReadHwCounters(const std::string& device, unsigned port,
                     std::vector<std::pair<std::string, uint64_t>>* out) override {
    ++counter_calls;
    auto it = counters.find(device + "/" + std::to_string(port));
    if (it == counters.end()) return ENODEV;
    *out = it->second;
    return 0;
  }
  int ReadQps(const std::string&, std::vector<RdmaQpOwner>* out) override {
    out->clear();
    return 0;
  }
};

TEST(HwCountersNetlink, OptionalCountersAbsentFromSysfsAreExported) {
  auto fake = std::make_unique<FakeNetlink>();
  fake->resources["rxe0"] = {{"qp", 3}, {"mr", 2}};
  fake->resources["rxe1"] = {{"qp", 1}};
  // As mlx5 answers STAT_GET with optional counters enabled: the sysfs ones plus extras.
  auto stats = kRxe0Stats;
  stats.emplace_back("cc_rx_ce_pkts", 7);
  stats.emplace_back("rdma_tx_bytes", 123456);
  stats.emplace_back("new_optional_counter", 9);
  fake->counters["rxe0/1"] = stats;
  fake->counters["rxe1/1"] = {{"sent_pkts", 1000}};
  KernelReaders kernel;
  kernel.rdma_nl = std::move(fake);
  HwCountersCollector hw;
  RdmaNetlinkCollector nl;
  auto r = RunWith({&hw, &nl}, RxeCaptureSysfs(), &kernel);
  EXPECT_EQ(r.failures, 0u);
  EXPECT_EQ(Value(r.families, "rdma_resources", {{"device", "rxe0"}, {"type", "qp"}}), 3);
  EXPECT_EQ(Value(r.families, "rdma_resources", {{"device", "rxe0"}, {"type", "mr"}}), 2);
  EXPECT_EQ(Value(r.families, "rdma_hw_cc_rx_ce_pkts_total", {{"device", "rxe0"}, {"port", "1"}}),
            7);
  EXPECT_EQ(Value(r.families, "rdma_hw_rdma_tx_bytes_total", {{"device", "rxe0"}, {"port", "1"}}),
            123456);
  // A type word in the name is made plural for promtool's lint (GenericMetricName).
  EXPECT_EQ(Value(r.families, "rdma_hw_new_optional_counters_total", {{"device", "rxe0"}}), 9);
  EXPECT_EQ(Count(r.families, "rdma_hw_cc_rx_ce_pkts_total"), 1u);
  EXPECT_EQ(Count(r.families, "rdma_hw_sent_pkts_total"), 2u);  // once per port
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", {{"device", "rxe1"}}), 1000);  // netlink's
  for (const auto& family : r.families) {
    if (family.name == "rdma_hw_cc_rx_ce_pkts_total") {
      EXPECT_EQ(family.help, HwCounterHelp("cc_rx_ce_pkts"));
      EXPECT_EQ(family.type, prometheus::MetricType::Counter);
    }
  }
  ExpectPromtoolClean(r.families);
}

TEST(RdmaNetlinkCollector, DeviceUnknownToNetlinkIsOneEnodevAndNothingElse) {
  auto fake = std::make_unique<FakeNetlink>();
  FakeNetlink* raw = fake.get();
  fake->resources["rxe1"] = {{"qp", 1}};
  fake->counters["rxe1/1"] = {{"sent_pkts", 1000}};
  KernelReaders kernel;
  kernel.rdma_nl = std::move(fake);
  RdmaNetlinkCollector nl;
  auto r = RunWith({&nl}, RxeCaptureSysfs(), &kernel);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ((r.errors[{"rdma_netlink", "no_device"}]), 1u);
  EXPECT_EQ(Value(r.families, "rdma_resources", {{"device", "rxe0"}}), std::nullopt);
  EXPECT_EQ(Value(r.families, "rdma_resources", {{"device", "rxe1"}}), 1);
  EXPECT_EQ(raw->counter_calls, 0);  // port counters are the hw_counters collector's
}

// ---------------------------------------------------------------------------------------------
// hw_counters: STAT_GET first, sysfs where the kernel does not answer (reference §1.6, §5.4)

// rxe1/1 known to netlink with values unlike its files; rxe0 unknown (ENODEV).
std::unique_ptr<FakeNetlink> Rxe1OnlyNetlink() {
  auto fake = std::make_unique<FakeNetlink>();
  fake->counters["rxe1/1"] = {{"sent_pkts", 7777}, {"rdma_sends", 42}};
  return fake;
}

Run RunHw(HwCounterSource source, KernelReaders* kernel) {
  CollectorOptions options;
  options.hw_counters_source = source;
  HwCountersCollector hw(options);
  return RunWith({&hw}, RxeCaptureSysfs(), kernel);
}

Run RunHw(HwCounterSource source, std::unique_ptr<RdmaNetlinkReader> netlink) {
  KernelReaders kernel;
  kernel.rdma_nl = std::move(netlink);
  return RunHw(source, &kernel);
}

TEST(HwCountersNetlink, AutoFallsBackToSysfsPerPortWhereNetlinkDoesNotKnowTheDevice) {
  auto r = RunHw(HwCounterSource::kAuto, Rxe1OnlyNetlink());
  EXPECT_EQ(r.failures, 0u);  // ENODEV is why the files exist, not an error
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", {{"device", "rxe1"}}), 7777);
  EXPECT_EQ(Value(r.families, "rdma_hw_rdma_sends_total", {{"device", "rxe1"}}), 42);
  // rxe0 from its files (the capture's sysfs agrees with its statistic line).
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", {{"device", "rxe0"}}), 181252);
  EXPECT_TRUE(Value(r.families, "rdma_hw_counters_lifespan_seconds", {{"device", "rxe0"}}));
  EXPECT_FALSE(Value(r.families, "rdma_hw_counters_lifespan_seconds", {{"device", "rxe1"}}));
  EXPECT_EQ(Value(r.families, "rdma_exporter_hw_counters_ports", {{"source", "netlink"}}), 1);
  EXPECT_EQ(Value(r.families, "rdma_exporter_hw_counters_ports", {{"source", "sysfs"}}), 1);
  ExpectPromtoolClean(r.families);
}

TEST(HwCountersNetlink, SysfsSourceNeverAsksNetlink) {
  // The readers outlive the run: the fake's call count is read afterwards.
  KernelReaders kernel;
  auto fake = Rxe1OnlyNetlink();
  FakeNetlink* raw = fake.get();
  kernel.rdma_nl = std::move(fake);
  auto r = RunHw(HwCounterSource::kSysfs, &kernel);
  EXPECT_EQ(raw->counter_calls, 0);
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", {{"device", "rxe1"}}), 1000);  // file
  EXPECT_EQ(Value(r.families, "rdma_exporter_hw_counters_ports", {{"source", "sysfs"}}), 2);
}

TEST(HwCountersNetlink, NetlinkSourceCountsAFailureAndDoesNotFallBack) {
  auto r = RunHw(HwCounterSource::kNetlink, Rxe1OnlyNetlink());
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ((r.errors[{"hw_counters", "no_device"}]), 1u);
  EXPECT_FALSE(Value(r.families, "rdma_hw_sent_pkts_total", {{"device", "rxe0"}}));
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", {{"device", "rxe1"}}), 7777);
}

TEST(HwCountersNetlink, NetlinkSourceWithoutANetlinkReaderIsOneError) {
  auto r = RunHw(HwCounterSource::kNetlink, nullptr);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_EQ(Count(r.families, "rdma_hw_sent_pkts_total"), 0u);
}

// A reply that cannot be parsed is a real failure: counted, and auto still serves the files.
class BrokenNetlink : public FakeNetlink {
 public:
  int ReadHwCounters(const std::string&, unsigned,
                     std::vector<std::pair<std::string, uint64_t>>*) override {
    return EBADMSG;
  }
};

TEST(HwCountersNetlink, AutoCountsUnexpectedErrorsAndStillServesTheFiles) {
  auto r = RunHw(HwCounterSource::kAuto, std::make_unique<BrokenNetlink>());
  EXPECT_EQ(r.failures, 2u);  // one per port
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", {{"device", "rxe0"}}), 181252);
  EXPECT_EQ(Value(r.families, "rdma_hw_sent_pkts_total", {{"device", "rxe1"}}), 1000);
}

// mlx5 q counters are 32-bit in firmware whichever way they are read: the netlink values are
// wrap-extended like the files (same history key, so switching source keeps it).
TEST(HwCountersNetlink, Mlx5QCountersFromNetlinkAreWrapExtended) {
  auto fake = std::make_unique<FakeNetlink>();
  FakeNetlink* raw = fake.get();
  KernelReaders kernel;
  kernel.rdma_nl = std::move(fake);
  CollectorOptions options;
  HwCountersCollector hw(options);
  SysfsReader sysfs(FixturePath("mlx5-roce"));
  std::vector<DiscoveryError> discovery;
  Inventory inventory = DiscoverInventory(sysfs, {}, &discovery);
  ASSERT_FALSE(inventory.devices.empty());
  const auto& device = inventory.devices.front();
  ASSERT_TRUE(device.has_hca_type);
  std::string key = device.name + "/" + std::to_string(device.ports.front().number);
  std::vector<double> seen;
  for (uint64_t raw_value : {4294967000ULL, 4294967200ULL, 100ULL}) {
    raw->counters[key] = {{"rx_write_requests", raw_value}, {"rdma_tx_bytes", raw_value}};
    ErrorTracker tracker;
    CollectContext ctx(sysfs, tracker, hw.name(), &kernel);
    MetricSink sink;
    ASSERT_TRUE(hw.Collect(inventory, ctx, sink));
    auto families = sink.Take();
    std::map<std::string, std::string> port = {
        {"device", device.name}, {"port", std::to_string(device.ports.front().number)}};
    seen.push_back(Value(families, "rdma_hw_rx_write_requests_total", port).value_or(-1));
    // Not a q counter: exported as read.
    EXPECT_EQ(Value(families, "rdma_hw_rdma_tx_bytes_total", port), static_cast<double>(raw_value));
    sysfs.SweepUnused();
  }
  EXPECT_EQ(seen, (std::vector<double>{4294967000.0, 4294967200.0, 4294967396.0}));
}

TEST(RdmaNetlinkCollector, NoKernelReadersNoSeries) {
  RdmaNetlinkCollector nl;
  auto r = RunWith({&nl}, RxeCaptureSysfs(), nullptr);
  EXPECT_TRUE(r.families.empty());
  EXPECT_EQ(r.failures, 0u);
}

// ---------------------------------------------------------------------------------------------
// Kernel readers on a host without RDMA devices: no crash, ENODEV, nothing exported.

constexpr const char* kNoSuchDevice = "no_such_rdma_dev0";

TEST(KernelReaders, LibibverbsWithoutTheDeviceIsEnodev) {
  auto reader = MakeVerbsLibibverbsReader();
  VerbsDevice dev;
  for (int poll = 0; poll < 2; ++poll) {
    reader->BeginPoll();
    EXPECT_EQ(reader->ReadDevice(kNoSuchDevice, &dev), ENODEV);
    EXPECT_EQ(reader->ReadDevice(kNoSuchDevice, &dev), ENODEV);
    EXPECT_TRUE(dev.ports.empty());
  }
}

TEST(KernelReaders, RdmaNetlinkWithoutTheDeviceIsEnodev) {
  auto reader = MakeRdmaNetlinkKernelReader();
  std::map<std::string, uint64_t> counts;
  std::vector<std::pair<std::string, uint64_t>> stats;
  for (int poll = 0; poll < 2; ++poll) {
    reader->BeginPoll();
    // Also where the host has no NETLINK_RDMA at all (no ib_core: EPROTONOSUPPORT on socket()).
    EXPECT_EQ(reader->ReadResources(kNoSuchDevice, &counts), ENODEV);
    EXPECT_EQ(reader->ReadHwCounters(kNoSuchDevice, 1, &stats), ENODEV);
    EXPECT_TRUE(counts.empty());
    EXPECT_TRUE(stats.empty());
  }
}

TEST(KernelReaders, CollectorsOverTheRxeTreeWithoutRealDevicesRecordNoDevice) {
  SysfsReader sysfs(RxeCaptureSysfs());
  KernelReaders kernel = MakeKernelReaders("", sysfs);
  ASSERT_NE(kernel.verbs, nullptr);
  ASSERT_NE(kernel.rdma_nl, nullptr);
  // This host has no rxe0/rxe1 (a host that has them would answer for real).
  VerbsDevice probe;
  if (kernel.verbs->ReadDevice("rxe0", &probe) != ENODEV) GTEST_SKIP() << "host has rxe0";
  VerbsCollector verbs;
  RdmaNetlinkCollector nl;
  auto r = RunWith({&verbs, &nl}, RxeCaptureSysfs(), &kernel);
  EXPECT_TRUE(r.families.empty());
  EXPECT_EQ((r.errors[{"verbs", "no_device"}]), 2u);
  EXPECT_EQ((r.errors[{"rdma_netlink", "no_device"}]), 2u);
}

}  // namespace
}  // namespace rdma_exporter::testing
