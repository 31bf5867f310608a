#include "rdma_exporter/parse.h"

#include <gtest/gtest.h>

namespace rdma_exporter {
namespace {

TEST(ParseU64, AcceptsKernelCounterLines) {
  EXPECT_EQ(ParseU64("123456789\n"), 123456789u);
  EXPECT_EQ(ParseU64("0"), 0u);
  EXPECT_EQ(ParseU64("18446744073709551615\n"), UINT64_MAX);
}

TEST(ParseU64, RejectsWhatIsNotACount) {
  EXPECT_FALSE(ParseU64("N/A (no PMA)\n"));
  EXPECT_FALSE(ParseU64(""));
  EXPECT_FALSE(ParseU64("\n"));
  EXPECT_FALSE(ParseU64("12abc"));
  EXPECT_FALSE(ParseU64("-1"));
  EXPECT_FALSE(ParseU64("18446744073709551616"));  // overflows 64 bits
}

TEST(ParseHex, ReadsCapMaskAndLid) {
  EXPECT_EQ(ParseHex("0x00010000\n"), 0x10000u);
  EXPECT_EQ(ParseHex("0x1a"), 0x1au);
  EXPECT_FALSE(ParseHex("0xzz"));
}

TEST(ParseHexBytes, SkipsSeparatorsAndDropsAnOddLastDigit) {
  EXPECT_EQ(ParseHexBytes("88cc 02\n0A7"), (std::vector<uint8_t>{0x88, 0xcc, 0x02, 0x0a}));
  EXPECT_TRUE(ParseHexBytes("zz\n").empty());
}

TEST(ParseNumberedName, ReadsStateAndPhysState) {
  auto state = ParseNumberedName("4: ACTIVE\n");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->number, 4u);
  EXPECT_EQ(state->name, "ACTIVE");
  auto phys = ParseNumberedName("7: Phy Test\n");
  ASSERT_TRUE(phys);
  EXPECT_EQ(phys->number, 7u);
  EXPECT_EQ(phys->name, "Phy Test");
  EXPECT_FALSE(ParseNumberedName("ACTIVE"));
  EXPECT_FALSE(ParseNumberedName(": ACTIVE"));
  EXPECT_FALSE(ParseNumberedName("x: ACTIVE"));
}

TEST(ParsePortRate, ReadsEveryKernelRateForm) {
  struct Case {
    const char* text;
    double gbit;
    unsigned width;
    const char* speed;
  } cases[] = {
      {"100 Gb/sec (4X EDR)\n", 100, 4, "EDR"},
      {"2.5 Gb/sec (1X SDR)\n", 2.5, 1, "SDR"},
      {"56 Gb/sec (4X FDR)", 56, 4, "FDR"},
      {"10 Gb/sec (1X FDR10)", 10, 1, "FDR10"},
      {"800 Gb/sec (4X XDR)", 800, 4, "XDR"},
      {"400 Gb/sec (8X HDR)", 400, 8, "HDR"},
      {"300 Gb/sec (12X EDR)", 300, 12, "EDR"},
      // Kernels before the SDR name (4.x) printed none for SDR; libibumad's sysfs emulation
      // prints none for a speed it does not know.
      {"10 Gb/sec (4X)\n", 10, 4, "SDR"},
      {"2.5 Gb/sec (1X)", 2.5, 1, "SDR"},
      {"56 Gb/sec (4X)", 56, 4, ""},
  };
  for (const auto& c : cases) {
    auto rate = ParsePortRate(c.text);
    ASSERT_TRUE(rate) << c.text;
    EXPECT_DOUBLE_EQ(rate->gbit_per_second, c.gbit) << c.text;
    EXPECT_EQ(rate->width, c.width) << c.text;
    EXPECT_EQ(rate->speed, c.speed) << c.text;
  }
}

TEST(ParsePortRate, RejectsEmptyAndGarbage) {
  EXPECT_FALSE(ParsePortRate(""));
  EXPECT_FALSE(ParsePortRate("\n"));
  EXPECT_FALSE(ParsePortRate("100 Gb/sec"));
  EXPECT_FALSE(ParsePortRate("100 Gb/sec (X EDR)"));
  EXPECT_FALSE(ParsePortRate("fast (4X EDR)"));
  EXPECT_FALSE(ParsePortRate("100 Gb/sec (4X )"));
  EXPECT_FALSE(ParsePortRate("100 Gb/sec (4XEDR)"));
  EXPECT_FALSE(ParsePortRate("100 Gb/sec (X)"));
}

TEST(ParsePcieSpeed, AcceptsNewAndOldSpellings) {
  EXPECT_DOUBLE_EQ(*ParsePcieSpeed("16.0 GT/s PCIe\n"), 16e9);
  EXPECT_DOUBLE_EQ(*ParsePcieSpeed("16 GT/s\n"), 16e9);
  EXPECT_DOUBLE_EQ(*ParsePcieSpeed("2.5 GT/s PCIe"), 2.5e9);
  EXPECT_DOUBLE_EQ(*ParsePcieSpeed("32.0 GT/s PCIe"), 32e9);
  EXPECT_FALSE(ParsePcieSpeed("Unknown\n"));
  EXPECT_FALSE(ParsePcieSpeed("16.0 Gb/s"));
  EXPECT_FALSE(ParsePcieSpeed(""));
}

TEST(ParseAerTotal, FindsTheTotalLine) {
  EXPECT_EQ(ParseAerTotal("RxErr 1\nBadTLP 2\nTOTAL_ERR_COR 3\n"), 3u);
  EXPECT_EQ(ParseAerTotal("Undefined 0\nTOTAL_ERR_NONFATAL 0\n"), 0u);
  EXPECT_FALSE(ParseAerTotal("RxErr 1\n"));
  EXPECT_FALSE(ParseAerTotal("TOTAL_ERR_FATAL x\n"));
}

TEST(Gid, RecognisesValidAndEmptyEntries) {
  EXPECT_TRUE(IsValidGid("fe80:0000:0000:0000:bace:f6ff:fea1:b2c4\n"));
  EXPECT_FALSE(IsEmptyGid("fe80:0000:0000:0000:bace:f6ff:fea1:b2c4\n"));
  EXPECT_TRUE(IsEmptyGid("0000:0000:0000:0000:0000:0000:0000:0000\n"));
  EXPECT_TRUE(IsEmptyGid("fe80:0000:0000:0000:0000:0000:0000:0000"));
  EXPECT_FALSE(IsValidGid("fe80::1"));
  EXPECT_FALSE(IsValidGid("zz80:0000:0000:0000:bace:f6ff:fea1:b2c4"));
}

}  // namespace
}  // namespace rdma_exporter
