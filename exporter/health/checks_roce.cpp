// Checks of the RoCE configuration NCCL needs (roce_config, dcb, ecn, netdev collectors): a
// routable RoCE v2 GID, a jumbo MTU, and the lossless setup of the NCCL priority (PFC, DSCP
// trust, ECN).
#include <algorithm>
#include <set>

#include "rdma_exporter/health_checks.h"
#include "rdma_exporter/metric_names.h"

namespace rdma_exporter::doctor {
namespace {

// Ports whose link layer could not be read: the RoCE checks cannot tell whether they apply.
void UnknownLinkLayer(const SnapshotView& v, std::vector<Item>* items) {
  for (const auto& d : v.inventory.devices) {
    for (const auto& p : d.ports) {
      if (!SnapshotView::KnownLinkLayer(p)) {
        items->push_back({SnapshotView::Subject(d, p), Status::kWarn,
                          "link layer unknown: cannot tell whether this is a RoCE port"});
      }
    }
  }
}

// "index 3 0000:0000:0000:0000:0000:ffff:0a00:0001": the first routable RoCE v2 GID of a port.
std::string RoceV2GidOf(const SnapshotView& v, const DeviceInfo& d, const std::string& port) {
  for (const auto& g : AllSamples(v.now, metric::kGidInfo)) {
    const auto& l = g.labels;
    if (LabelOf(l, "device") == d.name && LabelOf(l, "port") == port &&
        LabelOf(l, "gid_type") == "RoCE v2" && LabelOf(l, "gid").rfind("fe80", 0) != 0) {
      return "index " + LabelOf(l, "index") + " " + LabelOf(l, "gid");
    }
  }
  return "";
}

// The netdevs whose DCB RoCE PF ports use (a RoCE LAG port's: each slave of its bond), once
// per netdev.
struct DcbPort {
  std::string subject;  // "mlx5_0/1 (ens1f0np0)", "mlx5_bond_0/1 (bond0: ens1f0np0)"
  LabelMap key;         // device, port, netdev
  bool bond_slave = false;
};

// What a summary counts: "2 RoCE PF ports", or "2 RoCE PF netdevs (LAG slaves)" when a bonded
// port's slaves are among them.
std::string PfNetdevs(const std::vector<DcbPort>& ports) {
  bool lag = std::any_of(ports.begin(), ports.end(), [](const DcbPort& p) { return p.bond_slave; });
  return std::to_string(ports.size()) + (lag ? " RoCE PF netdevs (LAG slaves)" : " RoCE PF ports");
}

// The DCB-capable RoCE PF ports; SKIP items for those whose DCB cannot be checked (unreadable,
// or a netdev without DCB), WARN for a port without a netdev.
std::vector<DcbPort> DcbPorts(const SnapshotView& v, std::vector<Item>* items) {
  std::vector<DcbPort> out;
  UnknownLinkLayer(v, items);
  std::set<std::string> seen;
  for (const auto& d : v.inventory.devices) {
    if (!d.physfn.empty()) continue;  // a VF's QoS is its PF's
    for (const auto& p : d.ports) {
      if (!SnapshotView::IsRoce(p)) continue;
      if (p.netdev.empty()) {
        items->push_back({SnapshotView::Subject(d, p), Status::kWarn,
                          "no netdev found for this RoCE port: its QoS cannot be read"});
        continue;
      }
      for (const auto& n : PhysicalNetdevs(p)) {
        if (!seen.insert(n.name).second) continue;
        LabelMap key = {{"device", d.name}, {"port", std::to_string(p.number)}, {"netdev", n.name}};
        std::string subject = SnapshotView::Subject(d, p, n);
        auto supported = SampleValue(v.now, metric::kDcbSupported, key);
        if (!supported) {
          items->push_back({subject, Status::kSkip, NotChecked("DCB not readable")});
        } else if (*supported == 0) {
          items->push_back({subject, Status::kSkip,
                            NotChecked("the netdev has no DCB (not a lossless-capable NIC)")});
        } else {
          out.push_back({subject, key, !n.bond.empty()});
        }
      }
    }
  }
  return out;
}

// The priorities whose per-priority sample of `family` is 1: "3", "3,4", "none".
std::string PriorityList(const SnapshotView& v, std::string_view family, const LabelMap& key,
                         const LabelMap& extra = {}) {
  std::vector<std::string> on;
  for (int prio = 0; prio < 8; ++prio) {
    LabelMap k = key;
    k.insert(extra.begin(), extra.end());
    k["priority"] = std::to_string(prio);
    auto value = SampleValue(v.now, family, k);
    if (value && *value == 1) on.push_back(std::to_string(prio));
  }
  return on.empty() ? "none" : Join(on, ",");
}

// The NCCL priority of a port (roce_config's rdma_nccl_priority), or a reason why not.
std::optional<int> NcclPriority(const SnapshotView& v, const LabelMap& key, std::string* why) {
  if (!v.nccl_ib_tc) {
    *why = v.tc_problem.empty()
               ? "give --nccl.ib-tc (the jobs' NCCL_IB_TC) to check the NCCL priority"
               : v.tc_problem;
    return std::nullopt;
  }
  auto prio = SampleValue(v.now, metric::kNcclPriority, key);
  if (!prio) {
    *why = "NCCL priority unknown (PCP trust, or no DSCP entry for DSCP " +
           std::to_string(*v.nccl_ib_tc >> 2) + ")";
    return std::nullopt;
  }
  return static_cast<int>(*prio);
}

// The PFC bitmap of mlnx_qos --pfc with only `prio` on: "0,0,0,1,0,0,0,0" for 3.
std::string PfcBitmap(int prio) {
  std::string out;
  for (int i = 0; i < 8; ++i)
    out += std::string(i == 0 ? "" : ",") + (i == prio ? "1" : "0");
  return out;
}

// How to put PFC on `prio` only: iproute2's dcb (any DCB-capable NIC), or MLNX_OFED's mlnx_qos.
std::string PfcFix(int prio) {
  std::string p = std::to_string(prio);
  return "fix: dcb pfc set dev <netdev> prio-pfc all:off " + p +
         ":on, or mlnx_qos -i <netdev> --pfc " + PfcBitmap(prio) + "; and the same on the switch";
}

// The ECN item of a port whose NCCL priority is known.
Item EcnItem(const SnapshotView& v, const std::string& subject, const LabelMap& key, int prio) {
  std::string p = std::to_string(prio);
  LabelMap k = key;
  k["priority"] = p;
  k["role"] = "np";
  bool np_on = SampleValue(v.now, metric::kEcnEnabled, k).value_or(0) == 1;
  k["role"] = "rp";
  bool rp_on = SampleValue(v.now, metric::kEcnEnabled, k).value_or(0) == 1;
  if (np_on && rp_on) return {subject, Status::kPass, "ECN np and rp on priority " + p};
  std::string fix;
  for (const char* role : {"np", "rp"}) {
    if ((role[0] == 'n' ? np_on : rp_on)) continue;
    fix += std::string(fix.empty() ? "fix: " : " and ") + "echo 1 > /sys/class/net/<netdev>/" +
           "ecn/roce_" + role + "/enable/" + p;
  }
  return {subject, Status::kFail,
          std::string("ECN ") + (np_on ? "" : "np ") + (!np_on && !rp_on ? "and " : "") +
              (rp_on ? "" : "rp ") + "off on NCCL priority " + p +
              ": no DCQCN congestion control, PFC pauses instead; " + fix};
}

}  // namespace

Check RoceV2Gid(const SnapshotView& v) {
  std::vector<Item> items;
  UnknownLinkLayer(v, &items);
  size_t n = 0;
  for (const auto& d : v.inventory.devices) {
    for (const auto& p : d.ports) {
      if (!SnapshotView::IsRoce(p)) continue;
      ++n;
      LabelMap key = SnapshotView::Port(d, p);
      key["check"] = "roce_v2_gid_present";
      auto ok = SampleValue(v.now, metric::kRoceConfigOk, key);
      if (!ok) {
        items.push_back(
            {SnapshotView::Subject(d, p), Status::kSkip, NotChecked("GID table unreadable")});
      } else if (*ok == 0) {
        items.push_back({SnapshotView::Subject(d, p), Status::kFail,
                         "no routable RoCE v2 GID: NCCL finds no GID to use; fix: give "
                         "the netdev an IP address (ip addr add ... dev <netdev>)"});
      } else {
        items.push_back({SnapshotView::Subject(d, p), Status::kPass,
                         "RoCE v2 GID " + RoceV2GidOf(v, d, key["port"])});
      }
    }
  }
  return Finish("roce_v2_gid", std::move(items),
                n == 0 ? "no RoCE ports"
                       : "a routable RoCE v2 GID on all " + std::to_string(n) + " RoCE ports");
}

Check NetdevMtu(const SnapshotView& v) {
  std::vector<Item> items;
  UnknownLinkLayer(v, &items);
  unsigned min_mtu = v.roce_min_mtu;
  size_t n = 0;
  for (const auto& d : v.inventory.devices) {
    for (const auto& p : d.ports) {
      if (!SnapshotView::IsRoce(p)) continue;
      ++n;
      auto mtu = SampleValue(v.now, metric::kNetdevMtu, SnapshotView::Port(d, p));
      auto active = SampleValue(v.now, metric::kPortActiveMtu, SnapshotView::Port(d, p));
      std::string subject = SnapshotView::Subject(d, p);
      if (p.netdev.empty()) {
        items.push_back({subject, Status::kWarn, "no netdev found for this RoCE port"});
      } else if (!mtu) {
        items.push_back({subject, Status::kSkip, NotChecked("netdev MTU unknown")});
      } else if (*mtu < min_mtu) {
        items.push_back({subject, Status::kFail,
                         "MTU " + Number(*mtu) + " < " + std::to_string(min_mtu) +
                             ": the RoCE path MTU cannot reach 4096; fix: ip link set dev "
                             "<netdev> mtu " +
                             std::to_string(min_mtu) + " (and the switch ports)"});
      } else if (active && *active < 4096) {
        items.push_back({subject, Status::kWarn,
                         "MTU " + Number(*mtu) + " but active path MTU " + Number(*active)});
      } else {
        items.push_back({subject, Status::kPass, "MTU " + Number(*mtu)});
      }
    }
  }
  return Finish("netdev_mtu", std::move(items),
                n == 0 ? "no RoCE ports"
                       : "MTU >= " + std::to_string(min_mtu) + " on all " + std::to_string(n) +
                             " RoCE netdevs");
}

Check Pfc(const SnapshotView& v) {
  std::vector<Item> items;
  auto ports = DcbPorts(v, &items);
  for (const auto& dp : ports) {
    const std::string& subject = dp.subject;
    std::string enabled = PriorityList(v, metric::kPfcEnabled, dp.key);
    std::string why;
    auto prio = NcclPriority(v, dp.key, &why);
    if (!prio) {
      items.push_back({subject, Status::kSkip, NotChecked(why + "; PFC on priorities " + enabled)});
      continue;
    }
    LabelMap k = dp.key;
    k["priority"] = std::to_string(*prio);
    auto on = SampleValue(v.now, metric::kPfcEnabled, k);
    std::string p = std::to_string(*prio);
    if (!on || *on != 1) {
      items.push_back({subject, Status::kFail,
                       "PFC off on NCCL priority " + p + " (PFC on: " + enabled +
                           "): RoCE drops packets under congestion; " + PfcFix(*prio)});
    } else if (enabled != p) {
      items.push_back({subject, Status::kWarn,
                       "PFC on priorities " + enabled + ", not only on NCCL priority " + p +
                           " (pauses spread to the other traffic); " + PfcFix(*prio)});
    } else {
      items.push_back({subject, Status::kPass, "PFC on priority " + p + " only"});
    }
  }
  size_t n = ports.size();
  return Finish("pfc", std::move(items),
                n == 0 ? "no RoCE PF ports"
                       : "PFC on the NCCL priority only on all " + PfNetdevs(ports) + v.tc_origin);
}

Check TrustDscp(const SnapshotView& v) {
  std::vector<Item> items;
  auto ports = DcbPorts(v, &items);
  for (const auto& dp : ports) {
    const std::string& subject = dp.subject;
    LabelMap k = dp.key;
    k["mode"] = "dscp";
    if (SampleValue(v.now, metric::kQosTrustInfo, k)) {
      items.push_back({subject, Status::kPass, "trust dscp"});
      continue;
    }
    // Upstream mlx5 trusts DSCP as soon as the APP table has a DSCP entry: mapping the NCCL
    // DSCP to the priority PFC should protect is the generic fix. Which priority that is the
    // operator decides (under PCP trust the doctor cannot derive it).
    auto tc = v.nccl_ib_tc;
    std::string dscp = tc ? std::to_string(*tc >> 2) : "<dscp>";
    items.push_back({subject, Status::kFail,
                     "trust pcp: the DSCP of NCCL_IB_TC does not select the priority; fix: "
                     "mlnx_qos -i <netdev> --trust dscp, or dcb app add dev <netdev> dscp-prio " +
                         dscp + ":<priority> (a DSCP entry switches mlx5 to DSCP trust)"});
  }
  size_t n = ports.size();
  return Finish("trust_dscp", std::move(items),
                n == 0 ? "no RoCE PF ports" : "trust dscp on all " + PfNetdevs(ports));
}

Check Ecn(const SnapshotView& v) {
  std::vector<Item> items;
  auto ports = DcbPorts(v, &items);
  for (const auto& dp : ports) {
    const std::string& subject = dp.subject;
    std::string np = PriorityList(v, metric::kEcnEnabled, dp.key, {{"role", "np"}});
    std::string rp = PriorityList(v, metric::kEcnEnabled, dp.key, {{"role", "rp"}});
    if (!FindSample(v.now, metric::kEcnEnabled, dp.key)) {
      items.push_back(
          {subject, Status::kSkip, NotChecked("no MLNX_OFED ecn/ files on this driver")});
      continue;
    }
    std::string why;
    auto prio = NcclPriority(v, dp.key, &why);
    if (!prio) {
      items.push_back({subject, Status::kSkip,
                       NotChecked(why + "; ECN np on priorities " + np + ", rp on " + rp)});
      continue;
    }
    items.push_back(EcnItem(v, subject, dp.key, *prio));
  }
  size_t n = ports.size();
  return Finish("ecn", std::move(items),
                n == 0 ? "no RoCE PF ports"
                       : "ECN on the NCCL priority on all " + PfNetdevs(ports) + v.tc_origin);
}

}  // namespace rdma_exporter::doctor
