#include "dcb.h"

#include <cerrno>
#include <set>

#include "common.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter {

bool DcbCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->dcb == nullptr) return true;
  std::set<std::string> seen;
  for (const auto& device : inventory.devices) {
    if (!device.physfn.empty()) continue;  // SR-IOV VF: DCB belongs to the PF
    for (const auto& port : device.ports) {
      if (port.link_layer != "Ethernet" || port.netdev.empty()) continue;
      if (!seen.insert(port.netdev).second) continue;
      DcbConfig config;
      int err = kernel->dcb->Read(port.netdev, &config);
      // ENODEV (the netdev vanished, or lives in another network namespace) is reported by the
      // netdev collector; counting it here too would double every such error.
      if (err == ENODEV) continue;
      if (err != 0) {
        ctx.ReadFailed("dcb:" + port.netdev, err);
        continue;
      }
      Labels labels = NetdevLabels(device, port);
      // No DCB (EOPNOTSUPP) is a normal state of non-DCB NICs: a 0, not an error.
      sink.Gauge(metric::kDcbSupported,
                 "1 if the netdev answers DCB (IEEE 802.1Qaz) queries, 0 if it has no DCB.", labels,
                 config.supported ? 1 : 0);
      if (!config.supported) continue;
      if (config.pfc_known) {
        for (unsigned prio = 0; prio < 8; ++prio) {
          sink.Gauge(metric::kPfcEnabled,
                     "1 if priority flow control is enabled for the priority (ieee_pfc.pfc_en).",
                     With(labels, "priority", std::to_string(prio)),
                     ((config.pfc_enabled >> prio) & 1u) != 0 ? 1 : 0);
        }
      }
      sink.Gauge(metric::kQosTrustInfo,
                 "QoS trust mode of the netdev as the mode label (dscp if the DCB APP table has "
                 "DSCP entries, else pcp); value is always 1.",
                 With(labels, "mode", config.dscp_entries > 0 ? "dscp" : "pcp"), 1);
    }
  }
  return true;
}

}  // namespace rdma_exporter
