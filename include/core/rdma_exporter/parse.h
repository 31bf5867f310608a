// Parsers for the text formats of sysfs files. All are allocation-free where they can be and
// return std::nullopt for anything they do not fully understand (garbage, empty, "N/A (no PMA)").
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_exporter {

// Drops trailing whitespace/newlines and leading whitespace.
std::string_view Trim(std::string_view s);
// The last component of a path or link target: "../../0000:3b:00.0" -> "0000:3b:00.0".
std::string_view Basename(std::string_view path);
// "123\n" -> 123. Rejects signs, garbage, empty and values that overflow 64 bits.
std::optional<uint64_t> ParseU64(std::string_view s);
// "-1\n" -> -1, "0" -> 0.
std::optional<int64_t> ParseI64(std::string_view s);
// "0x00010000" -> 65536.
std::optional<uint64_t> ParseHex(std::string_view s);
// Hex digits as bytes, anything else (whitespace, line breaks) skipped: "88cc 02\n07" ->
// {0x88, 0xcc, 0x02, 0x07}; an odd last digit is dropped. The fixture files of frames and MADs.
std::vector<uint8_t> ParseHexBytes(std::string_view s);

// "4: ACTIVE" -> {4, "ACTIVE"}; "5: LinkUp"; "1: CA".
struct NumberedName {
  unsigned number = 0;
  std::string_view name;
};
std::optional<NumberedName> ParseNumberedName(std::string_view s);

// "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)", "25 Gb/sec (1X EDR)", and the older form
// without a speed name, "10 Gb/sec (4X)" (SDR) or "56 Gb/sec (4X)" (speed not named).
struct PortRate {
  double gbit_per_second = 0;  // as printed
  unsigned width = 0;          // lanes
  std::string_view speed;      // SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR; empty = not named
};
std::optional<PortRate> ParsePortRate(std::string_view s);

// "16.0 GT/s PCIe", "16 GT/s", "2.5 GT/s PCIe" -> transfers per second (16e9). "Unknown" -> none.
std::optional<double> ParsePcieSpeed(std::string_view s);

// Finds "TOTAL_ERR_COR 12" style totals in an aer_dev_* file.
std::optional<uint64_t> ParseAerTotal(std::string_view content);

// A GID as the kernel prints it: 8 groups of 4 hex digits. True for the all-zero GID and for a
// bare link-local prefix fe80:0000:0000:0000:0000:0000:0000:0000 (show_gids skips both).
bool IsEmptyGid(std::string_view gid);
bool IsValidGid(std::string_view gid);

// Go-style duration: "10s", "500ms", "1m30s", "0".
std::optional<std::chrono::milliseconds> ParseDuration(const std::string& text);

}  // namespace rdma_exporter
