// FabricSim: one run of the simulator. The work is in the model (model.h), the counter
// model (counters.h), the scenario table (scenarios.h), fault injection (faults.h) and the two
// renderers (sysfs_tree.h, fixtures.h); this file puts them in order per tick.
#include "fabric_sim.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "counters.h"
#include "faults.h"
#include "fixtures.h"
#include "model.h"
#include "scenarios.h"
#include "sysfs_tree.h"

namespace rdma_fabric_sim {

namespace fs = std::filesystem;

namespace {

// Rewrites every file of the present devices (only changed content reaches the disk).
bool RenderAll(SimState& s, std::string* error) {
  for (const Device& d : s.devices) {
    if (!d.present) continue;
    if (!RenderDeviceSysfs(s, d, error)) return false;
    for (const Port& p : d.ports) {
      if (!RenderPortSysfs(s, d, p, error)) return false;
      if (!RenderPortFixtures(s, d, p, error)) return false;
    }
    for (const Port& p : d.slaves) {
      if (!RenderSlaveSysfs(s, d, p, error)) return false;
      if (!RenderPortFixtures(s, d, p, error)) return false;
    }
  }
  return true;
}

bool ValidateConfig(const SimConfig& c, std::string* error) {
  if (c.root.empty()) {
    *error = "root directory is empty";
    return false;
  }
  if (c.devices < 1 || c.ports < 1 || c.vfs < 0 || c.lag < 0 || c.e810 < 0 || c.gids_per_port < 1 ||
      !(c.interval_seconds > 0)) {
    *error = "invalid configuration (devices/ports >= 1, vfs >= 0, gids >= 1, interval > 0)";
    return false;
  }
  if (c.devices > 256 || c.ports > 64 || c.vfs > 64 || c.lag > 8 || c.e810 > 8) {
    *error = "configuration too large (devices <= 256, ports <= 64, vfs <= 64, lag/e810 <= 8)";
    return false;
  }
  return true;
}

// The devices and the fault at tick 0, before anything is written.
bool BuildTickZero(SimState& s, std::string* error) {
  s.scenario = FindScenario(s.cfg.scenario);
  if (s.scenario == nullptr) {
    *error = "unknown scenario '" + s.cfg.scenario + "'";
    return false;
  }
  s.tick = 0;
  s.devices = BuildDevices(s.cfg);
  if (!ResolveFault(s, error)) return false;
  for (Device& d : s.devices)
    ApplyInitialSets(s, d);
  if (s.fault_index >= 0) {  // table state at tick 0 (configuration faults start here)
    ApplyFaultState(s, s.fault(), EvalFault(s.scenario, 0));
  }
  return true;
}

// One tick: the fault's state, healthy traffic, the fault's counter effects, the files, churn.
bool Step(SimState& s, std::string* error) {
  ++s.tick;
  if (!ApplyFaultTick(s, error)) return false;
  for (Device& d : s.devices) {
    if (d.present) DeviceTraffic(s.cfg, d);
  }
  ApplyCounterEffects(s);
  if (!RenderAll(s, error)) return false;
  return Churn(s, error);
}

}  // namespace

FabricSim::FabricSim(SimConfig config) : state_(std::make_unique<SimState>()) {
  state_->cfg = std::move(config);
}

FabricSim::~FabricSim() = default;

const SimConfig& FabricSim::config() const {
  return state_->cfg;
}
std::string FabricSim::sysfs_root() const {
  return state_->cfg.root + "/sys";
}
uint64_t FabricSim::ticks() const {
  return state_->tick;
}
std::string FabricSim::fault_device() const {
  if (state_->fault_index < 0) return std::string();
  return state_->fault().name;
}
std::string FabricSim::fixtures_root() const {
  return state_->cfg.root + "/fixtures";
}

bool FabricSim::WriteInitialTree(std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  SimState& s = *state_;
  if (!ValidateConfig(s.cfg, error) || !BuildTickZero(s, error)) return false;
  std::error_code ec;
  fs::create_directories(s.cfg.root, ec);
  if (ec) {
    *error = "mkdir " + s.cfg.root + ": " + ec.message();
    return false;
  }
  if (!PrepareSysfsRoot(s, error) || !PrepareFixturesRoot(s, error) || !RenderAll(s, error)) {
    return false;
  }
  s.initialized = true;
  return true;
}

bool FabricSim::SetScenario(const std::string& name, const std::string& fault_device,
                            std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  SimState& s = *state_;
  const Scenario* next = FindScenario(name);
  if (next == nullptr) {
    *error = "unknown scenario '" + name + "'";
    return false;
  }
  if (!s.initialized) {
    *error = "SetScenario() called before WriteInitialTree()";
    return false;
  }
  // Resolve the new fault device first, so that a bad name changes nothing.
  const Scenario* old_scenario = s.scenario;
  const int old_fault = s.fault_index;
  const std::string old_device = s.cfg.fault_device;
  s.scenario = next;
  if (!fault_device.empty()) s.cfg.fault_device = fault_device;
  if (!ResolveFault(s, error)) {
    s.scenario = old_scenario;
    s.fault_index = old_fault;
    s.cfg.fault_device = old_device;
    return false;
  }
  // Clear the old fault: what the healthy table state says, applied as a tick would.
  ClearFault(s, old_fault);
  s.cfg.scenario = name;
  s.scenario_start = s.tick;
  for (Device& d : s.devices)
    ApplyInitialSets(s, d);
  return true;
}

bool FabricSim::Tick(std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  if (!state_->initialized) {
    *error = "Tick() called before WriteInitialTree()";
    return false;
  }
  return Step(*state_, error);
}

}  // namespace rdma_fabric_sim
