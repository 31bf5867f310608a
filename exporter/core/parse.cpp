#include "rdma_exporter/parse.h"

#include <charconv>
#include <cmath>

namespace rdma_exporter {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

std::optional<double> ParseDouble(std::string_view s) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back()))
    s.remove_suffix(1);
  return s;
}

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<uint64_t> ParseU64(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseI64(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::vector<uint8_t> ParseHexBytes(std::string_view s) {
  std::vector<uint8_t> out;
  int high = -1;
  for (char c : s) {
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (v < 0) continue;
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<uint8_t>(high << 4 | v));
      high = -1;
    }
  }
  return out;
}

std::optional<uint64_t> ParseHex(std::string_view s) {
  s = Trim(s);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty()) return std::nullopt;
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<NumberedName> ParseNumberedName(std::string_view s) {
  s = Trim(s);
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  unsigned number = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + colon, number);
  if (ec != std::errc() || ptr != s.data() + colon || colon == 0) return std::nullopt;
  return NumberedName{number, Trim(s.substr(colon + 1))};
}

std::optional<PortRate> ParsePortRate(std::string_view s) {
  // "<rate> Gb/sec (<width>X <speed>)"; kernels before the SDR name (and unknown extended
  // speeds, e.g. from libibumad's sysfs emulation) print no speed: "10 Gb/sec (4X)".
  s = Trim(s);
  size_t space = s.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto gbit = ParseDouble(s.substr(0, space));
  if (!gbit || *gbit < 0) return std::nullopt;
  std::string_view rest = s.substr(space + 1);
  constexpr std::string_view kUnit = "Gb/sec (";
  if (rest.substr(0, kUnit.size()) != kUnit || rest.back() != ')') return std::nullopt;
  rest = rest.substr(kUnit.size(), rest.size() - kUnit.size() - 1);  // "4X EDR" or "4X"
  size_t x = rest.find('X');
  if (x == std::string_view::npos || x == 0) return std::nullopt;
  unsigned width = 0;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + x, width);
  if (ec != std::errc() || ptr != rest.data() + x || width == 0) return std::nullopt;
  std::string_view speed;
  if (x + 1 < rest.size()) {
    if (rest[x + 1] != ' ') return std::nullopt;
    speed = rest.substr(x + 2);
    if (speed.empty()) return std::nullopt;
    for (char c : speed) {
      if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return std::nullopt;
    }
  } else if (*gbit == 2.5 * width) {
    speed = "SDR";  // the only speed those kernels left unnamed at 2.5 Gb/s per lane
  }
  return PortRate{*gbit, width, speed};
}

std::optional<double> ParsePcieSpeed(std::string_view s) {
  // "16.0 GT/s PCIe" (kernel >= 5.7) or "16 GT/s" (older); "Unknown" when not reported.
  s = Trim(s);
  size_t space = s.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::string_view unit = s.substr(space + 1);
  if (unit != "GT/s" && unit != "GT/s PCIe") return std::nullopt;
  auto gt = ParseDouble(s.substr(0, space));
  if (!gt || *gt <= 0) return std::nullopt;
  return *gt * 1e9;
}

std::optional<uint64_t> ParseAerTotal(std::string_view content) {
  // Lines "<Name> <count>"; the total is the line starting with TOTAL_ERR_.
  while (!content.empty()) {
    size_t nl = content.find('\n');
    std::string_view line = content.substr(0, nl);
    content = nl == std::string_view::npos ? std::string_view() : content.substr(nl + 1);
    if (line.substr(0, 10) != "TOTAL_ERR_") continue;
    size_t space = line.rfind(' ');
    if (space == std::string_view::npos) return std::nullopt;
    return ParseU64(line.substr(space + 1));
  }
  return std::nullopt;
}

bool IsValidGid(std::string_view gid) {
  gid = Trim(gid);
  if (gid.size() != 39) return false;
  for (size_t i = 0; i < gid.size(); ++i) {
    char c = gid[i];
    if (i % 5 == 4) {
      if (c != ':') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

bool IsEmptyGid(std::string_view gid) {
  gid = Trim(gid);
  return gid == "0000:0000:0000:0000:0000:0000:0000:0000" ||
         gid == "fe80:0000:0000:0000:0000:0000:0000:0000";
}

std::optional<std::chrono::milliseconds> ParseDuration(const std::string& text) {
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) return std::nullopt;
  double total_ms = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end) {
    double number = 0;
    auto [next, ec] = std::from_chars(p, end, number);
    if (ec != std::errc() || next == p || number < 0) return std::nullopt;
    p = next;
    const char* unit_start = p;
    while (p < end && ((*p >= 'a' && *p <= 'z')))
      ++p;
    std::string_view unit(unit_start, static_cast<size_t>(p - unit_start));
    if (unit == "ms") {
      total_ms += number;
    } else if (unit == "s") {
      total_ms += number * 1000;
    } else if (unit == "m") {
      total_ms += number * 60000;
    } else if (unit == "h") {
      total_ms += number * 3600000;
    } else {
      return std::nullopt;
    }
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total_ms));
}

}  // namespace rdma_exporter
