#include "rdma_exporter/pod_resources.h"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "pod_resources.grpc.pb.h"
#include "rdma_exporter/logging.h"
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

}  // namespace

struct PodResourcesClient::Impl {
  std::string socket_path;
  std::chrono::milliseconds deadline;
  int max_response_bytes;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

PodResourcesClient::PodResourcesClient(std::string socket_path, std::chrono::milliseconds deadline,
                                       int max_response_bytes)
    : impl_(
          std::make_unique<Impl>(Impl{std::move(socket_path), deadline, max_response_bytes, {}})) {}

PodResourcesClient::~PodResourcesClient() = default;

bool PodResourcesClient::List(std::vector<ContainerDeviceGrant>* out, std::string* reason,
                              std::string* detail) {
  out->clear();
  if (!impl_->stub) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(impl_->max_response_bytes);
    // gRPC's reconnect backoff grows to 120 s by default; a restarted kubelet should be seen
    // again within a poll interval or two.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
    auto channel = grpc::CreateCustomChannel("unix:" + impl_->socket_path,
                                             grpc::InsecureChannelCredentials(), args);
    impl_->stub = v1::PodResourcesLister::NewStub(channel);
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + impl_->deadline);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status status = impl_->stub->List(&context, request, &response);
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

PodResourcesWatcher::PodResourcesWatcher(Options options)
    : options_(std::move(options)), state_(std::make_shared<State>()) {}

PodResourcesWatcher::~PodResourcesWatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PodResourcesWatcher::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!thread_.joinable() && !stop_) thread_ = std::thread([this] { Run(); });
}

std::shared_ptr<const PodResourcesWatcher::State> PodResourcesWatcher::Latest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

void PodResourcesWatcher::Run() {
  PodResourcesClient client(options_.socket_path, options_.deadline, options_.max_response_bytes);
  bool said_no_socket = false;
  std::string last_logged_reason;
  for (;;) {
    auto next = std::make_shared<State>();
    {
      std::lock_guard<std::mutex> lock(mu_);
      next->failures = state_->failures;
      next->last_failure_reason = state_->last_failure_reason;
      next->generation = state_->generation + 1;
    }
    struct stat st {};
    if (stat(options_.socket_path.c_str(), &st) != 0) {
      next->status = Status::kNoSocket;
      if (!said_no_socket) {
        LogInfo("kubelet pod-resources socket absent: pod attribution off until it appears",
                {{"path", options_.socket_path}});
        said_no_socket = true;
      }
    } else {
      if (said_no_socket) {
        LogInfo("kubelet pod-resources socket present: pod attribution on",
                {{"path", options_.socket_path}});
        said_no_socket = false;
      }
      std::string reason, detail;
      if (client.List(&next->grants, &reason, &detail)) {
        next->status = Status::kOk;
        last_logged_reason.clear();
      } else {
        // A failed List drops the pods: no series may outlive what the kubelet last said by
        // more than one interval.
        next->grants.clear();
        next->status = Status::kFailed;
        ++next->failures;
        next->last_failure_reason = reason;
        if (reason != last_logged_reason) {  // one line per change of cause, not per poll
          LogWarn("kubelet pod-resources List failed",
                  {{"path", options_.socket_path}, {"reason", reason}, {"detail", detail}});
          last_logged_reason = reason;
        }
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    state_ = std::move(next);
    if (wake_.wait_for(lock, options_.interval, [this] { return stop_; })) return;
  }
}

std::optional<std::vector<SharedDevicePool>> ParseSharedDevicePluginConfig(std::string_view json,
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

namespace {

// "5f2c8f4a-1b2c-4d5e-8f90-123456789abc" or the same with '_' (systemd escapes '-' in unit names).
bool IsPodUid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? (c != '-' && c != '_') : !std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The pieces of text between separators (the last one without a trailing separator).
std::vector<std::string_view> SplitOn(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    pieces.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return pieces;
}

}  // namespace

std::string PodUidFromCgroup(std::string_view text) {
  for (std::string_view line : SplitOn(text, '\n')) {
    // "hierarchy-ID:controllers:path"; the path may itself hold ':'.
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view path = line.substr(second + 1);
    if (path.find("kubepods") == std::string_view::npos) continue;
    for (std::string_view component : SplitOn(path, '/')) {
      if (component.size() > 6 && component.substr(component.size() - 6) == ".slice")
        component.remove_suffix(6);
      size_t pod = component.rfind("pod");
      if (pod == std::string_view::npos || (pod != 0 && component[pod - 1] != '-')) continue;
      std::string_view uid = component.substr(pod + 3);
      if (!IsPodUid(uid)) continue;
      std::string out(uid);
      std::replace(out.begin(), out.end(), '_', '-');
      return out;
    }
  }
  return "";
}

bool SharedPoolCovers(const SharedDevicePool& pool, const HcaSelectorFacts& hca) {
  auto lower = [](std::string s) {
    for (char& c : s)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  // PCI IDs compare case-insensitively ("101B" in a config matches sysfs's "101b").
  auto any_of_one = [&](const std::vector<std::string>& wanted, const std::string& value) {
    return wanted.empty() || std::any_of(wanted.begin(), wanted.end(),
                                         [&](const auto& w) { return lower(w) == lower(value); });
  };
  auto any_of_many = [](const std::vector<std::string>& wanted,
                        const std::vector<std::string>& values) {
    return wanted.empty() || std::any_of(wanted.begin(), wanted.end(), [&](const auto& w) {
             return std::find(values.begin(), values.end(), w) != values.end();
           });
  };
  return any_of_one(pool.vendors, hca.vendor) && any_of_one(pool.device_ids, hca.device_id) &&
         any_of_one(pool.drivers, hca.driver) && any_of_many(pool.if_names, hca.netdevs) &&
         any_of_many(pool.link_types, hca.link_types);
}

}  // namespace rdma_exporter
