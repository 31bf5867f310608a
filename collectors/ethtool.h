// ethtool: Per-priority PFC/pause, priority traffic and discards, PHY and NIC health (ethtool -S,
// mlx5).
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class EthtoolCollector : public Collector {
 public:
  std::string_view name() const override { return "ethtool"; }
  std::string_view description() const override {
    return "Per-priority PFC/pause, priority traffic and discards, PHY and NIC health (ethtool -S, "
           "mlx5)";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
