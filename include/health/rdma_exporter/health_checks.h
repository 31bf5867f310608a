// The doctor's checks that read nothing but metric samples and the inventory: port state, link
// layer, rate, PCIe link, the RoCE configuration and the counters between two collections. The
// `doctor` subcommand runs them on collections of its own (beside its driver and process
// checks); the node page (/ and /api/v1/status) runs them on the poller's last two snapshots,
// without a kernel read.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "rdma_exporter/inventory.h"
#include "rdma_exporter/sample_index.h"

namespace rdma_exporter::doctor {

// Ordered: a check is as bad as its worst item. kSkip: the check could not run for a subject
// (its data is absent: no per-priority counters, DCB unknown); never PASS for what was not
// checked, but not a finding either (exit code as for PASS). Its reason starts "not checked: ".
enum class Status { kPass = 0, kSkip = 1, kWarn = 2, kFail = 3 };
// "PASS", "SKIP", "WARN", "FAIL".
const char* StatusName(Status s);

// "not checked: <why>": the reason of every SKIP item.
std::string NotChecked(const std::string& why);

struct Item {
  std::string subject;  // mlx5_0/1 (ens1f0np0), mlx5_0, ib_uverbs, node
  Status status;
  std::string reason;
};

struct Check {
  std::string name;
  Status status = Status::kPass;
  std::string reason;
  std::vector<Item> items;
};

// ---- report.cpp ----------------------------------------------------------------------------

// The check's status is its worst item's; the reason lists the FAIL, WARN then SKIP items (items
// with the same reason share one entry: "mlx5_0/1, mlx5_1/1: MTU 1500 < 4200"), or is `summary`
// when every item passes (or is appended when `keep_summary`: versions worth seeing anyway).
Check Finish(std::string name, std::vector<Item> items, const std::string& summary,
             bool keep_summary = false);
// One line per check and a count line, or (json) one object with the items.
void PrintReport(const std::vector<Check>& checks, bool json, std::ostream& out);
// Text as printed: bytes outside printable ASCII as \xNN (files may hold anything).
std::string Sanitize(const std::string& s);

// "1 port", "3 ports".
std::string Count(size_t n, const std::string& noun);
std::string Join(const std::vector<std::string>& parts, const std::string& sep = ", ");
// %g: "400", "2.5".
std::string Number(double v);
// "64 KiB", "8 MiB".
std::string Bytes(uint64_t b);

// ---- snapshot_view.cpp ---------------------------------------------------------------------

// Firmware versions, HCA types: one word of printable ASCII.
bool Printable(const std::string& s);
// A label of a sample, "" when absent (collectors always set them; the doctor must not throw).
std::string LabelOf(const LabelMap& labels, const char* name);

// What the snapshot checks look at: the inventory and two collections of samples.
struct SnapshotView {
  const Inventory& inventory;
  const SampleIndex& now;         // the last collection
  const SampleIndex& before;      // the one before (== now when not sampled)
  double sample_seconds;          // between the two; 0: one collection
  std::optional<int> nccl_ib_tc;  // --nccl.ib-tc (or the environment's NCCL_IB_TC)
  unsigned roce_min_mtu;          // --roce.min-mtu
  std::string tc_origin;          // " (NCCL_IB_TC=106 from the environment)" or ""
  std::string tc_problem;         // why the environment's NCCL_IB_TC was not used
  // Soft-RoCE device (names a group of ports that has no HCA type).
  std::function<bool(const DeviceInfo&)> is_rxe;

  static LabelMap Port(const DeviceInfo& d, const PortInfo& p);
  // "mlx5_0/1 (ens1f0np0)": how every check names a port.
  static std::string Subject(const DeviceInfo& d, const PortInfo& p);
  // A port's physical netdev: "mlx5_0/1 (ens1f0np0)", or for a RoCE LAG slave
  // "mlx5_bond_0/1 (bond0: ens1f0np0)".
  static std::string Subject(const DeviceInfo& d, const PortInfo& p, const PhysicalNetdev& n);
  // A label of the device's rdma_device_info sample ("fw_ver", "hca_type"), "" when absent.
  std::string DeviceLabel(const DeviceInfo& d, const char* label) const;
  static bool IsRoce(const PortInfo& p) { return p.link_layer == "Ethernet"; }
  // The kernel writes InfiniBand, Ethernet or Unknown; anything else is a bad read.
  static bool KnownLinkLayer(const PortInfo& p) {
    return p.link_layer == "InfiniBand" || p.link_layer == "Ethernet";
  }
  bool IsRxe(const DeviceInfo& d) const { return is_rxe ? is_rxe(d) : false; }
};

// ---- the checks, in the order the report lists them ----------------------------------------

// checks_link.cpp: port state, link layer, rate and width, PCIe.
// The rules both the checks and the node page grade by:
// - a group's reference rate: the most common, on a tie the fastest (a downgrade only slows);
//   `ports` maps each rate text to (ports at it, its bytes per second);
std::string ReferenceRate(const std::map<std::string, std::pair<size_t, double>>& ports);
// - what a PCIe link should train to: min(card maximum, slot maximum) where the slot's
//   (upstream port's) maximum is in the samples, else the card's.
struct PcieTarget {
  double speed = 0;  // transfers per second
  double width = 0;  // lanes
};
PcieTarget PcieTrainTarget(const SampleIndex& now, const std::string& device, double max_speed,
                           double max_width);
Check PortActive(const SnapshotView& v);
Check LinkLayer(const SnapshotView& v);
Check PortRateUniform(const SnapshotView& v);
Check PcieLink(const SnapshotView& v);
// checks_roce.cpp: RoCE configuration (roce_config, dcb, ecn, netdev collectors).
Check RoceV2Gid(const SnapshotView& v);
Check NetdevMtu(const SnapshotView& v);
Check Pfc(const SnapshotView& v);
Check TrustDscp(const SnapshotView& v);
Check Ecn(const SnapshotView& v);
// checks_counters.cpp: counters over the sampling window.
Check PfcStorm(const SnapshotView& v);
Check ErrorCounters(const SnapshotView& v);

// All of the above, in that order; a check that throws becomes a FAIL with the reason.
std::vector<Check> RunSnapshotChecks(const SnapshotView& v);

}  // namespace rdma_exporter::doctor
