#include "rdma_exporter/port_state.h"

#include <array>

namespace rdma_exporter {
namespace {

// Index of value in a table of size n, or -1: a double is compared before it is converted, since
// converting an out-of-range double to int is undefined behaviour.
int TableIndex(double value, int first, int n) {
  if (!(value >= first && value < first + n)) return -1;  // also false for NaN
  int i = static_cast<int>(value);
  return i == value ? i - first : -1;
}

}  // namespace

std::string_view PortStateName(double value) {
  static constexpr std::array<std::string_view, 6> kNames = {"NOP",   "DOWN",   "INIT",
                                                             "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  int i = TableIndex(value, 0, kNames.size());
  return i < 0 ? "UNKNOWN" : kNames[i];
}

std::string_view PhysStateName(double value) {
  static constexpr std::array<std::string_view, 7> kNames = {
      "Sleep",  "Polling",           "Disabled", "PortConfigurationTraining",
      "LinkUp", "LinkErrorRecovery", "PhyTest"};
  int i = TableIndex(value, 1, kNames.size());
  return i < 0 ? "UNKNOWN" : kNames[i];
}

}  // namespace rdma_exporter
