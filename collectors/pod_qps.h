// pod_qps: the QPs each pod holds on each port, from RDMA netlink RES_QP (as `rdma resource
// show qp`: every QP's port and owning pid) and each pid's /proc/<pid>/cgroup (the kubelet's pod
// cgroup names the pod UID). Counts per pod UID, never pid or command (cardinality); join with
// kube-state-metrics' kube_pod_info on uid. The kernel shows a reader only the QPs of processes
// in its PID namespace, so this needs the host's: elsewhere it exports nothing and says so once.
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class PodQpsCollector : public Collector {
 public:
  explicit PodQpsCollector(const CollectorOptions& options) : procfs_root_(options.procfs_root) {}
  std::string_view name() const override { return "pod_qps"; }
  std::string_view description() const override {
    return "QPs per pod UID and port (RDMA netlink RES_QP and /proc/<pid>/cgroup; needs the host "
           "PID namespace)";
  }
  // A QP dump lists every QP of the node (thousands under NCCL): once per slow poll is enough to
  // see which jobs use a port.
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  std::string procfs_root_;
  bool said_not_host_pid_ns_ = false;
};

}  // namespace rdma_exporter
