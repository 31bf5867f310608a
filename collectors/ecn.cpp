#include "ecn.h"

#include <set>

#include "common.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {

bool EcnCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  std::set<std::string> seen;
  std::string value;
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      if (port.netdev.empty() || !seen.insert(port.netdev).second) continue;
      const std::string ecn_dir = JoinPath(JoinPath("class/net", port.netdev), "ecn");
      // One access() per netdev on kernels without the OFED ecn directory.
      if (!ctx.sysfs().Exists(ecn_dir)) continue;
      Labels labels = NetdevLabels(device, port);
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
  }
  return true;
}

}  // namespace rdma_exporter
