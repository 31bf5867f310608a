// Text helpers shared by the simulator's renderers: printf into std::string and the one-value
// sysfs file bodies ("value\n").
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace rdma_fabric_sim {

template <typename... Args>
std::string Fmt(const char* fmt, Args... args) {
  char buf[256];
  int n = std::snprintf(buf, sizeof(buf), fmt, args...);
  if (n < 0) return std::string();
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), fmt, args...);
  out.resize(static_cast<size_t>(n));
  return out;
}

inline std::string Line(const std::string& s) {
  return s + "\n";
}
inline std::string Num(uint64_t v) {
  return std::to_string(v) + "\n";
}
inline std::string SNum(int64_t v) {
  return std::to_string(v) + "\n";
}

}  // namespace rdma_fabric_sim
