// Small helpers shared by the sysfs collectors.
#pragma once

#include <string>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/inventory.h"
#include "rdma_exporter/metrics.h"
#include "rdma_exporter/parse.h"
#include "rdma_exporter/port_state.h"

namespace rdma_exporter {

inline Labels DeviceLabels(const DeviceInfo& device) {
  return {{"device", device.name}};
}

inline Labels PortLabels(const DeviceInfo& device, const PortInfo& port) {
  return {{"device", device.name}, {"port", std::to_string(port.number)}};
}

// Labels of a metric about a port's netdev.
inline Labels NetdevLabels(const DeviceInfo& device, const PortInfo& port) {
  return {{"device", device.name}, {"port", std::to_string(port.number)}, {"netdev", port.netdev}};
}

// Labels of a metric about one of a port's physical netdevs: NetdevLabels for a plain port; on a
// RoCE LAG port netdev is the slave and `bond` names the port's bond.
inline Labels PhysicalNetdevLabels(const DeviceInfo& device, const PortInfo& port,
                                   const PhysicalNetdev& netdev) {
  Labels labels = {
      {"device", device.name}, {"port", std::to_string(port.number)}, {"netdev", netdev.name}};
  if (!netdev.bond.empty()) labels.push_back({"bond", netdev.bond});
  return labels;
}

// True if the port's phys_state reads LinkUp; an unreadable or absent file is not up (silently:
// the port collector reports it).
inline bool PhysLinkUp(CollectContext& ctx, const PortInfo& port) {
  std::string phys;
  if (!ctx.ReadOptional(JoinPath(port.dir, "phys_state"), &phys)) return false;
  auto state = ParseNumberedName(phys);
  return state && state->number == static_cast<unsigned>(PhysState::kLinkUp);
}

// rdma_port_peer_info's help, one text for both collectors writing it (lldp, ib_peer).
inline constexpr const char* kPortPeerInfoHelp =
    "The device at the other end of the port's link, value 1: source lldp (the switch's chassis "
    "ID, port ID and system name from its LLDP frames) or smp (InfiniBand: the neighbour's node "
    "GUID, its port number and node description).";

inline Labels With(Labels labels, std::string name, std::string value) {
  labels.push_back({std::move(name), std::move(value)});
  return labels;
}

}  // namespace rdma_exporter
