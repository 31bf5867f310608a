// InfiniBand link peers: the NodeInfo and NodeDescription parsers on SMP data written from the
// IBA specification (every field at its own offset with a value no other field has), the
// fixture reader, the umad reader on a device that has no umad, and the ib_peer collector.
#include "rdma_exporter/ib_peer.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

#include "collectors/ib_peer.h"
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

TEST(IbPeerUmadReader, ADeviceWithoutUmadIsNotAvailable) {
  // No umad device by that name on any machine (and none at all here, or rxe only): ENODEV at
  // once, nothing opened, no SMP sent.
  auto reader = MakeIbPeerUmadReader();
  IbPeer peer;
  EXPECT_EQ(reader->Read("rdma_exporter_no_such_hca", 1, &peer), ENODEV);
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

}  // namespace
}  // namespace rdma_exporter
