// The InfiniBand neighbour of a port: the node at the other end of its link (a leaf switch, or
// an HCA on a back-to-back cable), asked with directed-route SMPs (IBA 14.2.5) through the
// port's umad device: NodeInfo (node GUID and type, the neighbour's own port number) and
// NodeDescription (a switch's name, e.g. "MF0;leaf-ib-3:MQM9700/U1") and PortInfo (the
// neighbour port's number and LID). Through the performance management agent (PMA, IBA 16.1,
// LID-routed GMPs): ClassPortInfo (which counters it has) and PortCountersExtended, for the
// 64-bit PortXmitWait where the agent declares it (the sysfs port_xmit_wait is 32-bit and
// saturates within seconds on a congested NDR port). libibumad/libibmad (rdma-core) carry the
// MADs; the attribute layouts are parsed here, from the specification.
#pragma once

#include <cerrno>
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

// PortInfo (IBA Table 155; SMP data), the fields used here.
struct IbPortInfo {
  uint16_t lid = 0;               // bytes 16-17; a switch's LID is in its port 0 PortInfo
  uint32_t capability_mask = 0;   // bytes 20-23
  uint8_t local_port_num = 0;     // byte 36: the port the SMP arrived by
  uint8_t link_width_active = 0;  // byte 31
  uint8_t port_state = 0;         // byte 32, low nibble: 1 Down .. 5 ActiveDefer
  uint8_t phys_state = 0;         // byte 33, high nibble: 5 LinkUp
  uint8_t link_speed_active = 0;  // byte 35, high nibble
};
std::optional<IbPortInfo> ParsePortInfo(std::span<const uint8_t> data, std::string* error);

// PMA ClassPortInfo (IBA Table 126; GMP data from MAD byte 64), the capability fields.
struct IbPmaClassPortInfo {
  uint8_t base_version = 0;
  uint8_t class_version = 0;
  uint16_t capability_mask = 0;   // bytes 2-3
  uint32_t capability_mask2 = 0;  // the upper 27 bits of bytes 4-7
};
// nullopt when the reply is not a ClassPortInfo (base version 1, class version >= 1): an mlx5
// kernel without ClassPortInfo support answers every PMA Get with PortCounters data.
std::optional<IbPmaClassPortInfo> ParsePmaClassPortInfo(std::span<const uint8_t> data,
                                                        std::string* error);
// PortCountersExtended answers (CapabilityMask bit 9 or 10) and carries the additional 64-bit
// counters, PortXmitWait among them (CapabilityMask2 bit 1, IsAdditionalPortCountersExtended).
bool HasExtendedXmitWait(const IbPmaClassPortInfo& info);

// PortCountersExtended (IBA Table 247 and its additional counters), the fields used here.
struct IbPortCountersExt {
  uint8_t port_select = 0;     // byte 1
  uint64_t xmit_data = 0;      // bytes 8-15, in 4-byte words
  uint64_t rcv_data = 0;       // bytes 16-23
  uint64_t symbol_errors = 0;  // bytes 72-79
  uint64_t xmit_wait = 0;      // bytes 168-175
};
// nullopt when data is shorter than the additional counters (176 bytes).
std::optional<IbPortCountersExt> ParsePortCountersExt(std::span<const uint8_t> data,
                                                      std::string* error);

struct IbPeer {
  IbNodeInfo node_info;
  std::string description;
  std::optional<IbPortInfo> port_info;  // the neighbour port's; nullopt: it did not answer
  // The neighbour port's 64-bit PortXmitWait (its PMA, LID-routed): valid when
  // xmit_wait_error is 0; ENOTSUP when its agent does not declare the counter, ENXIO when it has
  // no LID yet (no subnet manager), another errno when the query failed.
  uint64_t xmit_wait = 0;
  int xmit_wait_error = ENOTSUP;
};

class IbPeerReader {
 public:
  virtual ~IbPeerReader() = default;
  // The neighbour of device/port. Returns 0 or an errno value: ENODEV (no umad device for the
  // port: rxe, or no InfiniBand management stack), EACCES (no access to /dev/infiniband/umad*),
  // ETIMEDOUT (no answer: the link is down or the neighbour drops SMPs), EIO (a bad reply).
  virtual int Read(const std::string& device, unsigned port, IbPeer* out) = 0;
  // The port's own PMA, addressed by its LID: ENXIO while the port has no LID, ENODEV, EACCES
  // and ETIMEDOUT as for Read, EIO for a reply that is not the attribute.
  virtual int ReadClassPortInfo(const std::string& device, unsigned port,
                                IbPmaClassPortInfo* out) = 0;
  virtual int ReadPortCountersExt(const std::string& device, unsigned port,
                                  IbPortCountersExt* out) = 0;
};

std::unique_ptr<IbPeerReader> MakeIbPeerUmadReader();
// <fixtures_dir>/smp/<device>/<port>/{node_info,node_description,port_info,
// pma_class_port_info,pma_port_counters_ext}: the neighbour's attribute data in hex (the last
// three optional); <fixtures_dir>/pma/<device>/<port>/{class_port_info,port_counters_ext}: the
// port's own PMA.
std::unique_ptr<IbPeerReader> MakeIbPeerFixtureReader(std::string fixtures_dir);

}  // namespace rdma_exporter
