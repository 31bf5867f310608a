// rdma_netlink: what only RDMA netlink (NETLINK_RDMA, iproute2's `rdma` tool) shows, through the
// RdmaNetlinkReader.
// rdma_resources{device, type="pd|cq|qp|cm_id|mr|ctx|srq"}: objects currently allocated on the
// device (RDMA_NLDEV_CMD_RES_GET, = `rdma resource show`; kernel users included).
// (Port hw counters over RDMA_NLDEV_CMD_STAT_GET belong to the hw_counters collector.)
// A device netlink does not know (ENODEV) is counted once per poll as "rdma_netlink:<device>".
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class RdmaNetlinkCollector : public Collector {
 public:
  std::string_view name() const override { return "rdma_netlink"; }
  std::string_view description() const override {
    return "RDMA resource counts (QPs, CQs, MRs, PDs, ...) from RDMA netlink";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
