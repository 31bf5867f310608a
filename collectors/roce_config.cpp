#include "roce_config.h"

#include <cerrno>
#include <charconv>

#include "common.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

constexpr const char* kOkHelp =
    "1 if a RoCE configuration check passes on the port, 0 if it fails (checks: "
    "pfc_on_nccl_priority, pfc_only_on_nccl_priority, trust_dscp, ecn_np_on_nccl_priority, "
    "ecn_rp_on_nccl_priority, mtu_at_least_4200, active_mtu_at_least_4096, roce_v2_gid_present). "
    "Checks whose input is unknown are absent.";

// True if the port's GID table has a RoCE v2 entry that is not link-local: NCCL picks a routable
// (by default IPv4-mapped) RoCE v2 GID and fails to connect without one.
std::optional<bool> HasRoutableRoceV2Gid(CollectContext& ctx, const PortInfo& port) {
  std::vector<std::string> names;
  std::string gid_dir = JoinPath(port.dir, "gids");
  if (ctx.sysfs().ListAttributeDir(gid_dir, &names) != 0) return std::nullopt;
  std::string gid, type;
  for (const auto& index : names) {
    if (ctx.sysfs().ReadFile(JoinPath(gid_dir, index), &gid) != 0) continue;
    if (!IsValidGid(gid) || IsEmptyGid(gid) || Trim(gid).substr(0, 4) == "fe80") continue;
    if (ctx.sysfs().ReadFile(JoinPath(port.dir, "gid_attrs/types/" + index), &type) != 0) continue;
    if (Trim(type) == "RoCE v2") return true;
  }
  return false;
}

// OFED's per-priority ECN enable file; nullopt where it does not exist (upstream, VFs).
std::optional<bool> EcnEnabled(CollectContext& ctx, const std::string& netdev, const char* role,
                               int priority) {
  std::string value;
  std::string path = "class/net/" + netdev + "/ecn/" + role + "/enable/" + std::to_string(priority);
  if (!ctx.ReadOptional(path, &value)) return std::nullopt;
  auto parsed = ParseU64(value);
  if (!parsed) {
    ctx.Malformed(path, value);
    return std::nullopt;
  }
  return *parsed != 0;
}

using Check = std::pair<const char*, bool>;

void EmitCheck(MetricSink& sink, const Labels& labels, const char* name, bool ok) {
  sink.Gauge(metric::kRoceConfigOk, kOkHelp, With(labels, "check", name), ok ? 1 : 0);
}

// The checks of the port itself (its GID table, its netdev's MTU, its active MTU), whatever
// netdev carries its QoS.
std::vector<Check> PortChecks(CollectContext& ctx, KernelReaders* kernel, const DeviceInfo& device,
                              const PortInfo& port, unsigned min_mtu) {
  std::vector<Check> checks;
  if (auto gid = HasRoutableRoceV2Gid(ctx, port)) checks.push_back({"roce_v2_gid_present", *gid});

  if (kernel != nullptr && kernel->netdev != nullptr) {
    NetdevState state;
    if (kernel->netdev->Read(port.netdev, &state) == 0 && state.mtu) {
      checks.push_back({"mtu_at_least_4200", *state.mtu >= min_mtu});
    }
  }

  // NCCL on RoCE wants the 4096-byte path MTU; the port gets it only when the netdev MTU
  // leaves room for the RoCE headers (>= 4200).
  if (kernel != nullptr && kernel->verbs != nullptr) {
    VerbsDevice verbs;
    if (kernel->verbs->ReadDevice(device.name, &verbs) == 0) {
      for (const auto& vport : verbs.ports) {
        if (vport.port == port.number && vport.active_mtu_bytes != 0) {
          checks.push_back({"active_mtu_at_least_4096", vport.active_mtu_bytes >= 4096});
        }
      }
    }
  }
  return checks;
}

}  // namespace

// The checks of one netdev's DCB (trust, PFC on the NCCL priority) and ECN.
void RoceConfigCollector::QosChecks(CollectContext& ctx, DcbReader& reader,
                                    const std::string& netdev, const Labels& labels,
                                    MetricSink& sink) const {
  DcbConfig dcb;
  int err = reader.Read(netdev, &dcb);
  if (err != 0 || !dcb.supported) return;  // the dcb collector reports these
  EmitCheck(sink, labels, "trust_dscp", dcb.dscp_entries > 0);

  if (!nccl_ib_tc_) return;
  int dscp = *nccl_ib_tc_ >> 2;  // the TOS byte's upper 6 bits; the low 2 are ECN
  // In DSCP trust the NIC maps DSCP to priority through the APP table; in PCP trust the
  // priority comes from the VLAN PCP / NCCL_IB_SL, which the exporter cannot see.
  if (dcb.dscp_entries == 0 || dcb.dscp_to_priority[dscp] < 0) return;
  int priority = dcb.dscp_to_priority[dscp];
  sink.Gauge(metric::kNcclPriority,
             "The L2 priority NCCL's traffic (--nccl.ib-tc, DSCP = TC >> 2) maps to on this "
             "port through the live DSCP-to-priority map.",
             labels, priority);
  if (dcb.pfc_known) {
    EmitCheck(sink, labels, "pfc_on_nccl_priority", (dcb.pfc_enabled >> priority) & 1);
    EmitCheck(sink, labels, "pfc_only_on_nccl_priority", dcb.pfc_enabled == (1u << priority));
  }
  if (auto np = EcnEnabled(ctx, netdev, "roce_np", priority)) {
    EmitCheck(sink, labels, "ecn_np_on_nccl_priority", *np);
  }
  if (auto rp = EcnEnabled(ctx, netdev, "roce_rp", priority)) {
    EmitCheck(sink, labels, "ecn_rp_on_nccl_priority", *rp);
  }
}

bool RoceConfigCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                  MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      if (port.link_layer != "Ethernet" || port.netdev.empty()) continue;
      std::vector<Check> port_checks = PortChecks(ctx, kernel, device, port, min_mtu_);
      // On a RoCE LAG port QoS lives on the bond's slaves: one set of checks per slave.
      for (const auto& netdev : PhysicalNetdevs(port)) {
        Labels labels = PhysicalNetdevLabels(device, port, netdev);
        for (const auto& [name, ok] : port_checks)
          EmitCheck(sink, labels, name, ok);
        // PFC and trust live on the PF; a VF's netdev has no DCB of its own.
        if (!device.physfn.empty() || kernel == nullptr || kernel->dcb == nullptr) continue;
        QosChecks(ctx, *kernel->dcb, netdev.name, labels, sink);
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
