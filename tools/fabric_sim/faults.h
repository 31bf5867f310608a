// Fault injection: applies the scenario table (scenarios.h) to the devices of a run — the fault
// device is resolved, its link goes down or flaps, its counters rise or stick, its RoCE
// configuration goes wrong, it vanishes from sysfs and comes back, or (churn) its files turn
// malformed.
#pragma once

#include <string>

#include "model.h"
#include "scenarios.h"

namespace rdma_fabric_sim {

// Sets s.fault_index from s.cfg.fault_device ("mlx5_N" and "rxeN" both name device N). A
// RoCE-only scenario moves an InfiniBand (or VF) fault device to the first RoCE PF. False if
// the scenario has effects and the device does not exist.
bool ResolveFault(SimState& s, std::string* error);

// The effects of the scenario that hold at tick 0 (initial values, frozen counters), if `d` is
// the fault device.
void ApplyInitialSets(SimState& s, Device& d);

// Puts the fault device `f` in the link, PCIe and RoCE configuration state `fs`.
void ApplyFaultState(SimState& s, Device& f, const FaultState& fs);

// Returns a vanished device and its VFs as after a driver re-probe (counters from zero).
void RestoreDevice(SimState& s, Device& d);

// The start of a tick (after s.tick was advanced): the fault device vanishes or comes back,
// and takes the link/PCIe/configuration state the table gives for this tick.
bool ApplyFaultTick(SimState& s, std::string* error);

// The counter effects of this tick (kAdd, kAddRate, kSet), after the healthy traffic.
void ApplyCounterEffects(SimState& s);

// The "churn" scenario's steps that the renderer undoes on the next tick: malformed files
// (rewritten with good content next tick, as the writer sees the content differ) and the VFs
// and the last port removed (re-created when the device returns). Runs after rendering.
bool Churn(SimState& s, std::string* error);

// Clears the fault of device `old_fault` (-1 = none) when the scenario is switched: the device
// back if it vanished, link up, full width, PCIe trained, healthy RoCE configuration, no
// frozen counters.
void ClearFault(SimState& s, int old_fault);

}  // namespace rdma_fabric_sim
