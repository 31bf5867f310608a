// pcie: PCIe link speed and width (current and max) of each device's PCI function, the maximum
// of the port upstream of it (the slot), and AER error totals. A downtrained link (x8 instead
// of x16, Gen4 instead of Gen5) halves NCCL bandwidth without any RDMA counter moving.
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class PcieCollector : public Collector {
 public:
  std::string_view name() const override { return "pcie"; }
  std::string_view description() const override {
    return "PCIe link speed/width (current, max) and AER error totals of the device's function";
  }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
