// InfiniBand link peers: the NodeInfo, NodeDescription and PortInfo parsers on SMP data and the
// PMA ClassPortInfo and PortCountersExtended parsers on GMP data, all written from the IBA
// specification (every field at its own offset with a value no other field has), the fixture
// reader, the umad reader on a device that has no umad, the ib_peer collector, and the counters
// collector preferring a PMA's 64-bit PortXmitWait.
#include "rdma_exporter/ib_peer.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

#include "collectors/ib_peer.h"
#include "collectors/port_counters.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/metrics.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

// NodeInfo of an NVIDIA Quantum-2 leaf (IBA 14.2.5.3): BaseVersion 1, ClassVersion 1, NodeType
// 2 (switch), NumPorts 65, SystemImageGUID, NodeGUID, PortGUID, PartitionCap 0x0008,
// DeviceID 0xd2f2 (MQM9700), Revision 0x000000a1, LocalPortNum 23, VendorID 0x0002c9.
std::vector<uint8_t> QuantumNodeInfo() {
  std::vector<uint8_t> d(64, 0);
  d[0] = 1;
  d[1] = 1;
  d[2] = 2;
  d[3] = 65;
  const uint8_t sys[] = {0xfc, 0x6a, 0x1c, 0x03, 0x00, 0x11, 0x22, 0x30};
  const uint8_t node[] = {0xfc, 0x6a, 0x1c, 0x03, 0x00, 0x11, 0x22, 0x33};
  const uint8_t port[] = {0xfc, 0x6a, 0x1c, 0x03, 0x00, 0x11, 0x22, 0x34};
  std::copy(std::begin(sys), std::end(sys), d.begin() + 4);
  std::copy(std::begin(node), std::end(node), d.begin() + 12);
  std::copy(std::begin(port), std::end(port), d.begin() + 20);
  d[28] = 0x00;
  d[29] = 0x08;
  d[30] = 0xd2;
  d[31] = 0xf2;
  d[32] = 0x00;
  d[33] = 0x00;
  d[34] = 0x00;
  d[35] = 0xa1;
  d[36] = 23;
  d[37] = 0x00;
  d[38] = 0x02;
  d[39] = 0xc9;
  return d;
}

std::string Hex(const std::vector<uint8_t>& b) {
  std::string out;
  char buf[4];
  for (uint8_t c : b) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out + "\n";
}

std::vector<uint8_t> Description(const std::string& s) {
  std::vector<uint8_t> d(64, 0);
  std::copy(s.begin(), s.end(), d.begin());
  return d;
}

TEST(IbNodeInfo, EveryFieldAtItsSpecificationOffset) {
  std::string error;
  auto n = ParseNodeInfo(QuantumNodeInfo(), &error);
  ASSERT_TRUE(n) << error;
  EXPECT_EQ(n->base_version, 1);
  EXPECT_EQ(n->class_version, 1);
  EXPECT_EQ(n->node_type, 2);
  EXPECT_EQ(n->num_ports, 65);
  EXPECT_EQ(n->system_image_guid, 0xfc6a1c0300112230u);
  EXPECT_EQ(n->node_guid, 0xfc6a1c0300112233u);
  EXPECT_EQ(n->port_guid, 0xfc6a1c0300112234u);
  EXPECT_EQ(n->partition_cap, 0x0008);
  EXPECT_EQ(n->device_id, 0xd2f2);
  EXPECT_EQ(n->revision, 0xa1u);
  EXPECT_EQ(n->local_port_num, 23);
  EXPECT_EQ(n->vendor_id, 0x0002c9u);
  EXPECT_STREQ(IbNodeTypeName(n->node_type), "switch");
  EXPECT_EQ(FormatGuid(n->node_guid), "fc6a:1c03:0011:2233");
}

TEST(IbNodeInfo, ShortOrUnknownTypeIsRejected) {
  std::string error;
  auto d = QuantumNodeInfo();
  EXPECT_FALSE(ParseNodeInfo(std::span(d.data(), 39), &error));
  EXPECT_EQ(error, "NodeInfo of 39 bytes (40 needed)");
  d[2] = 7;
  EXPECT_FALSE(ParseNodeInfo(d, &error));
  EXPECT_EQ(error, "NodeInfo node type 7");
  EXPECT_STREQ(IbNodeTypeName(1), "ca");
  EXPECT_STREQ(IbNodeTypeName(3), "router");
}

TEST(IbNodeDescription, NulPaddedTextWithBadBytesReplaced) {
  EXPECT_EQ(ParseNodeDescription(Description("MF0;leaf-ib-3:MQM9700/U1")),
            "MF0;leaf-ib-3:MQM9700/U1");
  EXPECT_EQ(ParseNodeDescription(Description("gpu17 mlx5_\x01")), "gpu17 mlx5_?");
  std::vector<uint8_t> full(64, 'x');  // no NUL: all 64 bytes
  EXPECT_EQ(ParseNodeDescription(full), std::string(64, 'x'));
}

void PutBe(std::vector<uint8_t>& d, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    d[at + i] = static_cast<uint8_t>(v >> (8 * (bytes - 1 - i)));
}

// PortInfo (IBA 14.2.5.6) of a leaf port: LID 0x1a2b (bytes 16-17), CapabilityMask 0x02594868
// (20-23), LinkWidthActive 4x = 2 (31), PortState Active = 4 in the low nibble of 32 (high
// nibble: LinkSpeedSupported 7), PortPhysicalState LinkUp = 5 in the high nibble of 33 (low:
// LinkDownDefaultState 2), LinkSpeedActive 4 in the high nibble of 35, LocalPortNum 23 (36).
std::vector<uint8_t> LeafPortInfo() {
  std::vector<uint8_t> d(64, 0);
  PutBe(d, 16, 0x1a2b, 2);
  PutBe(d, 18, 0x0001, 2);  // MasterSMLID: must not be read as the LID
  PutBe(d, 20, 0x02594868, 4);
  d[31] = 0x02;
  d[32] = 0x74;
  d[33] = 0x52;
  d[35] = 0x4f;
  d[36] = 23;
  return d;
}

// PMA ClassPortInfo (IBA 13.4.8.1): BaseVersion 1, ClassVersion 1, CapabilityMask bit 9
// (PortCountersExtended) and bit 12, CapabilityMask2 bit 1 (the additional extended counters)
// in the upper 27 bits of bytes 4-7, RespTimeValue 0x13 in their low 5 bits.
std::vector<uint8_t> SwitchClassPortInfo(uint32_t capability_mask2 = 1u << 1) {
  std::vector<uint8_t> d(192, 0);
  d[0] = 1;
  d[1] = 1;
  PutBe(d, 2, (1u << 9) | (1u << 12), 2);
  PutBe(d, 4, capability_mask2 << 5 | 0x13, 4);
  return d;
}

// PortCountersExtended (IBA 16.1.4.11 with the additional counters): PortSelect 23 (byte 1),
// PortXmitData (8-15), PortRcvData (16-23), SymbolErrorCounter (72-79), PortXmitWait
// (168-175), each with its own value; the neighbours of PortXmitWait (VL15Dropped 160,
// QP1Dropped 176) with values of their own.
std::vector<uint8_t> SwitchPortCountersExt(uint64_t xmit_wait) {
  std::vector<uint8_t> d(192, 0);
  d[1] = 23;
  PutBe(d, 8, 0x0000001122334455, 8);
  PutBe(d, 16, 0x0000002233445566, 8);
  PutBe(d, 72, 0x77, 8);
  PutBe(d, 160, 0x99, 8);
  PutBe(d, 168, xmit_wait, 8);
  PutBe(d, 176, 0xaa, 8);
  return d;
}

TEST(IbPortInfo, EveryFieldAtItsSpecificationOffset) {
  std::string error;
  auto p = ParsePortInfo(LeafPortInfo(), &error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->lid, 0x1a2b);
  EXPECT_EQ(p->capability_mask, 0x02594868u);
  EXPECT_EQ(p->link_width_active, 2);
  EXPECT_EQ(p->port_state, 4);
  EXPECT_EQ(p->phys_state, 5);
  EXPECT_EQ(p->link_speed_active, 4);
  EXPECT_EQ(p->local_port_num, 23);
  auto d = LeafPortInfo();
  EXPECT_FALSE(ParsePortInfo(std::span(d.data(), 36), &error));
  EXPECT_EQ(error, "PortInfo of 36 bytes (37 needed)");
}

TEST(IbPmaClassPortInfo, CapabilityMasksAtTheirSpecificationOffsets) {
  std::string error;
  auto c = ParsePmaClassPortInfo(SwitchClassPortInfo(), &error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->base_version, 1);
  EXPECT_EQ(c->class_version, 1);
  EXPECT_EQ(c->capability_mask, (1u << 9) | (1u << 12));
  EXPECT_EQ(c->capability_mask2, 1u << 1) << "RespTimeValue is not part of the mask";
  EXPECT_TRUE(HasExtendedXmitWait(*c));
  // The agent of an mlx5 port (and rxe): PortCountersExtended, no additional counters.
  c = ParsePmaClassPortInfo(SwitchClassPortInfo(0), &error);
  ASSERT_TRUE(c) << error;
  EXPECT_FALSE(HasExtendedXmitWait(*c));
  // The additional counters without PortCountersExtended itself are not believed.
  c->capability_mask = 1u << 12;
  c->capability_mask2 = 1u << 1;
  EXPECT_FALSE(HasExtendedXmitWait(*c));
  c->capability_mask = 1u << 10;  // the NOIETF variant answers PortCountersExtended too
  EXPECT_TRUE(HasExtendedXmitWait(*c));
}

TEST(IbPmaClassPortInfo, AReplyThatIsNotAClassPortInfoIsRejected) {
  // Older mlx5 kernels answer every PMA Get from vport counters as PortCounters: byte 0
  // (reserved) and byte 1 (PortSelect) are 0 where ClassPortInfo has its versions.
  std::vector<uint8_t> port_counters(192, 0);
  PutBe(port_counters, 24, 0x12345678, 4);  // PortXmitData
  std::string error;
  EXPECT_FALSE(ParsePmaClassPortInfo(port_counters, &error));
  EXPECT_EQ(error, "not a ClassPortInfo (base version 0, class version 0)");
  EXPECT_FALSE(ParsePmaClassPortInfo(std::span(port_counters.data(), 7), &error));
  EXPECT_EQ(error, "ClassPortInfo of 7 bytes (8 needed)");
}

TEST(IbPortCountersExt, EveryFieldAtItsSpecificationOffset) {
  std::string error;
  auto c = ParsePortCountersExt(SwitchPortCountersExt(0x0000000512345678), &error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->port_select, 23);
  EXPECT_EQ(c->xmit_data, 0x0000001122334455u);
  EXPECT_EQ(c->rcv_data, 0x0000002233445566u);
  EXPECT_EQ(c->symbol_errors, 0x77u);
  EXPECT_EQ(c->xmit_wait, 0x0000000512345678u) << "above 2^32: the reason to read it";
  auto d = SwitchPortCountersExt(1);
  EXPECT_FALSE(ParsePortCountersExt(std::span(d.data(), 175), &error));
  EXPECT_EQ(error, "PortCountersExtended of 175 bytes (176 needed)");
}

TEST(IbPeerFixtureReader, TheNeighbourPortAndItsAgentsXmitWait) {
  testing::TempDir fixtures;
  fixtures.Write("smp/mlx5_1/1/node_info", Hex(QuantumNodeInfo()));
  fixtures.Write("smp/mlx5_1/1/node_description", Hex(Description("leaf")));
  auto reader = MakeIbPeerFixtureReader(fixtures.path());
  IbPeer peer;
  // Only NodeInfo and NodeDescription: no PortInfo, no counter.
  ASSERT_EQ(reader->Read("mlx5_1", 1, &peer), 0);
  EXPECT_FALSE(peer.port_info);
  EXPECT_EQ(peer.xmit_wait_error, ENOTSUP);
  fixtures.Write("smp/mlx5_1/1/port_info", Hex(LeafPortInfo()));
  fixtures.Write("smp/mlx5_1/1/pma_class_port_info", Hex(SwitchClassPortInfo(0)));
  ASSERT_EQ(reader->Read("mlx5_1", 1, &peer), 0);
  ASSERT_TRUE(peer.port_info);
  EXPECT_EQ(peer.port_info->local_port_num, 23);
  EXPECT_EQ(peer.xmit_wait_error, ENOTSUP) << "the agent does not declare it";
  fixtures.Write("smp/mlx5_1/1/pma_class_port_info", Hex(SwitchClassPortInfo()));
  EXPECT_EQ(reader->Read("mlx5_1", 1, &peer), 0);
  EXPECT_EQ(peer.xmit_wait_error, ENOENT) << "declared, but no counters answer";
  fixtures.Write("smp/mlx5_1/1/pma_port_counters_ext", Hex(SwitchPortCountersExt(1ull << 40)));
  ASSERT_EQ(reader->Read("mlx5_1", 1, &peer), 0);
  EXPECT_EQ(peer.xmit_wait_error, 0);
  EXPECT_EQ(peer.xmit_wait, 1ull << 40);
  // The port's own agent: pma/<device>/<port>/.
  IbPmaClassPortInfo own;
  EXPECT_EQ(reader->ReadClassPortInfo("mlx5_1", 1, &own), ENODEV);
  fixtures.Write("pma/mlx5_1/1/class_port_info", "00000000\n");
  EXPECT_EQ(reader->ReadClassPortInfo("mlx5_1", 1, &own), EIO);
  EXPECT_EQ(reader->ReadClassPortInfo("../mlx5_1", 1, &own), ENODEV);
}

TEST(IbPeerUmadReader, ADeviceWithoutUmadIsNotAvailable) {
  // No umad device by that name on any machine (and none at all here, or rxe only): ENODEV at
  // once, nothing opened, no SMP sent.
  auto reader = MakeIbPeerUmadReader();
  IbPeer peer;
  EXPECT_EQ(reader->Read("rdma_exporter_no_such_hca", 1, &peer), ENODEV);
  IbPmaClassPortInfo info;
  EXPECT_EQ(reader->ReadClassPortInfo("rdma_exporter_no_such_hca", 1, &info), ENODEV);
  IbPortCountersExt counters;
  EXPECT_EQ(reader->ReadPortCountersExt("rdma_exporter_no_such_hca", 1, &counters), ENODEV);
}

TEST(IbPeerCollector, ThePeerOfEachTrainedInfiniBandPort) {
  testing::TempDir sys, fixtures;
  // mlx5_1: IB, LinkUp, its peer in the fixtures; mlx5_3: IB, Polling (not asked); mlx5_5: IB,
  // LinkUp, no fixture (no umad: not available); mlx5_0: RoCE (the lldp collector's).
  for (const char* d : {"mlx5_1", "mlx5_3", "mlx5_5"})
    sys.Write(std::string("class/infiniband/") + d + "/ports/1/link_layer", "InfiniBand\n");
  sys.Write("class/infiniband/mlx5_1/ports/1/phys_state", "5: LinkUp\n");
  sys.Write("class/infiniband/mlx5_3/ports/1/phys_state", "2: Polling\n");
  sys.Write("class/infiniband/mlx5_5/ports/1/phys_state", "5: LinkUp\n");
  sys.Write("class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
  sys.Write("class/infiniband/mlx5_0/ports/1/phys_state", "5: LinkUp\n");
  fixtures.Write("smp/mlx5_1/1/node_info", Hex(QuantumNodeInfo()));
  fixtures.Write("smp/mlx5_1/1/node_description", Hex(Description("MF0;leaf-ib-3:MQM9700/U1")));
  fixtures.Write("smp/mlx5_3/1/node_info", Hex(QuantumNodeInfo()));
  fixtures.Write("smp/mlx5_3/1/node_description", Hex(Description("must not be asked")));
  SysfsReader sysfs(sys.path());
  KernelReaders kernel;
  kernel.ib_peer = MakeIbPeerFixtureReader(fixtures.path());
  IbPeerCollector collector;
  for (int poll = 0; poll < 2; ++poll) {
    auto r = testing::RunCollector(collector, sysfs, {}, &kernel);
    std::string text = RenderText(r.families);
    EXPECT_NE(text.find("rdma_port_peer_info{device=\"mlx5_1\",port=\"1\",netdev=\"\",source="
                        "\"smp\",peer_chassis_id=\"fc6a:1c03:0011:2233\",peer_port=\"23\","
                        "peer_port_description=\"\",peer_description=\"MF0;leaf-ib-3:MQM9700/U1\","
                        "peer_type=\"switch\"} 1\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("must not be asked"), std::string::npos) << text;
    EXPECT_EQ(text.find("mlx5_0"), std::string::npos) << text;
    EXPECT_EQ(text.find("mlx5_5"), std::string::npos) << text;
    EXPECT_EQ(r.failures, 0u) << "no umad is not an error";
  }
}

TEST(IbPeerCollector, ADownPortKeepsItsLastPeerUntilItsDeviceGoes) {
  testing::TempDir sys, fixtures;
  sys.Write("class/infiniband/mlx5_1/ports/1/link_layer", "InfiniBand\n");
  sys.Write("class/infiniband/mlx5_1/ports/1/phys_state", "5: LinkUp\n");
  fixtures.Write("smp/mlx5_1/1/node_info", Hex(QuantumNodeInfo()));
  fixtures.Write("smp/mlx5_1/1/node_description", Hex(Description("MF0;leaf-ib-3:MQM9700/U1")));
  SysfsReader sysfs(sys.path());
  KernelReaders kernel;
  kernel.ib_peer = MakeIbPeerFixtureReader(fixtures.path());
  IbPeerCollector collector;
  auto text = [&] {
    return RenderText(testing::RunCollector(collector, sysfs, {}, &kernel).families);
  };
  ASSERT_NE(text().find("leaf-ib-3"), std::string::npos);
  // Down (a leaf switch failing): no SMP is sent, the port still names its switch.
  sys.Write("class/infiniband/mlx5_1/ports/1/phys_state", "3: Disabled\n");
  std::filesystem::remove_all(fixtures.path() + "/smp");
  EXPECT_NE(text().find("peer_description=\"MF0;leaf-ib-3:MQM9700/U1\""), std::string::npos);
  // The device goes (driver unload): so does its memory, also when it comes back down.
  std::filesystem::rename(sys.path() + "/class/infiniband/mlx5_1", sys.path() + "/mlx5_1.away");
  EXPECT_EQ(text().find("leaf-ib-3"), std::string::npos);
  std::filesystem::rename(sys.path() + "/mlx5_1.away", sys.path() + "/class/infiniband/mlx5_1");
  EXPECT_EQ(text().find("leaf-ib-3"), std::string::npos);
}

TEST(IbPeerCollector, TheNeighboursXmitWaitWhereItsAgentHasIt) {
  testing::TempDir sys, fixtures;
  for (const char* d : {"mlx5_1", "mlx5_3"}) {
    sys.Write(std::string("class/infiniband/") + d + "/ports/1/link_layer", "InfiniBand\n");
    sys.Write(std::string("class/infiniband/") + d + "/ports/1/phys_state", "5: LinkUp\n");
    fixtures.Write(std::string("smp/") + d + "/1/node_info", Hex(QuantumNodeInfo()));
    fixtures.Write(std::string("smp/") + d + "/1/node_description", Hex(Description("leaf")));
    fixtures.Write(std::string("smp/") + d + "/1/port_info", Hex(LeafPortInfo()));
  }
  fixtures.Write("smp/mlx5_1/1/pma_class_port_info", Hex(SwitchClassPortInfo()));
  fixtures.Write("smp/mlx5_1/1/pma_port_counters_ext", Hex(SwitchPortCountersExt(1ull << 33)));
  fixtures.Write("smp/mlx5_3/1/pma_class_port_info", Hex(SwitchClassPortInfo(0)));
  SysfsReader sysfs(sys.path());
  KernelReaders kernel;
  kernel.ib_peer = MakeIbPeerFixtureReader(fixtures.path());
  IbPeerCollector collector;
  auto r = testing::RunCollector(collector, sysfs, {}, &kernel);
  std::string text = RenderText(r.families);
  EXPECT_NE(text.find("rdma_port_peer_transmit_wait_ticks_total{device=\"mlx5_1\",port=\"1\"} "
                      "8589934592\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("rdma_port_peer_transmit_wait_ticks_total{device=\"mlx5_3\""),
            std::string::npos)
      << "an agent without the counter: nothing, and no error";
  EXPECT_EQ(r.failures, 0u);
  // A broken reply is a read error; the peer itself is still exported.
  fixtures.Write("smp/mlx5_3/1/pma_class_port_info", "0000\n");
  r = testing::RunCollector(collector, sysfs, {}, &kernel);
  EXPECT_EQ(r.failures, 1u);
  EXPECT_NE(RenderText(r.families).find("rdma_port_peer_info{device=\"mlx5_3\""),
            std::string::npos);
}

// The counters collector with the ib_peer collector on: a port whose own agent declares the
// 64-bit PortXmitWait exports it (past 2^32, never "saturated"); one that does not (mlx5) keeps
// the 32-bit file; without ib_peer the agent is never asked.
TEST(PortCountersCollector, PrefersThePortAgents64BitXmitWait) {
  testing::TempDir sys, fixtures;
  for (const char* d : {"qib0", "mlx5_1"}) {
    const std::string port = std::string("class/infiniband/") + d + "/ports/1/";
    sys.Write(port + "link_layer", "InfiniBand\n");
    sys.Write(port + "phys_state", "5: LinkUp\n");
    sys.Write(port + "counters/port_xmit_wait", "4294967295\n");
    sys.Write(port + "counters/symbol_error", "3\n");
  }
  fixtures.Write("smp/.keep", "");
  fixtures.Write("pma/qib0/1/class_port_info", Hex(SwitchClassPortInfo()));
  fixtures.Write("pma/qib0/1/port_counters_ext", Hex(SwitchPortCountersExt(0x123456789a)));
  fixtures.Write("pma/mlx5_1/1/class_port_info", Hex(SwitchClassPortInfo(0)));
  SysfsReader sysfs(sys.path());
  KernelReaders kernel;
  kernel.ib_peer = MakeIbPeerFixtureReader(fixtures.path());
  CollectorOptions options;
  options.pma_xmit_wait = true;
  PortCountersCollector collector(options);
  for (int poll = 0; poll < 2; ++poll) {
    auto r = testing::RunCollector(collector, sysfs, {}, &kernel);
    std::string text = RenderText(r.families);
    EXPECT_NE(text.find("rdma_port_transmit_wait_ticks_total{device=\"qib0\",port=\"1\"} "
                        "78187493530\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("counter=\"port_xmit_wait\",device=\"qib0\""), std::string::npos);
    EXPECT_EQ(text.find("device=\"qib0\",port=\"1\",counter=\"port_xmit_wait\""), std::string::npos)
        << "a 64-bit value has no saturation series: " << text;
    EXPECT_NE(text.find("rdma_port_transmit_wait_ticks_total{device=\"mlx5_1\",port=\"1\"} "
                        "4294967295\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(r.failures, 0u);
  }
  // The agent stops answering: no value this poll (never the 32-bit file's), one error.
  std::filesystem::remove(fixtures.path() + "/pma/qib0/1/port_counters_ext");
  auto r = testing::RunCollector(collector, sysfs, {}, &kernel);
  EXPECT_EQ(RenderText(r.families).find("rdma_port_transmit_wait_ticks_total{device=\"qib0\""),
            std::string::npos);
  EXPECT_EQ(r.failures, 1u);
  // Without the option (ib_peer off) the file is all there is.
  PortCountersCollector plain;
  std::string text = RenderText(testing::RunCollector(plain, sysfs, {}, &kernel).families);
  EXPECT_NE(text.find("rdma_port_transmit_wait_ticks_total{device=\"qib0\",port=\"1\"} "
                      "4294967295\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace rdma_exporter
