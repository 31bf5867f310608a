// counters: the IB PMA PortCounters files of ports/<N>/counters/ (and the legacy counters_ext/)
// as rdma_port_<name>_total, data counters in bytes, plus rdma_port_counters_saturated for
// counters stuck at the all-ones value of their IBTA width (PMA counters saturate, not wrap).
#pragma once

#include <map>
#include <string>

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

// Curated metric name, unit scale and IBTA width of a PMA counter file.
struct PmaCounterSpec {
  std::string_view file;
  std::string_view metric;  // full metric name
  std::string_view help;
  double scale;    // 4 for the 4-byte-word data counters
  unsigned width;  // bits; 0 = depends on the table (32 basic, 64 extended)
};
// nullptr for a file the table does not know (exported under a generic name).
const PmaCounterSpec* FindPmaCounter(std::string_view file);

struct PmaReading {
  uint64_t value;
  unsigned width;  // IBTA width in bits; 0 = unknown (generic counters): never saturated
  // True while the counter sits at the all-ones value of a width of at most 32 bits.
  bool saturated() const {
    return width != 0 && width <= 32 && value == (uint64_t{1} << width) - 1;
  }
};
// Every PMA counter of a port by file name as in counters/ (legacy counters_ext/ 64-bit values
// override; other counters_ext files as "ext_<file>"). Unreadable files are reported through ctx
// and left out. Shared by the collector and the show-counters command.
std::map<std::string, PmaReading> ReadPmaCounters(CollectContext& ctx, const PortInfo& port);

class PortCountersCollector : public Collector {
 public:
  std::string_view name() const override { return "counters"; }
  std::string_view description() const override {
    return "IB PMA port counters (counters/, counters_ext/) and their saturation";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;
};

}  // namespace rdma_exporter
