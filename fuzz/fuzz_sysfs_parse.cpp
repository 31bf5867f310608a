// Fuzz target: the sysfs text parsers (include/core/rdma_exporter/parse.h): counters, hex, "4:
// ACTIVE", port rates, PCIe speeds, AER totals, GIDs. Invariants checked beyond "no crash".
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "rdma_exporter/parse.h"

using namespace rdma_exporter;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  std::string_view t = Trim(s);
  if (t.size() > s.size()) abort();
  if (auto v = ParseU64(s)) {
    // A parsed counter must be all digits once trimmed.
    for (char c : Trim(s))
      if (c < '0' || c > '9') abort();
    (void)v;
  }
  (void)ParseI64(s);
  (void)ParseHex(s);
  if (auto n = ParseNumberedName(s)) {
    if (n->name.data() < s.data() || n->name.data() + n->name.size() > s.data() + s.size())
      abort();  // the view must point into the input
  }
  if (auto r = ParsePortRate(s)) {
    if (r->speed.size() > s.size()) abort();
    if (!(r->gbit_per_second >= 0)) abort();
  }
  if (auto p = ParsePcieSpeed(s)) {
    if (!(*p >= 0)) abort();
  }
  (void)ParseAerTotal(s);
  bool valid = IsValidGid(s);
  bool empty = IsEmptyGid(s);
  if (valid && Trim(s).size() != 39) abort();  // 8 groups of 4 hex digits and 7 colons
  (void)empty;
  return 0;
}
