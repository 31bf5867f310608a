// Checks of the links: port state, link layer, port rate and width, PCIe link.
#include <algorithm>
#include <map>

#include "rdma_exporter/health_checks.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/port_state.h"

namespace rdma_exporter::doctor {
namespace {

// A port state sample is `state` (PortState, PhysState).
template <typename State>
bool Is(const std::optional<double>& value, State state) {
  return value && *value == static_cast<double>(state);
}

std::string RateText(double bytes_per_second, double width) {
  return Number(bytes_per_second * 8 / 1e9) + " Gb/s " + Number(width) + "X";
}

// ACTIVE ports' "400 Gb/s 4X", grouped by HCA type and link layer.
struct RateEntry {
  std::string subject;
  std::string rate;  // "400 Gb/s 4X"
  double speed;      // bytes per second, to break ties
};
std::map<std::string, std::vector<RateEntry>> ActivePortRates(const SnapshotView& v) {
  std::map<std::string, std::vector<RateEntry>> groups;
  for (const auto& d : v.inventory.devices) {
    std::string type = v.DeviceLabel(d, "hca_type");
    if (type.empty()) type = v.IsRxe(d) ? "rxe" : "unknown HCA type";
    for (const auto& p : d.ports) {
      LabelMap key = SnapshotView::Port(d, p);
      auto state = SampleValue(v.now, metric::kPortState, key);
      auto rate = SampleValue(v.now, metric::kPortRate, key);
      auto width = SampleValue(v.now, metric::kPortLinkWidth, key);
      if (!Is(state, PortState::kActive) || !rate || !width) continue;  // port_active reports
      groups[type + " " + p.link_layer].push_back(
          {d.name + "/" + std::to_string(p.number), RateText(*rate, *width), *rate});
    }
  }
  return groups;
}

}  // namespace

Check PortActive(const SnapshotView& v) {
  std::vector<Item> items;
  size_t ok = 0;
  for (const auto& d : v.inventory.devices) {
    for (const auto& p : d.ports) {
      auto state = SampleValue(v.now, metric::kPortState, SnapshotView::Port(d, p));
      auto phys = SampleValue(v.now, metric::kPortPhysicalState, SnapshotView::Port(d, p));
      if (Is(state, PortState::kActive) && Is(phys, PhysState::kLinkUp)) {
        ++ok;
        items.push_back({SnapshotView::Subject(d, p), Status::kPass, "ACTIVE/LinkUp"});
        continue;
      }
      std::string s =
          state ? "state " + std::string(PortStateName(*state)) : std::string("state unreadable");
      std::string ph = phys ? "phys_state " + std::string(PhysStateName(*phys))
                            : std::string("phys_state unreadable");
      items.push_back({SnapshotView::Subject(d, p), Status::kFail, s + ", " + ph});
    }
  }
  return Finish("port_active", std::move(items),
                ok == 0 ? "no ports" : "all " + std::to_string(ok) + " ports ACTIVE/LinkUp");
}

Check LinkLayer(const SnapshotView& v) {
  std::vector<Item> items;
  std::map<std::string, std::vector<std::string>> by_layer;
  for (const auto& d : v.inventory.devices) {
    for (const auto& p : d.ports) {
      std::string port = d.name + "/" + std::to_string(p.number);
      if (!SnapshotView::KnownLinkLayer(p)) {
        items.push_back({port, Status::kWarn,
                         p.link_layer.empty() ? "link_layer unreadable"
                                              : "link_layer \"" + p.link_layer + "\""});
        continue;
      }
      by_layer[p.link_layer == "Ethernet" ? "Ethernet (RoCE)" : p.link_layer].push_back(port);
      items.push_back({port, Status::kPass, p.link_layer});
    }
  }
  std::vector<std::string> parts;
  for (const auto& [layer, ports] : by_layer)
    parts.push_back(layer + ": " + Join(ports));
  if (by_layer.size() > 1) {
    items.push_back({"node", Status::kWarn,
                     "InfiniBand and RoCE ports mixed (" + Join(parts, "; ") +
                         "): one NCCL job cannot use both, set NCCL_IB_HCA to one kind"});
  }
  return Finish("link_layer", std::move(items), parts.empty() ? "no ports" : Join(parts, "; "));
}

std::string ReferenceRate(const std::map<std::string, std::pair<size_t, double>>& ports) {
  if (ports.empty()) return "";
  // (count, speed) pairs compare by count first, then speed.
  return std::max_element(ports.begin(), ports.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

PcieTarget PcieTrainTarget(const SampleIndex& now, const std::string& device, double max_speed,
                           double max_width) {
  auto slot_speed =
      SampleValue(now, "rdma_pcie_upstream_max_link_transfers_per_second", {{"device", device}});
  auto slot_width =
      SampleValue(now, "rdma_pcie_upstream_max_link_width_lanes", {{"device", device}});
  return {slot_speed ? std::min(max_speed, *slot_speed) : max_speed,
          slot_width ? std::min(max_width, *slot_width) : max_width};
}

Check PortRateUniform(const SnapshotView& v) {
  // Each group of ACTIVE ports should run one rate and width (a downgraded port slows every
  // NCCL ring through it).
  std::vector<Item> items;
  std::vector<std::string> parts;
  for (const auto& [group, entries] : ActivePortRates(v)) {
    std::map<std::string, std::pair<size_t, double>> count;
    for (const auto& e : entries) {
      ++count[e.rate].first;
      count[e.rate].second = e.speed;
    }
    std::string common = ReferenceRate(count);
    parts.push_back(group + ": " + Count(count[common].first, "port") + " at " + common);
    for (const auto& e : entries) {
      if (e.rate == common) {
        items.push_back({e.subject, Status::kPass, e.rate});
      } else {
        items.push_back(
            {e.subject, Status::kFail, e.rate + ", the other " + group + " ports run " + common});
      }
    }
  }
  return Finish("port_rate_uniform", std::move(items),
                parts.empty() ? "no ACTIVE ports to compare" : Join(parts, "; "));
}

// The link trains to the lower capability of the card and the port it is plugged into (the
// slot: a Gen5 card in a Gen4 slot runs Gen4 at best), so "downtrained" compares the current
// link against min(card max, slot max) where the slot's maximum is known.
Check PcieLink(const SnapshotView& v) {
  std::vector<Item> items;
  std::vector<std::string> ok;
  for (const auto& d : v.inventory.devices) {
    auto get = [&](std::string_view family, const char* kind) {
      return SampleValue(v.now, family, {{"device", d.name}, {"kind", kind}});
    };
    auto cur_speed = get(metric::kPcieLinkSpeed, "current");
    auto max_speed = get(metric::kPcieLinkSpeed, "max");
    auto cur_width = get(metric::kPcieLinkWidth, "current");
    auto max_width = get(metric::kPcieLinkWidth, "max");
    if (!cur_speed || !max_speed || !cur_width || !max_width) {
      // VFs report no link (Unknown / width 0), rxe has no PCI function; a PF must.
      if (d.has_pci_link && d.physfn.empty()) {
        items.push_back({d.name, Status::kSkip,
                         NotChecked("PCIe link speed/width unreadable (current/max_link_speed, "
                                    "current/max_link_width)")});
      }
      continue;
    }
    const auto [want_speed, want_width] = PcieTrainTarget(v.now, d.name, *max_speed, *max_width);
    auto text = [](double speed, double width) {
      return Number(speed / 1e9) + " GT/s x" + Number(width);
    };
    std::string current = text(*cur_speed, *cur_width);
    std::string card = text(*max_speed, *max_width);
    bool slot_limited = want_speed < *max_speed || want_width < *max_width;
    if (*cur_speed < want_speed || *cur_width < want_width) {
      std::string capable =
          slot_limited ? text(want_speed, want_width) + " (card " + card + " in a slower slot)"
                       : card;
      items.push_back({d.name + " (" + d.pci_address + ")", Status::kFail,
                       "PCIe " + current + ", capable of " + capable +
                           " (downtrained: reseat or check the slot/riser)"});
    } else if (slot_limited) {
      // Not a fault of this link: the slot caps it. Said so that a move to a faster slot is an
      // informed choice.
      items.push_back({d.name, Status::kPass,
                       current + " (slot maximum; the card is capable of " + card + ")"});
      ok.push_back(d.name + " " + current + " (slot max, card " + card + ")");
    } else {
      items.push_back({d.name, Status::kPass, current});
      ok.push_back(d.name + " " + current);
    }
  }
  return Finish("pcie_link", std::move(items),
                ok.empty() ? "no device reports its PCIe link" : "at max: " + Join(ok));
}

}  // namespace rdma_exporter::doctor
