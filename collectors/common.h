// Small helpers shared by the sysfs collectors.
#pragma once

#include <string>

#include "rdma_exporter/inventory.h"
#include "rdma_exporter/metrics.h"

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

inline Labels With(Labels labels, std::string name, std::string value) {
  labels.push_back({std::move(name), std::move(value)});
  return labels;
}

}  // namespace rdma_exporter
