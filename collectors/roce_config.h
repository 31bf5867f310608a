// roce_config: the RoCE settings NCCL needs to stay lossless, checked per port.
//
// With --nccl.ib-tc=TC the NCCL traffic class maps to DSCP = TC >> 2 and, in DSCP trust, to the
// priority the live DSCP->priority map (DCB APP table) gives it: rdma_nccl_priority. Each check
// is rdma_roce_config_ok{device,port,netdev,check} = 1 (ok) or 0 (bad); a check whose input is
// unknown (no DCB, no OFED ECN files, no TC given) is not exported rather than reported bad.
// On a RoCE LAG port (netdev a bond) DCB and ECN are read from each slave, and every check is
// exported once per slave with labels {device, port, netdev=<slave>, bond=<bond>}.
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class RoceConfigCollector : public Collector {
 public:
  explicit RoceConfigCollector(const CollectorOptions& options)
      : nccl_ib_tc_(options.nccl_ib_tc), min_mtu_(options.roce_min_mtu) {}
  std::string_view name() const override { return "roce_config"; }
  std::string_view description() const override {
    return "NCCL priority (from --nccl.ib-tc) and RoCE configuration checks: PFC, trust, ECN, "
           "MTU, RoCE v2 GID";
  }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  void QosChecks(CollectContext& ctx, DcbReader& reader, const std::string& netdev,
                 const Labels& labels, MetricSink& sink) const;

  std::optional<int> nccl_ib_tc_;
  unsigned min_mtu_;
};

}  // namespace rdma_exporter
