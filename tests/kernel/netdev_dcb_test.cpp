// The rtnetlink netdev reader and the rtnetlink DCB reader against a veth pair in a network
// namespace of the test's own (root). veth has no dcbnl_ops, so the DCB reader can only be
// checked for the EOPNOTSUPP ("no DCB") and ENODEV paths here; the reply parser is exercised on
// mlx5 hardware only.
//
// The sysfs netdev reader cannot read the namespace's netdevs through the test process's /sys
// (sysfs shows the namespace of its mounter), but `ip netns exec` mounts a sysfs of the
// namespace: the files are copied from there into a TempDir tree and read with the sysfs reader,
// and both readers are compared with each other and with `ip -j -s link show`.
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <regex>
#include <string>
#include <thread>

#include "netns.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/sysfs_reader.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

// operstate follows carrier through the kernel's linkwatch work, a little after the change.
bool WaitFor(const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// Reads rdx0 as the poller does: BeginPoll (one RTM_GETLINK dump), then Read.
struct Poll {
  explicit Poll(NetdevReader& r) : reader(r) {}
  NetdevReader& reader;
  NetdevState state;
  int err = -1;
  bool operator()(const std::string& netdev = "rdx0") {
    reader.BeginPoll();
    err = reader.Read(netdev, &state);
    return err == 0;
  }
};

TEST(NetdevNetlinkReader, FollowsVethCarrierOperstateAndMtu) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  auto reader = MakeNetdevNetlinkReader();
  Poll poll(*reader);

  ASSERT_TRUE(WaitFor([&] { return poll() && poll.state.oper_up; })) << "err " << poll.err;
  EXPECT_TRUE(poll.state.admin_up);
  EXPECT_EQ(poll.state.carrier, true);
  EXPECT_EQ(poll.state.mtu, 1500u);
  ASSERT_TRUE(poll.state.carrier_changes.has_value());
  // libnl 3.7 does not parse IFLA_CARRIER_UP_COUNT / IFLA_CARRIER_DOWN_COUNT.
  EXPECT_FALSE(poll.state.carrier_up_count.has_value());
  EXPECT_FALSE(poll.state.carrier_down_count.has_value());
  EXPECT_EQ(poll.state.rx_errors, 0u);
  EXPECT_EQ(poll.state.tx_errors, 0u);
  const uint64_t changes_up = *poll.state.carrier_changes;

  // The peer going down takes rdx0's carrier; rdx0 itself stays admin up.
  ASSERT_EQ(ns.Ip("link set rdx1 down"), 0);
  ASSERT_TRUE(WaitFor([&] { return poll() && !poll.state.oper_up; }));
  EXPECT_TRUE(poll.state.admin_up);
  EXPECT_EQ(poll.state.carrier, false);
  ASSERT_TRUE(poll.state.carrier_changes.has_value());
  EXPECT_GT(*poll.state.carrier_changes, changes_up);
  const uint64_t changes_down = *poll.state.carrier_changes;

  ASSERT_EQ(ns.Ip("link set rdx1 up"), 0);
  ASSERT_TRUE(WaitFor([&] { return poll() && poll.state.oper_up; }));
  EXPECT_TRUE(poll.state.admin_up);
  EXPECT_EQ(poll.state.carrier, true);
  EXPECT_GT(*poll.state.carrier_changes, changes_down);

  ASSERT_EQ(ns.Ip("link set rdx0 mtu 4200"), 0);
  ASSERT_TRUE(poll());
  EXPECT_EQ(poll.state.mtu, 4200u);

  ASSERT_EQ(ns.Ip("link set rdx0 down"), 0);
  ASSERT_TRUE(WaitFor([&] { return poll() && !poll.state.admin_up; }));
  EXPECT_FALSE(poll.state.oper_up);

  EXPECT_FALSE(poll("nosuch0"));
  EXPECT_EQ(poll.err, ENODEV);
}

// The poll's dump is sent by its first Read, not by BeginPoll (a poll whose collectors read no
// netdev sends none): a change made between BeginPoll and the first Read is seen; later Reads
// of the same poll answer from that one dump.
TEST(NetdevNetlinkReader, ThePollsDumpIsMadeByItsFirstRead) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  auto reader = MakeNetdevNetlinkReader();
  NetdevState state;
  reader->BeginPoll();
  ASSERT_EQ(reader->Read("rdx0", &state), 0);
  EXPECT_EQ(state.mtu, 1500u);
  reader->BeginPoll();
  ASSERT_EQ(ns.Ip("link set rdx0 mtu 4200"), 0);
  ASSERT_EQ(reader->Read("rdx0", &state), 0);
  EXPECT_EQ(state.mtu, 4200u);
  ASSERT_EQ(ns.Ip("link set rdx0 mtu 3000"), 0);
  ASSERT_EQ(reader->Read("rdx0", &state), 0);
  EXPECT_EQ(state.mtu, 4200u) << "a second dump within one poll";
  reader->BeginPoll();
  ASSERT_EQ(reader->Read("rdx0", &state), 0);
  EXPECT_EQ(state.mtu, 3000u);
}

TEST(NetdevNetlinkReader, SocketIsOpenedOnFirstUseInTheCurrentNamespace) {
  RDMA_REQUIRE_ROOT();
  auto reader = MakeNetdevNetlinkReader();  // created outside the namespace
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  NetdevState state;
  EXPECT_EQ(reader->Read("rdx0", &state), 0);  // first use, without BeginPoll
  EXPECT_EQ(state.mtu, 1500u);
}

// Sends raw Ethernet frames out of a netdev (AF_PACKET; we are root in the namespace).
int SendFrames(const std::string& netdev, int count) {
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
  if (fd < 0) return -1;
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_IP);
  addr.sll_ifindex = static_cast<int>(if_nametoindex(netdev.c_str()));
  addr.sll_halen = ETH_ALEN;
  unsigned char frame[64] = {};
  std::memset(frame, 0xff, ETH_ALEN);  // broadcast destination
  frame[12] = 0x08;                    // ETH_P_IP
  int sent = 0;
  for (int i = 0; i < count; ++i) {
    if (sendto(fd, frame, sizeof(frame), 0, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) ==
        static_cast<ssize_t>(sizeof(frame))) {
      ++sent;
    }
  }
  close(fd);
  return sent;
}

uint64_t JsonStat(const std::string& json, const std::string& dir, const std::string& name) {
  std::smatch m;
  std::regex re("\"" + dir + "\":\\{[^}]*\"" + name + "\":([0-9]+)");
  if (!std::regex_search(json, m, re)) return UINT64_MAX;
  return std::stoull(m[1].str());
}

TEST(NetdevNetlinkReader, AgreesWithSysfsReaderAndIpLinkCounters) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  // Flap the carrier twice and drop a few frames: a veth whose peer is down drops what it sends.
  ASSERT_EQ(ns.Ip("link set rdx1 down"), 0);
  EXPECT_EQ(SendFrames("rdx0", 3), 3);
  ASSERT_EQ(ns.Ip("link set rdx1 up"), 0);
  ASSERT_EQ(ns.Ip("link set rdx1 down"), 0);
  ASSERT_EQ(ns.Ip("link set rdx1 up"), 0);
  auto netlink = MakeNetdevNetlinkReader();
  Poll poll(*netlink);
  ASSERT_TRUE(WaitFor([&] { return poll() && poll.state.oper_up; }));

  // class/net/rdx0 as the namespace's own sysfs shows it, copied into a sysfs-like tree.
  TempDir tree;
  std::string out;
  std::string copy =
      "sh -c 'd=" + tree.path() +
      "/class/net/rdx0; mkdir -p $d/statistics && cd /sys/class/net/rdx0 && for f in operstate "
      "flags carrier mtu carrier_changes carrier_up_count carrier_down_count "
      "statistics/rx_errors statistics/tx_errors statistics/rx_dropped statistics/tx_dropped; "
      "do cat $f > $d/$f || exit 1; done'";
  ASSERT_EQ(ns.Exec(copy, &out), 0) << out;
  SysfsReader sysfs(tree.path());
  auto sysfs_reader = MakeNetdevSysfsReader(sysfs);
  NetdevState files;
  ASSERT_EQ(sysfs_reader->Read("rdx0", &files), 0);
  ASSERT_TRUE(poll());  // same instant as the copy, nothing changes in between
  const NetdevState& nl = poll.state;

  EXPECT_EQ(nl.admin_up, files.admin_up);
  EXPECT_EQ(nl.oper_up, files.oper_up);
  EXPECT_EQ(nl.carrier, files.carrier);
  EXPECT_EQ(nl.mtu, files.mtu);
  EXPECT_EQ(nl.carrier_changes, files.carrier_changes);
  EXPECT_EQ(nl.rx_errors, files.rx_errors);
  EXPECT_EQ(nl.tx_errors, files.tx_errors);
  EXPECT_EQ(nl.rx_dropped, files.rx_dropped);
  EXPECT_EQ(nl.tx_dropped, files.tx_dropped);
  ASSERT_TRUE(files.carrier_up_count && files.carrier_down_count && files.carrier_changes);
  EXPECT_EQ(*files.carrier_up_count + *files.carrier_down_count, *files.carrier_changes);
  EXPECT_GE(*files.carrier_down_count, 2u);
  EXPECT_GE(*files.carrier_up_count, 3u);    // creation + two flaps
  EXPECT_GE(nl.tx_dropped.value_or(0), 3u);  // plus IPv6 ND frames sent while rdx1 was down

  ASSERT_EQ(ns.Exec("ip -j -s link show rdx0", &out), 0) << out;
  EXPECT_EQ(nl.rx_errors, JsonStat(out, "rx", "errors")) << out;
  EXPECT_EQ(nl.tx_errors, JsonStat(out, "tx", "errors")) << out;
  EXPECT_EQ(nl.rx_dropped, JsonStat(out, "rx", "dropped")) << out;
  EXPECT_EQ(nl.tx_dropped, JsonStat(out, "tx", "dropped")) << out;
}

// A dump of 300 links spans many receives (each RTM_NEWLINK is over a kilobyte): every
// link of every part is read, and the next poll sees links that went away gone.
TEST(NetdevNetlinkReader, DumpSpanningManyReceivesHasEveryLink) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  constexpr int kLinks = 150;  // veth pairs (no dummy module in every test kernel)
  std::string out;
  ASSERT_EQ(ns.Exec("sh -c 'for i in $(seq 0 " + std::to_string(kLinks - 1) +
                        "); do echo link add rdd$i mtu $((1000 + i)) type veth peer name rde$i; "
                        "done | ip -b -'",
                    &out),
            0)
      << out;
  ASSERT_EQ(ns.Ip("link set rdd7 up"), 0);
  ns.Enter();
  auto reader = MakeNetdevNetlinkReader();
  reader->BeginPoll();
  for (int i = 0; i < kLinks; ++i) {
    NetdevState state;
    ASSERT_EQ(reader->Read("rdd" + std::to_string(i), &state), 0) << i;
    EXPECT_EQ(state.mtu, static_cast<uint32_t>(1000 + i));
    EXPECT_EQ(state.admin_up, i == 7);
    ASSERT_EQ(reader->Read("rde" + std::to_string(i), &state), 0) << i;
  }
  ASSERT_EQ(ns.Ip("link del rdd7"), 0);  // and its peer rde7
  reader->BeginPoll();
  NetdevState state;
  EXPECT_EQ(reader->Read("rdd7", &state), ENODEV);
  EXPECT_EQ(reader->Read("rde7", &state), ENODEV);
  EXPECT_EQ(reader->Read("rdd8", &state), 0);
}

TEST(DcbNetlinkReader, VethHasNoDcbAndAMissingNetdevIsNoDevice) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  auto reader = MakeDcbNetlinkReader();
  for (int round = 0; round < 2; ++round) {  // the socket stays usable after each answer
    DcbConfig config;
    config.supported = true;
    // veth has no dcbnl_ops: the kernel answers EOPNOTSUPP, which is "no DCB", not an error.
    EXPECT_EQ(reader->Read("rdx0", &config), 0);
    EXPECT_FALSE(config.supported);
    EXPECT_FALSE(config.pfc_known);
    EXPECT_EQ(config.dscp_entries, 0);
    EXPECT_EQ(config.dscp_to_priority[0], -1);
    // dcb_doit looks the name up first: ENODEV.
    EXPECT_EQ(reader->Read("nosuch0", &config), ENODEV);
    EXPECT_FALSE(config.supported);
    EXPECT_EQ(reader->Read("lo", &config), 0);
    EXPECT_FALSE(config.supported);
  }
}

}  // namespace
}  // namespace rdma_exporter::testing
