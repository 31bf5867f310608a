#include "rdma_exporter/pod_resources.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <mutex>

#include "kubelet_module.h"
#include "rdma_exporter/logging.h"

namespace rdma_exporter {
namespace {

// The module's path beside the executable: <dir of exe>/../lib/rdma_exporter/ holds it in the
// build tree (build/exporter/, build/tests/) and once installed (/usr/bin -> /usr/lib/...), like
// the OpenSSL shims the executable's RUNPATH finds there.
std::string ModulePathBesideExecutable() {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  std::string dir(exe, static_cast<size_t>(n));
  dir.erase(dir.rfind('/') + 1);
  return dir + "../lib/rdma_exporter/" + kKubeletModuleFile;
}

struct LoadedModule {
  const KubeletModule* module = nullptr;
  std::string error;
};

// Loads the module once per process and keeps it (gRPC's threads live in it: never dlclose'd).
const LoadedModule& KubeletModuleOnce() {
  static LoadedModule loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string path = ModulePathBesideExecutable();
    void* handle = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string beside = handle == nullptr && !path.empty() ? dlerror() : "";
    if (handle == nullptr) {
      // Elsewhere: the executable's RUNPATH or LD_LIBRARY_PATH.
      path = kKubeletModuleFile;
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (handle == nullptr) {
      loaded.error = beside.empty() ? dlerror() : beside;
      return;
    }
    auto entry = reinterpret_cast<const KubeletModule* (*)()>(dlsym(handle, kKubeletModuleSymbol));
    const KubeletModule* module = entry != nullptr ? entry() : nullptr;
    if (module == nullptr || module->version != kKubeletModuleVersion ||
        module->this_size != sizeof(KubeletModule)) {
      loaded.error = std::string(kKubeletModuleFile) + " is not this exporter's build";
      return;
    }
    loaded.module = module;
    LogDebug("loaded the kubelet module", {{"file", path}});
  });
  if (!loaded.error.empty()) {
    static std::once_flag warned;
    std::call_once(warned, [] {
      LogWarn("cannot load the kubelet module: no pod attribution",
              {{"file", kKubeletModuleFile}, {"error", loaded.error}});
    });
  }
  return loaded;
}

}  // namespace

struct PodResourcesClient::Impl {
  std::string socket_path;
  std::chrono::milliseconds deadline;
  int max_response_bytes;
  const KubeletModule* module = nullptr;
  void* client = nullptr;  // the module's, created on the first List
};

PodResourcesClient::PodResourcesClient(std::string socket_path, std::chrono::milliseconds deadline,
                                       int max_response_bytes)
    : impl_(std::make_unique<Impl>(Impl{std::move(socket_path), deadline, max_response_bytes})) {}

PodResourcesClient::~PodResourcesClient() {
  if (impl_->client != nullptr) impl_->module->delete_client(impl_->client);
}

bool PodResourcesClient::List(std::vector<ContainerDeviceGrant>* out, std::string* reason,
                              std::string* detail) {
  out->clear();
  if (impl_->client == nullptr) {
    const LoadedModule& loaded = KubeletModuleOnce();
    if (loaded.module == nullptr) {
      *reason = "module_unavailable";
      *detail = loaded.error;
      return false;
    }
    impl_->module = loaded.module;
    impl_->client =
        impl_->module->new_client(impl_->socket_path, impl_->deadline, impl_->max_response_bytes);
  }
  return impl_->module->list(impl_->client, out, reason, detail);
}

std::optional<std::vector<SharedDevicePool>> ParseSharedDevicePluginConfig(std::string_view json,
                                                                           std::string* error) {
  const LoadedModule& loaded = KubeletModuleOnce();
  if (loaded.module == nullptr) {
    *error = "cannot load " + std::string(kKubeletModuleFile) + ": " + loaded.error;
    return std::nullopt;
  }
  return loaded.module->parse_shared_device_plugin_config(json, error);
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
