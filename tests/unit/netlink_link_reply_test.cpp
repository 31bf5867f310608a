// The RTM_NEWLINK parser of the rtnetlink netdev reader on messages built the way the kernel's
// rtnl_fill_ifinfo fills them, including the shapes a test namespace's veth never shows (no
// 64-bit statistics, attributes missing or cut short).
#include <gtest/gtest.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <cerrno>
#include <string>

#include "exporter/readers/netdev_reader.h"
#include "exporter/readers/netlink_util.h"

namespace rdma_exporter {
namespace {

NlMsgPtr NewLink(unsigned flags) {
  NlMsgPtr msg(nlmsg_alloc_simple(RTM_NEWLINK, NLM_F_MULTI));
  ifinfomsg info{};
  info.ifi_flags = flags;
  nlmsg_append(msg.get(), &info, sizeof(info), NLMSG_ALIGNTO);
  return msg;
}

// A link as an up mlx5 port reports it: name, MTU, operstate, carrier and both stats structs.
NlMsgPtr UpLink() {
  NlMsgPtr msg = NewLink(IFF_UP | IFF_RUNNING);
  nla_put_string(msg.get(), IFLA_IFNAME, "ens1f0np0");
  nla_put_u32(msg.get(), IFLA_MTU, 9000);
  nla_put_u8(msg.get(), IFLA_OPERSTATE, IF_OPER_UP);
  nla_put_u8(msg.get(), IFLA_CARRIER, 1);
  nla_put_u32(msg.get(), IFLA_CARRIER_CHANGES, 4);
  rtnl_link_stats stats32{};
  stats32.rx_errors = 1;  // 32-bit copy: must lose to IFLA_STATS64
  nla_put(msg.get(), IFLA_STATS, sizeof(stats32), &stats32);
  rtnl_link_stats64 stats{};
  stats.rx_errors = 5'000'000'000ULL;
  stats.tx_errors = 2;
  stats.rx_dropped = 3;
  stats.tx_dropped = 4;
  nla_put(msg.get(), IFLA_STATS64, sizeof(stats), &stats);
  return msg;
}

TEST(LinkReply, UpLinkWith64BitStatistics) {
  NlMsgPtr msg = UpLink();
  std::string name;
  NetdevState state;
  ASSERT_EQ(ParseLinkReply(nlmsg_hdr(msg.get()), &name, &state), 0);
  EXPECT_EQ(name, "ens1f0np0");
  EXPECT_TRUE(state.admin_up);
  EXPECT_TRUE(state.oper_up);
  EXPECT_EQ(state.carrier, true);
  EXPECT_EQ(state.mtu, 9000u);
  EXPECT_EQ(state.carrier_changes, 4u);
  EXPECT_EQ(state.rx_errors, 5'000'000'000ULL);
  EXPECT_EQ(state.tx_errors, 2u);
  EXPECT_EQ(state.rx_dropped, 3u);
  EXPECT_EQ(state.tx_dropped, 4u);
  EXPECT_FALSE(state.carrier_up_count.has_value());  // read from sysfs by the collector
  EXPECT_FALSE(state.carrier_down_count.has_value());
}

TEST(LinkReply, AbsentAttributesReadAsLibnlRouteGaveThem) {
  // Admin down, dormant, no carrier attribute, no MTU, 32-bit statistics only, an older
  // kernel's shorter struct (up to tx_dropped).
  NlMsgPtr msg = NewLink(0);
  nla_put_string(msg.get(), IFLA_IFNAME, "eth9");
  nla_put_u8(msg.get(), IFLA_OPERSTATE, IF_OPER_DORMANT);
  rtnl_link_stats stats{};
  stats.tx_dropped = 7;
  nla_put(msg.get(), IFLA_STATS, offsetof(rtnl_link_stats, tx_dropped) + sizeof(uint32_t), &stats);
  std::string name;
  NetdevState state;
  ASSERT_EQ(ParseLinkReply(nlmsg_hdr(msg.get()), &name, &state), 0);
  EXPECT_FALSE(state.admin_up);
  EXPECT_FALSE(state.oper_up);
  EXPECT_EQ(state.carrier, false);
  EXPECT_EQ(state.mtu, 0u);
  EXPECT_FALSE(state.carrier_changes.has_value());
  EXPECT_EQ(state.tx_dropped, 7u);
  EXPECT_EQ(state.rx_errors, 0u);
}

TEST(LinkReply, NamelessLinkIsSkippedAndBrokenAttributesAreRejected) {
  std::string name;
  NetdevState state;
  NlMsgPtr nameless = NewLink(IFF_UP);
  nla_put_u32(nameless.get(), IFLA_MTU, 1500);
  EXPECT_EQ(ParseLinkReply(nlmsg_hdr(nameless.get()), &name, &state), ENOENT);

  NlMsgPtr short_mtu = NewLink(IFF_UP);
  nla_put_string(short_mtu.get(), IFLA_IFNAME, "eth0");
  nla_put_u16(short_mtu.get(), IFLA_MTU, 1500);  // 2 bytes, not a u32
  EXPECT_EQ(ParseLinkReply(nlmsg_hdr(short_mtu.get()), &name, &state), EBADMSG);

  NlMsgPtr unterminated = NewLink(IFF_UP);
  nla_put(unterminated.get(), IFLA_IFNAME, 4, "eth0");  // no NUL
  EXPECT_EQ(ParseLinkReply(nlmsg_hdr(unterminated.get()), &name, &state), EBADMSG);

  NlMsgPtr short_stats = NewLink(IFF_UP);
  nla_put_string(short_stats.get(), IFLA_IFNAME, "eth0");
  rtnl_link_stats64 stats{};
  nla_put(short_stats.get(), IFLA_STATS64, offsetof(rtnl_link_stats64, tx_dropped), &stats);
  EXPECT_EQ(ParseLinkReply(nlmsg_hdr(short_stats.get()), &name, &state), EBADMSG);

  // Shorter than struct ifinfomsg.
  NlMsgPtr headless(nlmsg_alloc_simple(RTM_NEWLINK, 0));
  EXPECT_EQ(ParseLinkReply(nlmsg_hdr(headless.get()), &name, &state), EBADMSG);
}

}  // namespace
}  // namespace rdma_exporter
