#include "flags.h"

#include <charconv>
#include <regex>
#include <sstream>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

bool KnownCollector(const std::string& name) {
  for (const auto& f : CollectorRegistry()) {
    if (f.name == name) return true;
  }
  return false;
}

bool ValidRegex(const std::string& pattern, std::string* error, const std::string& flag) {
  try {
    std::regex re(pattern);
  } catch (const std::regex_error& e) {
    *error = "invalid regular expression for " + flag + ": " + e.what();
    return false;
  }
  return true;
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
  std::ostringstream out;
  out << "usage: rdma_exporter [<flags>]\n"
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
         "                                  exit 1 when a check fails.\n\n"
         "Flags:\n"
         "  --web.listen-address=\":9879\"   Address to listen on for the web interface and "
         "telemetry\n"
         "                                  ([host]:port, IPv4; \":9879\" = all interfaces).\n"
         "  --web.telemetry-path=\"/metrics\"  Path under which to expose metrics.\n"
         "  --web.config.file=FILE          Exporter-toolkit web config: TLS, mTLS, basic auth, "
         "headers\n"
         "                                  (reloaded on SIGHUP; see README \"Security\").\n"
         "  --web.max-connections=1024      Connections served at once (one thread each); "
         "more wait.\n"
         "  --web.read-timeout=5s           Time a client has to send its request head.\n"
         "  --path.sysfs=\"/sys\"             sysfs mount point (a fixture or demo tree in "
         "tests).\n"
         "  --poll-interval=10s             How often to read the devices; every scrape is "
         "served\n"
         "                                  from the last poll. 0 = collect on each scrape "
         "(concurrent\n"
         "                                  scrapes share one collection).\n"
         "  --poll-interval.slow=60s        How often to read slow-changing data (device info, "
         "GIDs,\n"
         "                                  PCIe, DCB/ECN/verbs configuration, RoCE checks); also "
         "on\n"
         "                                  any device change. 0 = every poll.\n"
         "  --device-include=REGEX          Only RDMA devices whose name fully matches.\n"
         "  --device-exclude=REGEX          Skip RDMA devices whose name fully matches; no "
         "file of an\n"
         "                                  excluded device is ever opened.\n"
         "  --collector.hw_counters.source=auto\n"
         "                                  auto, netlink or sysfs: read port hw counters with "
         "one RDMA\n"
         "                                  netlink STAT_GET per port (one firmware refresh on "
         "mlx5) or\n"
         "                                  from the hw_counters files; auto = netlink, sysfs "
         "where the\n"
         "                                  kernel does not answer.\n"
         "  --collector.ethtool.metrics-include=REGEX\n"
         "                                  Also export other ethtool stats matching REGEX "
         "(generic names).\n"
         "  --nccl.ib-tc=N                  NCCL_IB_TC of the cluster: enables the NCCL priority "
         "and\n"
         "                                  RoCE configuration checks (DSCP = N >> 2).\n"
         "  --roce.min-mtu=4200             Smallest acceptable RoCE netdev MTU for the checks.\n"
         "  --path.fixtures=DIR             Read ethtool/DCB data from fixture files in DIR and "
         "netdev\n"
         "                                  state from --path.sysfs (tests and the demo "
         "fabric).\n"
         "  --log.level=info                debug, info, warn, error.\n"
         "  --log.format=logfmt             logfmt or json.\n"
         "  --version                       Print version and exit.\n"
         "  --help                          Print this help and exit.\n\n"
         "Collectors (--collector.<name> enables, --no-collector.<name> disables):\n";
  for (const auto& f : CollectorRegistry()) {
    std::string flag = "  --collector." + std::string(f.name);
    out << flag << std::string(flag.size() < 34 ? 34 - flag.size() : 1, ' ') << f.description
        << (f.enabled_by_default ? " [default on]" : " [default off]") << "\n";
  }
  return out.str();
}

bool ParseFlags(const std::vector<std::string>& args, Options* options, std::string* error) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      *error = arg.rfind("-", 0) == 0
                   ? "unexpected argument \"" + arg + "\" (flags start with --; see --help)"
                   : "unknown command \"" + arg +
                         "\" (commands: show-gids, show-counters, ibdev2netdev, doctor; flags "
                         "start with --; see --help)";
      return false;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    // Boolean flags.
    auto boolean = [&](bool* target) {
      if (!value || *value == "true") {
        *target = true;
      } else if (*value == "false") {
        *target = false;
      } else {
        *error = "invalid value \"" + *value + "\" for --" + name + " (want true or false)";
        return false;
      }
      return true;
    };
    if (name == "help" || name == "h") {
      if (!boolean(&options->show_help)) return false;
      continue;
    }
    if (name == "version") {
      if (!boolean(&options->show_version)) return false;
      continue;
    }
    bool enable = name.rfind("collector.", 0) == 0 && name.find('.', 10) == std::string::npos;
    bool disable = name.rfind("no-collector.", 0) == 0;
    if (enable || disable) {
      std::string collector = name.substr(enable ? 10 : 13);
      if (!KnownCollector(collector)) {
        *error = "unknown collector \"" + collector + "\" in --" + name + " (see --help)";
        return false;
      }
      bool on = true;
      if (!boolean(&on)) return false;
      options->collector_overrides[collector] = enable ? on : !on;
      continue;
    }
    static const char* kValueFlags[] = {"web.listen-address",
                                        "web.telemetry-path",
                                        "web.config.file",
                                        "web.max-connections",
                                        "web.read-timeout",
                                        "path.sysfs",
                                        "path.fixtures",
                                        "poll-interval",
                                        "poll-interval.slow",
                                        "collector.hw_counters.source",
                                        "device-include",
                                        "device-exclude",
                                        "collector.ethtool.metrics-include",
                                        "nccl.ib-tc",
                                        "roce.min-mtu",
                                        "log.level",
                                        "log.format"};
    bool known = false;
    for (const char* f : kValueFlags)
      known = known || name == f;
    if (!known) {
      *error = "unknown flag --" + name + " (see --help)";
      return false;
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        *error = "flag --" + name + " needs a value";
        return false;
      }
      value = args[++i];
    }
    if (name == "web.listen-address") {
      std::string ports;
      if (!ListenAddressToCivetweb(*value, &ports, error)) return false;
      options->listen_address = *value;
    } else if (name == "web.telemetry-path") {
      if (value->empty() || (*value)[0] != '/' || *value == "/" || value->rfind("/-/", 0) == 0) {
        *error = "invalid --web.telemetry-path \"" + *value +
                 "\" (must start with / and not be / or under /-/)";
        return false;
      }
      options->telemetry_path = *value;
    } else if (name == "web.config.file") {
      options->web_config_file = *value;
    } else if (name == "web.max-connections") {
      unsigned number = 0;
      auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), number);
      if (value->empty() || ec != std::errc() || ptr != value->data() + value->size() ||
          number < 1 || number > 16384) {
        *error = "invalid --web.max-connections \"" + *value + "\" (want 1..16384)";
        return false;
      }
      options->web_max_connections = static_cast<int>(number);
    } else if (name == "web.read-timeout") {
      auto d = ParseDuration(*value);
      if (!d || d->count() < 100 || d->count() > 600000) {
        *error = "invalid --web.read-timeout \"" + *value + "\" (100ms..10m)";
        return false;
      }
      options->web_read_timeout = *d;
    } else if (name == "path.sysfs") {
      if (value->empty()) {
        *error = "--path.sysfs must not be empty";
        return false;
      }
      options->sysfs_root = *value;
    } else if (name == "path.fixtures") {
      options->fixtures_dir = *value;
    } else if (name == "collector.ethtool.metrics-include") {
      if (!ValidRegex(*value, error, "--" + name)) return false;
      options->collector_options.ethtool_metrics_include.emplace(*value);
    } else if (name == "nccl.ib-tc" || name == "roce.min-mtu") {
      unsigned number = 0;
      auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), number);
      unsigned max = name == "nccl.ib-tc" ? 255 : 65535;
      if (value->empty() || ec != std::errc() || ptr != value->data() + value->size() ||
          number > max) {
        *error = "invalid --" + name + " \"" + *value + "\" (want 0.." + std::to_string(max) + ")";
        return false;
      }
      if (name == "nccl.ib-tc") {
        options->collector_options.nccl_ib_tc = static_cast<int>(number);
      } else {
        options->collector_options.roce_min_mtu = number;
      }
    } else if (name == "collector.hw_counters.source") {
      auto& source = options->collector_options.hw_counters_source;
      if (*value == "auto") {
        source = HwCounterSource::kAuto;
      } else if (*value == "netlink") {
        source = HwCounterSource::kNetlink;
      } else if (*value == "sysfs") {
        source = HwCounterSource::kSysfs;
      } else {
        *error = "invalid --" + name + " \"" + *value + "\" (auto, netlink or sysfs)";
        return false;
      }
    } else if (name == "poll-interval.slow") {
      auto d = ParseDuration(*value);
      if (!d) {
        *error = "invalid duration \"" + *value + "\" for --" + name + " (e.g. 60s, 5m, 0)";
        return false;
      }
      options->slow_poll_interval = *d;
    } else if (name == "poll-interval") {
      auto d = ParseDuration(*value);
      if (!d) {
        *error = "invalid duration \"" + *value + "\" for --poll-interval (e.g. 10s, 500ms, 0)";
        return false;
      }
      if (d->count() > 0 && d->count() < 100) {
        *error = "--poll-interval must be 0 or at least 100ms";
        return false;
      }
      options->poll_interval = *d;
    } else if (name == "device-include" || name == "device-exclude") {
      if (!ValidRegex(*value, error, "--" + name)) return false;
      (name == "device-include" ? options->device_include : options->device_exclude) = *value;
    } else if (name == "log.level") {
      if (*value != "debug" && *value != "info" && *value != "warn" && *value != "error") {
        *error = "invalid --log.level \"" + *value + "\" (debug, info, warn, error)";
        return false;
      }
      options->log_level = *value;
    } else if (name == "log.format") {
      if (*value == "logfmt") {
        options->log_format = LogFormat::kLogfmt;
      } else if (*value == "json") {
        options->log_format = LogFormat::kJson;
      } else {
        *error = "invalid --log.format \"" + *value + "\" (logfmt or json)";
        return false;
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
