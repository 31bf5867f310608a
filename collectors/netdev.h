// netdev: Netdev of each RDMA port: up, carrier changes, MTU, speed, errors (rtnetlink).
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class NetdevCollector : public Collector {
 public:
  std::string_view name() const override { return "netdev"; }
  std::string_view description() const override {
    return "Netdev of each RDMA port: up, carrier changes, MTU, speed, errors (rtnetlink)";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
