#include "port_state.h"

#include "common.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

constexpr unsigned kPortActive = 4;  // enum ib_port_state IB_PORT_ACTIVE
constexpr unsigned kPhysLinkUp = 5;  // phys_state LinkUp

// Reads "<n>: <name>" files (state, phys_state).
std::optional<unsigned> ReadNumbered(CollectContext& ctx, const std::string& path,
                                     std::string* buf) {
  if (!ctx.Read(path, buf)) return std::nullopt;
  auto parsed = ParseNumberedName(*buf);
  if (!parsed) {
    ctx.Malformed(path, *buf);
    return std::nullopt;
  }
  return parsed->number;
}

}  // namespace

bool PortStateCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                 MetricSink& sink) {
  std::string value;
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      Labels labels = PortLabels(device, port);
      sink.Gauge(metric::kPortInfo,
                 "Descriptive labels of an RDMA port; value is always 1. netdev is the port's "
                 "network interface (ibdev2netdev logic), empty when none.",
                 {{"device", device.name},
                  {"port", std::to_string(port.number)},
                  {"link_layer", port.link_layer},
                  {"netdev", port.netdev}},
                 1);
      auto state = ReadNumbered(ctx, JoinPath(port.dir, "state"), &value);
      if (state) {
        sink.Gauge(metric::kPortState,
                   "Logical port state: 0 NOP, 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.",
                   labels, *state);
      }
      auto phys = ReadNumbered(ctx, JoinPath(port.dir, "phys_state"), &value);
      if (phys) {
        sink.Gauge(metric::kPortPhysicalState,
                   "Physical port state: 1 Sleep, 2 Polling, 3 Disabled, "
                   "4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest.",
                   labels, *phys);
      }
      if (state && phys) {
        sink.Gauge(metric::kPortUp, "1 if the port is ACTIVE and its physical link is LinkUp.",
                   labels, (*state == kPortActive && *phys == kPhysLinkUp) ? 1 : 0);
      }
      // rate fails with EINVAL when the width is unknown (e.g. an empty cage).
      std::string rate_file = JoinPath(port.dir, "rate");
      if (!ctx.Read(rate_file, &value)) continue;
      auto rate = ParsePortRate(value);
      if (!rate) {
        ctx.Malformed(rate_file, value);
        continue;
      }
      sink.Gauge(metric::kPortRate,
                 "Port data rate in bytes per second (the sysfs rate in Gb/s / 8).", labels,
                 rate->gbit_per_second * 1e9 / 8);
      sink.Gauge(metric::kPortLinkWidth, "Active link width in lanes (1, 2, 4, 8, 12).", labels,
                 rate->width);
      if (rate->speed.empty()) continue;  // an older kernel's unnamed speed: rate and width only
      sink.Gauge("rdma_port_lane_speed_info",
                 "Active per-lane speed (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR) as a "
                 "label; value is always 1.",
                 With(labels, "speed", std::string(rate->speed)), 1);
    }
  }
  return true;
}

}  // namespace rdma_exporter
