// The sysfs renderer: writes the kernel's view of the devices under root/sys (PCI functions,
// class/infiniband devices and ports with their GID tables and counters, netdevs), as the
// mlx5 or rdma_rxe driver would show it. See README.md "Layout".
#pragma once

#include <string>

#include "model.h"

namespace rdma_fabric_sim {

// The IB device directory of `d`, relative to the sysfs root.
std::string IbRel(const SimConfig& cfg, const Device& d);

// Removes root/sys (refusing a real sysfs) and creates the empty class/bus directories.
bool PrepareSysfsRoot(SimState& s, std::string* error);

// The device-level files: the PCI function (mlx5) or virtio parent (rxe), and the IB device.
bool RenderDeviceSysfs(SimState& s, const Device& d, std::string* error);

// The files of port `p` of `d`: the IB port (attributes, GID table, counters) and its netdev.
bool RenderPortSysfs(SimState& s, const Device& d, const Port& p, std::string* error);

// The netdev of LAG slave `slave` of `d` (a PF netdev with master/upper links to the bond);
// after the last slave also the bond's bonding/ files and lower_<slave> links.
bool RenderSlaveSysfs(SimState& s, const Device& d, const Port& slave, std::string* error);

}  // namespace rdma_fabric_sim
