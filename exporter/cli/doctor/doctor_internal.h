// The doctor's own checks: the driver stack and what this process can use of it, which read the
// node beyond the collectors' samples. The checks of samples alone (links, RoCE configuration,
// counters) and the report are the health library's (rdma_exporter/health_checks.h), shared
// with the node page. Private to the cli library.
#pragma once

#include <string>

#include "cli_internal.h"
#include "rdma_exporter/cli.h"
#include "rdma_exporter/health_checks.h"

namespace rdma_exporter::doctor {

// Everything the doctor's checks look at: the snapshot view plus the node and the process.
struct NodeView : SnapshotView {
  NodeView(SnapshotView view, const CliOptions& options, const ProcessEnv& env, CliNode& node)
      : SnapshotView(std::move(view)), options(options), env(env), node(node) {}
  const CliOptions& options;
  const ProcessEnv& env;
  CliNode& node;

  // The kernel module driving a device: the PCI function's driver link (mlx5_core), else
  // guessed from the PCI vendor (Mellanox 0x15b3: mlx5 unless named mlx4) or rxe's `parent`;
  // "" when unknown. Device names are not trusted alone (systemd renames HCAs).
  std::string DriverOf(const DeviceInfo& d) const;
};

// Soft-RoCE: no PCI function, and rxe's `parent` attribute naming its netdev (systemd or
// `rdma link add` may name the device anything).
bool IsRxeDevice(CliNode& node, const DeviceInfo& d);

// checks_driver.cpp: the driver stack and the devices it made.
Check KernelModules(NodeView& v);
Check DriverFirmware(NodeView& v);
// checks_process.cpp: what this process (container) can use of them.
Check UverbsDevices(NodeView& v);
Check Memlock(NodeView& v);
// checks_driver.cpp
Check DevicesPresent(NodeView& v);

}  // namespace rdma_exporter::doctor
