// The RDMA netlink reply parsers on replies built the way the kernel's nldev.c fills them
// (fill_dev_info, fill_res_info, stat_get_doit_default_counter + rdma_nl_stat_hwcounter_entry):
// the STAT_GET path as mlx5 answers it, with optional counters and 64-bit values, which the
// Soft-RoCE VM cannot show.
#include <gtest/gtest.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <memory>

#include "exporter/readers/netlink_util.h"
#include "exporter/readers/rdma_netlink_reader.h"

namespace rdma_exporter {
namespace {

using MsgPtr = NlMsgPtr;
using Counters = std::vector<std::pair<std::string, uint64_t>>;

MsgPtr Message(int cmd) {
  return MsgPtr(nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd), 0));
}

void PutDevice(nl_msg* msg, uint32_t index, const char* name) {
  nla_put_u32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, index);
  nla_put_string(msg, RDMA_NLDEV_ATTR_DEV_NAME, name);
}

// nla_put_u64_64bit: a PAD attribute first when the value would not be 8-byte aligned.
void PutU64(nl_msg* msg, int type, uint64_t value) {
  nlmsghdr* hdr = nlmsg_hdr(msg);
  if ((NLMSG_ALIGN(hdr->nlmsg_len) + NLA_HDRLEN) % 8 != 0) {
    nla_put(msg, RDMA_NLDEV_ATTR_PAD, 0, nullptr);
  }
  nla_put_u64(msg, type, value);
}

MsgPtr StatReply(const char* device, const Counters& counters) {
  MsgPtr msg = Message(RDMA_NLDEV_CMD_STAT_GET);
  PutDevice(msg.get(), 2, device);
  nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_PORT_INDEX, 1);
  nlattr* table = nla_nest_start(msg.get(), RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  for (const auto& [name, value] : counters) {
    nlattr* entry = nla_nest_start(msg.get(), RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
    nla_put_string(msg.get(), RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name.c_str());
    PutU64(msg.get(), RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, value);
    nla_nest_end(msg.get(), entry);
  }
  nla_nest_end(msg.get(), table);
  return msg;
}

TEST(RdmaNetlinkReply, StatGetKeepsEveryCounterInOrderWith64BitValues) {
  // mlx5 with optional counters enabled: q counters, a congestion counter, op counters.
  Counters sent = {{"rx_write_requests", 4294967295ULL},
                   {"out_of_buffer", 17},
                   {"np_cnp_sent", 3},
                   {"cc_rx_ce_pkts", 5},
                   {"rdma_tx_bytes", 1ULL << 40}};
  MsgPtr msg = StatReply("mlx5_0", sent);
  Counters got;
  ASSERT_EQ(ParseRdmaStatGetReply(nlmsg_hdr(msg.get()), "mlx5_0", &got), 0);
  EXPECT_EQ(got, sent);
}

TEST(RdmaNetlinkReply, StatGetOfAnotherDeviceIsEnodev) {
  MsgPtr msg = StatReply("mlx5_3", {{"out_of_buffer", 1}});
  Counters got;
  EXPECT_EQ(ParseRdmaStatGetReply(nlmsg_hdr(msg.get()), "mlx5_0", &got), ENODEV);
  EXPECT_TRUE(got.empty());
}

TEST(RdmaNetlinkReply, StatGetWithoutCounterTableOrWithShortValueIsEbadmsg) {
  MsgPtr no_table = Message(RDMA_NLDEV_CMD_STAT_GET);
  PutDevice(no_table.get(), 0, "rxe0");
  Counters got;
  EXPECT_EQ(ParseRdmaStatGetReply(nlmsg_hdr(no_table.get()), "rxe0", &got), EBADMSG);

  MsgPtr short_value = Message(RDMA_NLDEV_CMD_STAT_GET);
  PutDevice(short_value.get(), 0, "rxe0");
  nlattr* table = nla_nest_start(short_value.get(), RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
  nlattr* entry = nla_nest_start(short_value.get(), RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
  nla_put_string(short_value.get(), RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "sent_pkts");
  nla_put_u32(short_value.get(), RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 5);  // 4 bytes
  nla_nest_end(short_value.get(), entry);
  nla_nest_end(short_value.get(), table);
  EXPECT_EQ(ParseRdmaStatGetReply(nlmsg_hdr(short_value.get()), "rxe0", &got), EBADMSG);
}

TEST(RdmaNetlinkReply, ResGetSummaryInKernelOrder) {
  MsgPtr msg = Message(RDMA_NLDEV_CMD_RES_GET);
  PutDevice(msg.get(), 1, "rxe0");
  nlattr* table = nla_nest_start(msg.get(), RDMA_NLDEV_ATTR_RES_SUMMARY);
  uint64_t count = 0;
  for (const char* name : {"pd", "cq", "qp", "cm_id", "mr", "ctx", "srq"}) {
    nlattr* entry = nla_nest_start(msg.get(), RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY);
    nla_put_string(msg.get(), RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, name);
    PutU64(msg.get(), RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, count++);
    nla_nest_end(msg.get(), entry);
  }
  nla_nest_end(msg.get(), table);
  std::map<std::string, uint64_t> counts;
  ASSERT_EQ(ParseRdmaResGetReply(nlmsg_hdr(msg.get()), "rxe0", &counts), 0);
  EXPECT_EQ(counts,
            (std::map<std::string, uint64_t>{
                {"pd", 0}, {"cq", 1}, {"qp", 2}, {"cm_id", 3}, {"mr", 4}, {"ctx", 5}, {"srq", 6}}));
  EXPECT_EQ(ParseRdmaResGetReply(nlmsg_hdr(msg.get()), "rxe1", &counts), ENODEV);
}

TEST(RdmaNetlinkReply, DevGetNameAndIndexOrSkipped) {
  MsgPtr msg = Message(RDMA_NLDEV_CMD_GET);
  PutDevice(msg.get(), 7, "mlx5_bond_0");
  std::string name;
  uint32_t index = 0;
  ASSERT_EQ(ParseRdmaDevGetReply(nlmsg_hdr(msg.get()), &name, &index), 0);
  EXPECT_EQ(name, "mlx5_bond_0");
  EXPECT_EQ(index, 7u);
  MsgPtr nameless = Message(RDMA_NLDEV_CMD_GET);
  nla_put_u32(nameless.get(), RDMA_NLDEV_ATTR_DEV_INDEX, 3);
  EXPECT_EQ(ParseRdmaDevGetReply(nlmsg_hdr(nameless.get()), &name, &index), ENOENT);
}

// RES_QP_GET as nldev.c's res_get_common_dumpit and fill_res_qp_entry fill one message: the
// device, then a RES_QP table of entries; a bound QP has PORT_INDEX, a user QP RES_PID, a kernel
// QP RES_KERN_NAME instead.
TEST(RdmaNetlinkReply, ResQpGivesEachQpsPortAndPid) {
  MsgPtr msg = Message(RDMA_NLDEV_CMD_RES_QP_GET);
  PutDevice(msg.get(), 1, "mlx5_0");
  nlattr* table = nla_nest_start(msg.get(), RDMA_NLDEV_ATTR_RES_QP);
  struct Qp {
    uint32_t port, lqpn, pid;
    const char* kern;
  };
  for (const Qp& qp : {Qp{1, 1, 0, "ib_core"}, Qp{1, 0x107, 4242, nullptr},
                       Qp{0, 0x108, 4242, nullptr}, Qp{2, 0x10a, 777, nullptr}}) {
    nlattr* entry = nla_nest_start(msg.get(), RDMA_NLDEV_ATTR_RES_QP_ENTRY);
    if (qp.port != 0) nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_PORT_INDEX, qp.port);
    nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_RES_LQPN, qp.lqpn);
    nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_RES_SQ_PSN, 0x3a5f);
    nla_put_u8(msg.get(), RDMA_NLDEV_ATTR_RES_TYPE, 2);
    nla_put_u8(msg.get(), RDMA_NLDEV_ATTR_RES_STATE, 3);
    if (qp.kern != nullptr) {
      nla_put_string(msg.get(), RDMA_NLDEV_ATTR_RES_KERN_NAME, qp.kern);
    } else {
      nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_RES_PID, qp.pid);
    }
    nla_nest_end(msg.get(), entry);
  }
  nla_nest_end(msg.get(), table);
  std::vector<RdmaQpOwner> qps;
  ASSERT_EQ(ParseRdmaResQpReply(nlmsg_hdr(msg.get()), "mlx5_0", &qps), 0);
  EXPECT_EQ(qps, (std::vector<RdmaQpOwner>{{1, 0}, {1, 4242}, {0, 4242}, {2, 777}}));
  EXPECT_EQ(ParseRdmaResQpReply(nlmsg_hdr(msg.get()), "mlx5_1", &qps), ENODEV);

  // The last message of a dump of a device without QPs has no table: nothing, no error.
  MsgPtr empty = Message(RDMA_NLDEV_CMD_RES_QP_GET);
  PutDevice(empty.get(), 1, "mlx5_0");
  qps.clear();
  EXPECT_EQ(ParseRdmaResQpReply(nlmsg_hdr(empty.get()), "mlx5_0", &qps), 0);
  EXPECT_TRUE(qps.empty());

  // An entry without its QP number is not the kernel's.
  MsgPtr broken = Message(RDMA_NLDEV_CMD_RES_QP_GET);
  PutDevice(broken.get(), 1, "mlx5_0");
  table = nla_nest_start(broken.get(), RDMA_NLDEV_ATTR_RES_QP);
  nlattr* entry = nla_nest_start(broken.get(), RDMA_NLDEV_ATTR_RES_QP_ENTRY);
  nla_put_u32(broken.get(), RDMA_NLDEV_ATTR_RES_PID, 1);
  nla_nest_end(broken.get(), entry);
  nla_nest_end(broken.get(), table);
  EXPECT_EQ(ParseRdmaResQpReply(nlmsg_hdr(broken.get()), "mlx5_0", &qps), EBADMSG);
  // A PID of the wrong size.
  MsgPtr short_pid = Message(RDMA_NLDEV_CMD_RES_QP_GET);
  PutDevice(short_pid.get(), 1, "mlx5_0");
  table = nla_nest_start(short_pid.get(), RDMA_NLDEV_ATTR_RES_QP);
  entry = nla_nest_start(short_pid.get(), RDMA_NLDEV_ATTR_RES_QP_ENTRY);
  nla_put_u32(short_pid.get(), RDMA_NLDEV_ATTR_RES_LQPN, 9);
  nla_put_u8(short_pid.get(), RDMA_NLDEV_ATTR_RES_PID, 1);
  nla_nest_end(short_pid.get(), entry);
  nla_nest_end(short_pid.get(), table);
  EXPECT_EQ(ParseRdmaResQpReply(nlmsg_hdr(short_pid.get()), "mlx5_0", &qps), EBADMSG);
}

}  // namespace
}  // namespace rdma_exporter
