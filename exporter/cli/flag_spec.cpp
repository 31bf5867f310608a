#include "rdma_exporter/flag_spec.h"

#include <algorithm>
#include <charconv>
#include <regex>

namespace rdma_exporter {
namespace {

std::string SetNonEmptyPath(const std::string& value, std::string_view name, std::string* path) {
  if (value.empty()) return "--" + std::string(name) + " must not be empty";
  *path = value;
  return "";
}

// The exporter's error says why the expression is wrong; the subcommands' quotes it.
std::string SetDeviceRegex(const std::string& value, std::string_view name, FlagAudience audience,
                           std::string* pattern) {
  std::string why = RegexError(value);
  if (!why.empty()) {
    return "invalid regular expression for --" + std::string(name) + ": " +
           (audience == FlagAudience::kExporter ? why : "\"" + value + "\"");
  }
  *pattern = value;
  return "";
}

std::optional<unsigned> ParseBounded(const std::string& value, std::string_view name, unsigned max,
                                     std::string* error) {
  auto number = ParseUnsigned(value, max);
  if (!number) {
    *error = "invalid --" + std::string(name) + " \"" + value + "\" (want 0.." +
             std::to_string(max) + ")";
  }
  return number;
}

}  // namespace

const SharedFlag kPathSysfsFlag = {
    "path.sysfs",
    {"\"/sys\"", "sysfs mount point (a fixture or demo tree in tests)."},
    {"/sys", "sysfs mount point (a fixture or demo tree)."},
    [](const std::string& value, NodeOptions* options, FlagAudience) {
      return SetNonEmptyPath(value, "path.sysfs", &options->sysfs_root);
    }};

const SharedFlag kPathProcfsFlag = {
    "path.procfs",
    {"\"/proc\"", "procfs mount point (the NVIDIA driver's GPU list)."},
    {"/proc", "procfs mount point (the NVIDIA driver's GPU list)."},
    [](const std::string& value, NodeOptions* options, FlagAudience) {
      return SetNonEmptyPath(value, "path.procfs", &options->collector_options.procfs_root);
    }};

const SharedFlag kPathFixturesFlag = {
    "path.fixtures",
    {"DIR",
     "Read ethtool/DCB data from fixture files in DIR and netdev\n"
     "state from --path.sysfs (tests and the demo fabric)."},
    {"DIR", "Read ethtool/DCB/verbs/netlink data from captures in DIR."},
    [](const std::string& value, NodeOptions* options, FlagAudience) {
      options->fixtures_dir = value;
      return std::string();
    }};

const SharedFlag kDeviceIncludeFlag = {
    "device-include",
    {"REGEX", "Only RDMA devices whose name fully matches."},
    {"REGEX", "Only devices whose name fully matches."},
    [](const std::string& value, NodeOptions* options, FlagAudience audience) {
      return SetDeviceRegex(value, "device-include", audience, &options->device_include);
    }};

const SharedFlag kDeviceExcludeFlag = {
    "device-exclude",
    {"REGEX",
     "Skip RDMA devices whose name fully matches; no file of an\n"
     "excluded device is ever opened."},
    {"REGEX", "Skip devices whose name fully matches."},
    [](const std::string& value, NodeOptions* options, FlagAudience audience) {
      return SetDeviceRegex(value, "device-exclude", audience, &options->device_exclude);
    }};

const SharedFlag kNcclIbTcFlag = {
    "nccl.ib-tc",
    {"N",
     "NCCL_IB_TC of the cluster: enables the NCCL priority and\n"
     "RoCE configuration checks (DSCP = N >> 2)."},
    {"N",
     "NCCL_IB_TC of the jobs: the NCCL priority for the PFC and ECN checks\n"
     "(default: NCCL_IB_TC of the environment, if set)."},
    [](const std::string& value, NodeOptions* options, FlagAudience) {
      std::string error;
      if (auto tc = ParseBounded(value, "nccl.ib-tc", 255, &error)) {
        options->collector_options.nccl_ib_tc = static_cast<int>(*tc);
      }
      return error;
    }};

const SharedFlag kRoceMinMtuFlag = {
    "roce.min-mtu",
    {"4200", "Smallest acceptable RoCE netdev MTU for the checks."},
    {"4200", "Smallest acceptable RoCE netdev MTU."},
    [](const std::string& value, NodeOptions* options, FlagAudience) {
      std::string error;
      if (auto mtu = ParseBounded(value, "roce.min-mtu", 65535, &error)) {
        options->collector_options.roce_min_mtu = *mtu;
      }
      return error;
    }};

std::string SetBool(const std::string& value, std::string_view name, FlagAudience audience,
                    bool* target) {
  if (value != "true" && value != "false") {
    return "invalid value \"" + value + "\" for --" + std::string(name) +
           (audience == FlagAudience::kExporter ? " (want true or false)" : "");
  }
  *target = value == "true";
  return "";
}

std::optional<unsigned> ParseUnsigned(std::string_view text, unsigned max) {
  unsigned number = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || number > max) {
    return std::nullopt;
  }
  return number;
}

std::string RegexError(const std::string& pattern) {
  try {
    std::regex re(pattern);
  } catch (const std::regex_error& e) {
    return e.what();
  }
  return "";
}

std::string UsageRow(std::string_view left, std::string_view help, size_t column) {
  std::string out = "  " + std::string(left);
  if (out.size() <= column) {
    out.resize(std::max(column, out.size() + 2), ' ');
  } else {
    out += "\n" + std::string(column, ' ');
  }
  for (char c : help) {
    out += c;
    if (c == '\n') out += std::string(column, ' ');
  }
  return out + "\n";
}

std::string MarkdownCell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += ' ';
    } else {
      if (c == '|') out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace rdma_exporter
