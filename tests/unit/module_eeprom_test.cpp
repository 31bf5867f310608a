// Module EEPROM parsing on page images written from the specifications (SFF-8472, SFF-8636,
// CMIS 5): each test places values at the byte positions the specification gives and asserts
// every field the parser reads, so a wrong offset fails a test.
#include <gtest/gtest.h>

#include <cstring>

#include <cerrno>
#include <fstream>
#include <map>
#include <sstream>

#include "../../collectors/module.h"
#include "rdma_exporter/module_eeprom.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

// Writes a big-endian 16-bit value at byte `at` of a 0-based buffer.
void Put16(uint8_t* page, int at, int value) {
  page[at] = static_cast<uint8_t>((value >> 8) & 0xff);
  page[at + 1] = static_cast<uint8_t>(value & 0xff);
}
// Writes a space-padded ASCII field.
void PutText(uint8_t* page, int at, int width, const char* text) {
  std::memset(page + at, ' ', width);
  std::memcpy(page + at, text, std::strlen(text));
}
// An upper page is addressed 128-255 in the specifications.
uint8_t* Up(EepromPage& page) {
  return page.data() - 128;
}

// Thresholds high alarm, low alarm, high warning, low warning at `at` (raw 16-bit values).
void PutLimits(uint8_t* page, int at, int ha, int la, int hw, int lw) {
  Put16(page, at, ha);
  Put16(page, at + 2, la);
  Put16(page, at + 4, hw);
  Put16(page, at + 6, lw);
}

constexpr double kEps = 1e-9;

// --- SFF-8636: an HDR QSFP56 AOC ------------------------------------------------------------
ModuleEeprom Qsfp56Aoc() {
  ModuleEeprom e;
  uint8_t* lo = e.lower.data();
  lo[0] = 0x11;                                 // QSFP28 (QSFP56 modules identify so)
  lo[6] = 0x20;                                 // temperature high warning (bit 5)
  lo[7] = 0x40;                                 // Vcc low alarm (bit 6)
  lo[9] = 0x01;                                 // rx power: lane 2 low warning (low nibble bit 0)
  lo[10] = 0x40;                                // rx power: lane 3 low alarm (high nibble bit 6)
  lo[11] = 0x80;                                // tx bias: lane 1 high alarm
  lo[14] = 0x02;                                // tx power: lane 4 high warning (low nibble bit 1)
  Put16(lo, 22, 45 * 256 + 128);                // 45.5 degC
  Put16(lo, 26, 33000);                         // 3.3 V
  const int rx[] = {5000, 4900, 120, 5100};     // 0.1 uW: 0.5 mW, ..., lane 3 dark-ish
  const int bias[] = {3750, 3800, 3700, 3650};  // 2 uA: 7.5 mA ...
  const int tx[] = {6000, 6100, 5900, 6200};
  for (int i = 0; i < 4; ++i) {
    Put16(lo, 34 + 2 * i, rx[i]);
    Put16(lo, 42 + 2 * i, bias[i]);
    Put16(lo, 50 + 2 * i, tx[i]);
  }
  EepromPage& p00 = e.upper[{0, 0x00}];
  uint8_t* u = Up(p00);
  u[128] = 0x11;
  u[130] = 0x23;  // no separable connector: a cable assembly
  u[147] = 0x00;  // 850 nm VCSEL
  PutText(u, 148, 16, "Mellanox");
  PutText(u, 168, 16, "MFS1S00-H003E");
  PutText(u, 184, 2, "A2");
  PutText(u, 196, 16, "MT2112FT01234");
  u[220] = 0x0C;  // rx power average, tx power monitored
  EepromPage& p03 = e.upper[{0, 0x03}];
  uint8_t* t = Up(p03);
  PutLimits(t, 128, 80 * 256, -5 * 256 & 0xffff, 75 * 256, 0);  // temperature
  PutLimits(t, 144, 36300, 29700, 34650, 31350);                // Vcc
  PutLimits(t, 176, 34674, 355, 27542, 447);                    // rx power
  PutLimits(t, 184, 7500, 1000, 6000, 1500);                    // tx bias
  PutLimits(t, 192, 34674, 501, 27542, 631);                    // tx power
  return e;
}

TEST(ModuleEeprom, Sff8636IdentityMonitorsFlagsAndThresholds) {
  std::string error;
  auto m = ParseModuleEeprom(Qsfp56Aoc(), &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->memory_map, "sff8636");
  EXPECT_EQ(m->type, "QSFP28");
  EXPECT_EQ(m->vendor, "Mellanox");
  EXPECT_EQ(m->part_number, "MFS1S00-H003E");
  EXPECT_EQ(m->revision, "A2");
  EXPECT_EQ(m->serial, "MT2112FT01234");
  EXPECT_EQ(m->media, "aoc");

  ASSERT_TRUE(m->temperature_celsius);
  EXPECT_NEAR(m->temperature_celsius->value, 45.5, kEps);
  EXPECT_EQ(m->temperature_celsius->flags, (ModuleFlags{false, false, true, false}));
  ASSERT_TRUE(m->temperature_celsius->thresholds);
  EXPECT_NEAR(m->temperature_celsius->thresholds->high_alarm, 80, kEps);
  EXPECT_NEAR(m->temperature_celsius->thresholds->low_alarm, -5, kEps);
  EXPECT_NEAR(m->temperature_celsius->thresholds->high_warning, 75, kEps);
  ASSERT_TRUE(m->supply_voltage_volts);
  EXPECT_NEAR(m->supply_voltage_volts->value, 3.3, kEps);
  EXPECT_EQ(m->supply_voltage_volts->flags, (ModuleFlags{false, true, false, false}));
  EXPECT_NEAR(m->supply_voltage_volts->thresholds->low_warning, 3.135, kEps);

  ASSERT_EQ(m->lanes.size(), 4u);
  EXPECT_NEAR(m->lanes[0].rx_power_watts->value, 0.5e-3, kEps);
  EXPECT_NEAR(m->lanes[2].rx_power_watts->value, 12e-6, kEps);
  EXPECT_NEAR(m->lanes[3].rx_power_watts->value, 0.51e-3, kEps);
  EXPECT_NEAR(m->lanes[0].tx_bias_amperes->value, 7.5e-3, kEps);
  EXPECT_NEAR(m->lanes[3].tx_bias_amperes->value, 7.3e-3, kEps);
  EXPECT_NEAR(m->lanes[1].tx_power_watts->value, 0.61e-3, kEps);
  EXPECT_EQ(m->lanes[1].rx_power_watts->flags, (ModuleFlags{false, false, false, true}));
  EXPECT_EQ(m->lanes[2].rx_power_watts->flags, (ModuleFlags{false, true, false, false}));
  EXPECT_EQ(m->lanes[0].rx_power_watts->flags, ModuleFlags{});
  EXPECT_EQ(m->lanes[0].tx_bias_amperes->flags, (ModuleFlags{true, false, false, false}));
  EXPECT_EQ(m->lanes[3].tx_power_watts->flags, (ModuleFlags{false, false, true, false}));
  EXPECT_NEAR(m->lanes[2].rx_power_watts->thresholds->low_warning, 44.7e-6, kEps);
  EXPECT_NEAR(m->lanes[2].rx_power_watts->thresholds->low_alarm, 35.5e-6, kEps);
  EXPECT_NEAR(m->lanes[0].tx_bias_amperes->thresholds->high_alarm, 15e-3, kEps);
  EXPECT_NEAR(m->lanes[0].tx_power_watts->thresholds->low_warning, 63.1e-6, kEps);
}

TEST(ModuleEeprom, Sff8636FlatMemoryHasNoThresholdsAndCopperIsADac) {
  ModuleEeprom e = Qsfp56Aoc();
  e.lower[2] = 0x04;                   // flat memory: page 03h does not exist
  Up(e.upper[{0, 0x00}])[147] = 0xA0;  // copper cable, unequalized
  Up(e.upper[{0, 0x00}])[220] = 0x08;  // no tx power monitor
  std::string error;
  auto m = ParseModuleEeprom(e, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->media, "dac");
  EXPECT_FALSE(m->temperature_celsius);  // passive copper: no monitors, its zeros are no readings
  EXPECT_TRUE(m->lanes.empty());
  // An optical module with flat memory: monitors without thresholds.
  Up(e.upper[{0, 0x00}])[147] = 0x00;
  m = ParseModuleEeprom(e, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->media, "aoc");
  ASSERT_TRUE(m->temperature_celsius);
  EXPECT_FALSE(m->temperature_celsius->thresholds);
  EXPECT_FALSE(m->lanes[0].rx_power_watts->thresholds);
  EXPECT_FALSE(m->lanes[0].tx_power_watts);
  // Separable connector (MPO) with a 1310 nm DFB: single-mode optics.
  e.lower[2] = 0;
  Up(e.upper[{0, 0x00}])[130] = 0x0C;
  Up(e.upper[{0, 0x00}])[147] = 0x40;
  EXPECT_EQ(ParseModuleEeprom(e, &error)->media, "smf");
  Up(e.upper[{0, 0x00}])[147] = 0x00;
  EXPECT_EQ(ParseModuleEeprom(e, &error)->media, "mmf");
}

// --- CMIS: an NDR OSFP (2x400G, 8 lanes) and a 400GbE QSFP112 (4 lanes) ----------------------
ModuleEeprom NdrOsfp() {
  ModuleEeprom e;
  uint8_t* lo = e.lower.data();
  lo[0] = 0x19;             // OSFP
  lo[1] = 0x50;             // CMIS 5.0
  lo[9] = 0x14;             // temperature high warning (bit 2), Vcc high alarm (bit 4)
  Put16(lo, 14, 61 * 256);  // 61 degC
  Put16(lo, 16, 32900);     // 3.29 V
  lo[85] = 0x02;            // single-mode fibre
  lo[88] = 0x88;            // first application: 8 host lanes, 8 media lanes
  EepromPage& p00 = e.upper[{0, 0x00}];
  uint8_t* u = Up(p00);
  u[128] = 0x19;
  PutText(u, 129, 16, "NVIDIA");
  PutText(u, 148, 16, "MMS4X00-NS");
  PutText(u, 164, 2, "A3");
  PutText(u, 166, 16, "MT2234XZ00042");
  u[203] = 0x0C;  // MPO 1x12
  u[212] = 0x06;  // 1310 nm EML
  EepromPage& p01 = e.upper[{0, 0x01}];
  Up(p01)[160] = 0x0F;  // bias, tx power, rx power monitored; bias multiplier x2 (bits 4-3 = 01)
  EepromPage& p02 = e.upper[{0, 0x02}];
  uint8_t* t = Up(p02);
  PutLimits(t, 128, 75 * 256, 0, 70 * 256, 5 * 256);  // temperature
  PutLimits(t, 136, 36300, 29700, 34650, 31350);      // Vcc
  PutLimits(t, 176, 39811, 1000, 31623, 1585);        // tx power
  PutLimits(t, 184, 10000, 1000, 9000, 1500);         // tx bias (x2: 40 mA high alarm)
  PutLimits(t, 192, 39811, 200, 31623, 501);          // rx power: low warning 50.1 uW
  EepromPage& p11 = e.upper[{0, 0x11}];
  uint8_t* l = Up(p11);
  for (int i = 0; i < 8; ++i) {
    Put16(l, 154 + 2 * i, 15000 + i);  // tx power 1.5 mW
    Put16(l, 170 + 2 * i, 4000 + i);   // tx bias 4000 x 2 uA x 2 = 16 mA
    Put16(l, 186 + 2 * i, 10000 + i);  // rx power 1 mW
  }
  Put16(l, 186 + 2 * 5, 400);  // lane 6: 40 uW, below the low warning
  l[152] = 1 << 5;             // rx power low warning, lane 6
  l[150] = 1 << 7;             // rx power low alarm, lane 8
  l[139] = 1 << 0;             // tx power high alarm, lane 1
  l[146] = 1 << 3;             // tx bias low warning, lane 4
  return e;
}

TEST(ModuleEeprom, CmisIdentityMonitorsFlagsAndThresholdsOfEightLanes) {
  std::string error;
  auto m = ParseModuleEeprom(NdrOsfp(), &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->memory_map, "cmis");
  EXPECT_EQ(m->type, "OSFP");
  EXPECT_EQ(m->vendor, "NVIDIA");
  EXPECT_EQ(m->part_number, "MMS4X00-NS");
  EXPECT_EQ(m->revision, "A3");
  EXPECT_EQ(m->serial, "MT2234XZ00042");
  EXPECT_EQ(m->media, "smf");
  EXPECT_NEAR(m->temperature_celsius->value, 61, kEps);
  EXPECT_EQ(m->temperature_celsius->flags, (ModuleFlags{false, false, true, false}));
  EXPECT_NEAR(m->temperature_celsius->thresholds->high_warning, 70, kEps);
  EXPECT_NEAR(m->temperature_celsius->thresholds->low_warning, 5, kEps);
  EXPECT_NEAR(m->supply_voltage_volts->value, 3.29, kEps);
  EXPECT_EQ(m->supply_voltage_volts->flags, (ModuleFlags{true, false, false, false}));
  EXPECT_NEAR(m->supply_voltage_volts->thresholds->high_alarm, 3.63, kEps);

  ASSERT_EQ(m->lanes.size(), 8u);
  EXPECT_EQ(m->lanes[7].lane, 8);
  EXPECT_NEAR(m->lanes[0].tx_power_watts->value, 1.5e-3, kEps);
  EXPECT_NEAR(m->lanes[7].tx_power_watts->value, 1.5007e-3, kEps);
  EXPECT_NEAR(m->lanes[0].tx_bias_amperes->value, 16e-3, kEps);  // the x2 multiplier applied
  EXPECT_NEAR(m->lanes[0].tx_bias_amperes->thresholds->high_alarm, 40e-3, kEps);
  EXPECT_NEAR(m->lanes[0].rx_power_watts->value, 1e-3, kEps);
  EXPECT_NEAR(m->lanes[5].rx_power_watts->value, 40e-6, kEps);
  EXPECT_NEAR(m->lanes[5].rx_power_watts->thresholds->low_warning, 50.1e-6, kEps);
  EXPECT_NEAR(m->lanes[5].rx_power_watts->thresholds->low_alarm, 20e-6, kEps);
  EXPECT_EQ(m->lanes[5].rx_power_watts->flags, (ModuleFlags{false, false, false, true}));
  EXPECT_EQ(m->lanes[7].rx_power_watts->flags, (ModuleFlags{false, true, false, false}));
  EXPECT_EQ(m->lanes[0].rx_power_watts->flags, ModuleFlags{});
  EXPECT_EQ(m->lanes[0].tx_power_watts->flags, (ModuleFlags{true, false, false, false}));
  EXPECT_EQ(m->lanes[3].tx_bias_amperes->flags, (ModuleFlags{false, false, false, true}));
  EXPECT_NEAR(m->lanes[0].tx_power_watts->thresholds->low_warning, 158.5e-6, kEps);
}

TEST(ModuleEeprom, CmisLaneCountMediaAndMissingPages) {
  ModuleEeprom e = NdrOsfp();
  e.lower[0] = 0x1E;                   // QSFP112 (CMIS)
  e.lower[88] = 0x44;                  // 4 media lanes
  e.lower[85] = 0x04;                  // active cable ...
  Up(e.upper[{0, 0x00}])[212] = 0x00;  // ... with 850 nm VCSELs: an AOC
  Up(e.upper[{0, 0x01}])[160] = 0x04;  // rx power monitored only
  std::string error;
  auto m = ParseModuleEeprom(e, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->type, "QSFP+ (CMIS)");
  EXPECT_EQ(m->media, "aoc");
  ASSERT_EQ(m->lanes.size(), 4u);
  EXPECT_TRUE(m->lanes[0].rx_power_watts);
  EXPECT_FALSE(m->lanes[0].tx_power_watts);
  EXPECT_FALSE(m->lanes[0].tx_bias_amperes);
  Up(e.upper[{0, 0x00}])[212] = 0x0D;  // copper with far-end limiting equalizers
  EXPECT_EQ(ParseModuleEeprom(e, &error)->media, "active_copper");
  e.lower[85] = 0x03;
  m = ParseModuleEeprom(e, &error);
  EXPECT_EQ(m->media, "dac");
  EXPECT_FALSE(m->temperature_celsius);
  e.lower[85] = 0x02;

  // Flat memory: no thresholds, no lanes; the module monitors stay.
  e.lower[2] = 0x80;
  m = ParseModuleEeprom(e, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_TRUE(m->lanes.empty());
  EXPECT_TRUE(m->temperature_celsius);
  EXPECT_FALSE(m->temperature_celsius->thresholds);
  // Page 11h refused by the driver: identity and module monitors without lanes.
  e.lower[2] = 0;
  e.upper.erase({0, 0x11});
  m = ParseModuleEeprom(e, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_TRUE(m->lanes.empty());
  EXPECT_TRUE(m->temperature_celsius->thresholds);
}

// --- SFF-8472: a 25G SR SFP28 ----------------------------------------------------------------
TEST(ModuleEeprom, Sff8472InternallyCalibratedDiagnostics) {
  ModuleEeprom e;
  uint8_t* a0 = e.lower.data();
  a0[0] = 0x03;
  a0[3] = 0x10;  // 10GBASE-SR compliance bit (SR optics)
  PutText(a0, 20, 16, "FINISAR CORP.");
  PutText(a0, 40, 16, "FTLF8536P4BCL");
  PutText(a0, 56, 4, "A");
  PutText(a0, 68, 16, "X4F0ABC");
  a0[92] = 0x68;  // DDM implemented, internally calibrated, average rx power
  std::array<uint8_t, 256> a2{};
  PutLimits(a2.data(), 0, 75 * 256, -5 * 256 & 0xffff, 70 * 256, 0);
  PutLimits(a2.data(), 8, 36000, 30000, 35000, 31000);
  PutLimits(a2.data(), 16, 6000, 500, 5000, 1000);
  PutLimits(a2.data(), 24, 15849, 1259, 12589, 1585);
  PutLimits(a2.data(), 32, 15849, 251, 12589, 316);
  Put16(a2.data(), 96, 38 * 256);
  Put16(a2.data(), 98, 33100);
  Put16(a2.data(), 100, 3000);  // 6 mA
  Put16(a2.data(), 102, 5500);  // 0.55 mW
  Put16(a2.data(), 104, 300);   // 30 uW: below the low warning (31.6 uW)
  a2[117] = 0x40;               // rx power low warning (byte 117 bit 6)
  a2[112] = 0x08;               // tx bias high alarm (byte 112 bit 3)
  e.a2 = a2;
  std::string error;
  auto m = ParseModuleEeprom(e, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->memory_map, "sff8472");
  EXPECT_EQ(m->vendor, "FINISAR CORP.");
  EXPECT_EQ(m->part_number, "FTLF8536P4BCL");
  EXPECT_EQ(m->revision, "A");
  EXPECT_EQ(m->serial, "X4F0ABC");
  EXPECT_EQ(m->media, "mmf");
  EXPECT_NEAR(m->temperature_celsius->value, 38, kEps);
  EXPECT_NEAR(m->temperature_celsius->thresholds->low_alarm, -5, kEps);
  EXPECT_NEAR(m->supply_voltage_volts->value, 3.31, kEps);
  ASSERT_EQ(m->lanes.size(), 1u);
  EXPECT_NEAR(m->lanes[0].tx_bias_amperes->value, 6e-3, kEps);
  EXPECT_EQ(m->lanes[0].tx_bias_amperes->flags, (ModuleFlags{true, false, false, false}));
  EXPECT_NEAR(m->lanes[0].tx_power_watts->value, 0.55e-3, kEps);
  EXPECT_NEAR(m->lanes[0].rx_power_watts->value, 30e-6, kEps);
  EXPECT_EQ(m->lanes[0].rx_power_watts->flags, (ModuleFlags{false, false, false, true}));
  EXPECT_NEAR(m->lanes[0].rx_power_watts->thresholds->low_warning, 31.6e-6, kEps);
  // Externally calibrated: identity only, no monitors.
  e.lower[92] = 0x58;
  m = ParseModuleEeprom(e, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_FALSE(m->temperature_celsius);
  EXPECT_TRUE(m->lanes.empty());
}

// A published `ethtool -m` capture (tests/fixtures/real/module-eeprom/PROVENANCE.md): the bytes
// of its "hex on" dump and, for the expected values, ethtool's own decode of the same module.
struct EthtoolCapture {
  std::vector<uint8_t> bytes;
  std::map<std::string, std::string> decoded;  // "Vendor name" -> "MikroTik"
};
EthtoolCapture ReadEthtoolCapture(const std::string& name) {
  std::ifstream in(std::string(RDMA_TEST_FIXTURES) + "/real/module-eeprom/raw/" + name);
  EthtoolCapture c;
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(0, key.find_first_not_of(" \t"));
    if (key.rfind("0x", 0) == 0) {  // "0x0010:\t\t00 00 05 ..."
      std::istringstream hex(line.substr(colon + 1));
      unsigned byte = 0;
      while (hex >> std::hex >> byte)
        c.bytes.push_back(static_cast<uint8_t>(byte));
    } else {
      key.erase(key.find_last_not_of(' ') + 1);
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      c.decoded[key] = value;
    }
  }
  return c;
}

TEST(ModuleEepromRealCapture, MikroTikActiveCableSfpIdentityAndNoDiagnostics) {
  auto capture = ReadEthtoolCapture("ethtool-m-mikrotik-s-ao0005.txt");
  ASSERT_EQ(capture.bytes.size(), 512u) << "A0h and A2h, 256 bytes each";
  ModuleEeprom e;
  std::memcpy(e.lower.data(), capture.bytes.data(), 128);
  std::memcpy(e.upper[{0, 0}].data(), capture.bytes.data() + 128, 128);
  std::array<uint8_t, 256> a2{};
  std::memcpy(a2.data(), capture.bytes.data() + 256, 256);
  e.a2 = a2;
  std::string error;
  auto m = ParseModuleEeprom(e, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(capture.decoded["Identifier"], "0x03 (SFP)");
  EXPECT_EQ(m->type, "SFP");
  EXPECT_EQ(m->memory_map, "sff8472");
  EXPECT_EQ(m->vendor, capture.decoded["Vendor name"]);
  EXPECT_EQ(m->part_number, capture.decoded["Vendor PN"]);
  EXPECT_EQ(m->revision, capture.decoded["Vendor rev"]);
  EXPECT_EQ(m->serial, capture.decoded["Vendor SN"]);
  // ethtool: "Transceiver type: Active Cable", "Connector: Copper pigtail"; an optical cable.
  EXPECT_EQ(capture.decoded["Transceiver type"], "Active Cable");
  EXPECT_EQ(m->media, "active_cable");
  // Byte 92 is 0x00: no digital diagnostics (ethtool prints none), although its A2h holds bytes.
  EXPECT_EQ(capture.decoded.count("Module temperature"), 0u);
  EXPECT_FALSE(m->temperature_celsius);
  EXPECT_FALSE(m->supply_voltage_volts);
  EXPECT_TRUE(m->lanes.empty());
}

TEST(ModuleEepromRealCapture, Mlx5FailedPageReadGarbageIsNoModule) {
  // What mlx5 kernels before upstream d1c94bc5b90c handed out for a failed page read: success
  // with nothing read, and ethtool dumped a buffer of netlink bytes. The netlink reader refuses
  // a page shorter than asked; should such bytes reach the parser, they are no module.
  auto capture = ReadEthtoolCapture("ethtool-m-mlx5-failed-page-read.txt");
  ASSERT_EQ(capture.bytes.size(), 128u);
  ModuleEeprom e;
  std::memcpy(e.lower.data(), capture.bytes.data(), 128);
  std::string error;
  EXPECT_FALSE(ParseModuleEeprom(e, &error));
  EXPECT_FALSE(error.empty());
}

TEST(ModuleEeprom, UnknownIdentifiersAndMissingIdentityPagesAreErrors) {
  ModuleEeprom e;
  std::string error;
  EXPECT_FALSE(ParseModuleEeprom(e, &error));  // 0x00: unknown
  EXPECT_NE(error.find("0x00"), std::string::npos);
  e.lower[0] = 0x11;  // QSFP28 without page 00h
  EXPECT_FALSE(ParseModuleEeprom(e, &error));
  e.lower[0] = 0x18;  // QSFP-DD without page 00h
  EXPECT_FALSE(ParseModuleEeprom(e, &error));
  // Unprintable vendor bytes do not leak into label values.
  ModuleEeprom q = Qsfp56Aoc();
  Up(q.upper[{0, 0x00}])[150] = 0xff;
  auto m = ParseModuleEeprom(q, &error);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->vendor, "Me?lanox");
}

// --- the module collector over the Soft-RoCE capture (rxe0 on eth0, rxe1 on eth1) -----------

class FakeModules : public ModuleEepromReader {
 public:
  std::map<std::string, ModuleEeprom> modules;
  std::map<std::string, int> errors;
  int reads = 0;
  int Read(const std::string& netdev, ModuleEeprom* out) override {
    ++reads;
    if (auto e = errors.find(netdev); e != errors.end()) return e->second;
    auto m = modules.find(netdev);
    if (m == modules.end()) return EOPNOTSUPP;
    *out = m->second;
    return 0;
  }
};

struct ModuleNode {
  FakeModules* fake;
  KernelReaders kernel;
  SysfsReader sysfs{testing::RxeCaptureSysfs()};
  ModuleCollector collector;
  ModuleNode() {
    auto f = std::make_unique<FakeModules>();
    fake = f.get();
    kernel.module = std::move(f);
  }
  testing::CollectResult Poll() { return testing::RunCollector(collector, sysfs, {}, &kernel); }
};

TEST(ModuleCollector, ExportsIdentityMonitorsThresholdsAndRaisedFlags) {
  ModuleNode node;
  node.fake->modules["eth0"] = NdrOsfp();  // eth1: EOPNOTSUPP, no module
  auto r = node.Poll();
  EXPECT_EQ(r.failures, 0u);
  using testing::Count;
  using testing::Value;
  EXPECT_EQ(Value(r.families, "rdma_module_info",
                  {{"device", "rxe0"},
                   {"port", "1"},
                   {"netdev", "eth0"},
                   {"type", "OSFP"},
                   {"memory_map", "cmis"},
                   {"vendor", "NVIDIA"},
                   {"part_number", "MMS4X00-NS"},
                   {"serial", "MT2234XZ00042"},
                   {"revision", "A3"},
                   {"media", "smf"}}),
            1.0);
  EXPECT_EQ(Count(r.families, "rdma_module_info"), 1u);
  EXPECT_NEAR(*Value(r.families, "rdma_module_temperature_celsius", {{"netdev", "eth0"}}), 61,
              kEps);
  EXPECT_NEAR(*Value(r.families, "rdma_module_supply_voltage_volts"), 3.29, kEps);
  EXPECT_EQ(Count(r.families, "rdma_module_rx_power_watts"), 8u);
  EXPECT_NEAR(*Value(r.families, "rdma_module_rx_power_watts", {{"lane", "6"}}), 40e-6, kEps);
  EXPECT_NEAR(*Value(r.families, "rdma_module_tx_bias_amperes", {{"lane", "1"}}), 16e-3, kEps);
  EXPECT_EQ(Count(r.families, "rdma_module_tx_power_watts"), 8u);
  // Thresholds once per module (no lane label), four each.
  EXPECT_EQ(Count(r.families, "rdma_module_rx_power_threshold_watts"), 4u);
  EXPECT_NEAR(
      *Value(r.families, "rdma_module_rx_power_threshold_watts", {{"threshold", "low_warning"}}),
      50.1e-6, kEps);
  EXPECT_NEAR(*Value(r.families, "rdma_module_temperature_threshold_celsius",
                     {{"threshold", "high_warning"}}),
              70, kEps);
  // Flags counted per quantity and level: rx power one lane warning, one lane alarm; the module
  // temperature high warning; Vcc high alarm; tx power lane 1 alarm; bias lane 4 warning.
  auto flags = [&](const char* quantity, const char* level) {
    return Value(r.families, "rdma_module_flags", {{"quantity", quantity}, {"level", level}});
  };
  EXPECT_EQ(flags("rx_power", "warning"), 1.0);
  EXPECT_EQ(flags("rx_power", "alarm"), 1.0);
  EXPECT_EQ(flags("temperature", "warning"), 1.0);
  EXPECT_EQ(flags("temperature", "alarm"), 0.0);
  EXPECT_EQ(flags("supply_voltage", "alarm"), 1.0);
  EXPECT_EQ(flags("tx_power", "alarm"), 1.0);
  EXPECT_EQ(flags("tx_bias", "warning"), 1.0);
  EXPECT_EQ(Count(r.families, "rdma_module_flags"), 10u);
}

TEST(ModuleCollector, NoPermissionIsOneLogLineAndNoErrors) {
  ModuleNode node;
  node.fake->errors["eth0"] = EPERM;
  node.fake->errors["eth1"] = EPERM;
  for (int poll = 0; poll < 2; ++poll) {
    auto r = node.Poll();
    EXPECT_EQ(r.failures, 0u);
    EXPECT_TRUE(r.families.empty());
  }
  EXPECT_EQ(node.fake->reads, 2);  // the first EPERM of a poll ends it
}

TEST(ModuleCollector, AFailedOrGarbledModuleCostsOnlyItsPort) {
  ModuleNode node;
  node.fake->errors["eth0"] = EIO;              // the module did not answer on I2C
  node.fake->modules["eth1"] = ModuleEeprom{};  // identifier 0x00: not a module we read
  auto r = node.Poll();
  EXPECT_EQ(r.failures, 2u);
  EXPECT_EQ((r.errors[{"module", "io"}]), 1u);
  EXPECT_EQ((r.errors[{"module", "malformed"}]), 1u);
  EXPECT_TRUE(r.families.empty());
  node.fake->errors.erase("eth0");
  node.fake->modules["eth0"] = Qsfp56Aoc();
  r = node.Poll();
  EXPECT_EQ(testing::Count(r.families, "rdma_module_info"), 1u);
  EXPECT_EQ(testing::Count(r.families, "rdma_module_rx_power_watts"), 4u);
}

}  // namespace
}  // namespace rdma_exporter
