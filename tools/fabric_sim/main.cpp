// rdma_fabric_sim: writes and animates a fake RDMA sysfs tree. See README.md.
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "fabric_sim.h"

namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) {
  g_stop.store(true);
}

// Reads "SCENARIO [FAULT_DEVICE]" from the first line of the scenario file; false if the file
// is missing or empty (then nothing changes).
bool ReadScenarioFile(const std::string& path, std::string* scenario, std::string* device) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  std::istringstream words(line);
  scenario->clear();
  device->clear();
  words >> *scenario >> *device;
  return !scenario->empty();
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(SimUsage().c_str(), stdout);
      return 0;
    }
  }
  SimConfig config;
  int ticks = -1;
  std::string error;
  if (!ParseSimArgs(argc, argv, &config, &ticks, &error)) {
    std::fprintf(stderr, "rdma_fabric_sim: %s\n", error.c_str());
    return 2;
  }

  // The simulator keeps files that change every tick open; allow it plenty of fds.
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 65536 : std::min<rlim_t>(rl.rlim_max, 65536);
    setrlimit(RLIMIT_NOFILE, &rl);
  }

  FabricSim sim(config);
  if (!sim.WriteInitialTree(&error)) {
    std::fprintf(stderr, "rdma_fabric_sim: %s\n", error.c_str());
    return 1;
  }
  if (ticks >= 0) {
    for (int i = 0; i < ticks; ++i) {
      if (!sim.Tick(&error)) {
        std::fprintf(stderr, "rdma_fabric_sim: tick %d: %s\n", i + 1, error.c_str());
        return 1;
      }
    }
    return 0;
  }

  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const std::string fault = sim.fault_device();
  std::fprintf(stderr, "rdma_fabric_sim: serving %s and %s (scenario %s%s%s, interval %gs)\n",
               sim.sysfs_root().c_str(), sim.fixtures_root().c_str(), config.scenario.c_str(),
               config.scenario == "healthy" || fault.empty() ? "" : " on ",
               config.scenario == "healthy" || fault.empty() ? "" : fault.c_str(),
               config.interval_seconds);
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(config.interval_seconds));
  auto next = Clock::now() + interval;
  std::string applied = config.scenario + " ";  // scenario-file content last acted on
  while (!g_stop.load()) {
    // Sleep in short slices so a signal ends the run promptly.
    const auto now = Clock::now();
    if (now < next) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(next - now, std::chrono::milliseconds(50)));
      continue;
    }
    if (!config.scenario_file.empty()) {
      // A changed file switches the scenario; a bad one is reported once and ignored.
      std::string scenario, device;
      if (ReadScenarioFile(config.scenario_file, &scenario, &device) &&
          scenario + " " + device != applied) {
        applied = scenario + " " + device;
        if (sim.SetScenario(scenario, device, &error)) {
          std::fprintf(stderr, "rdma_fabric_sim: scenario %s%s%s\n", scenario.c_str(),
                       sim.fault_device().empty() ? "" : " on ", sim.fault_device().c_str());
        } else {
          std::fprintf(stderr, "rdma_fabric_sim: %s: %s\n", config.scenario_file.c_str(),
                       error.c_str());
        }
      }
    }
    if (!sim.Tick(&error)) {
      std::fprintf(stderr, "rdma_fabric_sim: tick %llu: %s\n",
                   static_cast<unsigned long long>(sim.ticks()), error.c_str());
      return 1;
    }
    next += interval;
    if (next < Clock::now()) next = Clock::now() + interval;  // fell behind: don't burst
  }
  std::fprintf(stderr, "rdma_fabric_sim: stopped after %llu ticks\n",
               static_cast<unsigned long long>(sim.ticks()));
  return 0;
}
