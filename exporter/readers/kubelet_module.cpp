// librdma_exporter_kubelet.so: the kubelet pod-resources gRPC client and the RDMA shared device
// plugin config parser, loaded on demand by pod_resources.cpp (kubelet_module.h says why).
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include "kubelet_module.h"
#include "pod_resources.grpc.pb.h"
#include "shared_device_plugin_config.pb.h"

namespace rdma_exporter {
namespace {

// "DEADLINE_EXCEEDED" style names of gRPC's status codes, lower-cased for metric labels.
std::string StatusReason(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::CANCELLED:
      return "cancelled";
    case grpc::StatusCode::UNKNOWN:
      return "unknown";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "invalid_argument";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "deadline_exceeded";
    case grpc::StatusCode::NOT_FOUND:
      return "not_found";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "permission_denied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "resource_exhausted";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "unimplemented";
    case grpc::StatusCode::INTERNAL:
      return "internal";
    case grpc::StatusCode::UNAVAILABLE:
      return "unavailable";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "unauthenticated";
    default:
      return "grpc_" + std::to_string(static_cast<int>(code));
  }
}

struct Client {
  std::string socket_path;
  std::chrono::milliseconds deadline;
  int max_response_bytes;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

void* NewClient(const std::string& socket_path, std::chrono::milliseconds deadline,
                int max_response_bytes) {
  return new Client{socket_path, deadline, max_response_bytes, {}};
}

void DeleteClient(void* client) {
  delete static_cast<Client*>(client);
}

bool List(void* opaque, std::vector<ContainerDeviceGrant>* out, std::string* reason,
          std::string* detail) {
  auto* client = static_cast<Client*>(opaque);
  out->clear();
  if (!client->stub) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(client->max_response_bytes);
    // gRPC's reconnect backoff grows to 120 s by default; a restarted kubelet should be seen
    // again within a poll interval or two.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
    auto channel = grpc::CreateCustomChannel("unix:" + client->socket_path,
                                             grpc::InsecureChannelCredentials(), args);
    client->stub = v1::PodResourcesLister::NewStub(channel);
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + client->deadline);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status status = client->stub->List(&context, request, &response);
  if (!status.ok()) {
    *reason = StatusReason(status.error_code());
    *detail = status.error_message();
    return false;
  }
  for (const auto& pod : response.pod_resources()) {
    for (const auto& container : pod.containers()) {
      for (const auto& devices : container.devices()) {
        if (devices.device_ids().empty()) continue;
        out->push_back({pod.namespace_(),
                        pod.name(),
                        container.name(),
                        devices.resource_name(),
                        {devices.device_ids().begin(), devices.device_ids().end()}});
      }
    }
  }
  return true;
}

std::optional<std::vector<SharedDevicePool>> ParseConfig(std::string_view json,
                                                         std::string* error) {
  shared_dp::Config config;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // periodicUpdateInterval, rdmaHcaMax, ...
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &config, options);
  if (!status.ok()) {
    *error = std::string(status.message());
    return std::nullopt;
  }
  const std::string prefix = config.resource_prefix().empty() ? "rdma" : config.resource_prefix();
  std::vector<SharedDevicePool> pools;
  for (const auto& resource : config.config_list()) {
    if (resource.resource_name().empty()) {
      *error = "a configList entry has no resourceName";
      return std::nullopt;
    }
    SharedDevicePool pool;
    pool.resource = prefix + "/" + resource.resource_name();
    const auto& s = resource.selectors();
    pool.vendors.assign(s.vendors().begin(), s.vendors().end());
    pool.device_ids.assign(s.device_ids().begin(), s.device_ids().end());
    pool.drivers.assign(s.drivers().begin(), s.drivers().end());
    pool.if_names.assign(s.if_names().begin(), s.if_names().end());
    pool.if_names.insert(pool.if_names.end(), resource.devices().begin(), resource.devices().end());
    pool.link_types.assign(s.link_types().begin(), s.link_types().end());
    pools.push_back(std::move(pool));
  }
  return pools;
}

constexpr KubeletModule kModule{
    kKubeletModuleVersion, sizeof(KubeletModule), &NewClient, &DeleteClient, &List, &ParseConfig};

}  // namespace
}  // namespace rdma_exporter

extern "C" __attribute__((visibility("default"))) const rdma_exporter::KubeletModule*
rdma_exporter_kubelet_module() {
  return &rdma_exporter::kModule;
}
