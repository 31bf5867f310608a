#include "dcb.h"

#include <cerrno>
#include <set>

#include "common.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter {
namespace {

void Export(DcbReader& reader, const PhysicalNetdev& netdev, const Labels& labels,
            CollectContext& ctx, MetricSink& sink) {
  DcbConfig config;
  int err = reader.Read(netdev.name, &config);
  // ENODEV (the netdev vanished, or lives in another network namespace) is reported by the
  // netdev collector; counting it here too would double every such error. That collector reads
  // a bond, not its slaves: a missing slave is counted here.
  if (err == ENODEV && netdev.bond.empty()) return;
  if (err != 0) {
    ctx.ReadFailed("dcb:" + netdev.name, err);
    return;
  }
  // No DCB (EOPNOTSUPP) is a normal state of non-DCB NICs: a 0, not an error.
  sink.Gauge(metric::kDcbSupported,
             "1 if the netdev answers DCB (IEEE 802.1Qaz) queries, 0 if it has no DCB.", labels,
             config.supported ? 1 : 0);
  if (!config.supported) return;
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

}  // namespace

bool DcbCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->dcb == nullptr) return true;
  std::set<std::string> seen;
  for (const auto& device : inventory.devices) {
    if (!device.physfn.empty()) continue;  // SR-IOV VF: DCB belongs to the PF
    for (const auto& port : device.ports) {
      if (port.link_layer != "Ethernet") continue;
      // On a RoCE LAG port the bond has no DCB: each slave's is read.
      for (const auto& netdev : PhysicalNetdevs(port)) {
        if (!seen.insert(netdev.name).second) continue;
        Export(*kernel->dcb, netdev, PhysicalNetdevLabels(device, port, netdev), ctx, sink);
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
