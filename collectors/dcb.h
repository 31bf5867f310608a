// dcb: DCB state of the netdev of each Ethernet RDMA port of a PF (VFs have no DCB of their
// own), from the DcbReader (rtnetlink RTM_GETDCB, or fixture files). Labels {device, port,
// netdev}: rdma_dcb_supported; when supported also rdma_pfc_enabled{priority="0".."7"} and
// rdma_qos_trust_info{mode="pcp"|"dscp"}. On a RoCE LAG port (netdev a bond, which has no DCB) each
// slave is read instead, labels {device, port, netdev=<slave>, bond=<bond>}. The DSCP->priority map
// is not exported here (64 series per port); roce_config reads it from the DcbReader.
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class DcbCollector : public Collector {
 public:
  std::string_view name() const override { return "dcb"; }
  std::string_view description() const override {
    return "DCB support, PFC enabled priorities and QoS trust mode (rtnetlink DCB)";
  }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
