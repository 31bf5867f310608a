// lldp: the switch port at the other end of each RoCE port, from the LLDP frames the switch
// sends (rdma_exporter/lldp.h): rdma_port_peer_info{source="lldp"} with the switch's chassis ID,
// port ID and system name, so ports can be grouped by switch. Off by default: listening needs an
// AF_PACKET socket (CAP_NET_RAW; deploy/kubernetes/overlays/link-peer); without it one log line
// and nothing else. A NIC whose firmware runs its own LLDP agent (DCBX in firmware) may consume
// the frames: then no neighbour is heard (docs/metrics.md). A port whose link is down keeps its
// last known peer (peer_memory.h).
#pragma once

#include "peer_memory.h"
#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class LldpCollector : public Collector {
 public:
  std::string_view name() const override { return "lldp"; }
  std::string_view description() const override {
    return "The LLDP neighbour (switch, port) of each RoCE port from received LLDP frames (needs "
           "CAP_NET_RAW)";
  }
  bool enabled_by_default() const override { return false; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  bool said_no_permission_ = false;
  PeerMemory memory_;
};

}  // namespace rdma_exporter
