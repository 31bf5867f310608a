// Fuzz target: the LLDP frame parser on arbitrary frames (what any host on the link may send).
#include <cstdint>
#include <string>

#include "rdma_exporter/lldp.h"

using namespace rdma_exporter;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto n = ParseLldpFrame(std::span(data, size), &error);
  if (n) {
    // Labels are built from these: they must be printable text.
    for (const std::string* s : {&n->chassis_id, &n->port_id, &n->port_description, &n->system_name,
                                 &n->system_description}) {
      for (char c : *s) {
        if (c < 0x20 || c >= 0x7f) __builtin_trap();
      }
    }
  } else if (error.empty()) {
    __builtin_trap();  // a rejection always says why
  }
  return 0;
}
