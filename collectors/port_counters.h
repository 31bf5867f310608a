// counters: the IB PMA PortCounters files of ports/<N>/counters/ (and the legacy counters_ext/)
// as rdma_port_<name>_total, data counters in bytes, plus rdma_port_counters_saturated for
// counters stuck at the all-ones value of their IBTA width (PMA counters saturate, not wrap).
#pragma once

#include "rdma_exporter/collector.h"
#include "rdma_exporter/counter_readers.h"

namespace rdma_exporter {

class PortCountersCollector : public Collector {
 public:
  std::string_view name() const override { return "counters"; }
  std::string_view description() const override {
    return "IB PMA port counters (counters/, counters_ext/) and their saturation";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
