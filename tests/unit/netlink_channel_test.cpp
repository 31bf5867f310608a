// NetlinkChannel, the one send/receive path of the netlink readers, against the kernel's
// rtnetlink (no privilege needed for a link dump): a reply handler that throws ends in an error
// return, a peer that never answers ends at the receive timeout, and every reader's socket has
// that timeout.
#include <dirent.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <chrono>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "exporter/readers/netdev_reader.h"
#include "exporter/readers/netlink_util.h"
#include "rdma_exporter/kernel_readers.h"

namespace rdma_exporter {
namespace {

using std::chrono::milliseconds;

NlMsgPtr LinkDumpRequest() {
  NlMsgPtr msg = NewNetlinkRequest(RTM_GETLINK, NLM_F_DUMP);
  ifinfomsg header{};
  EXPECT_GE(nlmsg_append(msg.get(), &header, sizeof(header), NLMSG_ALIGNTO), 0);
  return msg;
}

// The names of the links a dump on channel returns; EXPECTs it to succeed.
std::set<std::string> DumpLinkNames(NetlinkChannel& channel) {
  std::set<std::string> names;
  NlMsgPtr msg = LinkDumpRequest();
  int err = channel.Transact(msg.get(), RTM_NEWLINK, [&](const nlmsghdr* hdr) {
    std::string name;
    NetdevState state;
    int parsed = ParseLinkReply(hdr, &name, &state);
    if (parsed == 0) names.insert(name);
    return parsed;
  });
  EXPECT_EQ(err, 0);
  return names;
}

TEST(NetlinkChannel, ReplyHandlerThatThrowsEndsInAnErrorAndTheChannelRecovers) {
  NetlinkChannel channel(NETLINK_ROUTE);
  // An exception must not unwind through libnl's C frames (std::terminate, or a leaked nl_cb
  // and a socket with the rest of the dump unread): the channel reports it as an error.
  NlMsgPtr msg = LinkDumpRequest();
  int err = channel.Transact(msg.get(), RTM_NEWLINK, [](const nlmsghdr*) -> int {
    return std::stoi("not a number");  // throws std::invalid_argument
  });
  EXPECT_EQ(err, EBADMSG);
  EXPECT_EQ(channel.fd(), -1) << "a socket with a half-read dump must not be reused";

  msg = LinkDumpRequest();
  err = channel.Transact(msg.get(), RTM_NEWLINK,
                         [](const nlmsghdr*) -> int { throw std::bad_alloc(); });
  EXPECT_EQ(err, ENOMEM);

  // The next request gets a clean socket and the whole dump.
  EXPECT_EQ(DumpLinkNames(channel).count("lo"), 1u);
}

TEST(NetlinkChannel, HandlerErrorStopsTheExchange) {
  NetlinkChannel channel(NETLINK_ROUTE);
  NlMsgPtr msg = LinkDumpRequest();
  int calls = 0;
  int err = channel.Transact(msg.get(), RTM_NEWLINK, [&](const nlmsghdr*) {
    ++calls;
    return EPROTO;
  });
  EXPECT_EQ(err, EPROTO);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(DumpLinkNames(channel).count("lo"), 1u);
}

timeval ReceiveTimeout(int fd) {
  timeval timeout{};
  socklen_t len = sizeof(timeout);
  EXPECT_EQ(getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, &len), 0);
  return timeout;
}

TEST(NetlinkChannel, WaitsNoLongerThanTheReceiveTimeoutForAPeerThatNeverAnswers) {
  NetlinkChannel channel(NETLINK_ROUTE, milliseconds(300));
  // The kernel skips control messages (type < NLMSG_MIN_TYPE) and, without NLM_F_ACK, sends
  // nothing back: a peer that never answers.
  NlMsgPtr msg = NewNetlinkRequest(NLMSG_NOOP, 0);
  auto start = std::chrono::steady_clock::now();
  int err = channel.Transact(msg.get(), NLMSG_NOOP, [](const nlmsghdr*) { return 0; });
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(err, EAGAIN);
  EXPECT_GE(waited, milliseconds(250));
  EXPECT_LT(waited, milliseconds(3000));
}

TEST(NetlinkChannel, DefaultReceiveTimeoutIsSetOnTheSocket) {
  NetlinkChannel channel(NETLINK_ROUTE);
  ASSERT_EQ(channel.Connect(), 0);
  timeval timeout = ReceiveTimeout(channel.fd());
  EXPECT_EQ(timeout.tv_sec * 1000 + timeout.tv_usec / 1000, kNetlinkReceiveTimeout.count());
}

// The netlink sockets of protocol the process has open.
std::set<int> NetlinkSockets(int protocol) {
  std::set<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  while (dirent* entry = readdir(dir)) {
    int fd = atoi(entry->d_name);
    int domain = 0, proto = 0;
    socklen_t len = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_NETLINK) {
      continue;
    }
    len = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 && proto == protocol) {
      fds.insert(fd);
    }
  }
  closedir(dir);
  return fds;
}

// Runs use(), which makes a reader open its socket, and checks the receive timeout of each
// netlink socket of protocol that appeared. Returns how many there were.
template <typename Use>
size_t ExpectNewSocketsHaveTheTimeout(int protocol, const Use& use) {
  std::set<int> before = NetlinkSockets(protocol);
  use();
  size_t checked = 0;
  for (int fd : NetlinkSockets(protocol)) {
    if (before.count(fd) != 0) continue;
    timeval timeout = ReceiveTimeout(fd);
    EXPECT_EQ(timeout.tv_sec * 1000 + timeout.tv_usec / 1000, kNetlinkReceiveTimeout.count())
        << "netlink socket " << fd << " of protocol " << protocol;
    ++checked;
  }
  return checked;
}

TEST(NetlinkReaders, EverySocketHasTheSameReceiveTimeout) {
  // The netdev reader opens its socket for the poll's first Read (its dump is sent then).
  auto netdev = MakeNetdevNetlinkReader();
  NetdevState state;
  EXPECT_EQ(ExpectNewSocketsHaveTheTimeout(NETLINK_ROUTE,
                                           [&] {
                                             netdev->BeginPoll();
                                             EXPECT_EQ(netdev->Read("lo", &state), 0);
                                           }),
            1u);

  auto dcb = MakeDcbNetlinkReader();
  DcbConfig config;
  EXPECT_EQ(ExpectNewSocketsHaveTheTimeout(NETLINK_ROUTE, [&] { (void)dcb->Read("lo", &config); }),
            1u);

  // NETLINK_RDMA exists only with ib_core loaded; without it there is no socket to check.
  auto rdma = MakeRdmaNetlinkKernelReader();
  std::map<std::string, uint64_t> counts;
  ExpectNewSocketsHaveTheTimeout(
      NETLINK_RDMA, [&] { EXPECT_NE(rdma->ReadResources("no-such-device", &counts), 0); });
}

}  // namespace
}  // namespace rdma_exporter
