// rdma_netlink: what only RDMA netlink (NETLINK_RDMA, iproute2's `rdma` tool) shows, through the
// RdmaNetlinkReader.
// rdma_resources{device, type="pd|cq|qp|cm_id|mr|ctx|srq"}: objects currently allocated on the
// device (RDMA_NLDEV_CMD_RES_GET, = `rdma resource show`; kernel users included).
// rdma_hw_<name>_total{device, port}: hw counters that RDMA_NLDEV_CMD_STAT_GET reports but
// ports/<N>/hw_counters has no file for - the optional counters a driver exposes only when
// enabled (mlx5: `rdma statistic set link mlx5_0/1 optional-counters cc_rx_ce_pkts,...`).
// Counters that are sysfs files are left to the hw_counters collector (no duplicate series).
// A device netlink does not know (ENODEV) is counted once per poll as "rdma_netlink:<device>".
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class RdmaNetlinkCollector : public Collector {
 public:
  std::string_view name() const override { return "rdma_netlink"; }
  std::string_view description() const override {
    return "RDMA resource counts (QPs, CQs, MRs, PDs, ...) and optional hw counters absent from "
           "sysfs, from RDMA netlink";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
