// The doctor's parts: the report (checks made of PASS/SKIP/WARN/FAIL items, printed as text or
// JSON), the view of the node the checks read, and the checks, one file per family. Private to the
// cli library.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli_internal.h"
#include "rdma_exporter/cli.h"

namespace rdma_exporter::doctor {

// Ordered: a check is as bad as its worst item. kSkip: the check could not run for a subject
// (its data is absent: no per-priority counters, DCB unknown); never PASS for what was not
// checked, but not a finding either (exit code as for PASS). Its reason starts "not checked: ".
enum class Status { kPass = 0, kSkip = 1, kWarn = 2, kFail = 3 };

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

// "1 port", "3 ports".
std::string Count(size_t n, const std::string& noun);
std::string Join(const std::vector<std::string>& parts, const std::string& sep = ", ");
// %g: "400", "2.5".
std::string Number(double v);
// "64 KiB", "8 MiB".
std::string Bytes(uint64_t b);

// ---- node_view.cpp -------------------------------------------------------------------------

// Firmware versions, HCA types: one word of printable ASCII.
bool Printable(const std::string& s);
// A label of a sample, "" when absent (collectors always set them; the doctor must not throw).
std::string LabelOf(const LabelMap& labels, const char* name);

// Everything the checks look at.
struct NodeView {
  const CliOptions& options;
  const ProcessEnv& env;
  CliNode& node;
  const SampleIndex& now;     // the last collection
  const SampleIndex& before;  // the first one (== now when not sampled)
  double sample_seconds;      // 0: one collection
  std::string tc_origin;      // " (NCCL_IB_TC=106 from the environment)" or ""
  std::string tc_problem;     // why the environment's NCCL_IB_TC was not used

  const Inventory& inventory() const { return node.inventory(); }
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
  // Soft-RoCE: no PCI function, and rxe's `parent` attribute naming its netdev (systemd or
  // `rdma link add` may name the device anything).
  bool IsRxe(const DeviceInfo& d) const;
  // The kernel module driving a device: the PCI function's driver link (mlx5_core), else
  // guessed from the PCI vendor (Mellanox 0x15b3: mlx5 unless named mlx4) or rxe's `parent`;
  // "" when unknown. Device names are not trusted alone (systemd renames HCAs).
  std::string DriverOf(const DeviceInfo& d) const;
};

// ---- the checks, in the order the report lists them ----------------------------------------

// checks_driver.cpp: the driver stack and the devices it made.
Check KernelModules(NodeView& v);
Check DriverFirmware(NodeView& v);
// checks_process.cpp: what this process (container) can use of them.
Check UverbsDevices(NodeView& v);
Check Memlock(NodeView& v);
// checks_driver.cpp
Check DevicesPresent(NodeView& v);
// checks_link.cpp: port state, link layer, rate and width, PCIe.
Check PortActive(NodeView& v);
Check LinkLayer(NodeView& v);
Check PortRateUniform(NodeView& v);
Check PcieLink(NodeView& v);
// checks_roce.cpp: RoCE configuration (roce_config, dcb, ecn, netdev collectors).
Check RoceV2Gid(NodeView& v);
Check NetdevMtu(NodeView& v);
Check Pfc(NodeView& v);
Check TrustDscp(NodeView& v);
Check Ecn(NodeView& v);
// checks_counters.cpp: counters over the sampling window.
Check PfcStorm(NodeView& v);
Check ErrorCounters(NodeView& v);

}  // namespace rdma_exporter::doctor
