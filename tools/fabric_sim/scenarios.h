// The named scenarios: a table of effects (what changes on the fault device, from which tick to
// which), and the link/presence/configuration state the table gives for a tick. Applying the
// effects to the devices is faults.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rdma_fabric_sim {

enum class EffectKind {
  kLinkDown,       // fault port down (1: DOWN / Disabled, carrier 0) for ticks in [from, to)
  kLinkFlap,       // fault port down/up alternating every `lo` ticks, starting down at `from`
  kHalfWidth,      // fault port link width halves (4X NDR 400G -> 2X NDR 200G)
  kPcieDowntrain,  // fault device PCIe x16 32.0 GT/s -> x8 16.0 GT/s
  kVanish,         // fault device (and its VFs) removed from sysfs for ticks in [from, to)
  kAdd,            // fault port/device counter `target` += uniform[lo, hi] each tick
  kSet,            // fault port/device counter `target` = lo (from == 0: in the initial tree)
  kFreeze,         // `target` is excluded from the healthy traffic model
  kAddRate,        // like kAdd, but uniform[lo, hi] is per simulated second (x --interval)
  // RoCE configuration of the fault port for ticks in [from, to):
  kPfcMask,      // PFC enabled on the priorities of bitmask `lo` (healthy: 0x08 = priority 3)
  kTrustPcp,     // trust PCP: no DSCP APP entries (no dscp-prio line)
  kMtu,          // netdev MTU = lo
  kEcnOff,       // ECN (roce_np and roce_rp) disabled on priority `lo`
  kNoRoceV2Gid,  // the RoCE v2 entries of the GID table are deleted (zero GID, no types/ndevs)
  kRoceOnly,     // marker: the fault device must be a RoCE PF; an InfiniBand (or VF) fault
                 // device is replaced by the first RoCE PF
  kOpticDecay,   // the fault port's transceiver: lane `lo` receive power falls 15 % a tick
  kChurn,        // hot-plug churn, a 4-tick cycle: fault device (and VFs) removed; back
                 // (counters reset); files swapped for malformed ones; VFs and last port gone
};

inline constexpr int kForever = -1;

// `target` names a file relative to the fault port directory ("counters/symbol_error",
// "hw_counters/out_of_buffer"), relative to the fault device's PCI function
// ("aer_dev_correctable/RxErr", "aer_dev_nonfatal/DLP", "aer_dev_fatal/..."), or an
// `ethtool -S` statistic of the fault port's netdev ("ethtool/rx_prio3_pause"; mlx5 RoCE PFs
// only). Targets the device does not have (e.g. PMA counters on rxe) are ignored.
struct Effect {
  EffectKind kind;
  const char* target;
  int from;
  int to;  // exclusive; kForever = never ends
  uint64_t lo;
  uint64_t hi;
};

struct Scenario {
  const char* name;
  const char* description;
  std::vector<Effect> effects;
};

// All scenarios, in the order --help lists them.
const std::vector<Scenario>& Scenarios();

// The scenario called `name`, nullptr if there is none.
const Scenario* FindScenario(const std::string& name);

// True if effect `e` holds at scenario tick `tick`.
bool InRange(const Effect& e, uint64_t tick);

// True if the scenario needs a RoCE PF as its fault device (a kRoceOnly row).
bool IsRoceOnly(const Scenario& s);

// Link/presence/configuration state of the fault device at a tick, evaluated statelessly from
// the table.
struct FaultState {
  bool port_up = true;
  bool half_width = false;
  bool downtrained = false;
  bool present = true;
  // RoCE configuration (healthy defaults).
  uint8_t pfc_mask = 0x08;
  bool trust_dscp = true;
  int mtu = 0;  // 0 = the layout default
  uint8_t ecn_mask = 0x08;
  bool rocev2_gids = true;
  int optic_decay_ticks = -1;  // ticks the optic has been degrading; -1 = healthy
  int optic_lane = 0;
};

// The state the table of `scenario` (nullptr = none) gives for scenario tick `t`.
FaultState EvalFault(const Scenario* scenario, uint64_t t);

}  // namespace rdma_fabric_sim
