// The one table of collectors. Adding a collector = one line here plus its file pair.
#include "device_info.h"
#include "gid_table.h"
#include "hw_counters.h"
#include "pcie.h"
#include "port_counters.h"
#include "port_state.h"

namespace rdma_exporter {
namespace {

template <typename T>
std::unique_ptr<Collector> Make() {
  return std::make_unique<T>();
}

template <typename T>
CollectorFactory Entry() {
  T probe;
  return {probe.name(), probe.description(), probe.enabled_by_default(), &Make<T>};
}

}  // namespace

const std::vector<CollectorFactory>& CollectorRegistry() {
  static const std::vector<CollectorFactory> registry = {
      Entry<DeviceInfoCollector>(), Entry<PortStateCollector>(), Entry<PortCountersCollector>(),
      Entry<HwCountersCollector>(), Entry<PcieCollector>(),      Entry<GidTableCollector>(),
  };
  return registry;
}

}  // namespace rdma_exporter
