#include "sim_kubelet.h"

#include <dirent.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <vector>

#include "pod_resources.grpc.pb.h"

namespace rdma_fabric_sim {
namespace {

// The RDMA devices of the tree: name, PCI address (empty without one), and whether a VF.
struct SimHca {
  std::string name, pci;
  bool vf = false;
};

std::vector<SimHca> ListHcas(const std::string& sysfs_root) {
  std::vector<SimHca> out;
  const std::string dir = sysfs_root + "/class/infiniband";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    SimHca hca{e->d_name, "", false};
    std::error_code ec;
    auto target = std::filesystem::read_symlink(dir + "/" + hca.name + "/device", ec);
    if (!ec) hca.pci = target.filename().string();
    hca.vf = std::filesystem::exists(dir + "/" + hca.name + "/device/physfn", ec);
    out.push_back(std::move(hca));
  }
  closedir(d);
  std::sort(out.begin(), out.end(),
            [](const SimHca& a, const SimHca& b) { return a.name < b.name; });
  return out;
}

void AddContainer(v1::ListPodResourcesResponse* response, const std::string& ns,
                  const std::string& pod, const std::string& container, const std::string& resource,
                  const std::vector<std::string>& ids) {
  auto* p = response->add_pod_resources();
  p->set_namespace_(ns);
  p->set_name(pod);
  auto* c = p->add_containers();
  c->set_name(container);
  auto* d = c->add_devices();
  d->set_resource_name(resource);
  for (const auto& id : ids)
    d->add_device_ids(id);
}

class Lister final : public v1::PodResourcesLister::Service {
 public:
  explicit Lister(v1::ListPodResourcesResponse pods) : pods_(std::move(pods)) {}
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* out) override {
    *out = pods_;
    return grpc::Status::OK;
  }

 private:
  const v1::ListPodResourcesResponse pods_;
};

}  // namespace

struct SimKubelet::Impl {
  std::string socket_path;
  std::unique_ptr<Lister> lister;
  std::unique_ptr<grpc::Server> server;
};

SimKubelet::SimKubelet() : impl_(std::make_unique<Impl>()) {}

SimKubelet::~SimKubelet() {
  if (impl_->server) {
    impl_->server->Shutdown();
    unlink(impl_->socket_path.c_str());
  }
}

bool SimKubelet::Start(const std::string& socket_path, const std::string& sysfs_root,
                       std::string* error) {
  // Two jobs: a training pod on the shared device plugin's pool (every HCA), an inference pod
  // with the SR-IOV VF (its PCI address is the device ID).
  v1::ListPodResourcesResponse pods;
  AddContainer(&pods, "ml-team", "llama-train-0", "trainer", "rdma/hca_shared_devices_a",
               {"0", "1"});
  for (const auto& hca : ListHcas(sysfs_root)) {
    if (hca.vf && !hca.pci.empty()) {
      AddContainer(&pods, "inference", "vllm-0", "server", "nvidia.com/sriov_rdma_vf", {hca.pci});
      break;
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(socket_path).parent_path(), ec);
  unlink(socket_path.c_str());  // a stale socket of an earlier run
  impl_->socket_path = socket_path;
  impl_->lister = std::make_unique<Lister>(std::move(pods));
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(impl_->lister.get());
  impl_->server = builder.BuildAndStart();
  if (!impl_->server) {
    *error = "cannot serve the pod-resources API on " + socket_path;
    return false;
  }
  return true;
}

}  // namespace rdma_fabric_sim
