// device: rdma_device_info, one info series per RDMA device (GUIDs, firmware, board, PCI
// function, NUMA node, parent PF of an SR-IOV VF).
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class DeviceInfoCollector : public Collector {
 public:
  std::string_view name() const override { return "device"; }
  std::string_view description() const override {
    return "rdma_device_info: GUIDs, firmware, board, HCA type, PCI address, NUMA node, PF of a VF";
  }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
