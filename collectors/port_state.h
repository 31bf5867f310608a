// port: per-port identity, state and link rate: rdma_port_info, rdma_port_state,
// rdma_port_physical_state, rdma_port_up, rdma_port_rate_bytes_per_second,
// rdma_port_link_width_lanes, rdma_port_lane_speed_info.
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class PortStateCollector : public Collector {
 public:
  std::string_view name() const override { return "port"; }
  std::string_view description() const override {
    return "Port link layer, netdev, logical and physical state, rate, width and lane speed";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
