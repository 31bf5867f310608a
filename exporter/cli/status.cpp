// status: the node page's view on the command line. Two collections --sample seconds apart
// through the exporter's collectors, graded by the same model as / and /api/v1/status
// (rdma_exporter/node_status.h); --json prints that endpoint's document.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <thread>

#include "cli_internal.h"
#include "rdma_exporter/host.h"
#include "rdma_exporter/node_status.h"

namespace rdma_exporter {
namespace {

const char* Tag(Level level) {
  switch (level) {
    case Level::kOk:
      return "OK";
    case Level::kWarning:
      return "WARN";
    case Level::kCritical:
      break;
  }
  return "CRIT";
}

std::string Share(const std::optional<double>& ratio) {
  if (!ratio) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", *ratio * 100);
  return buf;
}

void PrintText(const NodeHealth& h, std::ostream& out) {
  out << h.node << ": " << LevelName(h.level) << ", " << LevelHeadline(h.level);
  if (h.window_seconds > 0) {
    out << " (rates over " << doctor::Number(std::round(h.window_seconds * 10) / 10) << " s)";
  }
  out << "\n";
  for (const auto& p : h.ports) {
    std::string name =
        p.device + "/" + std::to_string(p.port) + (p.netdev.empty() ? "" : " (" + p.netdev + ")");
    std::string line = PadRight(Tag(p.level), 5) + PadRight(name, 28) + " " +
                       PadRight(p.state + "/" + p.phys_state, 16) + " " +
                       PadRight(p.rate.empty() ? "-" : p.rate, 13) + " tx " +
                       PadLeft(Share(p.tx_utilisation), 6) + " rx " +
                       PadLeft(Share(p.rx_utilisation), 6) + "  pause tx " +
                       PadLeft(Share(p.tx_pause), 6) + " rx " + PadLeft(Share(p.rx_pause), 6);
    for (size_t i = 0; i < p.findings.size(); ++i)
      line += (i == 0 ? "  " : "; ") + p.findings[i];
    out << doctor::Sanitize(line) << "\n";
  }
  if (h.ports.empty()) out << "no RDMA ports\n";
  for (const auto& f : h.findings)
    out << "node: " << f << "\n";
  int counts[4] = {0, 0, 0, 0};
  for (const auto& c : h.checks)
    ++counts[static_cast<int>(c.status)];
  out << "checks: " << counts[0] << " PASS, " << counts[1] << " SKIP, " << counts[2] << " WARN, "
      << counts[3] << " FAIL (rdma_exporter doctor explains each)\n";
}

}  // namespace

int Status(const CliOptions& options, std::ostream& out, std::ostream& err) {
  CliNode node(options);
  if (!node.Discover(err)) return 1;
  auto collectors =
      node.MakeCollectors({"device", "port", "counters", "hw_counters", "pcie", "gid", "netdev",
                           "ethtool", "dcb", "ecn", "roce_config", "verbs", "module"});
  double before_time = WallClockSeconds();
  auto before = node.Collect(collectors);
  std::vector<prometheus::MetricFamily> now;
  double now_time = before_time;
  if (options.sample_seconds > 0 && !node.inventory().devices.empty()) {
    std::this_thread::sleep_for(std::chrono::duration<double>(options.sample_seconds));
    now = node.Collect(collectors);
    now_time = WallClockSeconds();
  }
  bool sampled = now_time != before_time;
  NodeHealthInput in;
  in.inventory = &node.inventory();
  in.now = sampled ? &now : &before;
  in.before = sampled ? &before : nullptr;
  in.now_timestamp = now_time;
  in.before_timestamp = before_time;
  in.wall_clock = now_time;
  in.sequence = sampled ? 2 : 1;
  in.node = HostName();
  in.nccl_ib_tc = options.collector_options.nccl_ib_tc;
  in.roce_min_mtu = options.collector_options.roce_min_mtu;
  NodeHealth health = BuildNodeHealth(in);
  if (options.json) {
    out << NodeHealthJson(health);
  } else {
    PrintText(health, out);
  }
  return health.level == Level::kCritical ? 1 : 0;
}

}  // namespace rdma_exporter
