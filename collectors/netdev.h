// netdev: the network interface of each RDMA port (each netdev once), from the NetdevReader
// (rtnetlink, or sysfs in fixture mode) plus sysfs class/net/<netdev>/{speed,carrier_*_count}.
// Labels {device, port, netdev}: rdma_netdev_up, rdma_netdev_admin_up, rdma_netdev_carrier,
// rdma_netdev_carrier_changes_total, rdma_netdev_carrier_up_total,
// rdma_netdev_carrier_down_total, rdma_netdev_mtu_bytes, rdma_netdev_speed_bytes_per_second,
// rdma_netdev_{receive,transmit}_{errors,drops}_total.
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class NetdevCollector : public Collector {
 public:
  std::string_view name() const override { return "netdev"; }
  std::string_view description() const override {
    return "Netdev of each RDMA port: up, carrier changes, MTU, speed, errors (rtnetlink)";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
