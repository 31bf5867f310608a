// ethtool: the netdev statistics of RoCE ports (`ethtool -S`, ETH_SS_STATS through the kernel's
// EthtoolReader), mapped for mlx5 into labelled families: per-priority PFC pause frames,
// durations and transitions, pause-storm events, per-priority traffic, discards and ECN marks,
// global 802.3x pause, PHY health, NIC receive out-of-buffer and PCIe outbound stalls (reference
// §3.1). Any other stat is exported only when its name fully matches
// --collector.ethtool.metrics-include, as untyped rdma_ethtool_<name>.
//
// One GSTATS costs mlx5 tens of firmware commands (reference §3.2): each netdev is read once per
// poll, on PFs only (a VF's ethtool set has no port counters). On a RoCE LAG port (netdev a bond,
// which has no statistics) each slave is read, labels {device, port, netdev=<slave>,
// bond=<bond>}.
#pragma once

#include <map>
#include <optional>
#include <regex>

#include "hw_counters.h"
#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class EthtoolCollector : public Collector {
 public:
  EthtoolCollector() = default;
  explicit EthtoolCollector(const CollectorOptions& options)
      : include_(options.ethtool_metrics_include) {}

  std::string_view name() const override { return "ethtool"; }
  std::string_view description() const override {
    return "Per-priority PFC/pause, priority traffic and discards, PHY and NIC health (ethtool -S, "
           "mlx5)";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  void Export(const Labels& labels, const std::string& netdev, const EthtoolStats& stats,
              MetricSink& sink);

  std::optional<std::regex> include_;
  WrapExtender wraps_;  // rx_out_of_buffer: a u32 sum of q-counters in mlx5 that wraps
  // A statistic with no mapping: whether --collector.ethtool.metrics-include selects it, and its
  // metric name and help. Decided once per name (a driver's names are a fixed list), not by a
  // regex match on every poll.
  struct Generic {
    bool included = false;
    std::string metric;
    std::string help;
  };
  std::map<std::string, Generic, std::less<>> generic_;
};

}  // namespace rdma_exporter
