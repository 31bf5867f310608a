#include "pod_resources.h"

#include <algorithm>
#include <set>

#include "gpu_rails.h"
#include "rdma_exporter/file_util.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

// What the shared device plugin's selectors look at, from sysfs.
HcaSelectorFacts ReadSelectorFacts(const DeviceInfo& device, CollectContext& ctx) {
  HcaSelectorFacts facts;
  auto pci_id = [&](const char* file) {
    std::string text;
    if (!ctx.ReadOptional(JoinPath(device.dir, std::string("device/") + file), &text)) return text;
    std::string id(Trim(text));
    if (id.rfind("0x", 0) == 0) id.erase(0, 2);
    return id;
  };
  if (device.has_pci_link) {
    facts.vendor = pci_id("vendor");
    facts.device_id = pci_id("device");
    std::string driver;
    if (ctx.sysfs().ReadLink(JoinPath(device.dir, "device/driver"), &driver) == 0)
      facts.driver = driver.substr(driver.rfind('/') + 1);
  }
  for (const auto& port : device.ports) {
    std::vector<std::string> netdevs = port.bond_slaves;
    if (!port.netdev.empty()) netdevs.push_back(port.netdev);
    for (const auto& netdev : netdevs) {
      facts.netdevs.push_back(netdev);
      std::string type;
      if (ctx.ReadOptional("class/net/" + netdev + "/type", &type)) {
        // ARPHRD_ETHER and ARPHRD_INFINIBAND, named as the plugin (netlink's link type) does.
        std::string_view t = Trim(type);
        if (t == "1") facts.link_types.push_back("ether");
        if (t == "32") facts.link_types.push_back("infiniband");
      }
    }
  }
  return facts;
}

}  // namespace

void PodResourcesCollector::Attribute(const std::vector<ContainerDeviceGrant>& grants,
                                      const Inventory& inventory, CollectContext& ctx) {
  attributions_.clear();
  std::set<std::vector<std::string>> series;  // device, port, ns, pod, container, resource, via
  auto attribute = [&](const DeviceInfo& device, const ContainerDeviceGrant& grant,
                       const char* via) {
    for (const auto& port : device.ports) {
      series.insert({device.name, std::to_string(port.number), grant.pod_namespace, grant.pod,
                     grant.container, grant.resource, via});
    }
  };

  // Read only what the grants need: GPU rails when a grant names a GPU, the plugin config and
  // the selector facts when a grant is of a shared pool.
  bool any_gpu = false;
  for (const auto& grant : grants) {
    for (const auto& id : grant.device_ids)
      any_gpu |= id.rfind("GPU-", 0) == 0;
  }
  std::vector<GpuRail> rails;
  if (any_gpu &&
      FindGpuRails(inventory, ctx, options_.procfs_root, &rails) == GpuRailsResult::kNoDriver &&
      !said_no_driver_) {
    LogInfo("pods hold GPUs but there is no NVIDIA driver procfs: no gpu_affinity attribution",
            {{"path", options_.procfs_root + "/driver/nvidia/gpus"}});
    said_no_driver_ = true;
  }

  std::optional<std::vector<SharedDevicePool>> pools;  // nullopt: pools not known
  if (!options_.shared_device_plugin_config.empty()) {
    std::string text, error;
    if (int err = ReadWholeFile(options_.shared_device_plugin_config, &text); err != 0) {
      ctx.ReadFailed(options_.shared_device_plugin_config, err);
    } else if (pools = ParseSharedDevicePluginConfig(text, &error); !pools) {
      ctx.Failed(options_.shared_device_plugin_config, "malformed", error);
    }
  }
  std::vector<std::optional<HcaSelectorFacts>> facts(inventory.devices.size());

  for (const auto& grant : grants) {
    bool is_shared = false;
    const SharedDevicePool* pool = nullptr;
    if (pools) {
      for (const auto& p : *pools) {
        if (p.resource == grant.resource) pool = &p;
      }
      is_shared = pool != nullptr;
    } else {
      // Pools unknown: the plugin's default prefix; such a pool is taken to cover every HCA.
      is_shared = grant.resource.rfind("rdma/", 0) == 0;
    }
    for (const auto& id : grant.device_ids) {
      // An SR-IOV device plugin's device ID is the VF's PCI address (a whole PF's too).
      auto by_pci = std::find_if(inventory.devices.begin(), inventory.devices.end(),
                                 [&](const DeviceInfo& d) { return d.pci_address == id; });
      if (by_pci != inventory.devices.end()) {
        attribute(*by_pci, grant, "vf");
        continue;
      }
      auto rail = std::find_if(rails.begin(), rails.end(),
                               [&](const GpuRail& r) { return r.gpu.uuid == id; });
      if (rail != rails.end()) {
        for (const DeviceInfo* device : rail->devices)
          attribute(*device, grant, "gpu_affinity");
      }
    }
    if (!is_shared) continue;
    // Shared pools hand out opaque IDs: the pool, not the ID, says which HCAs.
    for (size_t i = 0; i < inventory.devices.size(); ++i) {
      const DeviceInfo& device = inventory.devices[i];
      if (pool != nullptr) {
        if (!facts[i]) facts[i] = ReadSelectorFacts(device, ctx);
        if (!SharedPoolCovers(*pool, *facts[i])) continue;
      }
      attribute(device, grant, "shared");
    }
  }
  static constexpr const char* kNames[] = {"device",    "port",     "namespace", "pod",
                                           "container", "resource", "via"};
  for (const auto& values : series) {
    Labels labels;
    for (size_t i = 0; i < values.size(); ++i)
      labels.push_back({kNames[i], values[i]});
    attributions_.push_back(std::move(labels));
  }
}

bool PodResourcesCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                    MetricSink& sink) {
  if (!watcher_) {
    PodResourcesWatcher::Options options;
    options.socket_path = options_.pod_resources_socket;
    options.interval = options_.pod_resources_interval;
    watcher_ = std::make_unique<PodResourcesWatcher>(options);
    watcher_->Start();
  }
  auto state = watcher_->Latest();
  // Each failed List once in rdma_exporter_read_errors_total (the watcher logs the cause).
  if (state->failures > reported_failures_) {
    for (uint64_t i = reported_failures_; i < state->failures; ++i)
      ctx.Failed(options_.pod_resources_socket, state->last_failure_reason, "List failed");
    reported_failures_ = state->failures;
  }
  using Status = PodResourcesWatcher::Status;
  if (state->status == Status::kStarting || state->status == Status::kNoSocket) {
    attributions_.clear();
    seen_generation_ = state->generation;
    return true;
  }
  sink.Gauge(metric::kPodResourcesUp,
             "1 if the last List call to the kubelet's pod-resources API succeeded, 0 if it "
             "failed (then no rdma_pod_info is exported). Absent when the socket does not exist.",
             {}, state->status == Status::kOk ? 1 : 0);

  std::string inventory_key;
  for (const auto& device : inventory.devices) {
    inventory_key += device.name + ":" + std::to_string(device.identity) + ";";
  }
  if (state->generation != seen_generation_ || inventory_key != seen_inventory_) {
    Attribute(state->grants, inventory, ctx);
    seen_generation_ = state->generation;
    seen_inventory_ = std::move(inventory_key);
  }
  for (const auto& labels : attributions_) {
    sink.Gauge(metric::kPodInfo,
               "A pod's container that can use this RDMA port, and how: via=vf (an SR-IOV VF "
               "given to it), shared (a pool of the RDMA shared device plugin), gpu_affinity "
               "(the port's HCA is the nearest to one of its GPUs). Always 1.",
               labels, 1);
  }
  return true;
}

}  // namespace rdma_exporter
