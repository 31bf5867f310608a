#include "lldp.h"

#include <cerrno>
#include <cstring>
#include <set>

#include "common.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter {

bool LldpCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->lldp == nullptr) return true;
  memory_.Keep(inventory);
  std::set<std::string> asked;
  LldpNeighbor n;
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      if (port.link_layer != "Ethernet") continue;  // InfiniBand has no LLDP (ib_peer: SMPs)
      // A RoCE LAG port has a switch port per slave; a VF shares its PF's.
      if (!device.physfn.empty()) continue;
      bool link_up = PhysLinkUp(ctx, port);
      for (const auto& netdev : PhysicalNetdevs(port)) {
        if (!asked.insert(netdev.name).second) continue;
        const std::string key = device.name + "/" + std::to_string(port.number) + "/" + netdev.name;
        int err = kernel->lldp->Neighbor(netdev.name, &n);
        if (err == EPERM || err == EACCES) {
          if (!said_no_permission_) {
            LogInfo("LLDP needs CAP_NET_RAW (a packet socket): no link peers",
                    {{"netdev", netdev.name}});
            said_no_permission_ = true;
          }
          return true;
        }
        if (err != 0) {
          if (err != ENOENT) ctx.ReadFailed("lldp:" + netdev.name, err);
          // Nothing heard (yet, or the TTL ran out): while the link is down the cable still
          // ends where it did; up and silent, the peer is gone (or sends no LLDP).
          const Labels* last = memory_.Last(key);
          if (last != nullptr && !link_up) {
            sink.Gauge(metric::kPortPeerInfo, kPortPeerInfoHelp, *last, 1);
          } else if (err == ENOENT) {
            memory_.Forget(key);
          }
          continue;
        }
        Labels labels = PhysicalNetdevLabels(device, port, netdev);
        labels.push_back({"source", "lldp"});
        labels.push_back({"peer_chassis_id", n.chassis_id});
        labels.push_back({"peer_port", n.port_id});
        labels.push_back({"peer_port_description", n.port_description});
        labels.push_back({"peer_description", n.system_name});
        labels.push_back({"peer_type", n.system_type});
        memory_.Heard(key, labels);
        sink.Gauge(metric::kPortPeerInfo, kPortPeerInfoHelp, labels, 1);
      }
    }
  }
  sink.Counter("rdma_lldp_frames_received_total",
               "LLDP frames received on any interface since the exporter started listening, by "
               "whether they parsed.",
               {{"result", "parsed"}},
               static_cast<double>(kernel->lldp->frames() - kernel->lldp->malformed_frames()));
  sink.Counter("rdma_lldp_frames_received_total", "", {{"result", "malformed"}},
               static_cast<double>(kernel->lldp->malformed_frames()));
  return true;
}

}  // namespace rdma_exporter
