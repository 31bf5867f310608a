// LLDP: the frame parser on frames written from IEEE 802.1AB (TLV header = 7-bit type, 9-bit
// length; Chassis ID, Port ID and TTL first, in that order; End TLV), the fixture reader, and the
// lldp collector on a RoCE port, a LAG and an InfiniBand port.
#include "rdma_exporter/lldp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "collectors/lldp.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/metrics.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

using Bytes = std::vector<uint8_t>;

void Tlv(Bytes& f, uint8_t type, const Bytes& value) {
  f.push_back(static_cast<uint8_t>(type << 1 | (value.size() >> 8)));
  f.push_back(static_cast<uint8_t>(value.size() & 0xff));
  f.insert(f.end(), value.begin(), value.end());
}
Bytes Str(uint8_t subtype, const std::string& s) {
  Bytes b(s.size() + 1);
  b[0] = subtype;
  std::copy(s.begin(), s.end(), b.begin() + 1);
  return b;
}
Bytes Str(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

// To 01:80:c2:00:00:0e from 0c:42:a1:00:00:05, ethertype 0x88cc (or tagged 0x8100 first).
Bytes Header(bool vlan = false) {
  Bytes f = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x0c, 0x42, 0xa1, 0x00, 0x00, 0x05};
  if (vlan) f.insert(f.end(), {0x81, 0x00, 0x60, 0x64});  // PCP 3, VLAN 100
  f.insert(f.end(), {0x88, 0xcc});
  return f;
}

// A leaf switch port as SONiC / Cumulus send it: MAC chassis ID, interface-name port ID, TTL
// 120, port description, system name and description, capabilities bridge+router (router on).
Bytes SwitchFrame(bool vlan = false) {
  Bytes f = Header(vlan);
  Tlv(f, 1, {4, 0x0c, 0x42, 0xa1, 0x00, 0x00, 0x01});  // Chassis ID, subtype 4 = MAC
  Tlv(f, 2, Str(5, "Ethernet12"));                     // Port ID, subtype 5 = interface name
  Tlv(f, 3, {0x00, 0x78});                             // TTL 120
  Tlv(f, 4, Str("gpu17:ens1f0np0"));
  Tlv(f, 5, Str("leaf-r1-07"));
  Tlv(f, 6, Str("SONiC Software Version: 202305"));
  Tlv(f, 7, {0x00, 0x14, 0x00, 0x14});  // capabilities: bridge|router, enabled: bridge|router
  Tlv(f, 127, {0x00, 0x80, 0xc2, 0x0b, 0x08, 0x08});  // IEEE 802.1 ETS (DCBX): skipped
  Tlv(f, 0, {});
  return f;
}

TEST(LldpParser, ReadsEveryNeighbourField) {
  std::string error;
  auto n = ParseLldpFrame(SwitchFrame(), &error);
  ASSERT_TRUE(n) << error;
  EXPECT_EQ(n->chassis_id, "0c:42:a1:00:00:01");
  EXPECT_EQ(n->chassis_id_subtype, "mac");
  EXPECT_EQ(n->port_id, "Ethernet12");
  EXPECT_EQ(n->port_id_subtype, "interface_name");
  EXPECT_EQ(n->ttl_seconds, 120);
  EXPECT_EQ(n->port_description, "gpu17:ens1f0np0");
  EXPECT_EQ(n->system_name, "leaf-r1-07");
  EXPECT_EQ(n->system_description, "SONiC Software Version: 202305");
  EXPECT_EQ(n->system_type, "router");
  EXPECT_TRUE(error.empty());
}

TEST(LldpParser, VlanTaggedFramesAndOtherIdSubtypes) {
  Bytes f = Header(/*vlan=*/true);
  Tlv(f, 1, {5, 1, 10, 0, 0, 7});             // network address, IPv4 10.0.0.7
  Tlv(f, 2, {3, 0xb8, 0xce, 0xf6, 0, 0, 9});  // Port ID subtype 3 = MAC
  Tlv(f, 3, {0x00, 0x10});
  Tlv(f, 7, {0x00, 0x04, 0x00, 0x04});  // bridge only
  // No End TLV: the frame simply ends (tolerated).
  std::string error;
  auto n = ParseLldpFrame(f, &error);
  ASSERT_TRUE(n) << error;
  EXPECT_EQ(n->chassis_id, "10.0.0.7");
  EXPECT_EQ(n->chassis_id_subtype, "network_address");
  EXPECT_EQ(n->port_id, "b8:ce:f6:00:00:09");
  EXPECT_EQ(n->port_id_subtype, "mac");
  EXPECT_EQ(n->ttl_seconds, 16);
  EXPECT_EQ(n->system_type, "bridge");
  EXPECT_EQ(n->system_name, "");

  Bytes local = Header();
  Tlv(local, 1, Str(7, "FDO2311\x01X"));  // locally assigned, a control byte inside
  Tlv(local, 2, Str(7, "17"));
  Tlv(local, 3, {0x00, 0x78});
  Tlv(local, 0, {});
  n = ParseLldpFrame(local, &error);
  ASSERT_TRUE(n) << error;
  EXPECT_EQ(n->chassis_id, "FDO2311?X");
  EXPECT_EQ(n->chassis_id_subtype, "local");
  EXPECT_EQ(n->port_id, "17");
  EXPECT_EQ(n->port_id_subtype, "local");
  EXPECT_EQ(n->system_type, "");
}

TEST(LldpParser, MalformedFramesAreRejectedWithAReason) {
  std::string error;
  EXPECT_FALSE(ParseLldpFrame(Bytes(10, 0), &error));
  EXPECT_EQ(error, "frame shorter than an Ethernet header");

  Bytes ipv4 = Header();
  ipv4[12] = 0x08;
  ipv4[13] = 0x00;
  EXPECT_FALSE(ParseLldpFrame(ipv4, &error));
  EXPECT_EQ(error, "not an LLDP frame (ethertype 0800)");

  // The Port ID before the Chassis ID.
  Bytes order = Header();
  Tlv(order, 2, Str(5, "Ethernet12"));
  Tlv(order, 1, {4, 1, 2, 3, 4, 5, 6});
  Tlv(order, 3, {0, 120});
  EXPECT_FALSE(ParseLldpFrame(order, &error));
  EXPECT_EQ(error, "TLV 2 where TLV 1 is mandatory");

  // A TLV whose length runs past the frame.
  Bytes cut = Header();
  Tlv(cut, 1, {4, 1, 2, 3, 4, 5, 6});
  cut.insert(cut.end(), {0x04, 0x20, 'E', 't'});  // Port ID, length 32, 2 bytes left
  EXPECT_FALSE(ParseLldpFrame(cut, &error));
  EXPECT_EQ(error, "TLV 2 runs past the frame");

  // Chassis ID of subtype only (length 1); an End TLV before the TTL.
  Bytes tiny = Header();
  Tlv(tiny, 1, {4});
  EXPECT_FALSE(ParseLldpFrame(tiny, &error));
  EXPECT_EQ(error, "Chassis ID TLV length 1");
  Bytes early = Header();
  Tlv(early, 1, {4, 1, 2, 3, 4, 5, 6});
  Tlv(early, 2, Str(5, "x"));
  Tlv(early, 0, {});
  EXPECT_FALSE(ParseLldpFrame(early, &error));
  EXPECT_EQ(error, "LLDPDU without its Chassis ID, Port ID and TTL");
}

std::string HexOf(const Bytes& b) {
  std::string out;
  char buf[4];
  for (uint8_t c : b) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
    if (out.size() % 48 == 0) out += "\n";  // line breaks are ignored
  }
  return out;
}

TEST(LldpFixtureReader, ReadsAHexFrameAndSaysWhatIsMissing) {
  testing::TempDir dir;
  dir.Write("lldp/ens1f0np0", HexOf(SwitchFrame()));
  dir.Write("lldp/ens2f0np0", "88cc zz");
  auto reader = MakeLldpFixtureReader(dir.path());
  LldpNeighbor n;
  ASSERT_EQ(reader->Neighbor("ens1f0np0", &n), 0);
  EXPECT_EQ(n.system_name, "leaf-r1-07");
  EXPECT_EQ(reader->Neighbor("ens3f0np0", &n), ENOENT);
  EXPECT_EQ(reader->Neighbor("ens2f0np0", &n), EINVAL);
  EXPECT_EQ(reader->Neighbor("../etc", &n), ENODEV);
  EXPECT_EQ(reader->frames(), 2u);
  EXPECT_EQ(reader->malformed_frames(), 1u);
  // Read again unchanged: no new frame (a poll is not a frame); written anew: one more.
  ASSERT_EQ(reader->Neighbor("ens1f0np0", &n), 0);
  EXPECT_EQ(reader->Neighbor("ens2f0np0", &n), EINVAL);
  EXPECT_EQ(reader->frames(), 2u);
  EXPECT_EQ(reader->malformed_frames(), 1u);
  dir.Write("lldp/ens1f0np0", HexOf(SwitchFrame(/*vlan=*/true)));
  ASSERT_EQ(reader->Neighbor("ens1f0np0", &n), 0);
  EXPECT_EQ(reader->frames(), 3u);
}

TEST(LldpCollector, OnePeerPerPhysicalRoceNetdevAndNoneForInfiniBand) {
  testing::TempDir sys, fixtures;
  // mlx5_0: RoCE PF; mlx5_bond_0: RoCE LAG on bond0 (slaves ens2f0np0, ens2f1np1); mlx5_1: IB.
  sys.Write("class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
  sys.Write("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "ens1f0np0\n");
  sys.Write("class/infiniband/mlx5_bond_0/ports/1/link_layer", "Ethernet\n");
  sys.Write("class/infiniband/mlx5_bond_0/ports/1/gid_attrs/ndevs/0", "bond0\n");
  sys.Write("class/net/bond0/bonding/slaves", "ens2f0np0 ens2f1np1\n");
  sys.Write("class/infiniband/mlx5_1/ports/1/link_layer", "InfiniBand\n");
  fixtures.Write("lldp/ens1f0np0", HexOf(SwitchFrame()));
  fixtures.Write("lldp/ens2f0np0", HexOf(SwitchFrame(/*vlan=*/true)));
  fixtures.Write("lldp/ens2f1np1", "00");  // garbage: counted, the others still exported
  SysfsReader sysfs(sys.path());
  KernelReaders kernel;
  kernel.lldp = MakeLldpFixtureReader(fixtures.path());
  LldpCollector collector;
  auto r = testing::RunCollector(collector, sysfs, {}, &kernel);
  std::string text = RenderText(r.families);
  EXPECT_NE(
      text.find("rdma_port_peer_info{device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\","
                "source=\"lldp\",peer_chassis_id=\"0c:42:a1:00:00:01\",peer_port=\"Ethernet12\","
                "peer_port_description=\"gpu17:ens1f0np0\",peer_description=\"leaf-r1-07\","
                "peer_type=\"router\"} 1\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("rdma_port_peer_info{device=\"mlx5_bond_0\",port=\"1\",netdev=\"ens2f0np0\","
                      "bond=\"bond0\",source=\"lldp\""),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("mlx5_1"), std::string::npos) << text;
  EXPECT_EQ(text.find("ens2f1np1\",bond"), std::string::npos) << text;
  EXPECT_EQ(r.failures, 1u);
  EXPECT_NE(text.find("rdma_lldp_frames_received_total{result=\"malformed\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(LldpCollector, ADownPortKeepsItsLastPeerAnUpSilentOneLosesIt) {
  testing::TempDir sys, fixtures;
  sys.Write("class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
  sys.Write("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "ens1f0np0\n");
  sys.Write("class/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp\n");
  fixtures.Write("lldp/ens1f0np0", HexOf(SwitchFrame()));
  SysfsReader sysfs(sys.path());
  KernelReaders kernel;
  kernel.lldp = MakeLldpFixtureReader(fixtures.path());
  LldpCollector collector;
  auto peers = [&] {
    auto r = testing::RunCollector(collector, sysfs, {}, &kernel);
    std::string text = RenderText(r.families);
    return text.find("peer_description=\"leaf-rail0\"") != std::string::npos ||
           text.find("peer_description=\"leaf-r1-07\"") != std::string::npos;
  };
  ASSERT_TRUE(peers());
  // The link goes down: no more frames (the switch's TTL runs out), the cable still ends there.
  std::filesystem::remove(fixtures.path() + "/lldp/ens1f0np0");
  sys.Write("class/infiniband/mlx5_0/ports/1/phys_state", "3: Disabled\n");
  EXPECT_TRUE(peers());
  EXPECT_TRUE(peers());
  // Up again and silent: the peer is gone (recabled to something without LLDP).
  sys.Write("class/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp\n");
  EXPECT_FALSE(peers());
  sys.Write("class/infiniband/mlx5_0/ports/1/phys_state", "3: Disabled\n");
  EXPECT_FALSE(peers());
}

}  // namespace
}  // namespace rdma_exporter
