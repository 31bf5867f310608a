// The one table of collectors. Adding a collector = one line here plus its file pair.
#include "dcb.h"
#include "device_info.h"
#include "ecn.h"
#include "ethtool.h"
#include "gid_table.h"
#include "gpu_affinity.h"
#include "hw_counters.h"
#include "ib_peer.h"
#include "lldp.h"
#include "module.h"
#include "netdev.h"
#include "pcie.h"
#include "pod_qps.h"
#include "pod_resources.h"
#include "port_counters.h"
#include "port_state.h"
#include "rdma_netlink.h"
#include "roce_config.h"
#include "verbs.h"

#include <type_traits>

namespace rdma_exporter {
namespace {

// A collector class is constructed either from CollectorOptions or with no arguments.
template <typename T>
std::unique_ptr<Collector> Make(const CollectorOptions& options) {
  if constexpr (std::is_constructible_v<T, const CollectorOptions&>) {
    return std::make_unique<T>(options);
  } else {
    return std::make_unique<T>();
  }
}

template <typename T>
CollectorFactory Entry() {
  auto probe = Make<T>(CollectorOptions{});
  return {probe->name(), probe->description(), probe->enabled_by_default(), &Make<T>};
}

}  // namespace

const std::vector<CollectorFactory>& CollectorRegistry() {
  static const std::vector<CollectorFactory> registry = {
      Entry<DeviceInfoCollector>(),  Entry<PortStateCollector>(),   Entry<PortCountersCollector>(),
      Entry<HwCountersCollector>(),  Entry<PcieCollector>(),        Entry<GidTableCollector>(),
      Entry<NetdevCollector>(),      Entry<EthtoolCollector>(),     Entry<DcbCollector>(),
      Entry<EcnCollector>(),         Entry<RoceConfigCollector>(),  Entry<VerbsCollector>(),
      Entry<RdmaNetlinkCollector>(), Entry<GpuAffinityCollector>(), Entry<PodResourcesCollector>(),
      Entry<PodQpsCollector>(),      Entry<ModuleCollector>(),      Entry<LldpCollector>(),
      Entry<IbPeerCollector>(),
  };
  return registry;
}

}  // namespace rdma_exporter
