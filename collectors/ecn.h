// ecn: per-priority RoCE ECN enable of each RDMA port's netdev from the MLNX_OFED sysfs files
// class/net/<netdev>/ecn/roce_{np,rp}/enable/<0..7>. Upstream kernels and VFs have no ecn
// directory: no series, no error. Labels {device, port, netdev, role="np"|"rp", priority}:
// rdma_ecn_enabled. On a RoCE LAG port the bond's slaves are read (labels add bond=<bond>).
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class EcnCollector : public Collector {
 public:
  std::string_view name() const override { return "ecn"; }
  std::string_view description() const override {
    return "Per-priority RoCE ECN enable (MLNX_OFED sysfs ecn/roce_{np,rp})";
  }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
