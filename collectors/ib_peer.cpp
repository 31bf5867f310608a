#include "ib_peer.h"

#include <cerrno>

#include "common.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter {

bool IbPeerCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->ib_peer == nullptr) return true;
  memory_.Keep(inventory);
  IbPeer peer;
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      if (port.link_layer != "InfiniBand") continue;  // RoCE ports: the lldp collector
      const std::string key = device.name + "/" + std::to_string(port.number);
      // Only a trained link answers (asking a down one costs the SMP timeout for nothing); a
      // down one keeps its last known peer.
      if (!PhysLinkUp(ctx, port)) {
        if (const Labels* last = memory_.Last(key)) {
          sink.Gauge(metric::kPortPeerInfo, kPortPeerInfoHelp, *last, 1);
        }
        continue;
      }
      int err = kernel->ib_peer->Read(device.name, port.number, &peer);
      if (err == ENODEV) {
        if (said_unavailable_.insert(device.name).second) {
          LogInfo("no umad device: InfiniBand link peer not available", {{"device", device.name}});
        }
        continue;
      }
      if (err == EACCES || err == EPERM) {
        if (!said_no_access_) {
          LogInfo("InfiniBand link peers need access to /dev/infiniband/umad*: none exported",
                  {{"device", device.name}});
          said_no_access_ = true;
        }
        return true;
      }
      if (err != 0) {
        ctx.ReadFailed("smp:" + key, err);
        if (const Labels* last = memory_.Last(key)) {
          sink.Gauge(metric::kPortPeerInfo, kPortPeerInfoHelp, *last, 1);
        }
        continue;
      }
      Labels labels = NetdevLabels(device, port);
      labels.push_back({"source", "smp"});
      labels.push_back({"peer_chassis_id", FormatGuid(peer.node_info.node_guid)});
      labels.push_back({"peer_port", std::to_string(peer.node_info.local_port_num)});
      labels.push_back({"peer_port_description", ""});
      labels.push_back({"peer_description", peer.description});
      labels.push_back({"peer_type", IbNodeTypeName(peer.node_info.node_type)});
      memory_.Heard(key, labels);
      sink.Gauge(metric::kPortPeerInfo, kPortPeerInfoHelp, labels, 1);
      ExportPeerXmitWait(device, port, key, peer, ctx, sink);
    }
  }
  return true;
}

void IbPeerCollector::ExportPeerXmitWait(const DeviceInfo& device, const PortInfo& port,
                                         const std::string& key, const IbPeer& peer,
                                         CollectContext& ctx, MetricSink& sink) {
  switch (peer.xmit_wait_error) {
    case 0:
      sink.Counter(metric::kPortPeerTransmitWait,
                   "Ticks the neighbour port (the switch port at the other end) had data for "
                   "this port but no flow-control credits: its 64-bit PortXmitWait from "
                   "PortCountersExtended, read from its PMA. Grows when this port's receive "
                   "side holds the fabric back (slow tier).",
                   PortLabels(device, port), static_cast<double>(peer.xmit_wait));
      return;
    case ENOTSUP:  // the neighbour's agent has no 64-bit PortXmitWait: a property, said once
    case ENXIO:    // no LID yet: no subnet manager on the fabric
      if (said_no_peer_counters_.insert(key).second) {
        LogInfo(peer.xmit_wait_error == ENOTSUP
                    ? "the neighbour's PMA has no 64-bit PortXmitWait: not exported"
                    : "the neighbour has no LID (no subnet manager): its PortXmitWait not read",
                {{"device", device.name}, {"port", std::to_string(port.number)}});
      }
      return;
    default:
      ctx.ReadFailed("pma:" + key, peer.xmit_wait_error);
  }
}

}  // namespace rdma_exporter
