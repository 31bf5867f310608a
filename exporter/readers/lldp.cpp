// LLDPDU parser (IEEE 802.1AB-2016 clause 8): the TLVs that name the neighbour.
#include <arpa/inet.h>

#include <cstdio>

#include "rdma_exporter/lldp.h"

namespace rdma_exporter {
namespace {

constexpr uint16_t kEthertypeVlan = 0x8100;

enum TlvType : uint8_t {
  kEnd = 0,
  kChassisId = 1,
  kPortId = 2,
  kTtl = 3,
  kPortDescription = 4,
  kSystemName = 5,
  kSystemDescription = 6,
  kSystemCapabilities = 7,
};

uint16_t Be16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] << 8 | p[1]);
}

std::string Hex(std::span<const uint8_t> bytes, char separator) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0 && separator != 0) out.push_back(separator);
    std::snprintf(buf, sizeof(buf), "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

// Names are ASCII in practice; anything else must not reach a label as raw bytes.
std::string Text(std::span<const uint8_t> bytes) {
  std::string out;
  for (uint8_t b : bytes)
    out.push_back(b >= 0x20 && b < 0x7f ? static_cast<char>(b) : '?');
  return out;
}

// A network address: IANA address family byte, then the address.
std::string NetworkAddress(std::span<const uint8_t> v) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (v.size() == 5 && v[0] == 1) return inet_ntop(AF_INET, v.data() + 1, buf, sizeof(buf));
  if (v.size() == 17 && v[0] == 2) return inet_ntop(AF_INET6, v.data() + 1, buf, sizeof(buf));
  return Hex(v, 0);
}

// Chassis ID subtypes (802.1AB 8.5.2.2) and Port ID subtypes (8.5.3.2) differ only in order.
struct Id {
  std::string text, subtype;
};
Id ChassisId(uint8_t subtype, std::span<const uint8_t> v) {
  switch (subtype) {
    case 4:
      return {v.size() == 6 ? Hex(v, ':') : Hex(v, 0), "mac"};
    case 5:
      return {NetworkAddress(v), "network_address"};
    case 1:
      return {Text(v), "chassis_component"};
    case 2:
      return {Text(v), "interface_alias"};
    case 3:
      return {Text(v), "port_component"};
    case 6:
      return {Text(v), "interface_name"};
    case 7:
      return {Text(v), "local"};
    default:
      return {Hex(v, 0), "reserved"};
  }
}
Id PortId(uint8_t subtype, std::span<const uint8_t> v) {
  switch (subtype) {
    case 3:
      return {v.size() == 6 ? Hex(v, ':') : Hex(v, 0), "mac"};
    case 4:
      return {NetworkAddress(v), "network_address"};
    case 1:
      return {Text(v), "interface_alias"};
    case 2:
      return {Text(v), "port_component"};
    case 5:
      return {Text(v), "interface_name"};
    case 6:
      return {Text(v), "agent_circuit_id"};
    case 7:
      return {Text(v), "local"};
    default:
      return {Hex(v, 0), "reserved"};
  }
}

// The enabled capabilities (802.1AB 8.5.8): a router routes, a bridge switches; the rest are
// end stations for our purpose.
std::string SystemType(uint16_t enabled) {
  if (enabled & (1u << 4)) return "router";
  if (enabled & (1u << 2)) return "bridge";
  if (enabled & (1u << 7)) return "station";
  return "other";
}

}  // namespace

std::optional<LldpNeighbor> ParseLldpFrame(std::span<const uint8_t> frame, std::string* error) {
  error->clear();
  if (frame.size() < 14) {
    *error = "frame shorter than an Ethernet header";
    return std::nullopt;
  }
  size_t offset = 12;
  uint16_t ethertype = Be16(&frame[offset]);
  if (ethertype == kEthertypeVlan) {
    if (frame.size() < 18) {
      *error = "802.1Q header cut short";
      return std::nullopt;
    }
    offset += 4;
    ethertype = Be16(&frame[offset]);
  }
  if (ethertype != kEthertypeLldp) {
    *error = "not an LLDP frame (ethertype " + Hex(frame.subspan(offset, 2), 0) + ")";
    return std::nullopt;
  }
  offset += 2;

  LldpNeighbor n;
  int index = 0;  // TLVs seen: the first three must be Chassis ID, Port ID and TTL, in order
  while (true) {
    if (offset + 2 > frame.size()) {
      *error = "LLDPDU ends without an End TLV";
      break;  // tolerated below when the mandatory TLVs were seen
    }
    uint16_t header = Be16(&frame[offset]);
    auto type = static_cast<uint8_t>(header >> 9);
    size_t length = header & 0x1ff;
    offset += 2;
    if (offset + length > frame.size()) {
      *error = "TLV " + std::to_string(type) + " runs past the frame";
      return std::nullopt;
    }
    std::span<const uint8_t> value = frame.subspan(offset, length);
    offset += length;
    if (type == kEnd) break;
    static constexpr uint8_t kMandatory[] = {kChassisId, kPortId, kTtl};
    if (index < 3 && type != kMandatory[index]) {
      *error = "TLV " + std::to_string(type) + " where TLV " + std::to_string(kMandatory[index]) +
               " is mandatory";
      return std::nullopt;
    }
    ++index;
    switch (type) {
      case kChassisId:
      case kPortId: {
        if (value.size() < 2 || value.size() > 256) {
          *error = std::string(type == kChassisId ? "Chassis" : "Port") + " ID TLV length " +
                   std::to_string(value.size());
          return std::nullopt;
        }
        Id id = type == kChassisId ? ChassisId(value[0], value.subspan(1))
                                   : PortId(value[0], value.subspan(1));
        (type == kChassisId ? n.chassis_id : n.port_id) = std::move(id.text);
        (type == kChassisId ? n.chassis_id_subtype : n.port_id_subtype) = std::move(id.subtype);
        break;
      }
      case kTtl:
        if (value.size() < 2) {
          *error = "TTL TLV length " + std::to_string(value.size());
          return std::nullopt;
        }
        n.ttl_seconds = Be16(value.data());
        break;
      case kPortDescription:
        n.port_description = Text(value);
        break;
      case kSystemName:
        n.system_name = Text(value);
        break;
      case kSystemDescription:
        n.system_description = Text(value);
        break;
      case kSystemCapabilities:
        if (value.size() == 4) n.system_type = SystemType(Be16(value.data() + 2));
        break;
      default:
        break;  // management address, organisationally specific (DCBX, ...): not ours
    }
  }
  if (index < 3) {
    if (error->empty()) *error = "LLDPDU without its Chassis ID, Port ID and TTL";
    return std::nullopt;
  }
  error->clear();
  return n;
}

}  // namespace rdma_exporter
