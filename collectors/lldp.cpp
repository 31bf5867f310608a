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
  std::set<std::string> asked;
  LldpNeighbor n;
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      if (port.link_layer != "Ethernet") continue;  // InfiniBand has no LLDP (SMPs name peers)
      // A RoCE LAG port has a switch port per slave; a VF shares its PF's.
      if (!device.physfn.empty()) continue;
      for (const auto& netdev : PhysicalNetdevs(port)) {
        if (!asked.insert(netdev.name).second) continue;
        int err = kernel->lldp->Neighbor(netdev.name, &n);
        if (err == ENOENT) continue;  // nothing heard (yet, or the TTL ran out)
        if (err == EPERM || err == EACCES) {
          if (!said_no_permission_) {
            LogInfo("LLDP needs CAP_NET_RAW (a packet socket): no link peers",
                    {{"netdev", netdev.name}});
            said_no_permission_ = true;
          }
          return true;
        }
        if (err != 0) {
          ctx.ReadFailed("lldp:" + netdev.name, err);
          continue;
        }
        Labels labels = PhysicalNetdevLabels(device, port, netdev);
        labels.push_back({"source", "lldp"});
        labels.push_back({"peer_chassis_id", n.chassis_id});
        labels.push_back({"peer_port", n.port_id});
        labels.push_back({"peer_port_description", n.port_description});
        labels.push_back({"peer_description", n.system_name});
        labels.push_back({"peer_type", n.system_type});
        sink.Gauge(metric::kPortPeerInfo,
                   "The device at the other end of the port's link, value 1: source lldp (the "
                   "switch's chassis ID, port ID and system name from its LLDP frames).",
                   labels, 1);
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
