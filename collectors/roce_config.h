// roce_config: NCCL priority and RoCE configuration checks (needs --nccl.ib-tc).
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class RoceConfigCollector : public Collector {
 public:
  std::string_view name() const override { return "roce_config"; }
  std::string_view description() const override {
    return "NCCL priority and RoCE configuration checks (needs --nccl.ib-tc)";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
