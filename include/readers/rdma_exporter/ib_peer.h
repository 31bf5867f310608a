// The InfiniBand neighbour of a port: the node at the other end of its link (a leaf switch, or
// an HCA on a back-to-back cable), asked with directed-route SMPs (IBA 14.2.5) through the
// port's umad device: NodeInfo (node GUID and type, the neighbour's own port number) and
// NodeDescription (a switch's name, e.g. "MF0;leaf-ib-3:MQM9700/U1"). libibumad/libibmad
// (rdma-core) carry the MADs; the attribute layouts are parsed here, from the specification.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace rdma_exporter {

// NodeInfo (IBA Table 146; 40 bytes of the 64-byte SMP data).
struct IbNodeInfo {
  uint8_t base_version = 0;
  uint8_t class_version = 0;
  uint8_t node_type = 0;  // 1 channel adapter, 2 switch, 3 router
  uint8_t num_ports = 0;
  uint64_t system_image_guid = 0;
  uint64_t node_guid = 0;
  uint64_t port_guid = 0;
  uint16_t partition_cap = 0;
  uint16_t device_id = 0;
  uint32_t revision = 0;
  uint8_t local_port_num = 0;  // the port the SMP entered the node by: the peer's port
  uint32_t vendor_id = 0;      // 24 bits
};

// nullopt (and *error) when data is shorter than the attribute or its node type is unknown.
std::optional<IbNodeInfo> ParseNodeInfo(std::span<const uint8_t> data, std::string* error);
// NodeDescription: up to 64 bytes of text, NUL-padded; non-printable bytes become '?'.
std::string ParseNodeDescription(std::span<const uint8_t> data);
// "switch", "ca", "router" ("" for another value).
const char* IbNodeTypeName(uint8_t node_type);
// A GUID as sysfs writes node_guid: "b8ce:f603:00a1:0044".
std::string FormatGuid(uint64_t guid);

struct IbPeer {
  IbNodeInfo node_info;
  std::string description;
};

class IbPeerReader {
 public:
  virtual ~IbPeerReader() = default;
  // The neighbour of device/port. Returns 0 or an errno value: ENODEV (no umad device for the
  // port: rxe, or no InfiniBand management stack), EACCES (no access to /dev/infiniband/umad*),
  // ETIMEDOUT (no answer: the link is down or the neighbour drops SMPs), EIO (a bad reply).
  virtual int Read(const std::string& device, unsigned port, IbPeer* out) = 0;
};

std::unique_ptr<IbPeerReader> MakeIbPeerUmadReader();
// <fixtures_dir>/smp/<device>/<port>/{node_info,node_description}: the SMP data in hex.
std::unique_ptr<IbPeerReader> MakeIbPeerFixtureReader(std::string fixtures_dir);

}  // namespace rdma_exporter
