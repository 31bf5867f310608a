// The LLDP listener against a real kernel: frames sent from the peer end of a veth pair in a
// namespace of the test's own arrive on our end, are parsed and kept per netdev until their TTL;
// a TTL-0 frame forgets the neighbour; our own outgoing frames are not our neighbour.
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "netns.h"
#include "rdma_exporter/lldp.h"
#include "rdma_exporter/unique_fd.h"

namespace rdma_exporter::testing {
namespace {

std::vector<uint8_t> Frame(const std::string& system_name, const std::string& port, uint16_t ttl) {
  std::vector<uint8_t> f = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x02,
                            0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0xcc};
  auto tlv = [&](uint8_t type, std::vector<uint8_t> v) {
    f.push_back(static_cast<uint8_t>(type << 1));
    f.push_back(static_cast<uint8_t>(v.size()));
    f.insert(f.end(), v.begin(), v.end());
  };
  tlv(1, {4, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01});
  std::vector<uint8_t> p = {5};
  p.insert(p.end(), port.begin(), port.end());
  tlv(2, p);
  tlv(3, {static_cast<uint8_t>(ttl >> 8), static_cast<uint8_t>(ttl)});
  tlv(5, std::vector<uint8_t>(system_name.begin(), system_name.end()));
  tlv(0, {});
  f.resize(std::max<size_t>(f.size(), 60));  // Ethernet minimum, zero padding
  return f;
}

bool Send(const std::string& netdev, const std::vector<uint8_t>& frame) {
  UniqueFd fd(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return false;
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = static_cast<int>(if_nametoindex(netdev.c_str()));
  to.sll_halen = 6;
  std::copy(frame.begin(), frame.begin() + 6, to.sll_addr);
  return sendto(fd.get(), frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to),
                sizeof(to)) == static_cast<ssize_t>(frame.size());
}

// Polls reader for netdev's neighbour until `want` (0 or ENOENT) or 3 s.
int WaitFor(LldpReader& reader, const std::string& netdev, int want, LldpNeighbor* n) {
  int err = -1;
  for (int i = 0; i < 150; ++i) {
    err = reader.Neighbor(netdev, n);
    if (err == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return err;
}

TEST(LldpKernel, FramesFromThePeerEndOfAVethAreOurNeighbour) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  auto reader = MakeLldpSocketReader();
  LldpNeighbor n;
  // The first call starts listening and joins the LLDP group on rdx0: nothing heard yet.
  EXPECT_EQ(reader->Neighbor("rdx0", &n), ENOENT);
  EXPECT_EQ(reader->Neighbor("rdxnone0", &n), ENODEV);

  ASSERT_TRUE(Send("rdx1", Frame("leaf-r1-07", "Ethernet12", 120)));
  ASSERT_EQ(WaitFor(*reader, "rdx0", 0, &n), 0);
  EXPECT_EQ(n.system_name, "leaf-r1-07");
  EXPECT_EQ(n.port_id, "Ethernet12");
  EXPECT_EQ(n.chassis_id, "02:00:00:00:00:01");
  EXPECT_EQ(n.ttl_seconds, 120);

  // A frame we send out of rdx0 reaches rdx1: rdx1's neighbour, never rdx0's.
  ASSERT_TRUE(Send("rdx0", Frame("gpu17", "ens1f0np0", 120)));
  ASSERT_EQ(WaitFor(*reader, "rdx1", 0, &n), 0);
  EXPECT_EQ(n.system_name, "gpu17");
  ASSERT_EQ(reader->Neighbor("rdx0", &n), 0);
  EXPECT_EQ(n.system_name, "leaf-r1-07");

  // A garbage frame is counted, the neighbour kept; TTL 0 (shutdown) forgets it.
  std::vector<uint8_t> garbage(60, 0);
  garbage[0] = 0x01;
  garbage[12] = 0x88;
  garbage[13] = 0xcc;
  ASSERT_TRUE(Send("rdx1", garbage));
  ASSERT_TRUE(Send("rdx1", Frame("leaf-r1-07", "Ethernet12", 0)));
  EXPECT_EQ(WaitFor(*reader, "rdx0", ENOENT, &n), ENOENT);
  EXPECT_GE(reader->malformed_frames(), 1u);
  EXPECT_GE(reader->frames(), 4u);
  ns.Leave();
}

TEST(LldpKernel, ANeighbourExpiresWithItsTtl) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  auto reader = MakeLldpSocketReader();
  LldpNeighbor n;
  EXPECT_EQ(reader->Neighbor("rdx0", &n), ENOENT);
  ASSERT_TRUE(Send("rdx1", Frame("spine-2", "swp3", 1)));
  ASSERT_EQ(WaitFor(*reader, "rdx0", 0, &n), 0);
  EXPECT_EQ(n.system_name, "spine-2");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(reader->Neighbor("rdx0", &n), ENOENT);
  ns.Leave();
}

}  // namespace
}  // namespace rdma_exporter::testing
