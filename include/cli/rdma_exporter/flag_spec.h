// Command-line flags as data, in the style of the Prometheus exporters' kingpin: one spec per
// flag drives the parsing, the --help text and the Markdown reference (docs/flags.md). The
// exporter (exporter/flags.cpp) and the subcommands (exporter/cli/cli.cpp) each have a table of
// specs; the flags both take are defined once here (SharedFlag), on NodeOptions.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

// What the exporter and the subcommands both read the node with.
struct NodeOptions {
  std::string sysfs_root = "/sys";
  std::string fixtures_dir;  // --path.fixtures: fixture readers instead of ioctl/netlink
  std::string device_include;
  std::string device_exclude;
  CollectorOptions collector_options;
};

template <typename Target>
struct FlagSpec {
  // Parses and validates a value into the target; returns "" or a one-line error. A boolean
  // flag given as --name alone gets "true".
  using Setter = std::function<std::string(const std::string& value, Target* target)>;

  std::string_view name;         // without the leading --
  std::string_view placeholder;  // shown as --name=<placeholder>: the default or the kind of value
  std::string_view help;         // '\n' starts a continuation line
  bool takes_value = true;       // false: --name, --name=true or --name=false
  Setter set;
  char short_name = 0;  // also accepted as -<short_name> alone (a boolean; shown in the help)
  bool hidden = false;  // parsed, but neither in the help nor in docs/flags.md
};

// The exporter and the subcommands show a shared flag differently (the subcommands' usage is
// narrower and their flags serve one run, not a daemon) and word some errors differently.
enum class FlagAudience { kExporter, kSubcommand };

// The text of a flag in one audience's help.
struct FlagText {
  std::string_view placeholder;
  std::string_view help;
};

// A value flag both the exporter and the subcommands take; Share() makes a table row of it.
struct SharedFlag {
  std::string_view name;
  FlagText exporter;
  FlagText subcommand;
  std::string (*set)(const std::string& value, NodeOptions* options, FlagAudience audience);
};

extern const SharedFlag kPathSysfsFlag;      // --path.sysfs
extern const SharedFlag kPathProcfsFlag;     // --path.procfs
extern const SharedFlag kPathFixturesFlag;   // --path.fixtures
extern const SharedFlag kDeviceIncludeFlag;  // --device-include
extern const SharedFlag kDeviceExcludeFlag;  // --device-exclude
extern const SharedFlag kNcclIbTcFlag;       // --nccl.ib-tc
extern const SharedFlag kRoceMinMtuFlag;     // --roce.min-mtu

template <typename Target>
FlagSpec<Target> Share(const SharedFlag& flag, FlagAudience audience) {
  static_assert(std::is_base_of_v<NodeOptions, Target>);
  const FlagText& text = audience == FlagAudience::kExporter ? flag.exporter : flag.subcommand;
  return {flag.name, text.placeholder, text.help, true,
          [&flag, audience](const std::string& value, Target* target) {
            return flag.set(value, target, audience);
          }};
}

// "true" or "false" into *target; the error of any other value (the exporter's says what it
// wants, as it always has).
std::string SetBool(const std::string& value, std::string_view name, FlagAudience audience,
                    bool* target);

template <typename Target>
FlagSpec<Target> BoolFlag(std::string_view name, std::string_view help, bool Target::*member,
                          FlagAudience audience) {
  return {name, "", help, false, [name, member, audience](const std::string& value, Target* t) {
            return SetBool(value, name, audience, &(t->*member));
          }};
}

// A decimal number of the whole text (no sign, no spaces); nullopt otherwise or above max.
std::optional<unsigned> ParseUnsigned(std::string_view text, unsigned max = ~0u);
// Why pattern is not a regular expression (std::regex's message); "" when it is one.
std::string RegexError(const std::string& pattern);

// One entry of a usage: "  <left>" padded to `column` with at least two spaces (longer than the
// column: the help starts on the next line), then the help, continuation lines indented to
// `column`.
std::string UsageRow(std::string_view left, std::string_view help, size_t column);
// The flag as the help shows it: "--name=placeholder", "-v, --verbose".
template <typename Target>
std::string FlagSynopsis(const FlagSpec<Target>& flag) {
  std::string out = flag.short_name ? std::string{'-', flag.short_name} + ", " : "";
  out += "--" + std::string(flag.name);
  if (!flag.placeholder.empty()) out += "=" + std::string(flag.placeholder);
  return out;
}

// The usage rows of the flags that are not hidden, in table order.
template <typename Target>
std::string FlagUsage(const std::vector<FlagSpec<Target>>& flags, size_t column) {
  std::string out;
  for (const auto& flag : flags) {
    if (!flag.hidden) out += UsageRow(FlagSynopsis(flag), flag.help, column);
  }
  return out;
}

// A Markdown table cell: one line, '|' escaped.
std::string MarkdownCell(std::string_view text);

// How a table's parser treats what the table does not describe.
template <typename Target>
struct FlagGrammar {
  // Appended to "unknown flag --name".
  std::string unknown_flag_hint;
  // An argument not starting with --: a positional one, or the error it is.
  std::function<std::string(const std::string& arg, Target* target)> positional;
  // Flags outside the table (the exporter's --[no-]collector.<name>): nullopt when `name` is
  // not one of them, else "" or its error.
  std::function<std::optional<std::string>(const std::string& name,
                                           const std::optional<std::string>& value, Target* target)>
      dynamic;
};

// Parses args (--name=value, --name value, booleans as --name or --name=true|false, -<short>)
// into target. Returns "" or the one-line error.
template <typename Target>
std::string ParseFlagArgs(const std::vector<FlagSpec<Target>>& flags,
                          const FlagGrammar<Target>& grammar, std::span<const std::string> args,
                          Target* target) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const FlagSpec<Target>* flag = nullptr;
    for (const auto& f : flags) {
      if (f.short_name && arg == std::string{'-', f.short_name}) flag = &f;
    }
    if (flag != nullptr) {
      if (std::string error = flag->set("true", target); !error.empty()) return error;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (std::string error = grammar.positional(arg, target); !error.empty()) return error;
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (grammar.dynamic) {
      if (auto error = grammar.dynamic(name, value, target)) {
        if (!error->empty()) return *error;
        continue;
      }
    }
    for (const auto& f : flags) {
      if (f.name == name) flag = &f;
    }
    if (flag == nullptr) return "unknown flag --" + name + grammar.unknown_flag_hint;
    if (flag->takes_value && !value) {
      if (i + 1 >= args.size()) return "flag --" + name + " needs a value";
      value = args[++i];
    }
    if (std::string error = flag->set(value.value_or("true"), target); !error.empty()) {
      return error;
    }
  }
  return "";
}

}  // namespace rdma_exporter
