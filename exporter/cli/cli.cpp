#include "rdma_exporter/cli.h"

#include <sys/resource.h>
#include <sys/utsname.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <span>

#include "rdma_exporter/flag_spec.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

// "2", "0.5", "2s", "500ms" -> seconds.
std::optional<double> ParseSeconds(const std::string& text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!text.empty() && ec == std::errc() && ptr == text.data() + text.size()) {
    if (!std::isfinite(value) || value < 0) return std::nullopt;
    return value;
  }
  auto d = ParseDuration(text);
  if (!d) return std::nullopt;
  return static_cast<double>(d->count()) / 1000.0;
}

// --interval and --sample: seconds up to an hour; a rate needs a positive interval, the doctor's
// sample may be 0 (one read).
FlagSpec<CliOptions>::Setter SetSeconds(std::string_view name, bool zero_ok,
                                        std::function<void(double, CliOptions*)> store) {
  return [name, zero_ok, store](const std::string& value, CliOptions* options) {
    auto seconds = ParseSeconds(value);
    if (!seconds || *seconds > 3600 || (!zero_ok && *seconds <= 0)) {
      return "invalid --" + std::string(name) + " \"" + value + "\" (seconds, e.g. 1, 0.5, 500ms)";
    }
    store(*seconds, options);
    return std::string();
  };
}

using CliFlags = std::vector<FlagSpec<CliOptions>>;

// The flags every subcommand takes, first in its usage.
CliFlags CommonFlags() {
  return {
      Share<CliOptions>(kPathSysfsFlag, FlagAudience::kSubcommand),
      Share<CliOptions>(kPathFixturesFlag, FlagAudience::kSubcommand),
      Share<CliOptions>(kDeviceIncludeFlag, FlagAudience::kSubcommand),
      Share<CliOptions>(kDeviceExcludeFlag, FlagAudience::kSubcommand),
      BoolFlag<CliOptions>("json", "Machine-readable output.", &CliOptions::json,
                           FlagAudience::kSubcommand),
  };
}

CliFlags ShowCountersFlags() {
  return {
      {"interval", "S", "Print per-second rates over S seconds (1, 500ms).", true,
       SetSeconds("interval", false,
                  [](double s, CliOptions* options) { options->interval_seconds = s; })},
      {"count", "N",
       "With --interval: N tables, one per interval (default 1, 0 = until\ninterrupted).", true,
       [](const std::string& value, CliOptions* options) {
         auto count = ParseUnsigned(value);
         if (!count) return "invalid --count \"" + value + "\" (a number of tables, 0 = no end)";
         options->count = *count;
         return std::string();
       }},
  };
}

CliFlags Ibdev2NetdevFlags() {
  auto verbose =
      BoolFlag<CliOptions>("verbose", "PCI address, HCA type, part number, firmware, port state.",
                           &CliOptions::verbose, FlagAudience::kSubcommand);
  verbose.short_name = 'v';
  return {verbose};
}

// doctor and status: the window between their two collections.
FlagSpec<CliOptions> SampleFlag() {
  return {"sample", "2s",
          "Time between two collections: error counters must not rise over it (doctor), rates "
          "are taken over it (status); 0 = one collection.",
          true, SetSeconds("sample", true, [](double s, CliOptions* options) {
            options->sample_seconds = s;
          })};
}

CliFlags DoctorFlags() {
  return {
      Share<CliOptions>(kNcclIbTcFlag, FlagAudience::kSubcommand),
      Share<CliOptions>(kRoceMinMtuFlag, FlagAudience::kSubcommand),
      {"path.dev", "/dev", "Where /dev/infiniband/uverbs* are looked for.", true,
       [](const std::string& value, CliOptions* options) {
         if (value.empty()) return std::string("--path.dev must not be empty");
         options->dev_root = value;
         return std::string();
       }},
      SampleFlag(),
  };
}

CliFlags StatusFlags() {
  return {
      Share<CliOptions>(kNcclIbTcFlag, FlagAudience::kSubcommand),
      Share<CliOptions>(kRoceMinMtuFlag, FlagAudience::kSubcommand),
      SampleFlag(),
  };
}

struct Command {
  std::string_view name;
  std::string_view synopsis;
  std::string_view help;
  bool takes_devices;       // positional device names
  CliFlags (*own_flags)();  // after CommonFlags()
  CliFlags flags() const {
    CliFlags all = CommonFlags();
    for (auto& flag : own_flags())
      all.push_back(std::move(flag));
    return all;
  }
};

const Command kCommands[] = {
    {"show-gids", "show-gids [DEV...] [--json]",
     "The GID table of every port as MLNX_OFED's show_gids prints it (zero and bare fe80:: "
     "entries\n  skipped), then n_gids_found=N.",
     true, [] { return CliFlags(); }},
    {"show-counters", "show-counters [DEV...] [--interval=S [--count=N]] [--json]",
     "Every PMA counter (data counters in bytes, saturated ones marked) and every hw counter "
     "of each\n  port. With --interval, per-second rates between two reads S seconds apart; "
     "--count=N\n  repeats that N times (0: until interrupted), like watch.",
     true, ShowCountersFlags},
    {"ibdev2netdev", "ibdev2netdev [-v] [--json]",
     "The netdev of each RDMA port and its link (mlx5_0 port 1 ==> ens1f0np0 (Up)); -v adds "
     "the PCI\n  address, HCA type, part number and name (PCI VPD, root only; else the board "
     "id), firmware\n  and port state. Works for rxe too.",
     false, Ibdev2NetdevFlags},
    {"doctor",
     "doctor [--nccl.ib-tc=N] [--roce.min-mtu=4200] [--sample=S] [--path.dev=/dev] [--json]",
     "Node checklist for RDMA/NCCL: one PASS/WARN/FAIL line per check. Exit 0 when nothing "
     "fails,\n  1 when a check fails (usable as an init container or node health check).\n\n"
     "  Checks: kernel_modules, driver_firmware, uverbs_devices, memlock (of this process),\n"
     "  devices_present, port_active, link_layer, port_rate_uniform, pcie_link, roce_v2_gid,\n"
     "  netdev_mtu, pfc, trust_dscp, ecn, pfc_storm, error_counters.",
     false, DoctorFlags},
    {"status", "status [--nccl.ib-tc=N] [--roce.min-mtu=4200] [--sample=S] [--json]",
     "The node page's view (/ and /api/v1/status of a running exporter) from two collections "
     "S\n  seconds apart: one line per port with its level (by the alert rules' thresholds), "
     "state,\n  rate, traffic, pause and findings, then the checks. --json prints "
     "/api/v1/status's\n  document. Exit 1 when the node is critical.",
     false, StatusFlags},
};

// Flag names and help in the subcommands' usage are aligned to this column.
constexpr size_t kUsageColumn = 28;

const Command* FindCommand(std::string_view name) {
  for (const auto& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string CommandUsage(const Command& c) {
  return "usage: rdma_exporter " + std::string(c.synopsis) + "\n\n  " + std::string(c.help) +
         "\n\nFlags:\n" + FlagUsage(c.flags(), kUsageColumn);
}

std::string EscapeRegex(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace

bool IsCliCommand(std::string_view arg) {
  return FindCommand(arg) != nullptr;
}

bool ParseCliArgs(const std::vector<std::string>& args, CliOptions* options, std::string* error) {
  const Command* command = args.empty() ? nullptr : FindCommand(args[0]);
  if (command == nullptr) {
    *error = "unknown subcommand";
    return false;
  }
  const std::string& cmd = args[0];
  options->command = cmd;
  FlagGrammar<CliOptions> grammar;
  grammar.unknown_flag_hint = " (see rdma_exporter " + cmd + " --help)";
  grammar.positional = [&](const std::string& arg, CliOptions* target) {
    if (arg.rfind("-", 0) == 0 || !command->takes_devices) {
      return "unexpected argument \"" + arg + "\"" + grammar.unknown_flag_hint;
    }
    target->devices.push_back(arg);
    return std::string();
  };
  *error = ParseFlagArgs(command->flags(), grammar, std::span(args).subspan(1), options);
  if (error->empty() && options->count != 1 && !options->interval_seconds) {
    *error = "--count needs --interval";
  }
  if (error->empty()) return true;
  *error = cmd + ": " + *error;
  return false;
}

std::string SubcommandFlagsMarkdown() {
  // One row per flag, with the commands that take it.
  std::vector<std::pair<FlagSpec<CliOptions>, std::string>> rows;
  for (const auto& command : kCommands) {
    for (auto& flag : command.flags()) {
      auto row = std::find_if(rows.begin(), rows.end(),
                              [&](const auto& r) { return r.first.name == flag.name; });
      if (row == rows.end()) {
        rows.emplace_back(std::move(flag), std::string(command.name));
      } else {
        row->second += ", " + std::string(command.name);
      }
    }
  }
  std::string out = "| Flag | Commands | Description |\n|---|---|---|\n";
  for (const auto& [flag, commands] : rows) {
    out += "| `" + MarkdownCell(FlagSynopsis(flag)) + "` | " + commands + " | " +
           MarkdownCell(flag.help) + " |\n";
  }
  return out;
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const Command* command = args.empty() ? nullptr : FindCommand(args[0]);
  if (command == nullptr) {
    err << "rdma_exporter: unknown subcommand\n";
    return 2;
  }
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      out << CommandUsage(*command);
      return 0;
    }
  }
  CliOptions options;
  std::string error;
  if (!ParseCliArgs(args, &options, &error)) {
    err << "rdma_exporter: " << error << "\n";
    return 2;
  }
  // Unreadable files show in the output itself; per-file warnings would only clutter it.
  ConfigureLogging("error", LogFormat::kLogfmt);
  if (options.command == "show-gids") return ShowGids(options, out, err);
  if (options.command == "show-counters") return ShowCounters(options, out, err);
  if (options.command == "ibdev2netdev") return Ibdev2Netdev(options, out, err);
  if (options.command == "status") return Status(options, out, err);
  return Doctor(options, CurrentProcessEnv(), out, err);
}

ProcessEnv CurrentProcessEnv() {
  ProcessEnv env;
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    env.memlock_bytes = static_cast<uint64_t>(limit.rlim_cur);
  }
  // CapEff is a hex mask; CAP_IPC_LOCK is capability 14.
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    uint64_t mask = 0;
    std::string hex(Trim(std::string_view(line).substr(7)));
    std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
    env.cap_ipc_lock = ((mask >> 14) & 1) != 0;
  }
  utsname names{};
  if (uname(&names) == 0) env.kernel_release = names.release;
  if (const char* tc = std::getenv("NCCL_IB_TC"); tc != nullptr && *tc != '\0') {
    env.nccl_ib_tc = tc;
  }
  return env;
}

// ---- CliNode -------------------------------------------------------------------------------

CliNode::CliNode(const CliOptions& options)
    : options_(options), sysfs_(std::make_unique<SysfsReader>(options.sysfs_root)) {
  kernel_ = MakeKernelReaders(options.fixtures_dir, *sysfs_);
}

bool CliNode::Discover(std::ostream& err) {
  DeviceFilter filter;
  if (!options_.device_include.empty()) filter.include.emplace(options_.device_include);
  if (!options_.device_exclude.empty()) filter.exclude.emplace(options_.device_exclude);
  if (!options_.devices.empty()) {
    // Named devices: only those are read (on mlx5 every counter read is a firmware command).
    std::string alternatives;
    for (const auto& name : options_.devices) {
      if (!filter.Accepts(name)) {
        err << "rdma_exporter: " << options_.command << ": device " << name
            << " is excluded by the device filters\n";
        return false;
      }
      alternatives += (alternatives.empty() ? "" : "|") + EscapeRegex(name);
    }
    filter.include.emplace(alternatives);
    filter.exclude.reset();
  }
  discovery_errors_.clear();
  inventory_ = DiscoverInventory(*sysfs_, filter, &discovery_errors_);
  for (const auto& name : options_.devices) {
    bool found = false;
    for (const auto& device : inventory_.devices)
      found = found || device.name == name;
    if (!found) {
      err << "rdma_exporter: " << options_.command << ": no RDMA device " << name << " under "
          << JoinPath(options_.sysfs_root, "class/infiniband") << "\n";
      return false;
    }
  }
  return true;
}

std::vector<std::unique_ptr<Collector>> CliNode::MakeCollectors(
    const std::vector<std::string_view>& names) const {
  std::vector<std::unique_ptr<Collector>> out;
  for (auto name : names) {
    for (const auto& factory : CollectorRegistry()) {
      if (factory.name == name) out.push_back(factory.create(options_.collector_options));
    }
  }
  return out;
}

std::vector<prometheus::MetricFamily> CliNode::Collect(
    const std::vector<std::unique_ptr<Collector>>& collectors) {
  kernel_.BeginPoll();
  MetricSink sink;
  for (const auto& collector : collectors) {
    CollectContext ctx(*sysfs_, errors_, collector->name(), &kernel_);
    try {
      collector->Collect(inventory_, ctx, sink);
    } catch (const std::exception& e) {
      // Collectors do not throw by design; a bad_alloc costs that collector's output only.
      LogError("collector failed", {{"collector", collector->name()}, {"error", e.what()}});
    }
  }
  sysfs_->SweepUnused();
  return sink.Take();
}

}  // namespace rdma_exporter
