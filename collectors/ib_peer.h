// ib_peer: the node at the other end of each InfiniBand port (its leaf switch), asked with
// directed-route SMPs through the port's umad device (rdma_exporter/ib_peer.h):
// rdma_port_peer_info{source="smp"} with the neighbour's node GUID, its port number, its node
// description (a switch's name) and type; rdma_port_peer_transmit_wait_ticks_total, the
// neighbour port's 64-bit PortXmitWait from its PMA (LID-routed, where the agent declares it).
// Slow tier; only ports whose link is up are asked (an
// SMP into a down link only times out); a down port keeps its last known peer (peer_memory.h). Off
// by default: it needs read-write access to /dev/infiniband/umad* (root, or the rdma group);
// without it one log line and nothing else. A device without umad (rxe, a node without ib_umad) is
// "not available", said once.
#pragma once

#include <set>
#include <string>

#include "peer_memory.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/ib_peer.h"

namespace rdma_exporter {

class IbPeerCollector : public Collector {
 public:
  std::string_view name() const override { return "ib_peer"; }
  std::string_view description() const override {
    return "The InfiniBand neighbour (switch GUID, port, name) of each port by SMP (needs "
           "/dev/infiniband/umad* access)";
  }
  bool enabled_by_default() const override { return false; }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  void ExportPeerXmitWait(const DeviceInfo& device, const PortInfo& port, const std::string& key,
                          const IbPeer& peer, CollectContext& ctx, MetricSink& sink);

  bool said_no_access_ = false;
  std::set<std::string> said_no_peer_counters_;  // ports whose neighbour has none, logged once
  std::set<std::string> said_unavailable_;       // devices without umad, logged once each
  PeerMemory memory_;
};

}  // namespace rdma_exporter
