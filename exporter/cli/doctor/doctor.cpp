// doctor: the node checklist of the deployment guide (shared/seed) and the NCCL field guide, one
// PASS/WARN/FAIL line per check. Everything it knows about devices comes from the exporter's
// collectors (the same samples /metrics serves, roce_config's checks included); only the kernel
// modules, /dev/infiniband and the process limits are looked at directly.
#include <charconv>
#include <chrono>
#include <cmath>
#include <thread>

#include "doctor_internal.h"

namespace rdma_exporter {
namespace {

using doctor::Check;
using doctor::NodeView;
using doctor::Status;

// Without --nccl.ib-tc, the environment's NCCL_IB_TC (an init container or a debug shell in the
// job's pod has the job's): taken into *options, with where it came from in *origin, or why it
// was not in *problem.
void NcclIbTcFromEnvironment(const ProcessEnv& env, CliOptions* options, std::string* origin,
                             std::string* problem) {
  if (options->collector_options.nccl_ib_tc || !env.nccl_ib_tc) return;
  const std::string& text = *env.nccl_ib_tc;
  unsigned tc = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), tc);
  if (ec == std::errc() && ptr == text.data() + text.size() && tc <= 255) {
    options->collector_options.nccl_ib_tc = static_cast<int>(tc);
    *origin = " (NCCL_IB_TC=" + text + " from the environment)";
  } else {
    *problem = "NCCL_IB_TC=\"" + text + "\" of the environment is not 0..255; give --nccl.ib-tc";
  }
}

// The doctor's own checks first (the driver stack, what this process may use), then the
// snapshot checks, in the report's order.
std::vector<Check> RunChecks(NodeView& view) {
  using CheckFn = Check (*)(NodeView&);
  static const std::pair<const char*, CheckFn> kFirst[] = {
      {"kernel_modules", doctor::KernelModules},   {"driver_firmware", doctor::DriverFirmware},
      {"uverbs_devices", doctor::UverbsDevices},   {"memlock", doctor::Memlock},
      {"devices_present", doctor::DevicesPresent},
  };
  std::vector<Check> checks;
  for (const auto& [name, fn] : kFirst) {
    try {
      checks.push_back(fn(view));
    } catch (const std::exception& e) {
      // A check never takes the others down: whatever it tripped on is its reason.
      checks.push_back(Check{name, Status::kFail, std::string("check failed: ") + e.what(), {}});
    }
  }
  for (auto& check : doctor::RunSnapshotChecks(view))
    checks.push_back(std::move(check));
  return checks;
}

}  // namespace

int Doctor(const CliOptions& given, const ProcessEnv& env, std::ostream& out, std::ostream& err) {
  CliOptions options = given;
  std::string tc_origin, tc_problem;
  NcclIbTcFromEnvironment(env, &options, &tc_origin, &tc_problem);
  CliNode node(options);
  if (!node.Discover(err)) return 1;
  auto collectors =
      node.MakeCollectors({"device", "port", "counters", "hw_counters", "pcie", "gid", "netdev",
                           "ethtool", "dcb", "ecn", "roce_config", "verbs"});
  SampleIndex before(node.Collect(collectors));
  double sample = 0;
  std::optional<SampleIndex> after;
  if (options.sample_seconds > 0 && !node.inventory().devices.empty()) {
    auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(options.sample_seconds));
    after.emplace(node.Collect(collectors));
    sample = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Reported rounded: the window is what was asked for, give or take the collection.
    sample = std::round(sample * 10) / 10;
  }
  doctor::SnapshotView snapshot{
      node.inventory(),
      after ? *after : before,
      before,
      sample,
      options.collector_options.nccl_ib_tc,
      options.collector_options.roce_min_mtu,
      tc_origin,
      tc_problem,
      [&node](const DeviceInfo& d) { return doctor::IsRxeDevice(node, d); }};
  NodeView view(std::move(snapshot), options, env, node);
  std::vector<Check> checks = RunChecks(view);
  doctor::PrintReport(checks, options.json, out);
  for (const auto& c : checks) {
    if (c.status == Status::kFail) return 1;
  }
  return 0;
}

}  // namespace rdma_exporter
