// dcb: DCB support, PFC enabled priorities and QoS trust mode (rtnetlink DCB).
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class DcbCollector : public Collector {
 public:
  std::string_view name() const override { return "dcb"; }
  std::string_view description() const override {
    return "DCB support, PFC enabled priorities and QoS trust mode (rtnetlink DCB)";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
