// Byte positions from the specifications: SFF-8024 (identifiers), SFF-8472 rev 12.4, SFF-8636
// rev 2.10a, CMIS rev 5.2. Offsets into an upper page are written as in the specifications
// (128-255) and looked up at offset - 128.
#include "rdma_exporter/module_eeprom.h"

#include <cstdio>
#include <string_view>

namespace rdma_exporter {
namespace {

uint16_t U16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] << 8 | p[1]);
}
int16_t S16(const uint8_t* p) {
  return static_cast<int16_t>(U16(p));
}

// Byte `offset` (128-255) of an upper page.
const uint8_t* At(const EepromPage& page, int offset) {
  return page.data() + (offset - 128);
}

// A space-padded ASCII field, trailing spaces and NULs dropped, anything unprintable as '?'.
std::string Ascii(const uint8_t* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i)
    s += (p[i] >= 0x20 && p[i] < 0x7f) ? static_cast<char>(p[i]) : '?';
  while (!s.empty() && (s.back() == ' ' || s.back() == '?'))
    s.pop_back();
  return s;
}

// Four big-endian 16-bit thresholds in the order high alarm, low alarm, high warning, low
// warning, each converted by `scale` (signed for temperatures).
ModuleLimits Limits(const uint8_t* p, double scale, bool is_signed = false) {
  auto v = [&](int i) { return (is_signed ? S16(p + 2 * i) : U16(p + 2 * i)) * scale; };
  return {v(0), v(1), v(2), v(3)};
}

// Flags from four bit positions of one byte (SFF-8636 and SFF-8472 order them so).
ModuleFlags FlagBits(uint8_t byte, int high_alarm, int low_alarm, int high_warning,
                     int low_warning) {
  auto bit = [&](int b) { return ((byte >> b) & 1) != 0; };
  return {bit(high_alarm), bit(low_alarm), bit(high_warning), bit(low_warning)};
}

constexpr double kCelsius = 1.0 / 256;  // s16, 1/256 degC
constexpr double kVolts = 100e-6;       // u16, 100 uV
constexpr double kWatts = 0.1e-6;       // u16, 0.1 uW
constexpr double kAmperes = 2e-6;       // u16, 2 uA

// SFF-8636 byte 147 / CMIS page 00h byte 212: transmitter / media interface technology.
// 0x0A and up are copper: unequalized or passive equalized (a DAC), then active equalizers.
std::string MediaFromTechnology(uint8_t technology, bool separable_connector) {
  if (technology == 0x0A || technology == 0x0B) return "dac";
  if (technology >= 0x0C && technology <= 0x0F) return "active_copper";
  if (!separable_connector) return "aoc";  // optics with the fibre fixed to the module
  // 850 nm VCSELs are multi-mode (SR); the 1310/1550 nm lasers single-mode (DR, FR, LR).
  return technology == 0x00 ? "mmf" : "smf";
}

// SFF-8024 connector type 0x23: "No separable connector" (cable assemblies).
constexpr uint8_t kNoSeparableConnector = 0x23;

// ------------------------------------------------------------------------------ SFF-8472 ----
std::optional<ModuleInfo> ParseSff8472(const ModuleEeprom& e, std::string* error) {
  const uint8_t* a0 = e.lower.data();
  ModuleInfo m;
  m.memory_map = "sff8472";
  m.type = "SFP";
  m.vendor = Ascii(a0 + 20, 16);
  m.part_number = Ascii(a0 + 40, 16);
  m.revision = Ascii(a0 + 56, 4);
  // Byte 8: SFP+ cable technology, bit 3 active, bit 2 passive (SFF-8472 table 5-3). One bit for
  // every active cable, copper or optical: AOCs set it too, with connector "copper pigtail"
  // (a published MikroTik S+AO0005 AOC: tests/fixtures/real/module-eeprom), so it says no more
  // than "active cable".
  if (a0[8] & 0x04) {
    m.media = "dac";
  } else if (a0[8] & 0x08) {
    m.media = "active_cable";
  } else if (a0[3] & 0x10) {
    m.media = "mmf";  // 10GBASE-SR (byte 3 bit 4)
  } else if (a0[3] & 0x60) {
    m.media = "smf";  // 10GBASE-LR/LRM
  } else {
    m.media = "unknown";
  }
  // Serial (68-83) lives past the 0-127 we are handed only for A0h's lower half: it is there.
  m.serial = Ascii(a0 + 68, 16);
  // Byte 92: bit 6 digital diagnostics implemented, bit 5 internally calibrated. Externally
  // calibrated values need the A2h calibration constants: not read.
  const bool ddm = (a0[92] & 0x40) != 0 && (a0[92] & 0x20) != 0;
  if (!ddm || !e.a2) return m;
  const uint8_t* a2 = e.a2->data();
  const uint8_t alarms = a2[112], alarms2 = a2[113], warnings = a2[116], warnings2 = a2[117];
  auto flags = [&](int high_bit, int low_bit, bool second) {
    uint8_t a = second ? alarms2 : alarms, w = second ? warnings2 : warnings;
    return ModuleFlags{((a >> high_bit) & 1) != 0, ((a >> low_bit) & 1) != 0,
                       ((w >> high_bit) & 1) != 0, ((w >> low_bit) & 1) != 0};
  };
  m.temperature_celsius =
      ModuleMonitor{S16(a2 + 96) * kCelsius, flags(7, 6, false), Limits(a2 + 0, kCelsius, true)};
  m.supply_voltage_volts =
      ModuleMonitor{U16(a2 + 98) * kVolts, flags(5, 4, false), Limits(a2 + 8, kVolts)};
  ModuleLane lane{1, {}, {}, {}};
  lane.tx_bias_amperes =
      ModuleMonitor{U16(a2 + 100) * kAmperes, flags(3, 2, false), Limits(a2 + 16, kAmperes)};
  lane.tx_power_watts =
      ModuleMonitor{U16(a2 + 102) * kWatts, flags(1, 0, false), Limits(a2 + 24, kWatts)};
  lane.rx_power_watts =
      ModuleMonitor{U16(a2 + 104) * kWatts, flags(7, 6, true), Limits(a2 + 32, kWatts)};
  m.lanes.push_back(lane);
  (void)error;
  return m;
}

// Where a memory map with paged upper memory (SFF-8636, CMIS) keeps the identity strings in
// upper page 00h.
struct IdentityLayout {
  const char* name;        // for the error ("SFF-8636")
  const char* memory_map;  // ModuleInfo::memory_map
  int vendor, part_number, revision, serial;
};

// Upper page 00h with the identity of m filled in from it; nullptr (and *error) without it.
const EepromPage* ReadIdentity(const ModuleEeprom& e, std::string_view type,
                               const IdentityLayout& layout, ModuleInfo* m, std::string* error) {
  const EepromPage* p00 = e.Upper(0x00);
  if (p00 == nullptr) {
    *error = std::string(layout.name) + " module without upper page 00h (identity)";
    return nullptr;
  }
  m->memory_map = layout.memory_map;
  m->type = std::string(type);
  m->vendor = Ascii(At(*p00, layout.vendor), 16);
  m->part_number = Ascii(At(*p00, layout.part_number), 16);
  m->revision = Ascii(At(*p00, layout.revision), 2);
  m->serial = Ascii(At(*p00, layout.serial), 16);
  return p00;
}

// ------------------------------------------------------------------------------ SFF-8636 ----
std::optional<ModuleInfo> ParseSff8636(const ModuleEeprom& e, std::string_view type,
                                       std::string* error) {
  ModuleInfo m;
  const EepromPage* p00 =
      ReadIdentity(e, type, {"SFF-8636", "sff8636", 148, 168, 184, 196}, &m, error);
  if (p00 == nullptr) return std::nullopt;
  const uint8_t* lo = e.lower.data();
  m.media = MediaFromTechnology(*At(*p00, 147) >> 4, *At(*p00, 130) != kNoSeparableConnector);
  // A passive copper cable has no monitors: its zeros are not readings.
  if (m.media == "dac") return m;
  // Byte 2 bit 2: flat memory (no page 03h, so no thresholds).
  const EepromPage* p03 = (lo[2] & 0x04) ? nullptr : e.Upper(0x03);
  auto limits = [&](int offset, double scale,
                    bool is_signed = false) -> std::optional<ModuleLimits> {
    if (p03 == nullptr) return std::nullopt;
    return Limits(At(*p03, offset), scale, is_signed);
  };
  // Bytes 6 and 7: temperature and Vcc flags in bits 7 (high alarm) to 4 (low warning).
  m.temperature_celsius = ModuleMonitor{S16(lo + 22) * kCelsius, FlagBits(lo[6], 7, 6, 5, 4),
                                        limits(128, kCelsius, true)};
  m.supply_voltage_volts =
      ModuleMonitor{U16(lo + 26) * kVolts, FlagBits(lo[7], 7, 6, 5, 4), limits(144, kVolts)};
  // Lane flags: two lanes per byte, lane 1 (3) in the high nibble, lane 2 (4) in the low one;
  // rx power bytes 9-10, tx bias 11-12, tx power 13-14.
  auto lane_flags = [&](int first_byte, int lane) {
    uint8_t byte = lo[first_byte + lane / 2];
    int base = (lane % 2 == 0) ? 4 : 0;
    return FlagBits(byte, base + 3, base + 2, base + 1, base);
  };
  // Byte 220 (diagnostic monitoring type) bit 2: tx power monitored (rev 2.0 and later).
  const bool tx_power = (*At(*p00, 220) & 0x04) != 0;
  for (int i = 0; i < 4; ++i) {
    ModuleLane lane{i + 1, {}, {}, {}};
    lane.rx_power_watts =
        ModuleMonitor{U16(lo + 34 + 2 * i) * kWatts, lane_flags(9, i), limits(176, kWatts)};
    lane.tx_bias_amperes =
        ModuleMonitor{U16(lo + 42 + 2 * i) * kAmperes, lane_flags(11, i), limits(184, kAmperes)};
    if (tx_power) {
      lane.tx_power_watts =
          ModuleMonitor{U16(lo + 50 + 2 * i) * kWatts, lane_flags(13, i), limits(192, kWatts)};
    }
    m.lanes.push_back(lane);
  }
  return m;
}

// ---------------------------------------------------------------------------------- CMIS ----
std::optional<ModuleInfo> ParseCmis(const ModuleEeprom& e, std::string_view type,
                                    std::string* error) {
  ModuleInfo m;
  const EepromPage* p00 = ReadIdentity(e, type, {"CMIS", "cmis", 129, 148, 164, 166}, &m, error);
  if (p00 == nullptr) return std::nullopt;
  const uint8_t* lo = e.lower.data();
  // Byte 85: module media type; 1 MMF, 2 SMF, 3 passive copper, 4 active cable (optical or
  // copper: page 00h byte 212 tells).
  switch (lo[85]) {
    case 0x01:
      m.media = "mmf";
      break;
    case 0x02:
      m.media = "smf";
      break;
    case 0x03:
      m.media = "dac";
      break;
    case 0x04:
      m.media = *At(*p00, 212) >= 0x0A ? "active_copper" : "aoc";
      break;
    default:
      m.media = "unknown";
  }
  if (m.media == "dac") return m;  // passive copper: no monitors
  // Byte 2 bit 7: flat memory (lower page and page 00h only).
  const bool flat = (lo[2] & 0x80) != 0;
  const EepromPage* p01 = flat ? nullptr : e.Upper(0x01);
  const EepromPage* p02 = flat ? nullptr : e.Upper(0x02);
  const EepromPage* p11 = flat ? nullptr : e.Upper(0x11, 0);
  auto limits = [&](int offset, double scale,
                    bool is_signed = false) -> std::optional<ModuleLimits> {
    if (p02 == nullptr) return std::nullopt;
    return Limits(At(*p02, offset), scale, is_signed);
  };
  // Byte 9: temperature flags in bits 0 (high alarm) to 3 (low warning), Vcc in bits 4 to 7.
  m.temperature_celsius = ModuleMonitor{S16(lo + 14) * kCelsius, FlagBits(lo[9], 0, 1, 2, 3),
                                        limits(128, kCelsius, true)};
  m.supply_voltage_volts =
      ModuleMonitor{U16(lo + 16) * kVolts, FlagBits(lo[9], 4, 5, 6, 7), limits(136, kVolts)};
  if (p11 == nullptr) return m;
  // Media lanes of the first application (byte 88, low nibble); 8 when it does not say.
  int lanes = lo[88] & 0x0F;
  if (lanes == 0 || lanes > 8) lanes = 8;
  // Page 01h byte 160: which lane monitors exist (bit 0 bias, 1 tx power, 2 rx power) and the
  // bias multiplier (bits 4-3: x1, x2, x4).
  const uint8_t monitors = p01 != nullptr ? *At(*p01, 160) : 0x07;
  const double bias_scale = kAmperes * (1 << ((monitors >> 3) & 0x03));
  // Page 11h: one bit per lane in each flag byte; high alarm, low alarm, high warning, low
  // warning at 139-142 (tx power), 143-146 (bias), 149-152 (rx power).
  auto lane_flags = [&](int first, int lane) {
    auto bit = [&](int offset) { return ((*At(*p11, offset) >> lane) & 1) != 0; };
    return ModuleFlags{bit(first), bit(first + 1), bit(first + 2), bit(first + 3)};
  };
  for (int i = 0; i < lanes; ++i) {
    ModuleLane lane{i + 1, {}, {}, {}};
    if (monitors & 0x02) {
      lane.tx_power_watts = ModuleMonitor{U16(At(*p11, 154 + 2 * i)) * kWatts, lane_flags(139, i),
                                          limits(176, kWatts)};
    }
    if (monitors & 0x01) {
      lane.tx_bias_amperes = ModuleMonitor{U16(At(*p11, 170 + 2 * i)) * bias_scale,
                                           lane_flags(143, i), limits(184, bias_scale)};
    }
    if (monitors & 0x04) {
      lane.rx_power_watts = ModuleMonitor{U16(At(*p11, 186 + 2 * i)) * kWatts, lane_flags(149, i),
                                          limits(192, kWatts)};
    }
    m.lanes.push_back(lane);
  }
  return m;
}

}  // namespace

std::optional<ModuleInfo> ParseModuleEeprom(const ModuleEeprom& eeprom, std::string* error) {
  // SFF-8024 table 4-1: the identifier in byte 0 decides the memory map.
  switch (eeprom.lower[0]) {
    case 0x03:
      return ParseSff8472(eeprom, error);
    case 0x0C:
      return ParseSff8636(eeprom, "QSFP", error);
    case 0x0D:
      return ParseSff8636(eeprom, "QSFP+", error);
    case 0x11:
      return ParseSff8636(eeprom, "QSFP28", error);
    case 0x18:
      return ParseCmis(eeprom, "QSFP-DD", error);
    case 0x19:
      return ParseCmis(eeprom, "OSFP", error);
    case 0x1E:
      return ParseCmis(eeprom, "QSFP+ (CMIS)", error);
    default: {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", eeprom.lower[0]);
      *error = std::string("module identifier ") + hex + " is not SFP, QSFP or CMIS";
      return std::nullopt;
    }
  }
}

}  // namespace rdma_exporter
