// The IBTA port states of ports/<N>/state and phys_state, with one range-checked name table
// used by the collectors' HELP text, the landing page and the doctor.
#pragma once

#include <string_view>

namespace rdma_exporter {

// ports/<N>/state: "4: ACTIVE".
enum class PortState { kNop = 0, kDown = 1, kInit = 2, kArmed = 3, kActive = 4, kActiveDefer = 5 };
// ports/<N>/phys_state: "5: LinkUp".
enum class PhysState {
  kSleep = 1,
  kPolling = 2,
  kDisabled = 3,
  kTraining = 4,
  kLinkUp = 5,
  kLinkErrorRecovery = 6,
  kPhyTest = 7,
};

// The kernel's name of a state value ("ACTIVE"), or "UNKNOWN" for any value outside the table
// (negative, fractional, NaN, 4294967295: no cast of an out-of-range double happens).
std::string_view PortStateName(double value);
// "LinkUp", ... or "UNKNOWN".
std::string_view PhysStateName(double value);

}  // namespace rdma_exporter
