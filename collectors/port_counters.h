// counters: the IB PMA PortCounters files of ports/<N>/counters/ (and the legacy counters_ext/)
// as rdma_port_<name>_total, data counters in bytes, plus rdma_port_counters_saturated for
// counters stuck at the all-ones value of their IBTA width (PMA counters saturate, not wrap),
// and rdma_port_pma_supported (0: a port without PMA, whose counters are not read errors).
// With the ib_peer collector on (umad access), an InfiniBand port whose own PMA declares the
// additional PortCountersExtended counters has its 64-bit PortXmitWait exported instead of the
// 32-bit file (which saturates within seconds on a congested NDR port). mlx5 does not declare
// it (its driver answers PMA Gets from vport counters and PPCNT), so there the file stays.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/counter_readers.h"

namespace rdma_exporter {

class PortCountersCollector : public Collector {
 public:
  PortCountersCollector() = default;
  explicit PortCountersCollector(const CollectorOptions& options)
      : pma_xmit_wait_(options.pma_xmit_wait) {}
  std::string_view name() const override { return "counters"; }
  std::string_view description() const override {
    return "IB PMA port counters (counters/, counters_ext/) and their saturation";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  static void Export(const Labels& labels, const std::string& file, const PmaReading& reading,
                     MetricSink& sink);
  // What is remembered of a port between polls.
  struct PortMemory {
    bool wide_data = false;  // its data/packet counters proved 64-bit (a value above 2^32-1)
    // Whether its PMA declared the 64-bit PortXmitWait; unset until asked (once per port).
    std::optional<bool> xmit_wait64;
    PmaDirs dirs;  // its counters/ and counters_ext/ listings and file refs
  };
  // Replaces (*readings)["port_xmit_wait"] with the PMA's 64-bit value where declared.
  static void PreferExtendedXmitWait(CollectContext& ctx, const DeviceInfo& device,
                                     const PortInfo& port, const std::string& key,
                                     PortMemory* memory,
                                     std::map<std::string, PmaReading>* readings);

  bool pma_xmit_wait_ = false;
  std::unordered_map<std::string, PortMemory> ports_;  // by "device/port"
};

}  // namespace rdma_exporter
