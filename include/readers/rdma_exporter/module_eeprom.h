// Transceiver and cable modules: their EEPROM pages as the kernel hands them out (ethtool netlink
// MODULE_EEPROM_GET by page and bank, or the GMODULEEEPROM ioctl) and what they say: identity,
// media, temperature, supply voltage, per-lane optical power and laser bias, the alarm and
// warning flags and the thresholds the module itself declares. Three memory maps:
//   SFF-8472  SFP/SFP28: A0h identity, A2h diagnostics (internally calibrated only)
//   SFF-8636  QSFP+/QSFP28/QSFP56: lower page, upper page 00h, page 03h thresholds; 4 lanes
//   CMIS 4/5  QSFP-DD/OSFP/QSFP112: lower page, pages 00h/01h/02h and 11h (bank 0); up to 8 lanes
// Values in base units: degrees Celsius, volts, watts, amperes.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rdma_exporter {

using EepromPage = std::array<uint8_t, 128>;

// What was read of one module. Absent pages are simply not in `upper` (a flat-memory module,
// a page the driver refused); the parser uses what is there.
struct ModuleEeprom {
  EepromPage lower{};                               // I2C 0x50, bytes 0-127
  std::map<std::pair<int, int>, EepromPage> upper;  // (bank, page) -> bytes 128-255 of 0x50
  std::optional<std::array<uint8_t, 256>> a2;       // SFF-8472 diagnostics (I2C 0x51)
  const EepromPage* Upper(int page, int bank = 0) const {
    auto it = upper.find({bank, page});
    return it == upper.end() ? nullptr : &it->second;
  }
};

// An alarm/warning quadruple: flags the module raised, or thresholds it declares.
struct ModuleLimits {
  double high_alarm = 0, low_alarm = 0, high_warning = 0, low_warning = 0;
};
struct ModuleFlags {
  bool high_alarm = false, low_alarm = false, high_warning = false, low_warning = false;
  bool operator==(const ModuleFlags&) const = default;
};

// One monitored value with its flags and the module's thresholds for it.
struct ModuleMonitor {
  double value = 0;
  ModuleFlags flags;
  std::optional<ModuleLimits> thresholds;
};

struct ModuleLane {
  int lane = 0;  // 1-based
  std::optional<ModuleMonitor> rx_power_watts, tx_power_watts, tx_bias_amperes;
};

struct ModuleInfo {
  std::string memory_map;  // "sff8472", "sff8636", "cmis"
  std::string type;        // "SFP", "QSFP+", "QSFP28", "QSFP-DD", "OSFP", "QSFP+ (CMIS)"
  std::string vendor, part_number, serial, revision;
  // "mmf" (multi-mode optics: SR), "smf" (single-mode: DR/FR/LR), "aoc" (active optical cable),
  // "dac" (passive copper), "active_copper" (ACC/AEC), "active_cable" (SFF-8472's one bit for
  // active copper and optical cables alike), "unknown"
  std::string media;
  std::optional<ModuleMonitor> temperature_celsius, supply_voltage_volts;
  std::vector<ModuleLane> lanes;
};

// nullopt with *error set when the identifier byte names no module this parser reads, or a page
// it needs for the identity is missing. Monitors the module does not implement are absent.
std::optional<ModuleInfo> ParseModuleEeprom(const ModuleEeprom& eeprom, std::string* error);

}  // namespace rdma_exporter
