#include "ecn.h"

#include <set>

#include "common.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {

namespace {

void Export(const std::string& ecn_dir, const Labels& labels, CollectContext& ctx,
            MetricSink& sink) {
  std::string value;
  for (const char* role : {"np", "rp"}) {
    // Each read is a QUERY_CONG_STATUS firmware command on mlx5.
    const std::string dir = JoinPath(ecn_dir, std::string("roce_") + role + "/enable");
    for (unsigned prio = 0; prio < 8; ++prio) {
      std::string path = JoinPath(dir, std::to_string(prio));
      if (!ctx.ReadOptional(path, &value)) continue;
      auto enabled = ParseU64(value);
      if (!enabled || *enabled > 1) {
        ctx.Malformed(path, value);
        continue;
      }
      sink.Gauge(metric::kEcnEnabled,
                 "1 if RoCE ECN is enabled for the priority in the role (np: notification "
                 "point, marks CNPs; rp: reaction point, rate limits), else 0. MLNX_OFED "
                 "only.",
                 With(With(labels, "role", role), "priority", std::to_string(prio)), *enabled);
    }
  }
}

}  // namespace

bool EcnCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  std::set<std::string> seen;
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      // On a RoCE LAG port the ecn/ files are the slaves' (the bond has none).
      for (const auto& netdev : PhysicalNetdevs(port)) {
        if (!seen.insert(netdev.name).second) continue;
        const std::string ecn_dir = JoinPath(JoinPath("class/net", netdev.name), "ecn");
        // One access() per netdev on kernels without the OFED ecn directory.
        if (!ctx.sysfs().Exists(ecn_dir)) continue;
        Export(ecn_dir, PhysicalNetdevLabels(device, port, netdev), ctx, sink);
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
