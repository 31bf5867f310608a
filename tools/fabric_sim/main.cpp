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
#include "sim_kubelet.h"

namespace rdma_fabric_sim {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) {
  g_stop.store(true);
}

void StopOnSigintAndSigterm() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

// The simulator keeps files that change every tick open; allow it plenty of fds.
void RaiseFdLimit() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 65536 : std::min<rlim_t>(rl.rlim_max, 65536);
    setrlimit(RLIMIT_NOFILE, &rl);
  }
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

// --ticks N: N ticks back to back, no pacing.
int RunTicks(FabricSim& sim, int ticks) {
  std::string error;
  for (int i = 0; i < ticks; ++i) {
    if (!sim.Tick(&error)) {
      std::fprintf(stderr, "rdma_fabric_sim: tick %d: %s\n", i + 1, error.c_str());
      return 1;
    }
  }
  return 0;
}

// A changed scenario file switches the scenario; a bad one is reported once and ignored.
// `applied` is the file content last acted on.
void FollowScenarioFile(FabricSim& sim, const std::string& path, std::string* applied) {
  std::string scenario, device, error;
  if (!ReadScenarioFile(path, &scenario, &device) || scenario + " " + device == *applied) return;
  *applied = scenario + " " + device;
  if (sim.SetScenario(scenario, device, &error)) {
    std::fprintf(stderr, "rdma_fabric_sim: scenario %s%s%s\n", scenario.c_str(),
                 sim.fault_device().empty() ? "" : " on ", sim.fault_device().c_str());
  } else {
    std::fprintf(stderr, "rdma_fabric_sim: %s: %s\n", path.c_str(), error.c_str());
  }
}

// No --ticks: one tick per interval until SIGINT/SIGTERM.
int Serve(FabricSim& sim) {
  const SimConfig config = sim.config();  // a copy: SetScenario changes the sim's
  StopOnSigintAndSigterm();
  // Pods for the exporter's pod attribution (--collector.pod_resources.socket), on request: the
  // fabric still runs if the socket cannot be served (a path too long for a unix socket).
  SimKubelet kubelet;
  if (!config.kubelet_socket.empty()) {
    std::string kubelet_error;
    if (kubelet.Start(config.kubelet_socket, sim.sysfs_root(), &kubelet_error)) {
      std::fprintf(stderr, "rdma_fabric_sim: kubelet pod-resources API on %s\n",
                   config.kubelet_socket.c_str());
    } else {
      std::fprintf(stderr, "rdma_fabric_sim: %s\n", kubelet_error.c_str());
    }
  }
  const std::string fault = sim.fault_device();
  const bool show_fault = config.scenario != "healthy" && !fault.empty();
  std::fprintf(stderr, "rdma_fabric_sim: serving %s and %s (scenario %s%s%s, interval %gs)\n",
               sim.sysfs_root().c_str(), sim.fixtures_root().c_str(), config.scenario.c_str(),
               show_fault ? " on " : "", show_fault ? fault.c_str() : "", config.interval_seconds);
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(config.interval_seconds));
  auto next = Clock::now() + interval;
  std::string applied = config.scenario + " ";
  std::string error;
  while (!g_stop.load()) {
    // Sleep in short slices so a signal ends the run promptly.
    const auto now = Clock::now();
    if (now < next) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(next - now, std::chrono::milliseconds(50)));
      continue;
    }
    if (!config.scenario_file.empty()) FollowScenarioFile(sim, config.scenario_file, &applied);
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

int Main(int argc, char** argv) {
  if (WantsHelp(argc, argv)) {
    std::fputs(SimUsage().c_str(), stdout);
    return 0;
  }
  SimConfig config;
  int ticks = -1;
  std::string error;
  if (!ParseSimArgs(argc, argv, &config, &ticks, &error)) {
    std::fprintf(stderr, "rdma_fabric_sim: %s\n", error.c_str());
    return 2;
  }
  RaiseFdLimit();
  FabricSim sim(config);
  if (!sim.WriteInitialTree(&error)) {
    std::fprintf(stderr, "rdma_fabric_sim: %s\n", error.c_str());
    return 1;
  }
  return ticks >= 0 ? RunTicks(sim, ticks) : Serve(sim);
}

}  // namespace
}  // namespace rdma_fabric_sim

int main(int argc, char** argv) {
  return rdma_fabric_sim::Main(argc, argv);
}
