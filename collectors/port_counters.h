// counters: the IB PMA PortCounters files of ports/<N>/counters/ (and the legacy counters_ext/)
// as rdma_port_<name>_total, data counters in bytes, plus rdma_port_counters_saturated for
// counters stuck at the all-ones value of their IBTA width (PMA counters saturate, not wrap),
// and rdma_port_pma_supported (0: a port without PMA, whose counters are not read errors).
#pragma once

#include <set>
#include <string>

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

 private:
  static void Export(const Labels& labels, const std::string& file, const PmaReading& reading,
                     MetricSink& sink);
  // "device/port" of ports whose data/packet counters proved 64-bit (a value above 2^32-1).
  std::set<std::string> wide_data_ports_;
};

}  // namespace rdma_exporter
