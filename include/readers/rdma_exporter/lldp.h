// LLDP (IEEE 802.1AB): the switch port at the other end of a RoCE link, from the LLDP frames the
// switch sends every ~30 s. The parser reads one received Ethernet frame; the readers keep the
// last neighbour heard on each netdev: the kernel reader from an AF_PACKET socket (needs
// CAP_NET_RAW) on a thread of its own, the fixture reader from <fixtures>/lldp/<netdev> (a frame
// as hex, written by the fabric simulator).
//
// No library fits: lldpd's liblldpctl talks to a running lldpd (absent on most GPU nodes, and it
// would hide the frames from us), and the TLVs we read are a handful of fixed layouts.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace rdma_exporter {

inline constexpr uint16_t kEthertypeLldp = 0x88cc;

struct LldpNeighbor {
  // Chassis ID and Port ID as text: a MAC address as aa:bb:cc:dd:ee:ff, a network address as
  // IPv4/IPv6 text, names as sent (bytes outside printable ASCII as '?'), anything else as hex.
  std::string chassis_id;
  std::string chassis_id_subtype;  // mac, network_address, interface_name, local, ...
  std::string port_id;             // "Ethernet1/5", "swp12", a MAC
  std::string port_id_subtype;     // interface_name, mac, local, interface_alias, ...
  std::string port_description;    // optional TLVs: "" when absent
  std::string system_name;
  std::string system_description;
  // From the enabled system capabilities: router, bridge, station, other; "" when absent.
  std::string system_type;
  uint16_t ttl_seconds = 0;  // how long the neighbour stays valid after this frame
};

// Parses one Ethernet frame (destination MAC first, optionally 802.1Q tagged) carrying an
// LLDPDU. nullopt with *error set when it is not LLDP or is malformed (the mandatory Chassis ID,
// Port ID and TTL TLVs missing or out of order, a TLV running past the frame).
std::optional<LldpNeighbor> ParseLldpFrame(std::span<const uint8_t> frame, std::string* error);

class LldpReader {
 public:
  virtual ~LldpReader() = default;
  // The last neighbour heard on netdev within its TTL. Returns 0, ENOENT (none heard, or it
  // expired), EPERM (no CAP_NET_RAW for the packet socket), or another errno value the
  // listener failed with. The kernel reader starts listening on the first call and joins the
  // LLDP multicast group on each netdev asked for.
  virtual int Neighbor(const std::string& netdev, LldpNeighbor* out) = 0;
  // Frames received and frames that did not parse, since the start.
  virtual uint64_t frames() const = 0;
  virtual uint64_t malformed_frames() const = 0;
};

std::unique_ptr<LldpReader> MakeLldpSocketReader();
// <fixtures_dir>/lldp/<netdev>: one frame as hex digits (whitespace ignored); no file = ENOENT.
std::unique_ptr<LldpReader> MakeLldpFixtureReader(std::string fixtures_dir);

}  // namespace rdma_exporter
