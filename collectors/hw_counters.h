// hw_counters: every hw counter of each port as rdma_hw_<name>_total{device,port}, and every
// file of the device-level hw_counters/ as rdma_device_hw_<name>_total{device}. Unknown names are
// exported with a generic HELP, never dropped. mlx5 q-counters are 32-bit firmware values that
// wrap; they are extended here to monotonic 64-bit values across polls.
//
// Port counters come from one RDMA netlink STAT_GET per port when the kernel answers it (source
// auto or netlink): one message carries every counter, enabled optional ones included, and costs
// mlx5 one firmware refresh. Otherwise (source sysfs, or auto on a kernel or port that does not
// answer) from the ports/<N>/hw_counters/ files, `rx_write_requests` first so mlx5's lifespan
// cache serves the rest (reference §1.6), plus `lifespan` (ms) as
// rdma_hw_counters_lifespan_seconds. rdma_exporter_hw_counters_ports{source} says how many ports
// each source served in the last poll.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/counter_readers.h"

namespace rdma_exporter {

// Extends one wrapping 32-bit counter to 64 bits: when the raw value goes down by more than half
// the range, 2^32 is added (a wrap); a smaller step down is a reset.
struct Wrap32 {
  uint64_t last_raw = 0;
  uint64_t high = 0;
  bool seen = false;
  uint64_t Extend(uint64_t raw);
};

// A Wrap32 per key (ethtool's rx_out_of_buffer by netdev). Entries not updated for 10 polls are
// dropped (device gone: its history restarts).
class WrapExtender {
 public:
  uint64_t Extend(const std::string& key, uint64_t raw);
  void EndPoll();

 private:
  struct State {
    Wrap32 wrap;
    uint64_t generation = 0;
  };
  std::unordered_map<std::string, State> state_;
  uint64_t generation_ = 1;
};

class HwCountersCollector : public Collector {
 public:
  HwCountersCollector() = default;
  explicit HwCountersCollector(const CollectorOptions& options)
      : source_(options.hw_counters_source) {}
  std::string_view name() const override { return "hw_counters"; }
  std::string_view description() const override {
    return "Driver hw_counters per port and per device (RoCE/transport/congestion counters)";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  // Metric name and help by metric prefix and counter name: a driver's counter names are a fixed
  // list, so each is sanitised and described once, not on every poll.
  struct Naming {
    std::string metric;
    std::string help;
  };
  // What is kept of one counter of a target between polls.
  struct Slot {
    std::string name;
    const Naming* naming = nullptr;
    bool q_counter = false;  // a 32-bit mlx5 q counter of this target: extended across wraps
    Wrap32 wrap;
  };
  // What is kept of one device or port: its counters in the order of the last poll (a poll
  // finds each at the same position, with one name comparison, instead of looking up names)
  // and its hw_counters/ directory. Dropped after 10 polls without the target (device gone:
  // its wrap history restarts).
  struct TargetState {
    std::vector<Slot> slots;
    DirReadState dir;
    uint64_t last_poll = 0;
  };
  struct Target {  // whose counters are being exported
    TargetState* state;
    bool q_counters_32bit;  // mlx5: extend q counters across wraps
    Labels labels;
    std::string metric_prefix;  // rdma_hw_ or rdma_device_hw_
  };
  // "<device>/<port>/" (port 0: device-level).
  TargetState& StateOf(const std::string& key);
  // Returns false when the directory does not exist (the driver has no such counters).
  bool CollectDir(const std::string& dir, const Target& target, CollectContext& ctx,
                  MetricSink& sink);
  // Returns 0 or the errno of the STAT_GET request.
  int CollectNetlink(RdmaNetlinkReader& netlink, const std::string& device, unsigned port,
                     const Target& target, MetricSink& sink);
  // Exports the counter at position `position` of this poll's counters of the target.
  void Export(size_t position, const std::string& name, uint64_t raw, const Target& target,
              MetricSink& sink);

  HwCounterSource source_ = HwCounterSource::kAuto;
  std::map<std::string, std::map<std::string, Naming, std::less<>>, std::less<>> naming_;
  std::unordered_map<std::string, TargetState> targets_;
  uint64_t poll_ = 0;
};

}  // namespace rdma_exporter
