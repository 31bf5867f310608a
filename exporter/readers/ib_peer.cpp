// SMP attribute parsers: NodeInfo, NodeDescription and PortInfo (IBA Vol. 1 14.2.5.3, 14.2.5.2,
// 14.2.5.6); PMA attribute parsers: ClassPortInfo and PortCountersExtended (IBA 13.4.8.1, 16.1.4).
#include <cstdio>

#include "rdma_exporter/ib_peer.h"

namespace rdma_exporter {
namespace {

uint64_t Be(std::span<const uint8_t> d, size_t at, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i)
    v = v << 8 | d[at + i];
  return v;
}

}  // namespace

std::optional<IbNodeInfo> ParseNodeInfo(std::span<const uint8_t> d, std::string* error) {
  constexpr size_t kSize = 40;
  if (d.size() < kSize) {
    *error = "NodeInfo of " + std::to_string(d.size()) + " bytes (40 needed)";
    return std::nullopt;
  }
  IbNodeInfo n;
  n.base_version = d[0];
  n.class_version = d[1];
  n.node_type = d[2];
  n.num_ports = d[3];
  n.system_image_guid = Be(d, 4, 8);
  n.node_guid = Be(d, 12, 8);
  n.port_guid = Be(d, 20, 8);
  n.partition_cap = static_cast<uint16_t>(Be(d, 28, 2));
  n.device_id = static_cast<uint16_t>(Be(d, 30, 2));
  n.revision = static_cast<uint32_t>(Be(d, 32, 4));
  n.local_port_num = d[36];
  n.vendor_id = static_cast<uint32_t>(Be(d, 37, 3));
  if (*IbNodeTypeName(n.node_type) == '\0') {
    *error = "NodeInfo node type " + std::to_string(n.node_type);
    return std::nullopt;
  }
  return n;
}

std::optional<IbPortInfo> ParsePortInfo(std::span<const uint8_t> d, std::string* error) {
  constexpr size_t kSize = 37;  // through LocalPortNum
  if (d.size() < kSize) {
    *error = "PortInfo of " + std::to_string(d.size()) + " bytes (37 needed)";
    return std::nullopt;
  }
  IbPortInfo p;
  p.lid = static_cast<uint16_t>(Be(d, 16, 2));
  p.capability_mask = static_cast<uint32_t>(Be(d, 20, 4));
  p.link_width_active = d[31];
  p.port_state = d[32] & 0x0f;
  p.phys_state = d[33] >> 4;
  p.link_speed_active = d[35] >> 4;
  p.local_port_num = d[36];
  return p;
}

std::optional<IbPmaClassPortInfo> ParsePmaClassPortInfo(std::span<const uint8_t> d,
                                                        std::string* error) {
  if (d.size() < 8) {
    *error = "ClassPortInfo of " + std::to_string(d.size()) + " bytes (8 needed)";
    return std::nullopt;
  }
  IbPmaClassPortInfo c;
  c.base_version = d[0];
  c.class_version = d[1];
  c.capability_mask = static_cast<uint16_t>(Be(d, 2, 2));
  c.capability_mask2 = static_cast<uint32_t>(Be(d, 4, 4) >> 5);  // low 5 bits: RespTimeValue
  if (c.base_version != 1 || c.class_version == 0) {
    *error = "not a ClassPortInfo (base version " + std::to_string(c.base_version) +
             ", class version " + std::to_string(c.class_version) + ")";
    return std::nullopt;
  }
  return c;
}

bool HasExtendedXmitWait(const IbPmaClassPortInfo& info) {
  constexpr uint16_t kExtWidth = 1u << 9, kExtWidthNoIetf = 1u << 10;
  constexpr uint32_t kAdditionalExtCounters = 1u << 1;
  return (info.capability_mask & (kExtWidth | kExtWidthNoIetf)) != 0 &&
         (info.capability_mask2 & kAdditionalExtCounters) != 0;
}

std::optional<IbPortCountersExt> ParsePortCountersExt(std::span<const uint8_t> d,
                                                      std::string* error) {
  constexpr size_t kSize = 176;  // through PortXmitWait
  if (d.size() < kSize) {
    *error = "PortCountersExtended of " + std::to_string(d.size()) + " bytes (176 needed)";
    return std::nullopt;
  }
  IbPortCountersExt c;
  c.port_select = d[1];
  c.xmit_data = Be(d, 8, 8);
  c.rcv_data = Be(d, 16, 8);
  c.symbol_errors = Be(d, 72, 8);
  c.xmit_wait = Be(d, 168, 8);
  return c;
}

std::string ParseNodeDescription(std::span<const uint8_t> d) {
  std::string out;
  for (size_t i = 0; i < d.size() && i < 64 && d[i] != 0; ++i)
    out.push_back(d[i] >= 0x20 && d[i] < 0x7f ? static_cast<char>(d[i]) : '?');
  return out;
}

const char* IbNodeTypeName(uint8_t node_type) {
  switch (node_type) {
    case 1:
      return "ca";
    case 2:
      return "switch";
    case 3:
      return "router";
    default:
      return "";
  }
}

std::string FormatGuid(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%04x:%04x:%04x:%04x", static_cast<unsigned>(guid >> 48),
                static_cast<unsigned>(guid >> 32 & 0xffff),
                static_cast<unsigned>(guid >> 16 & 0xffff), static_cast<unsigned>(guid & 0xffff));
  return buf;
}

}  // namespace rdma_exporter
