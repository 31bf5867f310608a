// verbs: device limits and port MTUs from the verbs interface (libibverbs ibv_query_device /
// ibv_query_port, or `ibv_devinfo -v` fixture files) through the VerbsReader.
// rdma_port_active_mtu_bytes / rdma_port_max_mtu_bytes {device, port}: the path MTU the port
// negotiated (RoCE: from the netdev MTU, 4096 needs a netdev MTU >= 4200) and its maximum.
// rdma_device_max_{qps,cqs,mrs,pds,srqs} {device}: device limits, to alert on resource use
// (rdma_resources / rdma_device_max_*). Each read opens a verbs context for a moment
// (/dev/infiniband/uverbsN access needed); failures are counted as "verbs:<device>".
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class VerbsCollector : public Collector {
 public:
  std::string_view name() const override { return "verbs"; }
  std::string_view description() const override {
    return "Port active/max MTU and device limits (max QPs, CQs, MRs, PDs, SRQs) from libibverbs";
  }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
