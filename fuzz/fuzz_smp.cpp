// Fuzz target: the SMP attribute parsers (NodeInfo, NodeDescription, PortInfo) and the PMA ones
// (ClassPortInfo, PortCountersExtended) on arbitrary MAD data (what a neighbour, or a broken
// one, answers).
#include <cstdint>
#include <string>

#include "rdma_exporter/ib_peer.h"

using namespace rdma_exporter;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto info = ParseNodeInfo(std::span(data, size), &error);
  if (info && *IbNodeTypeName(info->node_type) == '\0') __builtin_trap();
  if (!info && error.empty()) __builtin_trap();
  std::string description = ParseNodeDescription(std::span(data, size));
  if (description.size() > 64) __builtin_trap();
  for (char c : description) {
    if (c < 0x20 || c >= 0x7f) __builtin_trap();
  }
  error.clear();
  auto port = ParsePortInfo(std::span(data, size), &error);
  if (port ? port->port_state > 15 || port->phys_state > 15 : error.empty()) __builtin_trap();
  error.clear();
  auto cpi = ParsePmaClassPortInfo(std::span(data, size), &error);
  if (cpi ? cpi->base_version != 1 || cpi->capability_mask2 >= (1u << 27) : error.empty()) {
    __builtin_trap();
  }
  error.clear();
  auto ext = ParsePortCountersExt(std::span(data, size), &error);
  if (ext ? size < 176 : error.empty()) __builtin_trap();
  return 0;
}
