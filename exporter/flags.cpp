#include "flags.h"

#include <charconv>
#include <regex>
#include <span>

#include "rdma_exporter/cli.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

using Flags = std::vector<FlagSpec<Options>>;
constexpr auto kExporter = FlagAudience::kExporter;
// Flag names and help in the exporter's usage are aligned to this column.
constexpr size_t kUsageColumn = 34;

std::string SetDuration(const std::string& value, std::string_view name, std::string_view examples,
                        std::chrono::milliseconds* target) {
  auto duration = ParseDuration(value);
  if (!duration) {
    return "invalid duration \"" + value + "\" for --" + std::string(name) + " (e.g. " +
           std::string(examples) + ")";
  }
  *target = *duration;
  return "";
}

// One of the listed values; the error lists them.
std::string SetChoice(const std::string& value, std::string_view name,
                      std::initializer_list<std::string_view> choices, std::string_view listed,
                      const std::function<void(size_t)>& store) {
  for (size_t i = 0; i < choices.size(); ++i) {
    if (value == choices.begin()[i]) {
      store(i);
      return "";
    }
  }
  return "invalid --" + std::string(name) + " \"" + value + "\" (" + std::string(listed) + ")";
}

Flags WebFlags() {
  return {
      {"web.listen-address", "\":9879\"",
       "Address to listen on for the web interface and telemetry\n"
       "([host]:port, IPv4; \":9879\" = all interfaces).",
       true,
       [](const std::string& value, Options* options) {
         std::string ports, error;
         if (ListenAddressToCivetweb(value, &ports, &error)) options->listen_address = value;
         return error;
       }},
      {"web.telemetry-path", "\"/metrics\"", "Path under which to expose metrics.", true,
       [](const std::string& value, Options* options) {
         if (value.empty() || value[0] != '/' || value == "/" || value.rfind("/-/", 0) == 0) {
           return "invalid --web.telemetry-path \"" + value +
                  "\" (must start with / and not be / or under /-/)";
         }
         options->telemetry_path = value;
         return std::string();
       }},
      {"web.config.file", "FILE",
       "Exporter-toolkit web config: TLS, mTLS, basic auth, headers\n"
       "(reloaded on SIGHUP; see README \"Security\").",
       true,
       [](const std::string& value, Options* options) {
         options->web_config_file = value;
         return std::string();
       }},
      {"web.max-connections", "32",
       "Requests served at once (one thread each, started up front);\n"
       "a connection gets one once its request head has arrived.",
       true,
       [](const std::string& value, Options* options) {
         auto number = ParseUnsigned(value, 16384);
         if (!number || *number < 1) {
           return "invalid --web.max-connections \"" + value + "\" (want 1..16384)";
         }
         options->web_max_connections = static_cast<int>(*number);
         return std::string();
       }},
      {"web.max-pending-connections", "4096",
       "Connections still sending their request head (a quarter per\n"
       "client address); beyond it the oldest are closed.",
       true,
       [](const std::string& value, Options* options) {
         auto number = ParseUnsigned(value, 1048576);
         if (!number || *number < 4) {
           return "invalid --web.max-pending-connections \"" + value + "\" (want 4..1048576)";
         }
         options->web_max_pending_connections = static_cast<int>(*number);
         return std::string();
       }},
      {"web.read-timeout", "5s", "Time a client has to send its request head.", true,
       [](const std::string& value, Options* options) {
         auto timeout = ParseDuration(value);
         if (!timeout || timeout->count() < 100 || timeout->count() > 600000) {
           return "invalid --web.read-timeout \"" + value + "\" (100ms..10m)";
         }
         options->web_read_timeout = *timeout;
         return std::string();
       }},
  };
}

Flags PollFlags() {
  return {
      {"poll-interval", "10s",
       "How often to read the devices; every scrape is served\n"
       "from the last poll. 0 = collect on each scrape (concurrent\n"
       "scrapes share one collection).",
       true,
       [](const std::string& value, Options* options) {
         std::chrono::milliseconds interval{};
         std::string error = SetDuration(value, "poll-interval", "10s, 500ms, 0", &interval);
         if (error.empty() && interval.count() > 0 && interval.count() < 100) {
           error = "--poll-interval must be 0 or at least 100ms";
         }
         if (error.empty()) options->poll_interval = interval;
         return error;
       }},
      {"poll-interval.slow", "60s",
       "How often to read slow-changing data (device info, GIDs,\n"
       "PCIe, DCB/ECN/verbs configuration, RoCE checks); also on\n"
       "any device change. 0 = every poll.",
       true,
       [](const std::string& value, Options* options) {
         return SetDuration(value, "poll-interval.slow", "60s, 5m, 0",
                            &options->slow_poll_interval);
       }},
  };
}

Flags CollectorSettingFlags() {
  return {
      {"collector.hw_counters.source", "auto",
       "auto, netlink or sysfs: read port hw counters with one RDMA\n"
       "netlink STAT_GET per port (one firmware refresh on mlx5) or\n"
       "from the hw_counters files; auto = netlink, sysfs where the\n"
       "kernel does not answer.",
       true,
       [](const std::string& value, Options* options) {
         return SetChoice(value, "collector.hw_counters.source", {"auto", "netlink", "sysfs"},
                          "auto, netlink or sysfs", [options](size_t i) {
                            constexpr HwCounterSource kSources[] = {HwCounterSource::kAuto,
                                                                    HwCounterSource::kNetlink,
                                                                    HwCounterSource::kSysfs};
                            options->collector_options.hw_counters_source = kSources[i];
                          });
       }},
      {"collector.ethtool.metrics-include", "REGEX",
       "Also export other ethtool stats matching REGEX (generic names).", true,
       [](const std::string& value, Options* options) {
         std::string why = RegexError(value);
         if (!why.empty()) {
           return "invalid regular expression for --collector.ethtool.metrics-include: " + why;
         }
         options->collector_options.ethtool_metrics_include.emplace(value);
         return std::string();
       }},
      {"collector.pod_resources.socket", "\"/var/lib/kubelet/pod-resources/kubelet.sock\"",
       "The kubelet's pod-resources API socket (absent = no pod\nattribution, logged once).", true,
       [](const std::string& value, Options* options) {
         if (value.empty()) return std::string("--collector.pod_resources.socket is empty");
         options->collector_options.pod_resources_socket = value;
         return std::string();
       }},
      {"collector.pod_resources.interval", "10s",
       "How often to ask the kubelet (on a thread of its own, never\nfrom a poll or scrape).", true,
       [](const std::string& value, Options* options) {
         std::chrono::milliseconds interval{};
         std::string error =
             SetDuration(value, "collector.pod_resources.interval", "10s, 1m", &interval);
         if (error.empty() && interval.count() < 1000) {
           error = "--collector.pod_resources.interval must be at least 1s";
         }
         if (error.empty()) options->collector_options.pod_resources_interval = interval;
         return error;
       }},
      {"collector.pod_resources.shared-config", "FILE",
       "The RDMA shared device plugin's config.json: which HCAs each\nrdma/ resource covers "
       "(unset: every HCA).",
       true,
       [](const std::string& value, Options* options) {
         options->collector_options.shared_device_plugin_config = value;
         return std::string();
       }},
  };
}

Flags LogAndMetaFlags() {
  auto help_alias = BoolFlag("h", "", &Options::show_help, kExporter);
  help_alias.hidden = true;
  auto markdown = BoolFlag("help-markdown", "Print docs/flags.md and exit.",
                           &Options::show_help_markdown, kExporter);
  markdown.hidden = true;
  return {
      {"log.level", "info", "debug, info, warn, error.", true,
       [](const std::string& value, Options* options) {
         return SetChoice(value, "log.level", {"debug", "info", "warn", "error"},
                          "debug, info, warn, error", [&](size_t) { options->log_level = value; });
       }},
      {"log.format", "logfmt", "logfmt or json.", true,
       [](const std::string& value, Options* options) {
         return SetChoice(value, "log.format", {"logfmt", "json"}, "logfmt or json",
                          [options](size_t i) {
                            options->log_format = i == 0 ? LogFormat::kLogfmt : LogFormat::kJson;
                          });
       }},
      BoolFlag("version", "Print version and exit.", &Options::show_version, kExporter),
      BoolFlag("help", "Print this help and exit.", &Options::show_help, kExporter),
      help_alias,
      markdown,
  };
}

// The exporter's flags in --help order; the --[no-]collector.<name> switches come from the
// collector registry (CollectorSwitch).
const Flags& ExporterFlags() {
  static const Flags kFlags = [] {
    Flags all = WebFlags();
    auto append = [&all](Flags more) {
      for (auto& flag : more)
        all.push_back(std::move(flag));
    };
    all.push_back(Share<Options>(kPathSysfsFlag, kExporter));
    all.push_back(Share<Options>(kPathProcfsFlag, kExporter));
    append(PollFlags());
    all.push_back(Share<Options>(kDeviceIncludeFlag, kExporter));
    all.push_back(Share<Options>(kDeviceExcludeFlag, kExporter));
    append(CollectorSettingFlags());
    all.push_back(Share<Options>(kNcclIbTcFlag, kExporter));
    all.push_back(Share<Options>(kRoceMinMtuFlag, kExporter));
    all.push_back(Share<Options>(kPathFixturesFlag, kExporter));
    append(LogAndMetaFlags());
    return all;
  }();
  return kFlags;
}

bool KnownCollector(const std::string& name) {
  for (const auto& f : CollectorRegistry()) {
    if (f.name == name) return true;
  }
  return false;
}

// --collector.<name> and --no-collector.<name> (booleans); nullopt for any other flag.
// --collector.<name>.<setting> is a table flag.
std::optional<std::string> CollectorSwitch(const std::string& name,
                                           const std::optional<std::string>& value,
                                           Options* options) {
  bool enable = name.rfind("collector.", 0) == 0 && name.find('.', 10) == std::string::npos;
  bool disable = name.rfind("no-collector.", 0) == 0;
  if (!enable && !disable) return std::nullopt;
  std::string collector = name.substr(enable ? 10 : 13);
  if (!KnownCollector(collector)) {
    return "unknown collector \"" + collector + "\" in --" + name + " (see --help)";
  }
  bool on = true;
  std::string error = SetBool(value.value_or("true"), name, kExporter, &on);
  if (error.empty()) options->collector_overrides[collector] = enable ? on : !on;
  return error;
}

std::string CollectorHelp(const CollectorFactory& f) {
  return std::string(f.description) + (f.enabled_by_default ? " [default on]" : " [default off]");
}

}  // namespace

bool ListenAddressToCivetweb(const std::string& address, std::string* ports, std::string* error) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    *error = "invalid --web.listen-address \"" + address + "\" (want [host]:port)";
    return false;
  }
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  unsigned number = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || number > 65535) {
    *error = "invalid port in --web.listen-address \"" + address + "\"";
    return false;
  }
  if (host.find(':') != std::string::npos || host.find('[') != std::string::npos) {
    // Debian's CivetWeb is built without IPv6.
    *error = "IPv6 listen addresses are not supported: \"" + address + "\"";
    return false;
  }
  if (host == "localhost") host = "127.0.0.1";
  if (!host.empty()) {
    static const std::regex kIpv4(R"((\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3}))");
    std::smatch m;
    bool ok = std::regex_match(host, m, kIpv4);
    for (int i = 1; ok && i <= 4; ++i)
      ok = std::stoi(m[i]) <= 255;
    if (!ok) {
      *error = "invalid host in --web.listen-address \"" + address + "\" (want an IPv4 address)";
      return false;
    }
  }
  *ports = host.empty() ? port : host + ":" + port;
  return true;
}

std::string UsageText() {
  std::string out =
      "usage: rdma_exporter [<flags>]\n"
      "       rdma_exporter <command> [<args>]   (rdma_exporter <command> --help)\n"
      "       rdma_exporter --version\n\n"
      "Prometheus exporter for RDMA (InfiniBand and RoCE) devices.\n\n"
      "Commands (print and exit; they take --path.sysfs, --path.fixtures and the device "
      "filters):\n"
      "  show-gids [DEV...]              The GID table, as MLNX_OFED's show_gids.\n"
      "  show-counters [DEV...]          PMA and hw counters of each port; --interval=S for "
      "rates.\n"
      "  ibdev2netdev [-v]               The netdev of each RDMA port and its link state.\n"
      "  doctor                          Node checklist for RDMA/NCCL: PASS/WARN/FAIL per "
      "check,\n"
      "                                  exit 1 when a check fails.\n"
      "  status                          The node page's per-port view from two reads "
      "(--json).\n\n"
      "Flags:\n" +
      FlagUsage(ExporterFlags(), kUsageColumn) +
      "\nCollectors (--collector.<name> enables, --no-collector.<name> disables):\n";
  for (const auto& f : CollectorRegistry()) {
    out += UsageRow("--collector." + std::string(f.name), CollectorHelp(f), kUsageColumn);
  }
  return out;
}

std::string FlagsMarkdown() {
  std::string out =
      "# Flags\n\n"
      "<!-- Generated from the flag tables (exporter/flags.cpp, exporter/cli/cli.cpp) by\n"
      "     `rdma_exporter --help-markdown > docs/flags.md`; a unit test fails when it is "
      "stale. -->\n\n"
      "A flag with a value is given as `--name=value` or `--name value`; a boolean flag as "
      "`--name`,\n`--name=true` or `--name=false`. After `=` the tables show the default, or in "
      "capitals the\nkind of value when there is no default.\n\n"
      "## rdma_exporter\n\n"
      "| Flag | Description |\n|---|---|\n";
  for (const auto& flag : ExporterFlags()) {
    if (flag.hidden) continue;
    out += "| `" + MarkdownCell(FlagSynopsis(flag)) + "` | " + MarkdownCell(flag.help) + " |\n";
  }
  out +=
      "\n### Collectors\n\n"
      "`--collector.<name>` enables a collector, `--no-collector.<name>` disables it.\n\n"
      "| Flag | Default | Description |\n|---|---|---|\n";
  for (const auto& f : CollectorRegistry()) {
    out += "| `--collector." + std::string(f.name) + "` | " +
           (f.enabled_by_default ? "on" : "off") + " | " + MarkdownCell(f.description) + " |\n";
  }
  out +=
      "\n## Subcommands\n\n"
      "`rdma_exporter <command> [<args>]` prints and exits (`rdma_exporter <command> --help`).\n"
      "`show-gids` and `show-counters` also take device names.\n\n" +
      SubcommandFlagsMarkdown();
  return out;
}

bool ParseFlags(const std::vector<std::string>& args, Options* options, std::string* error) {
  FlagGrammar<Options> grammar;
  grammar.unknown_flag_hint = " (see --help)";
  grammar.positional = [](const std::string& arg, Options*) {
    return arg.rfind("-", 0) == 0
               ? "unexpected argument \"" + arg + "\" (flags start with --; see --help)"
               : "unknown command \"" + arg +
                     "\" (commands: show-gids, show-counters, ibdev2netdev, doctor, status; flags "
                     "start with --; see --help)";
  };
  grammar.dynamic = CollectorSwitch;
  *error = ParseFlagArgs(ExporterFlags(), grammar, std::span(args), options);
  return error->empty();
}

}  // namespace rdma_exporter
