#include "netdev.h"

#include <cerrno>
#include <set>

#include "common.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

constexpr double kBytesPerSecondPerMbit = 125000;  // 1e6 / 8

// A sysfs class/net counter when the reader did not supply it (the rtnetlink reader: libnl 3.7
// does not parse IFLA_CARRIER_UP_COUNT / IFLA_CARRIER_DOWN_COUNT). Missing file: no value.
std::optional<uint64_t> SysfsCounter(CollectContext& ctx, const std::string& netdev,
                                     const char* file) {
  std::string path = JoinPath(JoinPath("class/net", netdev), file);
  std::string value;
  if (!ctx.ReadOptional(path, &value)) return std::nullopt;
  auto parsed = ParseU64(value);
  if (!parsed) ctx.Malformed(path, value);
  return parsed;
}

// speed in Mb/s: EINVAL while the netdev is down or has no link settings, -1 (SPEED_UNKNOWN)
// without link, absent on fixture trees. None of these is an error.
std::optional<double> Speed(CollectContext& ctx, const std::string& netdev) {
  std::string path = JoinPath(JoinPath("class/net", netdev), "speed");
  std::string value;
  int err = ctx.sysfs().ReadFile(path, &value);
  if (err == ENOENT || err == EINVAL) return std::nullopt;
  if (err != 0) {
    ctx.ReadFailed(path, err);
    return std::nullopt;
  }
  auto mbit = ParseI64(value);
  if (!mbit) {
    ctx.Malformed(path, value);
    return std::nullopt;
  }
  if (*mbit <= 0) return std::nullopt;
  return static_cast<double>(*mbit) * kBytesPerSecondPerMbit;
}

void CounterIf(MetricSink& sink, std::string_view name, std::string_view help, const Labels& labels,
               const std::optional<uint64_t>& value) {
  if (value) sink.Counter(name, help, labels, static_cast<double>(*value));
}

}  // namespace

bool NetdevCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->netdev == nullptr) return true;
  std::set<std::string> seen;
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      if (port.netdev.empty() || !seen.insert(port.netdev).second) continue;
      NetdevState state;
      int err = kernel->netdev->Read(port.netdev, &state);
      if (err != 0) {
        ctx.ReadFailed("netdev:" + port.netdev, err);
        continue;
      }
      Labels labels = NetdevLabels(device, port);
      sink.Gauge("rdma_netdev_up",
                 "1 if the RDMA port's netdev is operationally up (operstate up), else 0.", labels,
                 state.oper_up ? 1 : 0);
      sink.Gauge("rdma_netdev_admin_up",
                 "1 if the RDMA port's netdev is administratively up (IFF_UP), else 0.", labels,
                 state.admin_up ? 1 : 0);
      if (state.carrier) {
        sink.Gauge("rdma_netdev_carrier",
                   "1 if the netdev has carrier, 0 if not; absent while it is admin down.", labels,
                   *state.carrier ? 1 : 0);
      }
      CounterIf(sink, "rdma_netdev_carrier_changes_total",
                "Carrier transitions of the netdev since it was created (up + down).", labels,
                state.carrier_changes);
      auto up = state.carrier_up_count;
      auto down = state.carrier_down_count;
      if (!up) up = SysfsCounter(ctx, port.netdev, "carrier_up_count");
      if (!down) down = SysfsCounter(ctx, port.netdev, "carrier_down_count");
      CounterIf(sink, "rdma_netdev_carrier_up_total",
                "Carrier up transitions of the netdev since it was created.", labels, up);
      CounterIf(sink, metric::kNetdevCarrierDown,
                "Carrier down transitions of the netdev since it was created.", labels, down);
      if (state.mtu) {
        sink.Gauge(metric::kNetdevMtu, "MTU of the netdev in bytes.", labels, *state.mtu);
      }
      if (auto speed = Speed(ctx, port.netdev)) {
        sink.Gauge("rdma_netdev_speed_bytes_per_second",
                   "Link speed of the netdev in bytes per second (sysfs speed in Mb/s * 125000); "
                   "absent while the link is down or the speed unknown.",
                   labels, *speed);
      }
      CounterIf(sink, metric::kNetdevReceiveErrors, "Receive errors of the netdev.", labels,
                state.rx_errors);
      CounterIf(sink, metric::kNetdevTransmitErrors, "Transmit errors of the netdev.", labels,
                state.tx_errors);
      CounterIf(sink, "rdma_netdev_receive_drops_total",
                "Received packets dropped by the netdev (rx_dropped).", labels, state.rx_dropped);
      CounterIf(sink, "rdma_netdev_transmit_drops_total",
                "Packets dropped by the netdev on transmit (tx_dropped).", labels,
                state.tx_dropped);
    }
  }
  return true;
}

}  // namespace rdma_exporter
