// The node's health as the node page (/) and /api/v1/status show it: per port its link, rate,
// traffic, pause and error rates between the last two polls, the RoCE checks, PCIe and optics,
// each with a level (ok / warning / critical) by the thresholds of the alert rules; the
// doctor's snapshot checks; the collectors and the last poll. Built from two collections of
// samples and the inventory alone: no kernel read.
#pragma once

#include <prometheus/metric_family.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rdma_exporter/health_checks.h"
#include "rdma_exporter/inventory.h"

namespace rdma_exporter {

// Ordered: a port or node is as bad as its worst finding. Names as the alert severities.
enum class Level { kOk = 0, kWarning = 1, kCritical = 2 };
// "ok", "warning", "critical".
const char* LevelName(Level level);
// What a level means for NCCL on the node: "healthy: ready for NCCL traffic", ...
const char* LevelHeadline(Level level);

// The levels of the page, one per alert rule it mirrors (dashboards/node-page.libsonnet, from
// the mixin's config.libsonnet). Rates are per second between the two snapshots.
struct PageThresholds {
  double pfc_tx_pause_warn_ratio;
  double pfc_tx_pause_crit_ratio;
  double nccl_rx_pause_warn_ratio;
  double bit_error_rate_warn;
  double bit_error_rate_crit;
  double receive_errors_per_second;
  double transmit_discards_per_second;
  double receive_discards_per_second;
  double out_of_buffer_per_second;
  double local_ack_timeouts_per_second;
  double packet_seq_errors_per_second;
  double retries_exceeded_per_second;
  double transmit_wait_ratio;
  double xmit_wait_bytes_per_tick;
  double module_lane_rx_power_ratio;
  double poll_stale_seconds;
  // Events between the two polls a rate needs before it colours a port (one rare error a few
  // seconds apart is a huge rate); the transport counters have their own.
  double min_events;
  double local_ack_timeouts_min_events;
  double packet_seq_errors_min_events;
};
// The values of dashboards/out/node-page-thresholds.json, compiled in.
const PageThresholds& MixinThresholds();

// One measured signal of a port: an error or drop rate, a pause or wait share.
struct PortSignal {
  std::string name;   // the counter as sysfs / ethtool -S names it: symbol_error, rx_discards_phy
  double value = 0;   // per second, or a ratio (unit says which)
  double events = 0;  // the counter's increase between the two polls
  std::string unit;   // "/s", "of time", "BER"
  Level level = Level::kOk;
};

struct PortHealth {
  std::string device;
  unsigned port = 0;
  std::string netdev;
  std::string link_layer;
  std::string state;          // ACTIVE, DOWN, ...
  std::string phys_state;     // LinkUp, Disabled, ...
  std::string rate;           // "400 Gb/s 4X", "" when unknown
  std::string expected_rate;  // the most common rate of the node's ports of its kind
  std::optional<double> tx_utilisation, rx_utilisation;  // share of line rate
  std::optional<double> tx_pause, rx_pause;              // worst priority's share of time
  std::optional<int> nccl_priority;
  std::vector<PortSignal> signals;     // every error / drop rate measured, zero ones included
  std::vector<std::string> saturated;  // counters stuck at their maximum
  std::vector<std::pair<std::string, bool>> roce_checks;  // check -> passes
  std::string pcie;          // "32 GT/s x16" (current), "" when unknown
  std::string pcie_capable;  // "" when at its maximum, else what it could run
  std::optional<double> module_temperature_celsius;
  std::optional<double> module_min_rx_power_watts;
  std::vector<std::string> peers;  // "leaf-rail0 Ethernet12" of rdma_port_peer_info (LLDP)
  std::vector<std::string> pods;   // namespace/pod of rdma_pod_info
  Level level = Level::kOk;
  std::vector<std::string> findings;  // why the level: "DOWN/Disabled", "tx pause 72% of time"
};

struct CollectorHealth {
  std::string name;
  bool success = false;
  double duration_seconds = 0;
  double read_errors = 0;  // rdma_exporter_read_errors_total, all reasons
};

struct NodeHealth {
  std::string node;  // the host name
  uint64_t sequence = 0;
  double poll_timestamp = 0;    // unix seconds
  double poll_age_seconds = 0;  // at the time the status was built (or SetPollAge)
  double poll_duration_seconds = 0;
  double window_seconds = 0;  // between the two snapshots; 0 = one snapshot (no rates yet)
  std::vector<PortHealth> ports;
  std::vector<doctor::Check> checks;
  std::vector<CollectorHealth> collectors;
  Level level = Level::kOk;
  Level level_without_age = Level::kOk;  // the level before SetPollAge
  bool stale = false;                    // the last poll is older than pollStaleSeconds
  std::vector<std::string> findings;     // node-wide: failing collectors
};

// What the status is built from. `before` may be null (first poll).
struct NodeHealthInput {
  const Inventory* inventory = nullptr;
  const std::vector<prometheus::MetricFamily>* now = nullptr;
  const std::vector<prometheus::MetricFamily>* before = nullptr;
  double now_timestamp = 0;
  double before_timestamp = 0;
  uint64_t sequence = 0;
  double wall_clock = 0;  // unix seconds when the status is built (poll age)
  std::string node;       // the host name
  std::optional<int> nccl_ib_tc;
  unsigned roce_min_mtu = 4200;
  const PageThresholds* thresholds = nullptr;  // null: MixinThresholds()
};

NodeHealth BuildNodeHealth(const NodeHealthInput& input);
// Ages a status built earlier (a cached one) to wall_clock: a poll older than the threshold makes
// the node critical ("last poll N s ago").
void SetPollAge(NodeHealth& health, double wall_clock, const PageThresholds& thresholds);

// The status as one JSON object (/api/v1/status; docs/node-page.md has its fields).
std::string NodeHealthJson(const NodeHealth& health);

}  // namespace rdma_exporter
