// A kubelet pod-resources API for the demo fabric: serves v1.PodResourcesLister on
// <root>/pod-resources/kubelet.sock with pods holding the fabric's devices, so the exporter's
// pod attribution (rdma_pod_info) and the "my job" dashboard show data without Kubernetes.
#pragma once

#include <memory>
#include <string>

namespace rdma_fabric_sim {

class SimKubelet {
 public:
  SimKubelet();
  ~SimKubelet();  // stops the server and removes its socket
  // Listens on socket_path (replacing a stale socket file); the pods are made from the RDMA
  // devices under sysfs_root/class/infiniband. False with *error set on failure.
  bool Start(const std::string& socket_path, const std::string& sysfs_root, std::string* error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rdma_fabric_sim
