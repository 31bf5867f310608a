#include "faults.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "counters.h"
#include "sysfs_tree.h"

namespace rdma_fabric_sim {

namespace {

constexpr std::string_view kEthtoolPrefix = "ethtool/";

// The counter of the fault port that `target` names ("counters/x", "hw_counters/x",
// "ethtool/x"), nullptr if the device does not have it.
Counter* FaultCounter(Device& d, const std::string& target) {
  if (d.ports.empty()) return nullptr;
  Port& p = d.ports[0];
  if (target.starts_with(kEthtoolPrefix)) {
    // The full ethtool sets exist on mlx5 RoCE PFs (and LAG slaves) and E810 ports only; a
    // LAG's ethtool faults hit its first slave. A name the port's driver lacks is ignored.
    Port& eth = FaultEthPort(d);
    if (!eth.roce_pf && eth.kind != PortKind::kE810) return nullptr;
    auto it = eth.eth.find(target.substr(kEthtoolPrefix.size()));
    return it == eth.eth.end() ? nullptr : &it->second;
  }
  auto it = p.counters.find(target);
  return it == p.counters.end() ? nullptr : &it->second;
}

// Returns the AER stats + bit for "aer_dev_correctable/RxErr" style targets.
bool AerTarget(Device& d, const std::string& target, AerStats** stats, int* bit) {
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

void ApplyCounterEffect(const SimConfig& cfg, Device& d, const Effect& e, bool initial) {
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
  Rng& rng = target.starts_with(kEthtoolPrefix) ? FaultEthPort(d).eth_rng : d.ports[0].rng;
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

// Applies the table's configuration state to the fault port.
void ApplyFaultConfig(const SimConfig& cfg, Port& p, const FaultState& fs) {
  p.pfc_mask = fs.pfc_mask;
  p.trust_dscp = fs.trust_dscp;
  p.mtu = fs.mtu > 0 ? fs.mtu : DefaultMtu(cfg, p);
  p.ecn_mask = fs.ecn_mask;
  p.rocev2_gids = fs.rocev2_gids;
  p.optic_decay_ticks = fs.optic_decay_ticks;
  p.optic_lane = fs.optic_lane;
}

// A link transition moves the carrier counts and, going down, the link-down counters.
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

// Removes the netdevs of `ports` (class/net links and fixture files: ethtool/DCB report
// ENODEV) and the PCI functions they sit on, if not the device's own.
bool RemoveNetdevs(SimState& s, const std::vector<Port>& ports, std::string* error) {
  for (const Port& p : ports) {
    if (!s.writer.Remove("class/net/" + p.netdev, error) ||
        !s.fixtures.Remove("ethtool/" + p.netdev, error) ||
        !s.fixtures.Remove("dcb/" + p.netdev, error)) {
      return false;
    }
    if (p.kind == PortKind::kLagBond &&
        !s.writer.Remove("devices/virtual/net/" + p.netdev, error)) {
      return false;
    }
    if (!p.pci.empty() && (!s.writer.Remove("bus/pci/devices/" + p.pci, error) ||
                           !s.writer.Remove(p.pci_rel, error))) {
      return false;
    }
  }
  return true;
}

// Removes device `d` from sysfs (and its netdevs' fixture files); it stops ticking. A LAG
// takes its bond with it (a simplification: a real bond would stay, without slaves).
bool RemoveDevice(SimState& s, Device& d, std::string* error) {
  d.present = false;
  TreeWriter& w = s.writer;
  if (!w.Remove("class/infiniband/" + d.name, error)) return false;
  if (s.mlx5()) {
    if (!RemoveNetdevs(s, d.ports, error) || !RemoveNetdevs(s, d.slaves, error)) return false;
    if (!w.Remove("bus/pci/devices/" + d.pci, error)) return false;
    if (!w.Remove(d.pci_rel, error)) return false;
  } else {
    // Deleting an rxe link leaves the underlying Ethernet netdev in place.
    if (!w.Remove(IbRel(s.cfg, d), error)) return false;
  }
  return true;
}

bool RemoveVfs(SimState& s, const Device& pf, std::string* error) {
  for (int v : pf.vf_devices) {
    if (!RemoveDevice(s, s.devices[static_cast<size_t>(v)], error)) return false;
  }
  return true;
}

// Churn phase 2: the fault port's files hold what a buggy driver or a torn read might show.
bool WriteMalformedFiles(SimState& s, const std::string& port, std::string* error) {
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
    if (s.writer.HasFile(port + rel) && !s.writer.File(port + rel, content, error)) return false;
  }
  return true;
}

}  // namespace

bool ResolveFault(SimState& s, std::string* error) {
  s.fault_index = -1;
  std::string name = s.cfg.fault_device;
  if (!s.mlx5() && name.rfind("mlx5_", 0) == 0) name = "rxe" + name.substr(5);
  if (s.mlx5() && name.rfind("rxe", 0) == 0) name = "mlx5_" + name.substr(3);
  for (const Device& d : s.devices) {
    if (d.name == name) s.fault_index = d.index;
  }
  if (s.fault_index < 0 && s.scenario != nullptr && !s.scenario->effects.empty()) {
    *error = "fault device '" + s.cfg.fault_device + "' does not exist";
    return false;
  }
  // RoCE-only scenarios: an InfiniBand port (or a VF, which has no DCB/ECN/PFC stats of
  // its own) is replaced by the first RoCE PF. Without any RoCE PF the effects find no
  // targets and the scenario does nothing.
  if (s.fault_index >= 0 && s.scenario != nullptr && s.mlx5() && IsRoceOnly(*s.scenario) &&
      !IsRoceNic(s.fault())) {
    for (const Device& d : s.devices) {
      if (d.ports[0].roce_pf) {
        s.fault_index = d.index;
        break;
      }
    }
  }
  return true;
}

void ApplyInitialSets(SimState& s, Device& d) {
  if (s.scenario == nullptr || d.index != s.fault_index) return;
  for (const Effect& e : s.scenario->effects) {
    if (e.kind == EffectKind::kFreeze || (e.kind == EffectKind::kSet && InRange(e, 0))) {
      ApplyCounterEffect(s.cfg, d, e, /*initial=*/true);
    }
  }
}

void ApplyFaultState(SimState& s, Device& f, const FaultState& fs) {
  // A LAG loses one slave's link (the bond and its RDMA port stay up on the other slave).
  SetPortUp(FaultEthPort(f), fs.port_up);
  f.ports[0].half_width = fs.half_width;
  f.downtrained = fs.downtrained;
  ApplyFaultConfig(s.cfg, f.ports[0], fs);
  for (Port& slave : f.slaves)  // QoS is configured on both PFs alike
    ApplyFaultConfig(s.cfg, slave, fs);
}

void RestoreDevice(SimState& s, Device& d) {
  d.present = true;
  ResetDevice(s.cfg, d);
  ApplyInitialSets(s, d);
  for (int v : d.vf_devices) {
    Device& vf = s.devices[static_cast<size_t>(v)];
    vf.present = true;
    ResetDevice(s.cfg, vf);
    ApplyInitialSets(s, vf);
  }
}

bool ApplyFaultTick(SimState& s, std::string* error) {
  if (s.fault_index < 0) return true;
  Device& f = s.fault();
  const FaultState fs = EvalFault(s.scenario, s.tick - s.scenario_start);
  if (fs.present != f.present) {
    if (!fs.present) {
      if (!RemoveDevice(s, f, error) || !RemoveVfs(s, f, error)) return false;
    } else {
      RestoreDevice(s, f);
    }
  }
  if (f.present) ApplyFaultState(s, f, fs);
  return true;
}

void ApplyCounterEffects(SimState& s) {
  if (s.fault_index < 0 || s.scenario == nullptr) return;
  Device& f = s.fault();
  if (!f.present) return;
  for (const Effect& e : s.scenario->effects) {
    if ((e.kind == EffectKind::kAdd || e.kind == EffectKind::kAddRate ||
         e.kind == EffectKind::kSet) &&
        InRange(e, s.tick - s.scenario_start)) {
      ApplyCounterEffect(s.cfg, f, e, /*initial=*/false);
    }
  }
}

bool Churn(SimState& s, std::string* error) {
  if (s.fault_index < 0 || s.scenario == nullptr) return true;
  const Effect* churn = nullptr;
  for (const Effect& e : s.scenario->effects)
    if (e.kind == EffectKind::kChurn && InRange(e, s.tick)) churn = &e;
  Device& f = s.fault();
  if (churn == nullptr || !f.present) return true;
  const uint64_t phase = (s.tick - static_cast<uint64_t>(churn->from)) % 4;
  const std::string ports = IbRel(s.cfg, f) + "/ports/";
  if (phase == 2) return WriteMalformedFiles(s, ports + std::to_string(f.ports[0].num), error);
  if (phase == 3) {
    if (!RemoveVfs(s, f, error)) return false;
    if (f.ports.size() > 1 && !s.writer.Remove(ports + std::to_string(f.ports.back().num), error)) {
      return false;
    }
  }
  return true;
}

void ClearFault(SimState& s, int old_fault) {
  if (old_fault < 0) return;
  Device& f = s.devices[static_cast<size_t>(old_fault)];
  if (!f.present) RestoreDevice(s, f);
  ApplyFaultState(s, f, FaultState{});
  for (auto& [key, counter] : f.ports[0].counters)
    counter.frozen = false;
}

}  // namespace rdma_fabric_sim
