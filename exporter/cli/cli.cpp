#include "rdma_exporter/cli.h"

#include <sys/resource.h>
#include <sys/utsname.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <regex>

#include "rdma_exporter/logging.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

struct Command {
  std::string_view name;
  std::string_view synopsis;
  std::string_view help;
};

constexpr Command kCommands[] = {
    {"show-gids", "show-gids [DEV...] [--json]",
     "The GID table of every port as MLNX_OFED's show_gids prints it (zero and bare fe80:: "
     "entries\n  skipped), then n_gids_found=N."},
    {"show-counters", "show-counters [DEV...] [--interval=S [--count=N]] [--json]",
     "Every PMA counter (data counters in bytes, saturated ones marked) and every hw counter "
     "of each\n  port. With --interval, per-second rates between two reads S seconds apart; "
     "--count=N\n  repeats that N times (0: until interrupted), like watch."},
    {"ibdev2netdev", "ibdev2netdev [-v] [--json]",
     "The netdev of each RDMA port and its link (mlx5_0 port 1 ==> ens1f0np0 (Up)); -v adds "
     "the PCI\n  address, HCA type, part number and name (PCI VPD, root only; else the board "
     "id), firmware\n  and port state. Works for rxe too."},
    {"doctor",
     "doctor [--nccl.ib-tc=N] [--roce.min-mtu=4200] [--sample=S] [--path.dev=/dev] [--json]",
     "Node checklist for RDMA/NCCL: one PASS/WARN/FAIL line per check. Exit 0 when nothing "
     "fails,\n  1 when a check fails (usable as an init container or node health check).\n\n"
     "  Checks: kernel_modules, driver_firmware, uverbs_devices, memlock (of this process),\n"
     "  devices_present, port_active, link_layer, port_rate_uniform, pcie_link, roce_v2_gid,\n"
     "  netdev_mtu, pfc, trust_dscp, ecn, pfc_storm, error_counters."},
};

const Command* FindCommand(std::string_view name) {
  for (const auto& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string CommandUsage(const Command& c) {
  std::string text = "usage: rdma_exporter " + std::string(c.synopsis) + "\n\n  " +
                     std::string(c.help) +
                     "\n\nFlags:\n"
                     "  --path.sysfs=/sys         sysfs mount point (a fixture or demo tree).\n"
                     "  --path.fixtures=DIR       Read ethtool/DCB/verbs/netlink data from "
                     "captures in DIR.\n"
                     "  --device-include=REGEX    Only devices whose name fully matches.\n"
                     "  --device-exclude=REGEX    Skip devices whose name fully matches.\n"
                     "  --json                    Machine-readable output.\n";
  if (c.name == "show-counters") {
    text +=
        "  --interval=S              Print per-second rates over S seconds (1, 500ms).\n"
        "  --count=N                 With --interval: N tables, one per interval (default 1, 0 "
        "= until\n"
        "                            interrupted).\n";
  } else if (c.name == "ibdev2netdev") {
    text +=
        "  -v, --verbose             PCI address, HCA type, part number, firmware, port state.\n";
  } else if (c.name == "doctor") {
    text +=
        "  --nccl.ib-tc=N            NCCL_IB_TC of the jobs: the NCCL priority for the PFC "
        "and ECN checks\n"
        "                            (default: NCCL_IB_TC of the environment, if set).\n"
        "  --roce.min-mtu=4200       Smallest acceptable RoCE netdev MTU.\n"
        "  --path.dev=/dev           Where /dev/infiniband/uverbs* are looked for.\n"
        "  --sample=2s               Window over which error counters must not rise (0 = "
        "one read).\n";
  }
  return text;
}

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

bool ValidRegex(const std::string& pattern) {
  try {
    std::regex re(pattern);
  } catch (const std::regex_error&) {
    return false;
  }
  return true;
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
  if (args.empty() || FindCommand(args[0]) == nullptr) {
    *error = "unknown subcommand";
    return false;
  }
  const std::string& cmd = args[0];
  options->command = cmd;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-v" && cmd == "ibdev2netdev") {
      options->verbose = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (arg.rfind("-", 0) == 0 || (cmd != "show-gids" && cmd != "show-counters")) {
        *error =
            cmd + ": unexpected argument \"" + arg + "\" (see rdma_exporter " + cmd + " --help)";
        return false;
      }
      options->devices.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "json" || (name == "verbose" && cmd == "ibdev2netdev")) {
      if (value && *value != "true" && *value != "false") {
        *error = cmd + ": invalid value \"" + *value + "\" for --" + name;
        return false;
      }
      (name == "json" ? options->json : options->verbose) = !value || *value == "true";
      continue;
    }
    bool known = name == "path.sysfs" || name == "path.fixtures" || name == "device-include" ||
                 name == "device-exclude" ||
                 (cmd == "show-counters" && (name == "interval" || name == "count")) ||
                 (cmd == "doctor" && (name == "nccl.ib-tc" || name == "roce.min-mtu" ||
                                      name == "path.dev" || name == "sample"));
    if (!known) {
      *error = cmd + ": unknown flag --" + name + " (see rdma_exporter " + cmd + " --help)";
      return false;
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        *error = cmd + ": flag --" + name + " needs a value";
        return false;
      }
      value = args[++i];
    }
    if (name == "path.sysfs" || name == "path.dev") {
      if (value->empty()) {
        *error = cmd + ": --" + name + " must not be empty";
        return false;
      }
      (name == "path.sysfs" ? options->sysfs_root : options->dev_root) = *value;
    } else if (name == "path.fixtures") {
      options->fixtures_dir = *value;
    } else if (name == "device-include" || name == "device-exclude") {
      if (!ValidRegex(*value)) {
        *error = cmd + ": invalid regular expression for --" + name + ": \"" + *value + "\"";
        return false;
      }
      (name == "device-include" ? options->device_include : options->device_exclude) = *value;
    } else if (name == "interval" || name == "sample") {
      auto seconds = ParseSeconds(*value);
      // A positive interval is needed for a rate; the doctor's sample may be 0 (one read).
      if (!seconds || *seconds > 3600 || (name == "interval" && *seconds <= 0)) {
        *error = cmd + ": invalid --" + name + " \"" + *value + "\" (seconds, e.g. 1, 0.5, 500ms)";
        return false;
      }
      if (name == "interval") {
        options->interval_seconds = *seconds;
      } else {
        options->sample_seconds = *seconds;
      }
    } else if (name == "count") {
      unsigned number = 0;
      auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), number);
      if (value->empty() || ec != std::errc() || ptr != value->data() + value->size()) {
        *error = cmd + ": invalid --count \"" + *value + "\" (a number of tables, 0 = no end)";
        return false;
      }
      options->count = number;
    } else {  // nccl.ib-tc, roce.min-mtu
      unsigned number = 0;
      auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), number);
      unsigned max = name == "nccl.ib-tc" ? 255 : 65535;
      if (value->empty() || ec != std::errc() || ptr != value->data() + value->size() ||
          number > max) {
        *error = cmd + ": invalid --" + name + " \"" + *value + "\" (want 0.." +
                 std::to_string(max) + ")";
        return false;
      }
      if (name == "nccl.ib-tc") {
        options->collector_options.nccl_ib_tc = static_cast<int>(number);
      } else {
        options->collector_options.roce_min_mtu = number;
      }
    }
  }
  if (options->count != 1 && !options->interval_seconds) {
    *error = cmd + ": --count needs --interval";
    return false;
  }
  return true;
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

// ---- SampleIndex ---------------------------------------------------------------------------

SampleIndex::SampleIndex(const std::vector<prometheus::MetricFamily>& families) {
  for (const auto& family : families) {
    auto& samples = families_[family.name];
    for (const auto& metric : family.metric) {
      Sample sample;
      for (const auto& label : metric.label)
        sample.labels[label.name] = label.value;
      switch (family.type) {
        case prometheus::MetricType::Counter:
          sample.value = metric.counter.value;
          break;
        case prometheus::MetricType::Gauge:
          sample.value = metric.gauge.value;
          break;
        default:
          sample.value = metric.untyped.value;
      }
      samples.push_back(std::move(sample));
    }
  }
}

const std::vector<SampleIndex::Sample>& SampleIndex::All(const std::string& family) const {
  static const std::vector<Sample> kNone;
  auto it = families_.find(family);
  return it == families_.end() ? kNone : it->second;
}

const SampleIndex::Sample* SampleIndex::Find(
    const std::string& family, const std::map<std::string, std::string>& labels) const {
  for (const auto& sample : All(family)) {
    bool match = true;
    for (const auto& [name, value] : labels) {
      auto it = sample.labels.find(name);
      match = match && it != sample.labels.end() && it->second == value;
    }
    if (match) return &sample;
  }
  return nullptr;
}

std::optional<double> SampleIndex::Value(const std::string& family,
                                         const std::map<std::string, std::string>& labels) const {
  const Sample* sample = Find(family, labels);
  if (sample == nullptr) return std::nullopt;
  return sample->value;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace rdma_exporter
