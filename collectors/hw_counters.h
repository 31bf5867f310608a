// hw_counters: every file of ports/<N>/hw_counters/ as rdma_hw_<name>_total{device,port} and of
// the device-level hw_counters/ as rdma_device_hw_<name>_total{device}; `lifespan` (ms) as
// rdma_hw_counters_lifespan_seconds. Unknown names are exported with a generic HELP, never
// dropped. mlx5 q-counters are 32-bit firmware values that wrap; they are extended here to
// monotonic 64-bit values across polls.
#pragma once

#include <string>
#include <unordered_map>

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

// HELP text for a known hw counter name (mlx5, rxe), or nullptr.
const char* HwCounterHelp(std::string_view name);
// True for mlx5 queue counters (QUERY_Q_COUNTER): 32-bit values that wrap.
bool IsMlx5QCounter(std::string_view name);

// Extends a wrapping 32-bit counter to 64 bits: when the raw value goes down by more than half
// the range, 2^32 is added (a wrap); a smaller step down is a reset. Entries not updated for 10
// polls are dropped (device gone: its history restarts).
class WrapExtender {
 public:
  uint64_t Extend(const std::string& key, uint64_t raw);
  void EndPoll();

 private:
  struct State {
    uint64_t last_raw = 0;
    uint64_t high = 0;
    uint64_t generation = 0;
  };
  std::unordered_map<std::string, State> state_;
  uint64_t generation_ = 1;
};

class HwCountersCollector : public Collector {
 public:
  std::string_view name() const override { return "hw_counters"; }
  std::string_view description() const override {
    return "Driver hw_counters per port and per device (RoCE/transport/congestion counters)";
  }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  void CollectDir(const std::string& dir, const std::string& key_prefix, bool q_counters_32bit,
                  const Labels& labels, const std::string& prefix, CollectContext& ctx,
                  MetricSink& sink);
  WrapExtender wraps_;
};

}  // namespace rdma_exporter
