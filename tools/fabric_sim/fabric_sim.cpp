#include "fabric_sim.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

template <typename... Args>
std::string Fmt(const char* fmt, Args... args) {
  char buf[256];
  int n = std::snprintf(buf, sizeof(buf), fmt, args...);
  if (n < 0) return std::string();
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), fmt, args...);
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string Line(const std::string& s) {
  return s + "\n";
}
std::string Num(uint64_t v) {
  return std::to_string(v) + "\n";
}
std::string SNum(int64_t v) {
  return std::to_string(v) + "\n";
}

// Deterministic, platform-independent PRNG (splitmix64). std:: distributions are not used
// because their output is implementation-defined.
uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t MixSeed(uint64_t a, uint64_t b) {
  return SplitMix(a ^ SplitMix(b + 0x632be59bd9b4e019ULL));
}

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform integer in [lo, hi] (inclusive).
  uint64_t Uniform(uint64_t lo, uint64_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = hi - lo + 1;
    if (span == 0) return Next();
    return lo + Next() % span;
  }
  bool Chance(double p) { return Unit() < p; }

 private:
  uint64_t state_;
};

// ---------------------------------------------------------------------------------------------
// Counters
// ---------------------------------------------------------------------------------------------

enum class Overflow { kSaturate, kWrap };

struct Counter {
  uint64_t value = 0;
  int bits = 64;
  Overflow overflow = Overflow::kWrap;
  bool frozen = false;  // excluded from the healthy traffic model (scenario owns it)

  uint64_t Max() const { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
  void Add(uint64_t n) {
    if (overflow == Overflow::kWrap) {
      value = (value + n) & Max();
    } else {
      value = (Max() - value < n) ? Max() : value + n;
    }
  }
  void Set(uint64_t v) { value = std::min(v, Max()); }
};

struct CounterDef {
  const char* name;
  int bits;
  Overflow overflow;
};

constexpr Overflow kSat = Overflow::kSaturate;
constexpr Overflow kWrap = Overflow::kWrap;

// IB PMA PortCounters / PortCountersExtended, ext table (reference §1.5). Saturating.
constexpr CounterDef kPmaCounters[] = {
    {"symbol_error", 16, kSat},
    {"link_error_recovery", 8, kSat},
    {"link_downed", 8, kSat},
    {"port_rcv_errors", 16, kSat},
    {"port_rcv_remote_physical_errors", 16, kSat},
    {"port_rcv_switch_relay_errors", 16, kSat},
    {"port_xmit_discards", 16, kSat},
    {"port_xmit_constraint_errors", 8, kSat},
    {"port_rcv_constraint_errors", 8, kSat},
    {"local_link_integrity_errors", 4, kSat},
    {"excessive_buffer_overrun_errors", 4, kSat},
    {"VL15_dropped", 16, kSat},
    {"port_xmit_wait", 32, kSat},
    {"port_xmit_data", 64, kSat},
    {"port_rcv_data", 64, kSat},
    {"port_xmit_packets", 64, kSat},
    {"port_rcv_packets", 64, kSat},
    {"unicast_xmit_packets", 64, kSat},
    {"unicast_rcv_packets", 64, kSat},
    {"multicast_xmit_packets", 64, kSat},
    {"multicast_rcv_packets", 64, kSat},
};

// mlx5 hw_counters, groups 1-7 of reference §2.1, in descs[] order. Groups 1-5 are 32-bit
// firmware q-counters (wrap modulo 2^32), groups 6-7 are 64-bit.
constexpr CounterDef kMlx5HwCounters[] = {
    {"rx_write_requests", 32, kWrap},
    {"rx_read_requests", 32, kWrap},
    {"rx_atomic_requests", 32, kWrap},
    {"rx_dct_connect", 32, kWrap},
    {"out_of_buffer", 32, kWrap},
    {"out_of_sequence", 32, kWrap},
    {"duplicate_request", 32, kWrap},
    {"rnr_nak_retry_err", 32, kWrap},
    {"packet_seq_err", 32, kWrap},
    {"implied_nak_seq_err", 32, kWrap},
    {"local_ack_timeout_err", 32, kWrap},
    {"resp_local_length_error", 32, kWrap},
    {"resp_cqe_error", 32, kWrap},
    {"req_cqe_error", 32, kWrap},
    {"req_remote_invalid_request", 32, kWrap},
    {"req_remote_access_errors", 32, kWrap},
    {"resp_remote_access_errors", 32, kWrap},
    {"resp_cqe_flush_error", 32, kWrap},
    {"req_cqe_flush_error", 32, kWrap},
    {"req_transport_retries_exceeded", 32, kWrap},
    {"req_rnr_retries_exceeded", 32, kWrap},
    {"roce_adp_retrans", 32, kWrap},
    {"roce_adp_retrans_to", 32, kWrap},
    {"roce_slow_restart", 32, kWrap},
    {"roce_slow_restart_cnps", 32, kWrap},
    {"roce_slow_restart_trans", 32, kWrap},
    {"rp_cnp_ignored", 64, kWrap},
    {"rp_cnp_handled", 64, kWrap},
    {"np_ecn_marked_roce_packets", 64, kWrap},
    {"np_cnp_sent", 64, kWrap},
    {"rx_icrc_encapsulated", 64, kWrap},
};

// rdma_rxe hw_counters (reference §2.2, the 15-counter set of 5.x/6.x kernels). 64-bit.
constexpr CounterDef kRxeHwCounters[] = {
    {"sent_pkts", 64, kWrap},           {"rcvd_pkts", 64, kWrap},
    {"duplicate_request", 64, kWrap},   {"out_of_seq_request", 64, kWrap},
    {"rcvd_rnr_err", 64, kWrap},        {"send_rnr_err", 64, kWrap},
    {"rcvd_seq_err", 64, kWrap},        {"ack_deferred", 64, kWrap},
    {"retry_exceeded_err", 64, kWrap},  {"retry_rnr_exceeded_err", 64, kWrap},
    {"completer_retry_err", 64, kWrap}, {"send_err", 64, kWrap},
    {"link_downed", 64, kWrap},         {"rdma_sends", 64, kWrap},
    {"rdma_recvs", 64, kWrap},
};

// mlx5 `ethtool -S` statistics (reference §3.1) that are not per priority, in the order the
// driver's stats groups list them: SW, q-counter, 802.3, RFC 2863, physical layer, extended,
// PCIe. `outbound_pci_stalled_rd/wr` are gauges (percent of the last second).
constexpr CounterDef kEthtoolPortStats[] = {
    {"rx_packets", 64, kWrap},
    {"rx_bytes", 64, kWrap},
    {"tx_packets", 64, kWrap},
    {"tx_bytes", 64, kWrap},
    {"rx_csum_complete", 64, kWrap},
    {"rx_out_of_buffer", 32, kWrap},  // u32 sum of q-counters
    {"tx_packets_phy", 64, kWrap},
    {"rx_packets_phy", 64, kWrap},
    {"rx_crc_errors_phy", 64, kWrap},
    {"tx_bytes_phy", 64, kWrap},
    {"rx_bytes_phy", 64, kWrap},
    {"rx_pause_ctrl_phy", 64, kWrap},  // rendered as the sum of rx_prio*_pause
    {"tx_pause_ctrl_phy", 64, kWrap},  // rendered as the sum of tx_prio*_pause
    {"rx_symbol_err_phy", 64, kWrap},
    {"rx_discards_phy", 64, kWrap},
    {"tx_discards_phy", 64, kWrap},
    {"tx_errors_phy", 64, kWrap},
    {"link_down_events_phy", 32, kWrap},
    {"rx_pcs_symbol_err_phy", 64, kWrap},
    {"rx_corrected_bits_phy", 64, kWrap},
    {"rx_buffer_passed_thres_phy", 64, kWrap},
    {"rx_pci_signal_integrity", 64, kWrap},
    {"tx_pci_signal_integrity", 64, kWrap},
    {"outbound_pci_buffer_overflow", 64, kWrap},
    {"outbound_pci_stalled_rd", 64, kWrap},
    {"outbound_pci_stalled_wr", 64, kWrap},
    {"outbound_pci_stalled_rd_events", 64, kWrap},
    {"outbound_pci_stalled_wr_events", 64, kWrap},
};

// Per-priority mlx5 statistics (64-bit). The PFC group is listed only for priorities with PFC
// enabled; the simulator keeps counting all eight so a priority keeps its value when PFC is
// switched off and on again.
enum PrioStat {
  kRxPrioBytes,
  kRxPrioPackets,
  kRxPrioDiscards,
  kTxPrioBytes,
  kTxPrioPackets,
  kRxPrioPause,  // first of the PFC group
  kRxPrioPauseDuration,
  kTxPrioPause,
  kTxPrioPauseDuration,
  kRxPrioPauseTransition,  // last of the PFC group
  kRxPrioBufDiscard,
  kRxPrioCongDiscard,
  kRxPrioMarked,
  kPrioStatCount,
};

constexpr const char* kPrioStatFormats[kPrioStatCount] = {
    "rx_prio%d_bytes",          "rx_prio%d_packets",
    "rx_prio%d_discards",       "tx_prio%d_bytes",
    "tx_prio%d_packets",        "rx_prio%d_pause",
    "rx_prio%d_pause_duration", "tx_prio%d_pause",
    "tx_prio%d_pause_duration", "rx_prio%d_pause_transition",
    "rx_prio%d_buf_discard",    "rx_prio%d_cong_discard",
    "rx_prio%d_marked"};

const std::string& PrioName(PrioStat stat, int prio) {
  static const auto kTable = [] {
    std::array<std::array<std::string, 8>, kPrioStatCount> t;
    for (int k = 0; k < kPrioStatCount; ++k) {
      for (int q = 0; q < 8; ++q) {
        t[static_cast<size_t>(k)][static_cast<size_t>(q)] = Fmt(kPrioStatFormats[k], q);
      }
    }
    return t;
  }();
  return kTable[static_cast<size_t>(stat)][static_cast<size_t>(prio & 7)];
}

constexpr const char* kPauseStormStats[] = {"tx_pause_storm_warning_events",
                                            "tx_pause_storm_error_events"};

// Netdev traffic counters every netdev has (kernel path; `ethtool -S` SW stats on mlx5).
constexpr const char* kNetdevTrafficStats[] = {"rx_packets", "rx_bytes", "tx_packets", "tx_bytes"};

// The RoCE (NCCL) data priority: NCCL_IB_TC=106 -> DSCP 26 -> priority 26 >> 3 = 3.
constexpr int kDataPrio = 3;
// CNPs go out on priority 6 (ecn/roce_np/cnp_802p_prio).
constexpr int kCnpPrio = 6;

// PCIe AER stat names (drivers/pci/pcie/aer.c, 5.x/6.x kernels); nullptr = unnamed bit.
constexpr const char* kAerCorrectableNames[32] = {
    "RxErr",    nullptr, nullptr, nullptr, nullptr,   nullptr,       "BadTLP",     "BadDLLP",
    "Rollover", nullptr, nullptr, nullptr, "Timeout", "NonFatalErr", "CorrIntErr", "HeaderOF",
    nullptr,    nullptr, nullptr, nullptr, nullptr,   nullptr,       nullptr,      nullptr,
    nullptr,    nullptr, nullptr, nullptr, nullptr,   nullptr,       nullptr,      nullptr};
constexpr const char* kAerUncorrectableNames[32] = {"Undefined",
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    "DLP",
                                                    "SDES",
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    "TLP",
                                                    "FCP",
                                                    "CmpltTO",
                                                    "CmpltAbrt",
                                                    "UnxCmplt",
                                                    "RxOF",
                                                    "MalfTLP",
                                                    "ECRC",
                                                    "UnsupReq",
                                                    "ACSViol",
                                                    "UncorrIntErr",
                                                    "BlockedTLP",
                                                    "AtomicOpBlocked",
                                                    "TLPBlockedErr",
                                                    "PoisonTLPBlocked",
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr,
                                                    nullptr};

struct AerStats {
  std::array<uint64_t, 32> bits{};
  uint64_t total = 0;
};

std::string RenderAer(const AerStats& s, const char* const* names, const char* array_name,
                      const char* total_name) {
  std::string out;
  for (int i = 0; i < 32; ++i) {
    const uint64_t v = s.bits[static_cast<size_t>(i)];
    if (names[i] != nullptr) {
      out += Fmt("%s %llu\n", names[i], static_cast<unsigned long long>(v));
    } else if (v != 0) {
      out += Fmt("%s_bit[%d] %llu\n", array_name, i, static_cast<unsigned long long>(v));
    }
  }
  out += Fmt("TOTAL_%s %llu\n", total_name, static_cast<unsigned long long>(s.total));
  return out;
}

int AerBit(const char* const* names, std::string_view name) {
  for (int i = 0; i < 32; ++i) {
    if (names[i] != nullptr && name == names[i]) return i;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Scenarios (table-driven)
// ---------------------------------------------------------------------------------------------

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
  kChurn,        // hot-plug churn, a 4-tick cycle: fault device (and VFs) removed; back
                 // (counters reset); files swapped for malformed ones; VFs and last port gone
};

constexpr int kForever = -1;

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

const std::vector<Scenario>& Scenarios() {
  using K = EffectKind;
  static const std::vector<Scenario> kTable = {
      {"healthy", "all links up, steady traffic, rare errors", {}},
      {"link-down",
       "fault port goes DOWN/Disabled at tick 3 and stays down",
       {{K::kLinkDown, nullptr, 3, kForever, 0, 0}}},
      {"flap",
       "fault port toggles down/up every 2 ticks from tick 2",
       {{K::kLinkFlap, nullptr, 2, kForever, 2, 0}}},
      {"downgrade",
       "fault port rate drops to half width at tick 3",
       {{K::kHalfWidth, nullptr, 3, kForever, 0, 0}}},
      {"pcie-downtrain",
       "fault device PCIe link x16 32.0 GT/s -> x8 16.0 GT/s at tick 3",
       {{K::kPcieDowntrain, nullptr, 3, kForever, 0, 0},
        {K::kSet, "ethtool/outbound_pci_stalled_rd", 3, kForever, 45, 0},
        {K::kSet, "ethtool/outbound_pci_stalled_wr", 3, kForever, 35, 0},
        {K::kAddRate, "ethtool/outbound_pci_stalled_rd_events", 3, kForever, 1, 1},
        {K::kAddRate, "ethtool/outbound_pci_stalled_wr_events", 3, kForever, 1, 1}}},
      {"symbol-errors",
       "fault port physical errors and PCIe correctable AER errors rise every tick",
       {{K::kAdd, "counters/symbol_error", 1, kForever, 5, 20},
        {K::kAdd, "counters/link_error_recovery", 1, kForever, 1, 1},
        {K::kAdd, "counters/port_rcv_errors", 1, kForever, 3, 10},
        {K::kAdd, "aer_dev_correctable/RxErr", 1, kForever, 1, 5},
        {K::kAdd, "aer_dev_correctable/BadTLP", 1, kForever, 0, 2},
        {K::kAdd, "aer_dev_correctable/BadDLLP", 1, kForever, 0, 2}}},
      {"congestion",
       "fault port ECN/CNP counters rise fast (RoCE: also ethtool rx_prio3_marked and "
       "rx_prio3_cong_discard)",
       {{K::kAdd, "hw_counters/np_ecn_marked_roce_packets", 1, kForever, 20000, 50000},
        {K::kAdd, "hw_counters/np_cnp_sent", 1, kForever, 10000, 25000},
        {K::kAdd, "hw_counters/rp_cnp_handled", 1, kForever, 10000, 25000},
        {K::kAdd, "counters/port_xmit_wait", 1, kForever, 100000, 1000000},
        {K::kAdd, "ethtool/rx_prio3_marked", 1, kForever, 20000, 50000},
        {K::kAdd, "ethtool/rx_prio3_cong_discard", 1, kForever, 100, 2000}}},
      {"out-of-buffer",
       "fault port hw_counters/out_of_buffer rises",
       {{K::kAdd, "hw_counters/out_of_buffer", 1, kForever, 500, 5000}}},
      {"retransmits",
       "fault port transport retry / sequence error counters rise",
       {{K::kAdd, "hw_counters/local_ack_timeout_err", 1, kForever, 1, 10},
        {K::kAdd, "hw_counters/packet_seq_err", 1, kForever, 5, 50},
        {K::kAdd, "hw_counters/req_transport_retries_exceeded", 1, kForever, 1, 2},
        {K::kAdd, "hw_counters/retry_exceeded_err", 1, kForever, 1, 2},
        {K::kAdd, "hw_counters/rcvd_seq_err", 1, kForever, 5, 50},
        {K::kAdd, "hw_counters/completer_retry_err", 1, kForever, 1, 10}}},
      {"saturated",
       "fault port symbol_error stuck at 65535 and link_downed at 255 (IBTA all-ones)",
       {{K::kSet, "counters/symbol_error", 0, kForever, 65535, 0},
        {K::kSet, "counters/link_downed", 0, kForever, 255, 0}}},
      {"wrap",
       "fault port rx_write_requests starts at 2^32-1000, +400/tick, wraps at tick 3",
       {{K::kFreeze, "hw_counters/rx_write_requests", 0, kForever, 0, 0},
        {K::kSet, "hw_counters/rx_write_requests", 0, 1, (uint64_t{1} << 32) - 1000, 0},
        {K::kAdd, "hw_counters/rx_write_requests", 1, kForever, 400, 400}}},
      {"vanish",
       "fault device disappears at tick 3 and comes back (counters reset) at tick 6",
       {{K::kVanish, nullptr, 3, 6, 0, 0}}},
      {"churn",
       "every 4 ticks from tick 1: fault device and VFs removed, re-added, files malformed, "
       "VFs and last port removed (robustness tests)",
       {{K::kChurn, nullptr, 1, kForever, 0, 0}}},
      // RoCE lossless-fabric faults. The fault device must be a RoCE PF (kRoceOnly).
      {"pfc-storm",
       "RoCE port*: PFC pause storm on priority 3 (tx pause 50-80% of the time), storm "
       "warning/error events, rx_prio3_buf_discard rises",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0},
        {K::kAddRate, "ethtool/tx_prio3_pause", 1, kForever, 10000, 25000},
        {K::kAddRate, "ethtool/tx_prio3_pause_duration", 1, kForever, 500000, 800000},
        {K::kAddRate, "ethtool/rx_prio3_pause", 1, kForever, 5000, 15000},
        {K::kAddRate, "ethtool/rx_prio3_pause_duration", 1, kForever, 100000, 300000},
        {K::kAddRate, "ethtool/rx_prio3_pause_transition", 1, kForever, 100, 1000},
        {K::kAdd, "ethtool/tx_pause_storm_warning_events", 2, kForever, 1, 1},
        {K::kAdd, "ethtool/tx_pause_storm_error_events", 4, kForever, 1, 1},
        {K::kAddRate, "ethtool/rx_prio3_buf_discard", 1, kForever, 1000, 10000},
        {K::kAddRate, "ethtool/rx_buffer_passed_thres_phy", 1, kForever, 50, 200}}},
      {"misconfig",
       "RoCE port*: PFC on priority 0 not 3, trust pcp, MTU 1500, ECN off on priority 3, "
       "no RoCE v2 GIDs",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0},
        {K::kPfcMask, nullptr, 0, kForever, 0x01, 0},
        {K::kTrustPcp, nullptr, 0, kForever, 0, 0},
        {K::kMtu, nullptr, 0, kForever, 1500, 0},
        {K::kEcnOff, nullptr, 0, kForever, 3, 0},
        {K::kNoRoceV2Gid, nullptr, 0, kForever, 0, 0}}},
      {"pfc-off",
       "RoCE port*: PFC off on every priority; priority 3 drops instead of pausing",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0}, {K::kPfcMask, nullptr, 0, kForever, 0, 0}}},
      {"mtu",
       "RoCE port*: netdev MTU 1500",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0}, {K::kMtu, nullptr, 0, kForever, 1500, 0}}},
      {"no-rocev2-gid",
       "RoCE port*: the RoCE v2 GID entries are deleted",
       {{K::kRoceOnly, nullptr, 0, kForever, 0, 0}, {K::kNoRoceV2Gid, nullptr, 0, kForever, 0, 0}}},
  };
  return kTable;
}

const Scenario* FindScenario(const std::string& name) {
  for (const Scenario& s : Scenarios()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

bool InRange(const Effect& e, uint64_t tick) {
  const auto t = static_cast<int64_t>(tick);
  return t >= e.from && (e.to == kForever || t < e.to);
}

// ---------------------------------------------------------------------------------------------
// Tree writer: in-place rewrites with a content cache
// ---------------------------------------------------------------------------------------------

class TreeWriter {
 public:
  TreeWriter() = default;
  TreeWriter(const TreeWriter&) = delete;
  TreeWriter& operator=(const TreeWriter&) = delete;
  ~TreeWriter() { Reset(""); }

  // Forgets everything (closing cached fds) and sets the base directory. With `atomic`, File()
  // writes a temporary file and renames it over the target instead of rewriting in place (for
  // the fixture files, which readers re-open on every read).
  void Reset(std::string base, bool atomic = false) {
    atomic_ = atomic;
    for (auto& [rel, fd] : fds_)
      ::close(fd);
    fds_.clear();
    files_.clear();
    links_.clear();
    dirs_.clear();
    base_ = std::move(base);
    // Keep up to half of the fd limit open for files that are rewritten every tick.
    struct rlimit rl;
    fd_budget_ = 0;
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
      fd_budget_ = static_cast<size_t>(rl.rlim_cur / 2);
    } else {
      fd_budget_ = 4096;
    }
  }

  // Writes `content` to base/rel. Existing files are rewritten in place: pwrite at offset 0,
  // then ftruncate — the inode never changes. Files written more than once keep their fd
  // open (within the budget) so later ticks skip the open/close.
  bool File(const std::string& rel, const std::string& content, std::string* error) {
    auto it = files_.find(rel);
    if (it != files_.end() && it->second == content) return true;
    if (it == files_.end() && !EnsureParent(rel, error)) return false;
    const std::string path = base_ + "/" + rel;
    if (atomic_) {
      if (!WriteAndRename(path, content, error)) return false;
      files_[rel] = content;
      return true;
    }
    int fd = -1;
    bool cached = false;
    if (auto f = fds_.find(rel); f != fds_.end()) {
      fd = f->second;
      cached = true;
    } else {
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) return Fail("open " + path, error);
    }
    size_t off = 0;
    bool ok = true;
    std::string what;
    while (off < content.size()) {
      ssize_t n = ::pwrite(fd, content.data() + off, content.size() - off, static_cast<off_t>(off));
      if (n < 0) {
        if (errno == EINTR) continue;
        ok = false;
        what = "pwrite " + path;
        break;
      }
      off += static_cast<size_t>(n);
    }
    if (ok && ::ftruncate(fd, static_cast<off_t>(content.size())) != 0) {
      ok = false;
      what = "ftruncate " + path;
    }
    const int saved = errno;
    if (!ok || (!cached && (it == files_.end() || fds_.size() >= fd_budget_))) {
      if (cached) fds_.erase(rel);
      ::close(fd);
    } else if (!cached) {
      fds_.emplace(rel, fd);
    }
    if (!ok) {
      errno = saved;
      return Fail(what, error);
    }
    files_[rel] = content;
    return true;
  }

  bool Link(const std::string& rel, const std::string& target, std::string* error) {
    auto it = links_.find(rel);
    if (it != links_.end() && it->second == target) return true;
    if (!EnsureParent(rel, error)) return false;
    const std::string path = base_ + "/" + rel;
    ::unlink(path.c_str());
    if (::symlink(target.c_str(), path.c_str()) != 0) return Fail("symlink " + path, error);
    links_[rel] = target;
    return true;
  }

  bool Dir(const std::string& rel, std::string* error) {
    if (dirs_.count(rel)) return true;
    std::error_code ec;
    fs::create_directories(base_ + "/" + rel, ec);
    if (ec) {
      *error = "mkdir " + base_ + "/" + rel + ": " + ec.message();
      return false;
    }
    dirs_.insert(rel);
    return true;
  }

  // True if base/rel was written by File() and not removed since.
  bool HasFile(const std::string& rel) const { return files_.count(rel) != 0; }

  // Removes base/rel (file, link or whole directory) and forgets everything below it.
  bool Remove(const std::string& rel, std::string* error) {
    if (rel.empty() || rel.find("..") != std::string::npos) {
      *error = "refusing to remove '" + rel + "'";
      return false;
    }
    std::error_code ec;
    fs::remove_all(base_ + "/" + rel, ec);
    if (ec) {
      *error = "remove " + base_ + "/" + rel + ": " + ec.message();
      return false;
    }
    Forget(rel);
    return true;
  }

 private:
  static bool Fail(const std::string& what, std::string* error) {
    *error = what + ": " + std::strerror(errno);
    return false;
  }

  // Writes `content` to a hidden temporary file next to `path`, then renames it over `path`.
  static bool WriteAndRename(const std::string& path, const std::string& content,
                             std::string* error) {
    const auto slash = path.rfind('/');
    const std::string tmp = path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Fail("open " + tmp, error);
    size_t off = 0;
    while (off < content.size()) {
      const ssize_t n = ::write(fd, content.data() + off, content.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int saved = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        errno = saved;
        return Fail("write " + tmp, error);
      }
      off += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) {
      const int saved = errno;
      ::unlink(tmp.c_str());
      errno = saved;
      return Fail("close " + tmp, error);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      const int saved = errno;
      ::unlink(tmp.c_str());
      errno = saved;
      return Fail("rename " + tmp, error);
    }
    return true;
  }

  bool EnsureParent(const std::string& rel, std::string* error) {
    auto slash = rel.rfind('/');
    if (slash == std::string::npos) return true;
    return Dir(rel.substr(0, slash), error);
  }

  static bool Under(const std::string& path, const std::string& prefix) {
    return path == prefix ||
           (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
            path[prefix.size()] == '/');
  }

  void Forget(const std::string& rel) {
    std::erase_if(fds_, [&](const auto& kv) {
      if (!Under(kv.first, rel)) return false;
      ::close(kv.second);
      return true;
    });
    std::erase_if(files_, [&](const auto& kv) { return Under(kv.first, rel); });
    std::erase_if(links_, [&](const auto& kv) { return Under(kv.first, rel); });
    std::erase_if(dirs_, [&](const std::string& d) { return Under(d, rel); });
  }

  std::string base_;
  std::unordered_map<std::string, std::string> files_;
  std::unordered_map<std::string, std::string> links_;
  std::unordered_set<std::string> dirs_;
  std::unordered_map<std::string, int> fds_;
  size_t fd_budget_ = 0;
  bool atomic_ = false;
};

// ---------------------------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------------------------

struct Port {
  int num = 1;
  bool ib = false;
  std::string netdev;
  uint64_t guid = 0;  // port GUID (IB) / base of the MAC (RoCE)
  std::array<uint8_t, 6> mac{};
  std::array<uint8_t, 4> ipv4{};
  uint32_t lid = 0;
  bool up = true;
  bool half_width = false;
  int64_t carrier_up = 1;
  int64_t carrier_down = 1;
  double tx_rate = 0;  // bytes per second
  double rx_rate = 0;
  std::map<std::string, Counter> counters;  // key: "counters/x" or "hw_counters/x"
  // Netdev statistics: `ethtool -S` names (mlx5 RoCE PFs: the full set of kEthtool* below;
  // other netdevs: only the kernel-path rx/tx packets/bytes).
  std::map<std::string, Counter> eth;
  // RoCE configuration (set from the scenario each tick; defaults are the healthy setup).
  uint8_t pfc_mask = 0x08;  // PFC on priority 3
  bool trust_dscp = true;   // DSCP APP entries present, dscp2prio = dscp >> 3
  int mtu = 0;              // netdev MTU (default per layout/link layer)
  uint8_t ecn_mask = 0x08;  // ECN (roce_np and roce_rp) enabled on priority 3
  bool rocev2_gids = true;
  bool roce_pf = false;  // mlx5 RoCE PF port: full ethtool set, DCB fixture, OFED ECN files
  Rng rng;
  Rng eth_rng;  // separate stream, so the sysfs counters do not depend on the ethtool model
};

struct Device {
  int index = 0;  // global index (PFs first, then VFs)
  std::string name;
  bool vf = false;
  int pf = 0;              // PF index (for VFs: the parent PF)
  int vf_index = 0;        // VF number within the PF
  std::string domain_dir;  // "pci0000:00"
  std::string rootport;    // "0000:00:01.0"
  std::string pci;         // "0000:18:00.0" (mlx5) / "virtio0" (rxe netdev parent)
  std::string pci_rel;     // "devices/pci0000:00/0000:00:01.0/0000:18:00.0"
  uint64_t node_guid = 0;
  uint64_t sys_image_guid = 0;
  int numa = 0;
  bool present = true;
  bool downtrained = false;
  AerStats aer_cor, aer_nonfatal, aer_fatal;
  std::vector<Port> ports;
  std::vector<int> vf_devices;  // indexes of this PF's VF devices
  Rng rng;
};

std::string GuidString(uint64_t g) {
  return Fmt("%04x:%04x:%04x:%04x", static_cast<unsigned>((g >> 48) & 0xffff),
             static_cast<unsigned>((g >> 32) & 0xffff), static_cast<unsigned>((g >> 16) & 0xffff),
             static_cast<unsigned>(g & 0xffff));
}

std::string MacString(const std::array<uint8_t, 6>& m) {
  return Fmt("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

// 16 bytes -> "%pI6" (8 groups of 4 lower-case hex digits, not compressed).
std::string Gid(const std::array<uint8_t, 16>& b) {
  std::string out;
  for (int i = 0; i < 8; ++i) {
    if (i) out += ':';
    out += Fmt("%02x%02x", b[static_cast<size_t>(2 * i)], b[static_cast<size_t>(2 * i + 1)]);
  }
  return out;
}

std::array<uint8_t, 16> LinkLocalEui64(const std::array<uint8_t, 6>& m) {
  return {0xfe, 0x80, 0,    0,    0,    0,    0,   0, static_cast<uint8_t>(m[0] ^ 0x02),
          m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
}

std::array<uint8_t, 16> LinkLocalGuid(uint64_t g) {
  std::array<uint8_t, 16> b{0xfe, 0x80};
  for (int i = 0; i < 8; ++i)
    b[static_cast<size_t>(8 + i)] = static_cast<uint8_t>(g >> (56 - 8 * i));
  return b;
}

std::array<uint8_t, 16> V4Mapped(const std::array<uint8_t, 4>& a) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a[0], a[1], a[2], a[3]};
}

uint64_t Eui64FromMac(const std::array<uint8_t, 6>& m) {
  const auto ll = LinkLocalEui64(m);
  uint64_t g = 0;
  for (int i = 8; i < 16; ++i)
    g = (g << 8) | ll[static_cast<size_t>(i)];
  return g;
}

// "%d%s Gb/sec (%dX%s)" as in rate_show(); lane speed in deci-Gb/s.
std::string RateString(int width, int lane_deci_gb, const char* speed_name) {
  const int rate = width * lane_deci_gb;
  return Fmt("%d%s Gb/sec (%dX %s)", rate / 10, rate % 10 ? ".5" : "", width, speed_name);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// FabricSim
// ---------------------------------------------------------------------------------------------

struct FabricSim::State {
  SimConfig cfg;
  const Scenario* scenario = nullptr;
  int fault_index = -1;  // device index hit by the scenario, -1 = none
  uint64_t tick = 0;
  uint64_t scenario_start = 0;  // tick at which the scenario was set (SetScenario)
  bool initialized = false;
  std::vector<Device> devices;
  TreeWriter writer;    // root/sys, in-place rewrites
  TreeWriter fixtures;  // root/fixtures (ethtool/, dcb/), temp file + rename

  bool mlx5() const { return cfg.layout == SimConfig::Layout::Mlx5; }

  // ---- construction --------------------------------------------------------------------

  bool PfIsIb(int pf) const {
    switch (cfg.link_layer) {
      case SimConfig::LinkLayer::Roce:
        return false;
      case SimConfig::LinkLayer::Ib:
        return true;
      case SimConfig::LinkLayer::Mixed:
        break;
    }
    return pf % 2 == 1;
  }

  void InitCounters(Port& p, bool with_history) {
    p.counters.clear();
    if (mlx5()) {
      for (const CounterDef& d : kPmaCounters) {
        p.counters[std::string("counters/") + d.name] = Counter{0, d.bits, d.overflow, false};
      }
      for (const CounterDef& d : kMlx5HwCounters) {
        p.counters[std::string("hw_counters/") + d.name] = Counter{0, d.bits, d.overflow, false};
      }
    } else {
      for (const CounterDef& d : kRxeHwCounters) {
        p.counters[std::string("hw_counters/") + d.name] = Counter{0, d.bits, d.overflow, false};
      }
    }
    p.carrier_up = 1;
    p.carrier_down = 1;
    p.up = true;
    p.half_width = false;
    InitEth(p);
    if (!with_history) return;  // freshly (re-)probed device: everything starts at zero
    // Start from a plausible history (the port has been up for a while) so rates and deltas
    // look real from the first scrape. Error counters start at zero.
    const auto uptime = static_cast<double>(p.rng.Uniform(3600, 7 * 86400));
    EthHistory(p, uptime);
    const auto tx = static_cast<uint64_t>(p.tx_rate * uptime);
    const auto rx = static_cast<uint64_t>(p.rx_rate * uptime);
    const auto set = [&](const char* key, uint64_t v) {
      auto it = p.counters.find(key);
      if (it != p.counters.end()) it->second.Add(v);  // Add: wraps/saturates like the HW
    };
    if (mlx5()) {
      const uint64_t mc = static_cast<uint64_t>(uptime) / 100;
      set("counters/port_xmit_data", tx / 4);
      set("counters/port_rcv_data", rx / 4);
      set("counters/unicast_xmit_packets", tx / 4096);
      set("counters/unicast_rcv_packets", rx / 4096);
      set("counters/multicast_xmit_packets", mc);
      set("counters/multicast_rcv_packets", mc);
      set("counters/port_xmit_packets", tx / 4096 + mc);
      set("counters/port_rcv_packets", rx / 4096 + mc);
      set("counters/port_xmit_wait", static_cast<uint64_t>(uptime) * 1000);
      set("hw_counters/rx_write_requests", rx / 4096 * 6 / 10);
      set("hw_counters/rx_read_requests", rx / 4096 / 10);
      set("hw_counters/rx_atomic_requests", static_cast<uint64_t>(uptime) * 10);
    } else {
      set("hw_counters/sent_pkts", tx / 1024);
      set("hw_counters/rcvd_pkts", rx / 1024);
      set("hw_counters/rdma_sends", tx / 1024 / 4);
      set("hw_counters/rdma_recvs", rx / 1024 / 4);
    }
  }

  // ---- netdev / ethtool statistics ------------------------------------------------------

  static void InitEth(Port& p) {
    p.eth.clear();
    for (const char* n : kNetdevTrafficStats)
      p.eth[n] = Counter{0, 64, kWrap, false};
    if (!p.roce_pf) return;
    for (const CounterDef& d : kEthtoolPortStats)
      p.eth[d.name] = Counter{0, d.bits, d.overflow, false};
    for (int k = 0; k < kPrioStatCount; ++k) {
      for (int q = 0; q < 8; ++q)
        p.eth[PrioName(static_cast<PrioStat>(k), q)] = Counter{0, 64, kWrap, false};
    }
    for (const char* n : kPauseStormStats)
      p.eth[n] = Counter{0, 64, kWrap, false};
  }

  static void BumpEth(Port& p, const std::string& key, uint64_t n) {
    auto it = p.eth.find(key);
    if (it == p.eth.end() || it->second.frozen || n == 0) return;
    it->second.Add(n);
  }

  static uint64_t EthValue(const Port& p, const std::string& key) {
    auto it = p.eth.find(key);
    return it == p.eth.end() ? 0 : it->second.value;
  }

  // Kernel-path (non-RDMA) traffic of a netdev per second: IPoIB / Ethernet management traffic.
  // rxe sends RoCE through the netdev, so there the netdev carries all of it.
  static constexpr double kSwBytesPerSecond = 2e6;

  void EthHistory(Port& p, double uptime) {
    Rng& r = p.eth_rng;
    const auto u = static_cast<uint64_t>(uptime);
    const uint64_t sw_rx = static_cast<uint64_t>(kSwBytesPerSecond * uptime);
    const uint64_t sw_tx = sw_rx / 2;
    if (!mlx5()) {
      BumpEth(p, "rx_bytes", static_cast<uint64_t>(p.rx_rate * uptime));
      BumpEth(p, "rx_packets", static_cast<uint64_t>(p.rx_rate * uptime) / 1024);
      BumpEth(p, "tx_bytes", static_cast<uint64_t>(p.tx_rate * uptime));
      BumpEth(p, "tx_packets", static_cast<uint64_t>(p.tx_rate * uptime) / 1024);
      return;
    }
    BumpEth(p, "rx_bytes", sw_rx);
    BumpEth(p, "rx_packets", sw_rx / 800);
    BumpEth(p, "tx_bytes", sw_tx);
    BumpEth(p, "tx_packets", sw_tx / 800);
    if (!p.roce_pf) return;
    BumpEth(p, "rx_csum_complete", sw_rx / 800);
    const auto rx = static_cast<uint64_t>(p.rx_rate * uptime);
    const auto tx = static_cast<uint64_t>(p.tx_rate * uptime);
    const uint64_t cnp = u * 20;
    BumpEth(p, PrioName(kRxPrioBytes, kDataPrio), rx);
    BumpEth(p, PrioName(kRxPrioPackets, kDataPrio), rx / 4096);
    BumpEth(p, PrioName(kTxPrioBytes, kDataPrio), tx);
    BumpEth(p, PrioName(kTxPrioPackets, kDataPrio), tx / 4096);
    BumpEth(p, PrioName(kRxPrioBytes, 0), sw_rx);
    BumpEth(p, PrioName(kRxPrioPackets, 0), sw_rx / 800);
    BumpEth(p, PrioName(kTxPrioBytes, 0), sw_tx);
    BumpEth(p, PrioName(kTxPrioPackets, 0), sw_tx / 800);
    BumpEth(p, PrioName(kRxPrioBytes, kCnpPrio), cnp * 64);
    BumpEth(p, PrioName(kRxPrioPackets, kCnpPrio), cnp);
    BumpEth(p, PrioName(kTxPrioBytes, kCnpPrio), cnp * 64);
    BumpEth(p, PrioName(kTxPrioPackets, kCnpPrio), cnp);
    BumpEth(p, "rx_bytes_phy", rx + sw_rx + cnp * 64);
    BumpEth(p, "rx_packets_phy", rx / 4096 + sw_rx / 800 + cnp);
    BumpEth(p, "tx_bytes_phy", tx + sw_tx + cnp * 64);
    BumpEth(p, "tx_packets_phy", tx / 4096 + sw_tx / 800 + cnp);
    const uint64_t rx_pause = u * r.Uniform(10, 60);
    const uint64_t tx_pause = u * r.Uniform(2, 20);
    BumpEth(p, PrioName(kRxPrioPause, kDataPrio), rx_pause);
    BumpEth(p, PrioName(kRxPrioPauseDuration, kDataPrio), rx_pause * r.Uniform(5, 15));
    BumpEth(p, PrioName(kRxPrioPauseTransition, kDataPrio), rx_pause / 3);
    BumpEth(p, PrioName(kTxPrioPause, kDataPrio), tx_pause);
    BumpEth(p, PrioName(kTxPrioPauseDuration, kDataPrio), tx_pause * r.Uniform(5, 15));
    BumpEth(p, PrioName(kRxPrioMarked, kDataPrio), u * r.Uniform(1, 5));
    BumpEth(p, "rx_corrected_bits_phy", u * r.Uniform(500, 3000));
    BumpEth(p, "rx_buffer_passed_thres_phy", u / r.Uniform(10, 100));
    BumpEth(p, "rx_out_of_buffer", u / r.Uniform(10, 100));
    BumpEth(p, "outbound_pci_stalled_rd_events", u / 86400);
  }

  void AddPause(Port& p, int prio, bool rx, uint64_t frames) {
    if (frames == 0) return;
    Rng& r = p.eth_rng;
    BumpEth(p, PrioName(rx ? kRxPrioPause : kTxPrioPause, prio), frames);
    // Each pause holds the queue for a few µs at 400G (max quanta 65535 x 512 bit = 84 µs).
    BumpEth(p, PrioName(rx ? kRxPrioPauseDuration : kTxPrioPauseDuration, prio),
            frames * r.Uniform(2, 20));
    if (rx) BumpEth(p, PrioName(kRxPrioPauseTransition, prio), (frames + 2) / 3);
  }

  // One tick of netdev statistics. `tx`/`rx` are the port's RDMA bytes this tick.
  void EthTraffic(Port& p, uint64_t tx, uint64_t rx) {
    const double dt = cfg.interval_seconds;
    Rng& r = p.eth_rng;
    const auto scaled = [&](double x) {
      return static_cast<uint64_t>(std::llround(std::max(0.0, x * dt)));
    };
    if (!mlx5()) {  // rxe: RoCE goes through the netdev
      BumpEth(p, "rx_bytes", rx);
      BumpEth(p, "rx_packets", rx / 1024);
      BumpEth(p, "tx_bytes", tx);
      BumpEth(p, "tx_packets", tx / 1024);
      return;
    }
    const uint64_t sw_rx = scaled(kSwBytesPerSecond * (0.5 + r.Unit()));
    const uint64_t sw_tx = sw_rx / 2;
    BumpEth(p, "rx_bytes", sw_rx);
    BumpEth(p, "rx_packets", sw_rx / 800);
    BumpEth(p, "tx_bytes", sw_tx);
    BumpEth(p, "tx_packets", sw_tx / 800);
    if (!p.roce_pf) return;
    BumpEth(p, "rx_csum_complete", sw_rx / 800);

    // Per-priority traffic: RDMA on the data priority, kernel traffic on 0, CNPs on 6.
    const uint64_t cnp_rx = r.Uniform(0, scaled(40));
    const uint64_t cnp_tx = r.Uniform(0, scaled(40));
    BumpEth(p, PrioName(kRxPrioBytes, kDataPrio), rx);
    BumpEth(p, PrioName(kRxPrioPackets, kDataPrio), rx / 4096);
    BumpEth(p, PrioName(kTxPrioBytes, kDataPrio), tx);
    BumpEth(p, PrioName(kTxPrioPackets, kDataPrio), tx / 4096);
    BumpEth(p, PrioName(kRxPrioBytes, 0), sw_rx);
    BumpEth(p, PrioName(kRxPrioPackets, 0), sw_rx / 800);
    BumpEth(p, PrioName(kTxPrioBytes, 0), sw_tx);
    BumpEth(p, PrioName(kTxPrioPackets, 0), sw_tx / 800);
    BumpEth(p, PrioName(kRxPrioBytes, kCnpPrio), cnp_rx * 64);
    BumpEth(p, PrioName(kRxPrioPackets, kCnpPrio), cnp_rx);
    BumpEth(p, PrioName(kTxPrioBytes, kCnpPrio), cnp_tx * 64);
    BumpEth(p, PrioName(kTxPrioPackets, kCnpPrio), cnp_tx);
    BumpEth(p, "rx_bytes_phy", rx + sw_rx + cnp_rx * 64);
    BumpEth(p, "rx_packets_phy", rx / 4096 + sw_rx / 800 + cnp_rx);
    BumpEth(p, "tx_bytes_phy", tx + sw_tx + cnp_tx * 64);
    BumpEth(p, "tx_packets_phy", tx / 4096 + sw_tx / 800 + cnp_tx);

    // PFC: small pause counts on the data priority; rare ones on other PFC priorities.
    for (int q = 0; q < 8; ++q) {
      if ((p.pfc_mask & (1u << q)) == 0) continue;
      if (q == kDataPrio) {
        if (r.Chance(0.4)) AddPause(p, q, /*rx=*/true, r.Uniform(1, scaled(200)));
        if (r.Chance(0.2)) AddPause(p, q, /*rx=*/false, r.Uniform(1, scaled(50)));
      } else if (r.Chance(0.01)) {
        AddPause(p, q, /*rx=*/true, 1);
      }
    }
    if ((p.pfc_mask & (1u << kDataPrio)) == 0) {
      // Lossless traffic without PFC: bursts overflow the receive buffer and are dropped.
      const uint64_t drops = r.Uniform(0, scaled(3000));
      BumpEth(p, PrioName(kRxPrioBufDiscard, kDataPrio), drops);
      BumpEth(p, PrioName(kRxPrioDiscards, kDataPrio), drops / 4);
      BumpEth(p, "rx_discards_phy", drops / 4);
    }
    if (r.Chance(0.05)) BumpEth(p, PrioName(kRxPrioMarked, kDataPrio), r.Uniform(1, 50));
    if (r.Chance(0.002)) BumpEth(p, PrioName(kRxPrioCongDiscard, kDataPrio), 1);
    if (r.Chance(0.002)) BumpEth(p, PrioName(kRxPrioBufDiscard, kDataPrio), 1);

    // Physical layer: FEC corrects a few thousand bits per second; rare real errors.
    BumpEth(p, "rx_corrected_bits_phy", r.Uniform(0, scaled(4000)));
    if (r.Chance(0.002)) BumpEth(p, "rx_symbol_err_phy", 1);
    if (r.Chance(0.002)) BumpEth(p, "rx_crc_errors_phy", 1);
    if (r.Chance(0.0005)) BumpEth(p, "rx_pcs_symbol_err_phy", 1);
    if (r.Chance(0.005)) BumpEth(p, "rx_discards_phy", 1);
    if (r.Chance(0.05)) BumpEth(p, "rx_buffer_passed_thres_phy", r.Uniform(1, 5));
    if (r.Chance(0.01)) BumpEth(p, "rx_out_of_buffer", r.Uniform(1, 20));

    // PCIe: the stall gauges hover near zero (a scenario kSet overrides them afterwards).
    for (const char* g : {"outbound_pci_stalled_rd", "outbound_pci_stalled_wr"}) {
      auto it = p.eth.find(g);
      if (it != p.eth.end() && !it->second.frozen) it->second.Set(r.Uniform(0, 2));
    }
  }

  void ResetDevice(Device& d) {
    d.aer_cor = AerStats{};
    d.aer_nonfatal = AerStats{};
    d.aer_fatal = AerStats{};
    d.downtrained = false;
    for (Port& p : d.ports) {
      p.rng = Rng(MixSeed(cfg.seed, (static_cast<uint64_t>(d.index) << 16) + p.num));
      p.eth_rng =
          Rng(MixSeed(cfg.seed ^ 0xe7e7e7e7ULL, (static_cast<uint64_t>(d.index) << 16) + p.num));
      InitCounters(p, /*with_history=*/false);
    }
    ApplyInitialSets(d);
  }

  void Build() {
    devices.clear();
    const int pfs = cfg.devices;
    const int vfs = mlx5() ? cfg.vfs : 0;
    int ib_netdevs = 0;
    uint32_t next_lid = 2;  // 0x1 is the SM
    for (int i = 0; i < pfs + vfs; ++i) {
      Device d;
      d.index = i;
      d.vf = i >= pfs;
      d.pf = d.vf ? 0 : i;
      d.vf_index = d.vf ? i - pfs : 0;
      d.rng = Rng(MixSeed(cfg.seed, (static_cast<uint64_t>(i) << 16) + 0xffff));
      const int pf = d.pf;
      const int domain = pf / 64;
      const int slot = pf % 64;
      d.domain_dir = Fmt("pci%04x:00", domain);
      d.rootport = Fmt("%04x:00:%02x.%x", domain, 1 + slot / 8, slot % 8);
      d.numa = (2 * pf < cfg.devices) ? 0 : 1;
      if (mlx5()) {
        d.name = "mlx5_" + std::to_string(i);
        const int bus = 0x18 + slot * 3;
        d.pci = Fmt("%04x:%02x:00.%x", domain, bus, d.vf ? d.vf_index + 1 : 0);
        d.pci_rel = "devices/" + d.domain_dir + "/" + d.rootport + "/" + d.pci;
        d.node_guid = 0xb8cef60300000000ULL | (0xa10044ULL + static_cast<uint64_t>(i) * 0x100);
      } else {
        d.name = "rxe" + std::to_string(i);
        d.pci = "virtio" + std::to_string(i);
        d.pci_rel = "devices/" + d.domain_dir + "/" + d.rootport + "/" + d.pci;
      }
      const int nports = (mlx5() && !d.vf) ? cfg.ports : 1;
      const bool ib = mlx5() && PfIsIb(pf);
      for (int pn = 1; pn <= nports; ++pn) {
        Port p;
        p.num = pn;
        p.ib = ib;
        p.roce_pf = mlx5() && !ib && !d.vf;
        p.rng = Rng(MixSeed(cfg.seed, (static_cast<uint64_t>(i) << 16) + pn));
        p.eth_rng = Rng(MixSeed(cfg.seed ^ 0xe7e7e7e7ULL, (static_cast<uint64_t>(i) << 16) + pn));
        p.mtu = ib ? 4092 : (mlx5() ? 9000 : 1500);
        if (mlx5()) {
          p.guid = d.node_guid + static_cast<uint64_t>(pn - 1);
          p.mac = {0xb8,
                   0xce,
                   0xf6,
                   static_cast<uint8_t>(p.guid >> 16),
                   static_cast<uint8_t>(p.guid >> 8),
                   static_cast<uint8_t>(p.guid)};
          const int second = (pn - 1) + 64 * (i >> 8);
          p.ipv4 = {10, static_cast<uint8_t>(second), static_cast<uint8_t>(i & 0xff), 1};
          if (ib) {
            p.netdev = "ib" + std::to_string(ib_netdevs++);
            p.lid = next_lid++;
          } else if (d.vf) {
            p.netdev = "ens1f0v" + std::to_string(d.vf_index);
          } else {
            p.netdev = "ens" + std::to_string(i + 1) + "f0np" + std::to_string(pn - 1);
          }
          p.tx_rate = 1e9 + p.rng.Unit() * 4e9;
          p.rx_rate = 1e9 + p.rng.Unit() * 4e9;
        } else {
          p.mac = {0x52,
                   0x54,
                   0x00,
                   0x12,
                   static_cast<uint8_t>(0x34 + (i >> 8)),
                   static_cast<uint8_t>(0x56 + i)};
          p.ipv4 = {10, 0, static_cast<uint8_t>(2 + i), 15};
          p.netdev = "eth" + std::to_string(i);
          p.guid = Eui64FromMac(p.mac);
          p.tx_rate = 1e8 + p.rng.Unit() * 9e8;
          p.rx_rate = 1e8 + p.rng.Unit() * 9e8;
        }
        InitCounters(p, /*with_history=*/true);
        d.ports.push_back(std::move(p));
      }
      if (!mlx5()) d.node_guid = d.ports[0].guid;
      d.sys_image_guid = d.vf ? devices[0].node_guid : d.node_guid;
      devices.push_back(std::move(d));
    }
    for (Device& d : devices) {
      if (d.vf) devices[0].vf_devices.push_back(d.index);
    }
  }

  bool ResolveFault(std::string* error) {
    fault_index = -1;
    std::string name = cfg.fault_device;
    if (!mlx5() && name.rfind("mlx5_", 0) == 0) name = "rxe" + name.substr(5);
    if (mlx5() && name.rfind("rxe", 0) == 0) name = "mlx5_" + name.substr(3);
    for (const Device& d : devices) {
      if (d.name == name) fault_index = d.index;
    }
    if (fault_index < 0 && scenario != nullptr && !scenario->effects.empty()) {
      *error = "fault device '" + cfg.fault_device + "' does not exist";
      return false;
    }
    // RoCE-only scenarios: an InfiniBand port (or a VF, which has no DCB/ECN/PFC stats of
    // its own) is replaced by the first RoCE PF. Without any RoCE PF the effects find no
    // targets and the scenario does nothing.
    if (fault_index >= 0 && scenario != nullptr && mlx5()) {
      const bool roce_only =
          std::any_of(scenario->effects.begin(), scenario->effects.end(),
                      [](const Effect& e) { return e.kind == EffectKind::kRoceOnly; });
      if (roce_only && !devices[static_cast<size_t>(fault_index)].ports[0].roce_pf) {
        for (const Device& d : devices) {
          if (d.ports[0].roce_pf) {
            fault_index = d.index;
            break;
          }
        }
      }
    }
    return true;
  }

  // ---- scenario ------------------------------------------------------------------------

  static constexpr std::string_view kEthtoolPrefix = "ethtool/";

  Counter* FaultCounter(Device& d, const std::string& target) {
    if (d.ports.empty()) return nullptr;
    Port& p = d.ports[0];
    if (target.starts_with(kEthtoolPrefix)) {
      if (!p.roce_pf) return nullptr;  // the full ethtool set exists on mlx5 RoCE PFs only
      auto it = p.eth.find(target.substr(kEthtoolPrefix.size()));
      return it == p.eth.end() ? nullptr : &it->second;
    }
    auto it = p.counters.find(target);
    return it == p.counters.end() ? nullptr : &it->second;
  }

  // Returns the AER stats + bit for "aer_dev_correctable/RxErr" style targets.
  static bool AerTarget(Device& d, const std::string& target, AerStats** stats, int* bit) {
    auto slash = target.find('/');
    if (slash == std::string::npos) return false;
    const std::string group = target.substr(0, slash);
    const std::string name = target.substr(slash + 1);
    if (group == "aer_dev_correctable") {
      *stats = &d.aer_cor;
      *bit = AerBit(kAerCorrectableNames, name);
    } else if (group == "aer_dev_nonfatal") {
      *stats = &d.aer_nonfatal;
      *bit = AerBit(kAerUncorrectableNames, name);
    } else if (group == "aer_dev_fatal") {
      *stats = &d.aer_fatal;
      *bit = AerBit(kAerUncorrectableNames, name);
    } else {
      return false;
    }
    return *bit >= 0;
  }

  void ApplyCounterEffect(Device& d, const Effect& e, bool initial) {
    if (e.target == nullptr) return;
    const std::string target = e.target;
    const bool rate = e.kind == EffectKind::kAddRate;
    const auto amount = [&](Rng& r) {
      const uint64_t n = r.Uniform(e.lo, e.hi);
      if (!rate) return n;
      return static_cast<uint64_t>(std::llround(static_cast<double>(n) * cfg.interval_seconds));
    };
    AerStats* aer = nullptr;
    int bit = -1;
    if (AerTarget(d, target, &aer, &bit)) {
      if ((e.kind == EffectKind::kAdd || rate) && !initial) {
        const uint64_t n = amount(d.rng);
        aer->bits[static_cast<size_t>(bit)] += n;
        aer->total += n;
      } else if (e.kind == EffectKind::kSet) {
        aer->total += e.lo - std::min(e.lo, aer->bits[static_cast<size_t>(bit)]);
        aer->bits[static_cast<size_t>(bit)] = e.lo;
      }
      return;
    }
    Counter* c = FaultCounter(d, target);
    if (c == nullptr) return;
    Rng& rng = target.starts_with(kEthtoolPrefix) ? d.ports[0].eth_rng : d.ports[0].rng;
    switch (e.kind) {
      case EffectKind::kAdd:
      case EffectKind::kAddRate:
        if (!initial) c->Add(amount(rng));
        break;
      case EffectKind::kSet:
        c->Set(e.lo);
        break;
      case EffectKind::kFreeze:
        c->frozen = true;
        break;
      default:
        break;
    }
  }

  // Effects that hold at tick 0 (initial values, frozen counters).
  void ApplyInitialSets(Device& d) {
    if (scenario == nullptr || d.index != fault_index) return;
    for (const Effect& e : scenario->effects) {
      if (e.kind == EffectKind::kFreeze || (e.kind == EffectKind::kSet && InRange(e, 0))) {
        ApplyCounterEffect(d, e, /*initial=*/true);
      }
    }
  }

  // Link/presence state of the fault device at `t`, evaluated statelessly from the table.
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
  };

  FaultState EvalFault(uint64_t t) const {
    FaultState s;
    if (scenario == nullptr) return s;
    for (const Effect& e : scenario->effects) {
      if (!InRange(e, t)) continue;
      switch (e.kind) {
        case EffectKind::kLinkDown:
          s.port_up = false;
          break;
        case EffectKind::kLinkFlap: {
          const uint64_t period = e.lo == 0 ? 1 : e.lo;
          const uint64_t phase = (t - static_cast<uint64_t>(e.from)) / period;
          if (phase % 2 == 0) s.port_up = false;
          break;
        }
        case EffectKind::kHalfWidth:
          s.half_width = true;
          break;
        case EffectKind::kPcieDowntrain:
          s.downtrained = true;
          break;
        case EffectKind::kVanish:
          s.present = false;
          break;
        case EffectKind::kChurn:
          if ((t - static_cast<uint64_t>(e.from)) % 4 == 0) s.present = false;
          break;
        case EffectKind::kPfcMask:
          s.pfc_mask = static_cast<uint8_t>(e.lo);
          break;
        case EffectKind::kTrustPcp:
          s.trust_dscp = false;
          break;
        case EffectKind::kMtu:
          s.mtu = static_cast<int>(e.lo);
          break;
        case EffectKind::kEcnOff:
          s.ecn_mask = static_cast<uint8_t>(s.ecn_mask & ~(1u << (e.lo & 7)));
          break;
        case EffectKind::kNoRoceV2Gid:
          s.rocev2_gids = false;
          break;
        default:
          break;
      }
    }
    return s;
  }

  int DefaultMtu(const Port& p) const { return p.ib ? 4092 : (mlx5() ? 9000 : 1500); }

  // Applies the table's configuration state at `t` to the fault port.
  void ApplyFaultConfig(Port& p, const FaultState& fs) const {
    p.pfc_mask = fs.pfc_mask;
    p.trust_dscp = fs.trust_dscp;
    p.mtu = fs.mtu > 0 ? fs.mtu : DefaultMtu(p);
    p.ecn_mask = fs.ecn_mask;
    p.rocev2_gids = fs.rocev2_gids;
  }

  void SetPortUp(Port& p, bool up) {
    if (p.up == up) return;
    p.up = up;
    if (up) {
      ++p.carrier_up;
    } else {
      ++p.carrier_down;
      if (p.ib) {
        auto it = p.counters.find("counters/link_downed");
        if (it != p.counters.end()) it->second.Add(1);
      }
      auto it = p.counters.find("hw_counters/link_downed");  // rxe
      if (it != p.counters.end()) it->second.Add(1);
      BumpEth(p, "link_down_events_phy", 1);  // mlx5 Ethernet: firmware physical-layer count
    }
  }

  // ---- healthy traffic -----------------------------------------------------------------

  static void Bump(Port& p, const char* key, uint64_t n) {
    auto it = p.counters.find(key);
    if (it == p.counters.end() || it->second.frozen || n == 0) return;
    it->second.Add(n);
  }

  void Traffic(Port& p) {
    if (!p.up) return;
    const double dt = cfg.interval_seconds;
    Rng& r = p.rng;
    const auto tx = static_cast<uint64_t>(p.tx_rate * dt * (0.8 + 0.4 * r.Unit()));
    const auto rx = static_cast<uint64_t>(p.rx_rate * dt * (0.8 + 0.4 * r.Unit()));
    const auto scaled = [&](double x) {
      return static_cast<uint64_t>(std::llround(std::max(0.0, x * dt)));
    };
    if (mlx5()) {
      const uint64_t tx_pkts = tx / 4096;
      const uint64_t rx_pkts = rx / 4096;
      const uint64_t mc_tx = r.Uniform(0, 3);
      const uint64_t mc_rx = r.Uniform(0, 3);
      Bump(p, "counters/port_xmit_data", tx / 4);  // 4-octet words
      Bump(p, "counters/port_rcv_data", rx / 4);
      Bump(p, "counters/unicast_xmit_packets", tx_pkts);
      Bump(p, "counters/unicast_rcv_packets", rx_pkts);
      Bump(p, "counters/multicast_xmit_packets", mc_tx);
      Bump(p, "counters/multicast_rcv_packets", mc_rx);
      Bump(p, "counters/port_xmit_packets", tx_pkts + mc_tx);
      Bump(p, "counters/port_rcv_packets", rx_pkts + mc_rx);
      Bump(p, "counters/port_xmit_wait", r.Uniform(0, scaled(2000)));
      Bump(p, "hw_counters/rx_write_requests", rx_pkts * 6 / 10);
      Bump(p, "hw_counters/rx_read_requests", rx_pkts / 10);
      Bump(p, "hw_counters/rx_atomic_requests", r.Uniform(0, scaled(20)));
      if (!p.ib) {
        if (r.Chance(0.05)) {
          const uint64_t n = r.Uniform(1, 50);
          Bump(p, "hw_counters/np_ecn_marked_roce_packets", n);
          Bump(p, "hw_counters/np_cnp_sent", n);
        }
        if (r.Chance(0.05)) Bump(p, "hw_counters/rp_cnp_handled", r.Uniform(1, 50));
        if (r.Chance(0.01)) Bump(p, "hw_counters/rp_cnp_ignored", 1);
      }
      if (r.Chance(0.01)) Bump(p, "counters/symbol_error", 1);
      if (r.Chance(0.005)) Bump(p, "counters/port_rcv_errors", 1);
      if (r.Chance(0.002)) Bump(p, "counters/link_error_recovery", 1);
      if (r.Chance(0.02)) Bump(p, "hw_counters/out_of_sequence", r.Uniform(1, 5));
      if (r.Chance(0.01)) Bump(p, "hw_counters/duplicate_request", 1);
      if (r.Chance(0.005)) Bump(p, "hw_counters/local_ack_timeout_err", 1);
      if (r.Chance(0.005)) Bump(p, "hw_counters/packet_seq_err", 1);
      EthTraffic(p, tx, rx);
    } else {
      const uint64_t tx_pkts = tx / 1024;
      const uint64_t rx_pkts = rx / 1024;
      Bump(p, "hw_counters/sent_pkts", tx_pkts);
      Bump(p, "hw_counters/rcvd_pkts", rx_pkts);
      Bump(p, "hw_counters/rdma_sends", tx_pkts / 4);
      Bump(p, "hw_counters/rdma_recvs", rx_pkts / 4);
      if (r.Chance(0.1)) Bump(p, "hw_counters/ack_deferred", r.Uniform(1, 20));
      if (r.Chance(0.01)) Bump(p, "hw_counters/duplicate_request", 1);
      if (r.Chance(0.01)) Bump(p, "hw_counters/out_of_seq_request", 1);
      if (r.Chance(0.005)) Bump(p, "hw_counters/rcvd_seq_err", 1);
      EthTraffic(p, tx, rx);
    }
  }

  // ---- one step ------------------------------------------------------------------------

  bool Step(std::string* error) {
    ++tick;
    if (fault_index >= 0) {
      Device& f = devices[static_cast<size_t>(fault_index)];
      const FaultState fs = EvalFault(tick - scenario_start);
      if (fs.present != f.present) {
        if (!fs.present) {
          if (!RemoveDevice(f, error)) return false;
          for (int v : f.vf_devices) {
            if (!RemoveDevice(devices[static_cast<size_t>(v)], error)) return false;
          }
        } else {
          f.present = true;
          ResetDevice(f);
          for (int v : f.vf_devices) {
            devices[static_cast<size_t>(v)].present = true;
            ResetDevice(devices[static_cast<size_t>(v)]);
          }
        }
      }
      if (f.present) {
        SetPortUp(f.ports[0], fs.port_up);
        f.ports[0].half_width = fs.half_width;
        f.downtrained = fs.downtrained;
        ApplyFaultConfig(f.ports[0], fs);
      }
    }
    for (Device& d : devices) {
      if (!d.present) continue;
      for (Port& p : d.ports)
        Traffic(p);
    }
    if (fault_index >= 0 && scenario != nullptr) {
      Device& f = devices[static_cast<size_t>(fault_index)];
      if (f.present) {
        for (const Effect& e : scenario->effects) {
          if ((e.kind == EffectKind::kAdd || e.kind == EffectKind::kAddRate ||
               e.kind == EffectKind::kSet) &&
              InRange(e, tick - scenario_start)) {
            ApplyCounterEffect(f, e, /*initial=*/false);
          }
        }
      }
    }
    if (!RenderAll(error)) return false;
    return Churn(error);
  }

  // The "churn" scenario's steps that the renderer undoes on the next tick: malformed files
  // (rewritten with good content next tick, as the writer sees the content differ) and the VFs
  // and the last port removed (re-created when the device returns).
  bool Churn(std::string* error) {
    if (fault_index < 0 || scenario == nullptr) return true;
    const Effect* churn = nullptr;
    for (const Effect& e : scenario->effects)
      if (e.kind == EffectKind::kChurn && InRange(e, tick)) churn = &e;
    Device& f = devices[static_cast<size_t>(fault_index)];
    if (churn == nullptr || !f.present) return true;
    const uint64_t phase = (tick - static_cast<uint64_t>(churn->from)) % 4;
    const std::string port = IbRel(f) + "/ports/" + std::to_string(f.ports[0].num);
    if (phase == 2) {
      const std::pair<const char*, const char*> kBad[] = {
          {"/counters/port_rcv_data", "garbage\n"},
          {"/counters/symbol_error", "-1\n"},
          {"/state", ""},
          {"/phys_state", "9: Weird\n"},
          {"/rate", "fast (no lanes)\n"},
          {"/hw_counters/out_of_buffer", "1e99\n"},
          {"/gids/0", "zz:zz\n"},
          {"/lid", "0xZZ\n"},
          {"/link_layer", "\xff\xfe\n"},
          {"/counters/port_xmit_data", "99999999999999999999999\n"}};
      for (const auto& [rel, content] : kBad) {
        if (writer.HasFile(port + rel) && !writer.File(port + rel, content, error)) return false;
      }
    } else if (phase == 3) {
      for (int v : f.vf_devices) {
        if (!RemoveDevice(devices[static_cast<size_t>(v)], error)) return false;
      }
      if (f.ports.size() > 1 &&
          !writer.Remove(IbRel(f) + "/ports/" + std::to_string(f.ports.back().num), error)) {
        return false;
      }
    }
    return true;
  }

  // ---- rendering -----------------------------------------------------------------------

  std::string IbRel(const Device& d) const {
    return mlx5() ? d.pci_rel + "/infiniband/" + d.name : "devices/virtual/infiniband/" + d.name;
  }

  std::string NetRel(const Device& d, const Port& p) const {
    return d.pci_rel + "/net/" + p.netdev;
  }

  bool RemoveDevice(Device& d, std::string* error) {
    d.present = false;
    TreeWriter& w = writer;
    if (!w.Remove("class/infiniband/" + d.name, error)) return false;
    if (mlx5()) {
      for (const Port& p : d.ports) {
        if (!w.Remove("class/net/" + p.netdev, error)) return false;
      }
      if (!w.Remove("bus/pci/devices/" + d.pci, error)) return false;
      if (!w.Remove(d.pci_rel, error)) return false;
      for (const Port& p : d.ports) {  // the netdevs are gone: ethtool/DCB report ENODEV
        if (!fixtures.Remove("ethtool/" + p.netdev, error)) return false;
        if (!fixtures.Remove("dcb/" + p.netdev, error)) return false;
      }
    } else {
      // Deleting an rxe link leaves the underlying Ethernet netdev in place.
      if (!w.Remove(IbRel(d), error)) return false;
    }
    return true;
  }

  bool RenderAll(std::string* error) {
    for (const Device& d : devices) {
      if (!d.present) continue;
      if (mlx5()) {
        if (!RenderPci(d, error)) return false;
      } else {
        if (!RenderVirtio(d, error)) return false;
      }
      if (!RenderIbDevice(d, error)) return false;
      for (const Port& p : d.ports) {
        if (!RenderPort(d, p, error)) return false;
        if (!RenderNetdev(d, p, error)) return false;
        if (!RenderFixtures(d, p, error)) return false;
      }
    }
    return true;
  }

  bool RenderPci(const Device& d, std::string* error) {
    TreeWriter& w = writer;
    const std::string& b = d.pci_rel;
    const bool pcie_down = d.downtrained;
    bool ok =
        w.File(b + "/vendor", "0x15b3\n", error) &&
        w.File(b + "/device", d.vf ? "0x101e\n" : "0x1021\n", error) &&
        w.File(b + "/subsystem_vendor", "0x15b3\n", error) &&
        w.File(b + "/subsystem_device", "0x0007\n", error) &&
        w.File(b + "/class", d.ports[0].ib ? "0x020700\n" : "0x020000\n", error) &&
        w.File(b + "/revision", "0x00\n", error) && w.File(b + "/numa_node", SNum(d.numa), error) &&
        w.File(b + "/current_link_speed", pcie_down ? "16.0 GT/s PCIe\n" : "32.0 GT/s PCIe\n",
               error) &&
        w.File(b + "/max_link_speed", "32.0 GT/s PCIe\n", error) &&
        w.File(b + "/current_link_width", pcie_down ? "8\n" : "16\n", error) &&
        w.File(b + "/max_link_width", "16\n", error) &&
        w.File(b + "/aer_dev_correctable",
               RenderAer(d.aer_cor, kAerCorrectableNames, "dev_cor_errs", "ERR_COR"), error) &&
        w.File(
            b + "/aer_dev_nonfatal",
            RenderAer(d.aer_nonfatal, kAerUncorrectableNames, "dev_nonfatal_errs", "ERR_NONFATAL"),
            error) &&
        w.File(b + "/aer_dev_fatal",
               RenderAer(d.aer_fatal, kAerUncorrectableNames, "dev_fatal_errs", "ERR_FATAL"),
               error) &&
        w.Dir("bus/pci/drivers/mlx5_core", error) &&
        w.Link(b + "/driver", "../../../../bus/pci/drivers/mlx5_core", error) &&
        w.Link("bus/pci/devices/" + d.pci, "../../../" + b, error);
    if (!ok) return false;
    if (!d.vf) {
      const int total = std::max(16, static_cast<int>(d.vf_devices.size()));
      ok = w.File(b + "/sriov_totalvfs", Num(static_cast<uint64_t>(total)), error) &&
           w.File(b + "/sriov_numvfs", Num(d.vf_devices.size()), error);
      for (size_t k = 0; ok && k < d.vf_devices.size(); ++k) {
        const Device& vf = devices[static_cast<size_t>(d.vf_devices[k])];
        ok = w.Link(b + "/virtfn" + std::to_string(k), "../" + vf.pci, error);
      }
    } else {
      ok = w.Link(b + "/physfn", "../" + devices[static_cast<size_t>(d.pf)].pci, error);
    }
    return ok;
  }

  bool RenderVirtio(const Device& d, std::string* error) {
    TreeWriter& w = writer;
    const std::string pcifn = d.rootport;  // virtio-net sits directly on the root bus
    const std::string b = "devices/" + d.domain_dir + "/" + pcifn;
    return w.File(b + "/vendor", "0x1af4\n", error) && w.File(b + "/device", "0x1000\n", error) &&
           w.File(b + "/numa_node", "-1\n", error) &&
           w.File(d.pci_rel + "/vendor", "0x1af4\n", error) &&
           w.File(d.pci_rel + "/device", "0x0001\n", error) &&
           w.Link("bus/pci/devices/" + pcifn, "../../../" + b, error);
  }

  bool RenderIbDevice(const Device& d, std::string* error) {
    TreeWriter& w = writer;
    const std::string b = IbRel(d);
    bool ok = w.File(b + "/node_type", "1: CA\n", error) &&
              w.File(b + "/node_guid", Line(GuidString(d.node_guid)), error) &&
              w.File(b + "/sys_image_guid", Line(GuidString(d.sys_image_guid)), error) &&
              w.Link("class/infiniband/" + d.name, "../../" + b, error);
    if (!ok) return false;
    if (mlx5()) {
      ok = w.File(b + "/fw_ver", "28.39.1002\n", error) &&
           w.File(b + "/hca_type", d.vf ? "MT4130\n" : "MT4129\n", error) &&
           w.File(b + "/hw_rev", "0\n", error) &&
           w.File(b + "/board_id", "MT_0000000838\n", error) &&
           w.File(b + "/node_desc", "demo-node " + d.name + "\n", error) &&
           w.Link(b + "/device", "../../../" + d.pci, error);
    } else {
      ok = w.File(b + "/fw_ver", "\n", error) && w.File(b + "/node_desc", "rxe\n", error) &&
           w.File(b + "/parent", Line(d.ports[0].netdev), error);
    }
    return ok;
  }

  std::string PortRate(const Port& p) const {
    if (mlx5()) return RateString(p.half_width ? 2 : 4, 1000, "NDR");
    return p.half_width ? RateString(1, 25, "SDR") : RateString(1, 100, "FDR10");
  }

  int64_t NetSpeed(const Port& p) const {
    if (!p.up) return -1;
    if (mlx5()) return p.half_width ? 200000 : 400000;
    return p.half_width ? 1000 : 10000;
  }

  bool RenderPort(const Device& d, const Port& p, std::string* error) {
    TreeWriter& w = writer;
    const std::string b = IbRel(d) + "/ports/" + std::to_string(p.num);
    const char* state = p.up ? "4: ACTIVE\n" : "1: DOWN\n";
    const char* phys = p.up ? "5: LinkUp\n" : (mlx5() ? "3: Disabled\n" : "2: Polling\n");
    const uint32_t cap = p.ib ? 0xa651e848u : 0x00010000u;
    bool ok = w.File(b + "/state", state, error) && w.File(b + "/phys_state", phys, error) &&
              w.File(b + "/rate", Line(PortRate(p)), error) &&
              w.File(b + "/link_layer", p.ib ? "InfiniBand\n" : "Ethernet\n", error) &&
              w.File(b + "/lid", Fmt("0x%x\n", p.lid), error) &&
              w.File(b + "/sm_lid", p.ib ? "0x1\n" : "0x0\n", error) &&
              w.File(b + "/sm_sl", "0\n", error) && w.File(b + "/lid_mask_count", "0\n", error) &&
              w.File(b + "/cap_mask", Fmt("0x%08x\n", cap), error) &&
              w.File(b + "/pkeys/0", "0xffff\n", error);
    if (!ok) return false;

    // GID table.
    struct GidEntry {
      std::array<uint8_t, 16> gid{};
      const char* type = nullptr;  // nullptr = empty entry
      bool ndev = false;
    };
    std::vector<GidEntry> gids(static_cast<size_t>(std::max(1, cfg.gids_per_port)));
    if (p.ib) {
      gids[0] = {LinkLocalGuid(p.guid), "IB/RoCE v1", false};
    } else if (mlx5()) {
      const GidEntry want[4] = {{LinkLocalEui64(p.mac), "IB/RoCE v1", true},
                                {LinkLocalEui64(p.mac), "RoCE v2", true},
                                {V4Mapped(p.ipv4), "IB/RoCE v1", true},
                                {V4Mapped(p.ipv4), "RoCE v2", true}};
      for (size_t i = 0; i < 4 && i < gids.size(); ++i)
        gids[i] = want[i];
    } else {  // rxe supports RoCE v2 only
      const GidEntry want[2] = {{LinkLocalEui64(p.mac), "RoCE v2", true},
                                {V4Mapped(p.ipv4), "RoCE v2", true}};
      for (size_t i = 0; i < 2 && i < gids.size(); ++i)
        gids[i] = want[i];
    }
    if (!p.rocev2_gids) {  // deleted entries read as the zero GID, without types/ndevs
      for (GidEntry& g : gids) {
        if (g.type != nullptr && std::string_view(g.type) == "RoCE v2") g = GidEntry{};
      }
    }
    ok = w.Dir(b + "/gid_attrs/types", error) && w.Dir(b + "/gid_attrs/ndevs", error);
    for (size_t i = 0; ok && i < gids.size(); ++i) {
      const std::string idx = std::to_string(i);
      const std::string type_rel = b + "/gid_attrs/types/" + idx;
      const std::string ndev_rel = b + "/gid_attrs/ndevs/" + idx;
      ok = w.File(b + "/gids/" + idx, Line(Gid(gids[i].gid)), error);
      if (ok && gids[i].type != nullptr) {
        ok = w.File(type_rel, Line(gids[i].type), error);
      } else if (ok && w.HasFile(type_rel)) {
        ok = w.Remove(type_rel, error);
      }
      if (ok && gids[i].ndev) {
        ok = w.File(ndev_rel, Line(p.netdev), error);
      } else if (ok && w.HasFile(ndev_rel)) {
        ok = w.Remove(ndev_rel, error);
      }
    }
    if (!ok) return false;

    // Counters.
    for (const auto& [key, c] : p.counters) {
      if (!w.File(b + "/" + key, Num(c.value), error)) return false;
    }
    return w.File(b + "/hw_counters/lifespan", "10\n", error);
  }

  bool RenderNetdev(const Device& d, const Port& p, std::string* error) {
    TreeWriter& w = writer;
    const std::string b = NetRel(d, p);
    std::string address;
    if (p.ib) {
      address = "00:00:10:87:fe:80:00:00:00:00:00:00";
      for (int i = 0; i < 8; ++i) {
        address += Fmt(":%02x", static_cast<unsigned>((p.guid >> (56 - 8 * i)) & 0xff));
      }
    } else {
      address = MacString(p.mac);
    }
    const int mtu = p.mtu > 0 ? p.mtu : DefaultMtu(p);
    // Kernel netdev statistics. On mlx5e rx_dropped is the 2863 if_in_discards
    // (rx_discards_phy), rx_missed_errors is rx_out_of_buffer and rx_crc_errors the 802.3 FCS
    // errors (mlx5e_get_stats); packets/bytes are the kernel-path (SW) counters.
    const uint64_t rx_crc = EthValue(p, "rx_crc_errors_phy");
    const std::pair<const char*, uint64_t> stats[] = {
        {"rx_packets", EthValue(p, "rx_packets")},
        {"tx_packets", EthValue(p, "tx_packets")},
        {"rx_bytes", EthValue(p, "rx_bytes")},
        {"tx_bytes", EthValue(p, "tx_bytes")},
        {"rx_errors", rx_crc},
        {"tx_errors", EthValue(p, "tx_errors_phy")},
        {"rx_dropped", EthValue(p, "rx_discards_phy")},
        {"tx_dropped", 0},
        {"rx_crc_errors", rx_crc},
        {"rx_missed_errors", EthValue(p, "rx_out_of_buffer")},
    };
    for (const auto& [name, value] : stats) {
      if (!w.File(b + "/statistics/" + name, Num(value), error)) return false;
    }
    if (p.roce_pf) {  // MLNX_OFED en_ecn.c: per-priority ECN enables (not on VFs)
      for (int q = 0; q < 8; ++q) {
        const char* on = (p.ecn_mask & (1u << q)) ? "1\n" : "0\n";
        if (!w.File(Fmt("%s/ecn/roce_np/enable/%d", b.c_str(), q), on, error) ||
            !w.File(Fmt("%s/ecn/roce_rp/enable/%d", b.c_str(), q), on, error)) {
          return false;
        }
      }
      if (!w.File(b + "/ecn/roce_np/min_time_between_cnps", "4\n", error) ||
          !w.File(b + "/ecn/roce_np/cnp_dscp", "48\n", error) ||
          !w.File(b + "/ecn/roce_np/cnp_802p_prio", SNum(kCnpPrio), error)) {
        return false;
      }
    }
    // flags: IFF_UP | IFF_BROADCAST | IFF_MULTICAST (the simulator never sets admin down).
    return w.File(b + "/address", Line(address), error) &&
           w.File(b + "/flags", "0x1003\n", error) &&
           w.File(b + "/operstate", p.up ? "up\n" : "down\n", error) &&
           w.File(b + "/carrier", p.up ? "1\n" : "0\n", error) &&
           w.File(b + "/mtu", SNum(mtu), error) && w.File(b + "/speed", SNum(NetSpeed(p)), error) &&
           w.File(b + "/dev_id", "0x0\n", error) &&
           w.File(b + "/dev_port", SNum(mlx5() ? p.num - 1 : 0), error) &&
           w.File(b + "/carrier_changes", SNum(p.carrier_up + p.carrier_down), error) &&
           w.File(b + "/carrier_up_count", SNum(p.carrier_up), error) &&
           w.File(b + "/carrier_down_count", SNum(p.carrier_down), error) &&
           w.File(b + "/type", p.ib ? "32\n" : "1\n", error) &&
           w.Link(b + "/device", "../../../" + d.pci, error) &&
           w.Link("class/net/" + p.netdev, "../../" + b, error);
  }

  // `ethtool -S` text: "NIC statistics:" then "     name: value" (ethtool do_gstats).
  std::string RenderEthtool(const Port& p) const {
    std::string out = "NIC statistics:\n";
    out.reserve(8192);
    const auto put = [&](std::string_view name, uint64_t v) {
      out += "     ";
      out += name;
      out += ": ";
      out += std::to_string(v);
      out += '\n';
    };
    if (!mlx5()) {  // virtio_net under rxe: per-queue counters
      put("rx_queue_0_packets", EthValue(p, "rx_packets"));
      put("rx_queue_0_bytes", EthValue(p, "rx_bytes"));
      put("rx_queue_0_drops", 0);
      put("rx_queue_0_kicks", EthValue(p, "rx_packets") / 64);
      put("tx_queue_0_packets", EthValue(p, "tx_packets"));
      put("tx_queue_0_bytes", EthValue(p, "tx_bytes"));
      put("tx_queue_0_kicks", EthValue(p, "tx_packets") / 16);
      return out;
    }
    uint64_t rx_pause = 0;
    uint64_t tx_pause = 0;
    for (int q = 0; q < 8; ++q) {
      rx_pause += EthValue(p, PrioName(kRxPrioPause, q));
      tx_pause += EthValue(p, PrioName(kTxPrioPause, q));
    }
    for (const CounterDef& d : kEthtoolPortStats) {
      const std::string_view name = d.name;
      if (name == "rx_pause_ctrl_phy") {
        put(name, rx_pause);
      } else if (name == "tx_pause_ctrl_phy") {
        put(name, tx_pause);
      } else {
        put(name, EthValue(p, d.name));
      }
    }
    for (int q = 0; q < 8; ++q) {
      for (int k = kRxPrioBytes; k <= kTxPrioPackets; ++k)
        put(PrioName(static_cast<PrioStat>(k), q),
            EthValue(p, PrioName(static_cast<PrioStat>(k), q)));
    }
    for (int q = 0; q < 8; ++q) {
      if ((p.pfc_mask & (1u << q)) == 0) continue;  // PFC names only for PFC priorities
      for (int k = kRxPrioPause; k <= kRxPrioPauseTransition; ++k)
        put(PrioName(static_cast<PrioStat>(k), q),
            EthValue(p, PrioName(static_cast<PrioStat>(k), q)));
    }
    for (const char* n : kPauseStormStats)
      put(n, EthValue(p, n));
    for (int q = 0; q < 8; ++q)
      put(PrioName(kRxPrioBufDiscard, q), EthValue(p, PrioName(kRxPrioBufDiscard, q)));
    for (int q = 0; q < 8; ++q) {
      put(PrioName(kRxPrioCongDiscard, q), EthValue(p, PrioName(kRxPrioCongDiscard, q)));
      put(PrioName(kRxPrioMarked, q), EthValue(p, PrioName(kRxPrioMarked, q)));
    }
    return out;
  }

  // iproute2 `dcb pfc show` + `dcb app show ... dscp-prio` lines.
  static std::string RenderDcb(const Port& p) {
    std::string out = "pfc-cap 8 macsec-bypass off delay 7\nprio-pfc";
    for (int q = 0; q < 8; ++q)
      out += Fmt(" %d:%s", q, (p.pfc_mask & (1u << q)) ? "on" : "off");
    out += '\n';
    if (p.trust_dscp) {  // DSCP trust: 64 APP entries, the default map prio = dscp >> 3
      out += "dscp-prio";
      for (int dscp = 0; dscp < 64; ++dscp)
        out += Fmt(" %d:%d", dscp, dscp >> 3);
      out += '\n';
    }
    return out;
  }

  // Fixture files for --path.fixtures: mlx5 RoCE PFs get ethtool + DCB, rxe netdevs get the
  // virtio ethtool stats and "unsupported" DCB. VFs and IPoIB netdevs get nothing.
  bool RenderFixtures(const Device& d, const Port& p, std::string* error) {
    if (p.roce_pf) {
      return fixtures.File("ethtool/" + p.netdev, RenderEthtool(p), error) &&
             fixtures.File("dcb/" + p.netdev, RenderDcb(p), error);
    }
    if (!mlx5() && !d.vf) {
      return fixtures.File("ethtool/" + p.netdev, RenderEthtool(p), error) &&
             fixtures.File("dcb/" + p.netdev, "unsupported\n", error);
    }
    return true;
  }
};

FabricSim::FabricSim(SimConfig config) : state_(std::make_unique<State>()) {
  state_->cfg = std::move(config);
}

FabricSim::~FabricSim() = default;

const SimConfig& FabricSim::config() const {
  return state_->cfg;
}
std::string FabricSim::sysfs_root() const {
  return state_->cfg.root + "/sys";
}
uint64_t FabricSim::ticks() const {
  return state_->tick;
}
std::string FabricSim::fault_device() const {
  const State& s = *state_;
  if (s.fault_index < 0) return std::string();
  return s.devices[static_cast<size_t>(s.fault_index)].name;
}
std::string FabricSim::fixtures_root() const {
  return state_->cfg.root + "/fixtures";
}

bool FabricSim::WriteInitialTree(std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  State& s = *state_;
  const SimConfig& c = s.cfg;
  if (c.root.empty()) {
    *error = "root directory is empty";
    return false;
  }
  if (c.devices < 1 || c.ports < 1 || c.vfs < 0 || c.gids_per_port < 1 ||
      !(c.interval_seconds > 0)) {
    *error = "invalid configuration (devices/ports >= 1, vfs >= 0, gids >= 1, interval > 0)";
    return false;
  }
  if (c.devices > 256 || c.ports > 64 || c.vfs > 64) {
    *error = "configuration too large (devices <= 256, ports <= 64, vfs <= 64)";
    return false;
  }
  s.scenario = FindScenario(c.scenario);
  if (s.scenario == nullptr) {
    *error = "unknown scenario '" + c.scenario + "'";
    return false;
  }
  s.tick = 0;
  s.Build();
  if (!s.ResolveFault(error)) return false;
  for (Device& d : s.devices)
    s.ApplyInitialSets(d);
  if (s.fault_index >= 0) {  // table state at tick 0 (configuration faults start here)
    Device& f = s.devices[static_cast<size_t>(s.fault_index)];
    const State::FaultState fs = s.EvalFault(0);
    s.SetPortUp(f.ports[0], fs.port_up);
    f.ports[0].half_width = fs.half_width;
    f.downtrained = fs.downtrained;
    s.ApplyFaultConfig(f.ports[0], fs);
  }

  std::error_code ec;
  fs::create_directories(c.root, ec);
  if (ec) {
    *error = "mkdir " + c.root + ": " + ec.message();
    return false;
  }
  const std::string sys = c.root + "/sys";
  s.writer.Reset(sys);
  // Safety: never touch a real sysfs (e.g. --root /).
  struct statfs sfs;
  if (::statfs(sys.c_str(), &sfs) == 0 && static_cast<uint64_t>(sfs.f_type) == 0x62656572ULL) {
    *error = "refusing to overwrite " + sys + ": it is a real sysfs mount";
    return false;
  }
  if (fs::weakly_canonical(sys, ec) == fs::path("/sys")) {
    *error = "refusing to overwrite /sys";
    return false;
  }
  ec.clear();
  fs::remove_all(sys, ec);
  if (ec) {
    *error = "remove " + sys + ": " + ec.message();
    return false;
  }
  fs::create_directories(sys, ec);
  if (ec) {
    *error = "mkdir " + sys + ": " + ec.message();
    return false;
  }
  if (!s.writer.Dir("class/infiniband", error) || !s.writer.Dir("class/net", error) ||
      !s.writer.Dir("bus/pci/devices", error)) {
    return false;
  }
  // DIR/fixtures is cleared only if an earlier run created it (marker file); a fixtures dir
  // the simulator did not create is never deleted, only written into.
  const std::string fix = c.root + "/fixtures";
  const std::string marker = ".rdma_fabric_sim";
  s.fixtures.Reset(fix, /*atomic=*/true);
  if (fs::exists(fix + "/" + marker, ec)) {
    fs::remove_all(fix, ec);
    if (ec) {
      *error = "remove " + fix + ": " + ec.message();
      return false;
    }
  }
  ec.clear();
  if (!s.fixtures.Dir("ethtool", error) || !s.fixtures.Dir("dcb", error) ||
      !s.fixtures.File(marker, "written by rdma_fabric_sim; removed and rewritten at start-up\n",
                       error)) {
    return false;
  }
  if (!s.RenderAll(error)) return false;
  s.initialized = true;
  return true;
}

bool FabricSim::SetScenario(const std::string& name, const std::string& fault_device,
                            std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  State& s = *state_;
  const Scenario* next = FindScenario(name);
  if (next == nullptr) {
    *error = "unknown scenario '" + name + "'";
    return false;
  }
  if (!s.initialized) {
    *error = "SetScenario() called before WriteInitialTree()";
    return false;
  }
  // Resolve the new fault device first, so that a bad name changes nothing.
  const Scenario* old_scenario = s.scenario;
  const int old_fault = s.fault_index;
  const std::string old_device = s.cfg.fault_device;
  s.scenario = next;
  if (!fault_device.empty()) s.cfg.fault_device = fault_device;
  if (!s.ResolveFault(error)) {
    s.scenario = old_scenario;
    s.fault_index = old_fault;
    s.cfg.fault_device = old_device;
    return false;
  }
  // Clear the old fault: what the healthy table state says, applied as Step() would.
  if (old_fault >= 0) {
    Device& f = s.devices[static_cast<size_t>(old_fault)];
    if (!f.present) {
      f.present = true;
      s.ResetDevice(f);
      for (int v : f.vf_devices) {
        s.devices[static_cast<size_t>(v)].present = true;
        s.ResetDevice(s.devices[static_cast<size_t>(v)]);
      }
    }
    const State::FaultState healthy;
    s.SetPortUp(f.ports[0], healthy.port_up);
    f.ports[0].half_width = healthy.half_width;
    f.downtrained = healthy.downtrained;
    s.ApplyFaultConfig(f.ports[0], healthy);
    for (auto& [key, counter] : f.ports[0].counters)
      counter.frozen = false;
  }
  s.cfg.scenario = name;
  s.scenario_start = s.tick;
  for (Device& d : s.devices)
    s.ApplyInitialSets(d);
  return true;
}

bool FabricSim::Tick(std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  if (!state_->initialized) {
    *error = "Tick() called before WriteInitialTree()";
    return false;
  }
  return state_->Step(error);
}

// ---------------------------------------------------------------------------------------------
// Scenario names, usage, flags
// ---------------------------------------------------------------------------------------------

const std::vector<std::string>& ScenarioNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Scenario& s : Scenarios())
      names.emplace_back(s.name);
    return names;
  }();
  return kNames;
}

std::string SimUsage() {
  std::string u =
      "Usage: rdma_fabric_sim --root DIR [flags]\n"
      "\n"
      "Writes a fake sysfs tree of RDMA devices to DIR/sys (removed and rewritten at start-up)\n"
      "and keeps it moving, one tick per --interval, until SIGINT/SIGTERM or --ticks.\n"
      "Run the exporter with --path.sysfs=DIR/sys --path.fixtures=DIR/fixtures.\n"
      "\n"
      "Flags:\n"
      "  --root DIR            output directory (required); DIR/sys is the sysfs root\n"
      "  --devices N           physical functions / rxe devices (default 8)\n"
      "  --ports P             ports per PF (default 1)\n"
      "  --vfs V               SR-IOV VFs of the first PF, one RDMA device each (default 1)\n"
      "  --layout mlx5|rxe     device type (default mlx5)\n"
      "  --link-layer mixed|roce|ib\n"
      "                        mixed: even PFs RoCE/Ethernet, odd PFs InfiniBand (default)\n"
      "  --scenario NAME       fault scenario (default healthy)\n"
      "  --fault-device NAME   device the scenario hits, port 1 (default mlx5_1)\n"
      "  --scenario-file PATH  re-read before every tick: \"SCENARIO [FAULT_DEVICE]\" switches\n"
      "                        the scenario at runtime (healthy = fault cleared)\n"
      "  --interval DURATION   simulated time per tick, e.g. 1s, 500ms (default 1s)\n"
      "  --ticks N             advance N ticks without pacing, then exit; 0 = write the\n"
      "                        initial tree only (default: run forever)\n"
      "  --seed N              random seed (default 1)\n"
      "  --help                show this help\n"
      "\n"
      "Scenarios:\n";
  for (const Scenario& s : Scenarios())
    u += Fmt("  %-16s %s\n", s.name, s.description);
  u += "\n"
       "  * RoCE-only: if --fault-device is an InfiniBand device (or a VF), the first RoCE PF\n"
       "    is used instead (mlx5_0 with the default --link-layer mixed). Configuration faults\n"
       "    hold from tick 0.\n"
       "\n"
       "Besides DIR/sys, the simulator writes DIR/fixtures (ethtool/<netdev>, dcb/<netdev>) for\n"
       "the exporter's --path.fixtures=DIR/fixtures.\n";
  return u;
}

namespace {

bool ParseInt(const std::string& s, long long lo, long long hi, long long* out) {
  if (s.empty()) return false;
  size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &pos, 10);
  } catch (...) {
    return false;
  }
  if (pos != s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseU64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  size_t pos = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &pos, 10);
  } catch (...) {
    return false;
  }
  if (pos != s.size()) return false;
  *out = v;
  return true;
}

// "1s", "500ms", "1.5s", "2m", "1h", "250us"; a bare number means seconds.
bool ParseDuration(const std::string& s, double* seconds) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
    ++i;
  if (i == 0) return false;
  double v = 0;
  try {
    size_t pos = 0;
    v = std::stod(s.substr(0, i), &pos);
    if (pos != i) return false;
  } catch (...) {
    return false;
  }
  const std::string unit = s.substr(i);
  double mult = 0;
  if (unit.empty() || unit == "s") {
    mult = 1;
  } else if (unit == "ms") {
    mult = 1e-3;
  } else if (unit == "us") {
    mult = 1e-6;
  } else if (unit == "m") {
    mult = 60;
  } else if (unit == "h") {
    mult = 3600;
  } else {
    return false;
  }
  const double out = v * mult;
  if (!(out > 0) || !std::isfinite(out)) return false;
  *seconds = out;
  return true;
}

}  // namespace

bool ParseSimArgs(int argc, char** argv, SimConfig* config, int* ticks, std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  SimConfig c = *config;
  int t = -1;
  bool fault_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (arg.rfind("--", 0) != 0) {
      *error = "unexpected argument '" + arg + "' (see --help)";
      return false;
    }
    auto eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    static const char* const kFlags[] = {
        "--root",     "--devices",      "--ports",    "--vfs",   "--layout", "--link-layer",
        "--scenario", "--fault-device", "--interval", "--ticks", "--seed",   "--scenario-file"};
    bool known = false;
    for (const char* f : kFlags)
      known = known || arg == f;
    if (!known) {
      *error = "unknown flag '" + arg + "' (see --help)";
      return false;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        *error = "flag " + arg + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    const auto bad = [&](const std::string& why) {
      *error = "invalid value '" + value + "' for " + arg + ": " + why;
      return false;
    };
    long long n = 0;
    if (arg == "--root") {
      if (value.empty()) return bad("must not be empty");
      c.root = value;
    } else if (arg == "--devices") {
      if (!ParseInt(value, 1, 256, &n)) return bad("expected an integer 1..256");
      c.devices = static_cast<int>(n);
    } else if (arg == "--ports") {
      if (!ParseInt(value, 1, 64, &n)) return bad("expected an integer 1..64");
      c.ports = static_cast<int>(n);
    } else if (arg == "--vfs") {
      if (!ParseInt(value, 0, 64, &n)) return bad("expected an integer 0..64");
      c.vfs = static_cast<int>(n);
    } else if (arg == "--layout") {
      if (value == "mlx5") {
        c.layout = SimConfig::Layout::Mlx5;
      } else if (value == "rxe") {
        c.layout = SimConfig::Layout::Rxe;
      } else {
        return bad("expected mlx5 or rxe");
      }
    } else if (arg == "--link-layer") {
      if (value == "mixed") {
        c.link_layer = SimConfig::LinkLayer::Mixed;
      } else if (value == "roce") {
        c.link_layer = SimConfig::LinkLayer::Roce;
      } else if (value == "ib") {
        c.link_layer = SimConfig::LinkLayer::Ib;
      } else {
        return bad("expected mixed, roce or ib");
      }
    } else if (arg == "--scenario-file") {
      if (value.empty()) return bad("must not be empty");
      c.scenario_file = value;
    } else if (arg == "--scenario") {
      if (FindScenario(value) == nullptr) {
        std::string names;
        for (const std::string& s : ScenarioNames())
          names += (names.empty() ? "" : ", ") + s;
        return bad("expected one of " + names);
      }
      c.scenario = value;
    } else if (arg == "--fault-device") {
      c.fault_device = value;
      fault_given = true;
    } else if (arg == "--interval") {
      if (!ParseDuration(value, &c.interval_seconds)) {
        return bad("expected a positive duration like 1s or 500ms");
      }
    } else if (arg == "--ticks") {
      if (!ParseInt(value, 0, 2147483647LL, &n)) return bad("expected an integer >= 0");
      t = static_cast<int>(n);
    } else if (arg == "--seed") {
      uint64_t seed = 0;
      if (!ParseU64(value, &seed)) return bad("expected an unsigned integer");
      c.seed = seed;
    }
  }
  if (c.root.empty()) {
    *error = "missing required flag --root (see --help)";
    return false;
  }
  // Validate the fault device against the device list.
  const bool mlx5 = c.layout == SimConfig::Layout::Mlx5;
  const int count = c.devices + (mlx5 ? c.vfs : 0);
  if (!fault_given && count < 2) c.fault_device = mlx5 ? "mlx5_0" : "rxe0";
  {
    std::string name = c.fault_device;
    long long idx = -1;
    bool ok = false;
    if (name.rfind("mlx5_", 0) == 0) {
      ok = ParseInt(name.substr(5), 0, count - 1, &idx);
    } else if (name.rfind("rxe", 0) == 0) {
      ok = ParseInt(name.substr(3), 0, count - 1, &idx);
    }
    if (!ok) {
      *error = "invalid value '" + name + "' for --fault-device: expected " +
               (mlx5 ? "mlx5_0.." : "rxe0..") + (mlx5 ? "mlx5_" : "rxe") +
               std::to_string(count - 1);
      return false;
    }
    c.fault_device = (mlx5 ? "mlx5_" : "rxe") + std::to_string(idx);
  }
  *config = c;
  *ticks = t;
  return true;
}
