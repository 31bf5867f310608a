// ecn: Per-priority RoCE ECN enable (MLNX_OFED sysfs ecn/roce_{np,rp}).
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class EcnCollector : public Collector {
 public:
  std::string_view name() const override { return "ecn"; }
  std::string_view description() const override {
    return "Per-priority RoCE ECN enable (MLNX_OFED sysfs ecn/roce_{np,rp})";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
