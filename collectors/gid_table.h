// gid: rdma_gid_info{device,port,index,gid,gid_type,netdev} = 1 for each non-empty GID, by the
// logic of Mellanox's show_gids (zero GIDs and a bare fe80:: prefix are skipped; gid_attrs
// files that fail with EINVAL mean "no type/netdev", not an error).
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class GidTableCollector : public Collector {
 public:
  std::string_view name() const override { return "gid"; }
  std::string_view description() const override {
    return "GID table entries with RoCE version and netdev (show_gids)";
  }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
