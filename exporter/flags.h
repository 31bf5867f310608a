// Command-line flags in the Prometheus exporter style (--name=value or --name value), from one
// table of flag specs (rdma_exporter/flag_spec.h) that also makes --help and docs/flags.md.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/flag_spec.h"
#include "rdma_exporter/logging.h"

namespace rdma_exporter {

struct Options : NodeOptions {  // --path.sysfs, --path.fixtures, device filters, NCCL/RoCE
  std::string listen_address = ":9879";
  std::string telemetry_path = "/metrics";
  std::string web_config_file;                       // --web.config.file (TLS, basic auth)
  int web_max_connections = 32;                      // --web.max-connections
  int web_max_pending_connections = 4096;            // --web.max-pending-connections
  std::chrono::milliseconds web_read_timeout{5000};  // --web.read-timeout
  std::chrono::milliseconds poll_interval{10000};
  // --poll-interval.slow: device identity, GIDs, PCIe, DCB/ECN/verbs configuration.
  std::chrono::milliseconds slow_poll_interval{60000};
  std::map<std::string, bool> collector_overrides;  // --[no-]collector.<name>
  std::string log_level = "info";
  LogFormat log_format = LogFormat::kLogfmt;
  bool show_version = false;
  bool show_help = false;
  bool show_help_markdown = false;  // --help-markdown (hidden): docs/flags.md
};

// Parses argv[1..]. On error returns false with a one-line message in *error.
bool ParseFlags(const std::vector<std::string>& args, Options* options, std::string* error);
// ":9879" -> "9879", "127.0.0.1:9879" -> "127.0.0.1:9879" (CivetWeb listening_ports syntax).
bool ListenAddressToCivetweb(const std::string& address, std::string* ports, std::string* error);
// The --help text.
std::string UsageText();
// docs/flags.md: the exporter's and the subcommands' flags as Markdown (--help-markdown).
std::string FlagsMarkdown();

}  // namespace rdma_exporter
