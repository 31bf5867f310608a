// Fuzz target: the module EEPROM parser (SFF-8472, SFF-8636, CMIS) on arbitrary page contents.
// The input is cut into the lower page, the SFF-8472 A2h page and the upper pages 00h, 01h, 02h,
// 03h and 11h; a short input leaves the later pages out, as a driver that refuses them does.
#include <cstdint>
#include <cstring>
#include <string>

#include "rdma_exporter/module_eeprom.h"

using namespace rdma_exporter;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ModuleEeprom eeprom;
  size_t at = 0;
  auto take = [&](uint8_t* out, size_t n) {
    if (at + n > size) return false;
    std::memcpy(out, data + at, n);
    at += n;
    return true;
  };
  if (!take(eeprom.lower.data(), eeprom.lower.size())) return 0;
  std::array<uint8_t, 256> a2{};
  if (take(a2.data(), a2.size())) eeprom.a2 = a2;
  for (int page : {0x00, 0x01, 0x02, 0x03, 0x11}) {
    EepromPage upper{};
    if (!take(upper.data(), upper.size())) break;
    eeprom.upper[{0, page}] = upper;
  }
  std::string error;
  auto info = ParseModuleEeprom(eeprom, &error);
  if (info) {
    // Every lane is within the 8 a CMIS bank has; text fields stay printable ASCII.
    if (info->lanes.size() > 8) __builtin_trap();
    for (const std::string* s : {&info->vendor, &info->part_number, &info->serial, &info->revision})
      for (char c : *s)
        if (c < 0x20 || c > 0x7e) __builtin_trap();
  }
  return 0;
}
