// The RTM_GETDCB reply parser on replies built the way mlx5 answers (mlx5e_dcbnl_ieee_getpfc,
// mlx5e_dcbnl_getapp): veth and virtio only ever answer EOPNOTSUPP, so the kernel tests cannot
// reach this code.
#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <memory>

#include "exporter/readers/dcb_reader.h"
#include "exporter/readers/netlink_util.h"

namespace rdma_exporter {
namespace {

using MsgPtr = NlMsgPtr;

// A reply with PFC enabled on `pfc_en` and DSCP APP entries dscp -> prio (prio = dscp >> 3) for
// the DSCP values in [0, dscp_count), plus one Ethertype entry (RoCE v1's 0x8915) to be ignored.
MsgPtr Reply(uint8_t pfc_en, int dscp_count) {
  MsgPtr msg(nlmsg_alloc_simple(RTM_GETDCB, 0));
  dcbmsg hdr{};
  hdr.dcb_family = AF_UNSPEC;
  hdr.cmd = DCB_CMD_IEEE_GET;
  nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO);
  nla_put_string(msg.get(), DCB_ATTR_IFNAME, "ens1f0np0");
  nlattr* ieee = nla_nest_start(msg.get(), DCB_ATTR_IEEE);
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = pfc_en;
  pfc.delay = 7;
  pfc.requests[3] = 12345;  // cached tx pause count: must not be taken for config
  nla_put(msg.get(), DCB_ATTR_IEEE_PFC, sizeof(pfc), &pfc);
  nlattr* table = nla_nest_start(msg.get(), DCB_ATTR_IEEE_APP_TABLE);
  for (int dscp = 0; dscp < dscp_count; ++dscp) {
    dcb_app app{IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(dscp >> 3),
                static_cast<uint16_t>(dscp)};
    nla_put(msg.get(), DCB_ATTR_IEEE_APP, sizeof(app), &app);
  }
  dcb_app ethertype{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 5, 0x8915};
  nla_put(msg.get(), DCB_ATTR_IEEE_APP, sizeof(ethertype), &ethertype);
  nla_nest_end(msg.get(), table);
  nla_nest_end(msg.get(), ieee);
  return msg;
}

TEST(DcbReply, Mlx5DscpTrustReplyGivesPfcAndTheDscpMap) {
  auto msg = Reply(1 << 3, 64);
  DcbConfig config;
  ASSERT_EQ(ParseDcbReply(nlmsg_hdr(msg.get()), &config), 0);
  EXPECT_TRUE(config.supported);
  EXPECT_TRUE(config.pfc_known);
  EXPECT_EQ(config.pfc_cap, 8);
  EXPECT_EQ(config.pfc_enabled, 1 << 3);
  EXPECT_EQ(config.dscp_entries, 64);
  EXPECT_EQ(config.dscp_to_priority[26], 3);
  EXPECT_EQ(config.dscp_to_priority[32], 4);
  EXPECT_EQ(config.dscp_to_priority[63], 7);
  EXPECT_EQ(config.dscp_to_priority[21], 2);  // not the Ethertype entry's priority 5
}

TEST(DcbReply, PcpTrustReplyHasNoDscpEntries) {
  auto msg = Reply(0, 0);
  DcbConfig config;
  ASSERT_EQ(ParseDcbReply(nlmsg_hdr(msg.get()), &config), 0);
  EXPECT_TRUE(config.supported);
  EXPECT_EQ(config.pfc_enabled, 0);
  EXPECT_EQ(config.dscp_entries, 0);
  EXPECT_EQ(config.dscp_to_priority[26], -1);
}

TEST(DcbReply, ReplyWithoutIeeeNestIsSupportedButUnknown) {
  MsgPtr msg(nlmsg_alloc_simple(RTM_GETDCB, 0));
  dcbmsg hdr{};
  hdr.cmd = DCB_CMD_IEEE_GET;
  nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO);
  nla_put_string(msg.get(), DCB_ATTR_IFNAME, "x");
  DcbConfig config;
  ASSERT_EQ(ParseDcbReply(nlmsg_hdr(msg.get()), &config), 0);
  EXPECT_TRUE(config.supported);
  EXPECT_FALSE(config.pfc_known);
}

TEST(DcbReply, EmptyAppTableIsNoDscpEntries) {
  // PCP trust with no APP entry at all: mlx5 still sends the (empty) table nest.
  MsgPtr msg(nlmsg_alloc_simple(RTM_GETDCB, 0));
  dcbmsg hdr{};
  hdr.cmd = DCB_CMD_IEEE_GET;
  nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO);
  nlattr* ieee = nla_nest_start(msg.get(), DCB_ATTR_IEEE);
  ieee_pfc pfc{};
  pfc.pfc_en = 1 << 3;
  nla_put(msg.get(), DCB_ATTR_IEEE_PFC, sizeof(pfc), &pfc);
  nla_nest_end_keep_empty(msg.get(), nla_nest_start(msg.get(), DCB_ATTR_IEEE_APP_TABLE));
  nla_nest_end(msg.get(), ieee);
  DcbConfig config;
  ASSERT_EQ(ParseDcbReply(nlmsg_hdr(msg.get()), &config), 0);
  EXPECT_TRUE(config.pfc_known);
  EXPECT_EQ(config.pfc_enabled, 1 << 3);
  EXPECT_EQ(config.dscp_entries, 0);
}

TEST(DcbReply, TruncatedPfcAttributeIsRejected) {
  MsgPtr msg(nlmsg_alloc_simple(RTM_GETDCB, 0));
  dcbmsg hdr{};
  nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO);
  nlattr* ieee = nla_nest_start(msg.get(), DCB_ATTR_IEEE);
  uint8_t one_byte = 8;
  nla_put(msg.get(), DCB_ATTR_IEEE_PFC, 1, &one_byte);
  nla_nest_end(msg.get(), ieee);
  DcbConfig config;
  EXPECT_EQ(ParseDcbReply(nlmsg_hdr(msg.get()), &config), EBADMSG);
}

}  // namespace
}  // namespace rdma_exporter
