// The SIOCETHTOOL reader against a real kernel: a veth pair in a network namespace of the
// test's own (veth has an ETH_SS_STATS set: peer_ifindex, rx_queue_0_xdp_packets, ...). No
// traffic is sent; the values are compared with the `ethtool -S` CLI run in the namespace.
#include <gtest/gtest.h>
#include <net/if.h>

#include <cerrno>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectors/ethtool.h"
#include "netns.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/error_tracker.h"
#include "rdma_exporter/inventory.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/metrics.h"
#include "rdma_exporter/sysfs_reader.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

// `ethtool -S <dev>` inside the namespace, parsed by the fixture reader (so the CLI text format
// the fixtures follow is checked against the real tool too).
EthtoolStats CliStats(const NetnsWithVeth& ns, const std::string& dev) {
  std::string out;
  EXPECT_EQ(ns.Exec("ethtool -S " + dev, &out), 0) << out;
  TempDir dir;
  dir.Write(dev, out);
  EthtoolStats stats;
  EXPECT_EQ(MakeEthtoolFixtureReader(dir.path())->ReadStats(dev, &stats), 0) << out;
  return stats;
}

TEST(EthtoolIoctlKernel, VethStatsMatchTheEthtoolCli) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  auto reader = MakeEthtoolIoctlReader();  // its sockets are created in the namespace
  EthtoolStats stats;
  ASSERT_EQ(reader->ReadStats("rdx0", &stats), 0);
  ASSERT_EQ(stats.names.size(), stats.values.size());
  EthtoolStats cli = CliStats(ns, "rdx0");
  EXPECT_EQ(stats.names, cli.names);
  EXPECT_EQ(stats.values, cli.values);
  ASSERT_FALSE(stats.names.empty());
  EXPECT_EQ(stats.names.front(), "peer_ifindex");
  // peer_ifindex is the ifindex of rdx1 in the same namespace.
  std::map<std::string, uint64_t> by_name;
  for (size_t i = 0; i < stats.names.size(); ++i)
    by_name[stats.names[i]] = stats.values[i];
  EXPECT_EQ(by_name["peer_ifindex"], if_nametoindex("rdx1"));
  EXPECT_EQ(by_name.count("rx_queue_0_xdp_packets"), 1u);
  // A second read uses the cached string set and gives the same names.
  EthtoolStats again;
  ASSERT_EQ(reader->ReadStats("rdx0", &again), 0);
  EXPECT_EQ(again.names, stats.names);
  EXPECT_EQ(again.values, stats.values);  // no traffic: nothing moves
  // The peer has its own set.
  EthtoolStats peer;
  ASSERT_EQ(reader->ReadStats("rdx1", &peer), 0);
  EXPECT_EQ(peer.names, CliStats(ns, "rdx1").names);
}

TEST(EthtoolIoctlKernel, MissingNetdevIsEnodev) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  // The reader keeps one socket from its first read on, and a socket belongs to the network
  // namespace it was created in: rdx0 exists only in the test's namespace, so a reader first
  // used outside it never sees it, even from inside.
  auto host_reader = MakeEthtoolIoctlReader();
  EthtoolStats stats;
  EXPECT_EQ(host_reader->ReadStats("rdx0", &stats), ENODEV);
  ns.Enter();
  EXPECT_EQ(host_reader->ReadStats("rdx0", &stats), ENODEV);
  auto reader = MakeEthtoolIoctlReader();
  EXPECT_EQ(reader->ReadStats("rdxnone0", &stats), ENODEV);
  EXPECT_TRUE(stats.names.empty());
  EXPECT_EQ(reader->ReadStats("a_name_of_16_chr", &stats), ENODEV);
  ASSERT_EQ(reader->ReadStats("rdx0", &stats), 0);
  ns.Leave();
  EXPECT_EQ(host_reader->ReadStats("rdx0", &stats), ENODEV);
}

TEST(EthtoolIoctlKernel, DeletedNetdevIsEnodevAfterItsSetWasCached) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  auto reader = MakeEthtoolIoctlReader();
  EthtoolStats stats;
  ASSERT_EQ(reader->ReadStats("rdx0", &stats), 0);
  ASSERT_EQ(ns.Ip("link del rdx0"), 0);  // deletes the pair
  EXPECT_EQ(reader->ReadStats("rdx0", &stats), ENODEV);
  EXPECT_TRUE(stats.names.empty());
}

TEST(EthtoolIoctlKernel, LoopbackHasNoStatsAndDoesNotCrash) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  auto reader = MakeEthtoolIoctlReader();
  EthtoolStats stats;
  int err = reader->ReadStats("lo", &stats);
  EXPECT_TRUE(err == EOPNOTSUPP || (err == 0 && stats.names.empty())) << err;
  EXPECT_EQ(stats.names.size(), stats.values.size());
}

TEST(EthtoolCollectorKernel, VethStatsExportedWithMetricsInclude) {
  RDMA_REQUIRE_ROOT();
  // A RoCE-like device (rxe-style `parent`) whose only port is on rdx0.
  TempDir tree;
  tree.Write("class/infiniband/rxe0/parent", "rdx0\n");
  tree.Write("class/infiniband/rxe0/ports/1/link_layer", "Ethernet\n");
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  KernelReaders kernel;
  kernel.ethtool = MakeEthtoolIoctlReader();
  SysfsReader sysfs(tree.path());
  std::vector<DiscoveryError> discovery_errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &discovery_errors);
  ASSERT_EQ(inventory.devices.size(), 1u);
  ASSERT_EQ(inventory.devices[0].ports.size(), 1u);
  EXPECT_EQ(inventory.devices[0].ports[0].netdev, "rdx0");

  CollectorOptions options;
  options.ethtool_metrics_include.emplace(".*");
  EthtoolCollector collector(options);
  ErrorTracker errors;
  CollectContext ctx(sysfs, errors, collector.name(), &kernel);
  MetricSink sink;
  ASSERT_TRUE(collector.Collect(inventory, ctx, sink));
  auto families = sink.Take();
  EXPECT_EQ(ctx.failures(), 0u);
  std::map<std::string, std::string> labels = {
      {"device", "rxe0"}, {"port", "1"}, {"netdev", "rdx0"}};
  EXPECT_EQ(Value(families, "rdma_ethtool_peer_ifindex", labels),
            static_cast<double>(if_nametoindex("rdx1")));
  EXPECT_EQ(Value(families, "rdma_ethtool_rx_queue_0_xdp_packets", labels), 0);
  // Every stat of the CLI output is a family (veth names are unique after sanitizing).
  EXPECT_EQ(families.size(), CliStats(ns, "rdx0").names.size());

  // Without metrics-include a veth has nothing the collector knows.
  EthtoolCollector plain{CollectorOptions{}};
  CollectContext ctx2(sysfs, errors, plain.name(), &kernel);
  ASSERT_TRUE(plain.Collect(inventory, ctx2, sink));
  EXPECT_TRUE(sink.Take().empty());
}

TEST(EthtoolCollectorKernel, MissingNetdevCountsNoDevice) {
  RDMA_REQUIRE_ROOT();
  TempDir tree;
  tree.Write("class/infiniband/rxe0/parent", "rdxgone0\n");
  tree.Write("class/infiniband/rxe0/ports/1/link_layer", "Ethernet\n");
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  KernelReaders kernel;
  kernel.ethtool = MakeEthtoolIoctlReader();
  SysfsReader sysfs(tree.path());
  std::vector<DiscoveryError> discovery_errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &discovery_errors);
  EthtoolCollector collector;
  ErrorTracker errors;
  CollectContext ctx(sysfs, errors, collector.name(), &kernel);
  MetricSink sink;
  ASSERT_TRUE(collector.Collect(inventory, ctx, sink));
  EXPECT_TRUE(sink.Take().empty());
  EXPECT_EQ(ctx.failures(), 1u);
  EXPECT_EQ((errors.Totals()[{"ethtool", "no_device"}]), 1u);
}

}  // namespace
}  // namespace rdma_exporter::testing
