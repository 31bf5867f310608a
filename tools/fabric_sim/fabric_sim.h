// Fabric simulator: writes a fake Linux sysfs tree that looks like the kernel's view of
// mlx5 (ConnectX-7) RDMA devices or rdma_rxe (Soft-RoCE) devices, plus `ethtool -S` and DCB
// fixture files for the RoCE netdevs, and keeps them moving over time under a named scenario.
// Deterministic for a given seed and tick count.
//
// Used by the exporter's demo mode, end-to-end tests and benchmarks. See README.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rdma_fabric_sim {

struct SimConfig {
  enum class Layout { Mlx5, Rxe };
  enum class LinkLayer { Mixed, Roce, Ib };

  // Output directory; the sysfs root is root + "/sys" (removed and rewritten at start-up).
  std::string root;
  // Physical functions (mlx5_0..mlx5_{devices-1}) or rxe devices (rxe0..).
  int devices = 8;
  // Ports per PF (VFs and rxe devices always have one port).
  int ports = 1;
  // SR-IOV VFs of the first PF, each its own RDMA device named after the PFs (mlx5 only).
  int vfs = 1;
  Layout layout = Layout::Mlx5;
  // Extra NICs of the mlx5 layout, numbered after the PFs and VFs: RoCE LAGs (two ConnectX-6
  // Dx PFs bonded as bondN, one RDMA device mlx5_bond_N) and Intel E810 RoCE NICs (ice netdev,
  // irdma RDMA device). The demo fabric has one of each; 0 leaves them out.
  int lag = 1;
  int e810 = 1;
  // Mixed: even-numbered PFs RoCE (Ethernet), odd-numbered PFs InfiniBand.
  LinkLayer link_layer = LinkLayer::Mixed;
  std::string scenario = "healthy";
  // The device the scenario's fault hits (its port 1). For the rxe layout "mlx5_N" is
  // accepted and means "rxeN".
  std::string fault_device = "mlx5_1";
  // Simulated seconds per tick (scales the traffic counters).
  double interval_seconds = 1.0;
  uint64_t seed = 1;
  int gids_per_port = 16;
  // rdma_fabric_sim only: a file re-read before every tick, "SCENARIO [FAULT_DEVICE]"; a change
  // switches the scenario at runtime (see FabricSim::SetScenario). Empty = none.
  std::string scenario_file;
  // rdma_fabric_sim only: serve a kubelet pod-resources API (gRPC) on this unix socket while
  // serving (sim_kubelet.h). Empty = none.
  std::string kubelet_socket;
};

struct SimState;  // the state of one run (model.h)

class FabricSim {
 public:
  explicit FabricSim(SimConfig config);
  ~FabricSim();
  FabricSim(const FabricSim&) = delete;
  FabricSim& operator=(const FabricSim&) = delete;

  // Removes root/sys if present, then writes the tick-0 tree and the fixture files under
  // root/fixtures (cleared first if an earlier run of the simulator created it).
  bool WriteInitialTree(std::string* error);
  // Advances one tick and rewrites changed files in place (pwrite + ftruncate on the
  // existing inode, so readers holding open fds see new values).
  bool Tick(std::string* error);
  // Number of Tick() calls so far.
  uint64_t ticks() const;
  // Switches to another scenario (and fault device, if not empty) from the next tick on: the
  // old fault is cleared first (link up, full width, PCIe trained, healthy RoCE configuration,
  // a vanished device back), counters keep their values, and the new scenario's ticks count
  // from the switch ("link-down" goes down 3 ticks later). On error nothing changes.
  bool SetScenario(const std::string& name, const std::string& fault_device, std::string* error);

  const SimConfig& config() const;
  // root + "/sys", the value to pass as --path.sysfs.
  std::string sysfs_root() const;
  // root + "/fixtures" (ethtool/<netdev>, dcb/<netdev>), the value to pass as --path.fixtures.
  std::string fixtures_root() const;
  // The device the scenario hits after WriteInitialTree() (RoCE-only scenarios replace an
  // InfiniBand fault device with the first RoCE PF); empty if none.
  std::string fault_device() const;

 private:
  std::unique_ptr<SimState> state_;
};

// Names accepted by SimConfig::scenario, in table order.
const std::vector<std::string>& ScenarioNames();

// Usage text for rdma_fabric_sim (printed by --help).
std::string SimUsage();

// Parses rdma_fabric_sim flags (argv[0] is skipped). *ticks is -1 when --ticks was not given
// (run forever). On failure returns false with a one-line message in *error. --help is not
// handled here (the caller checks for it first).
bool ParseSimArgs(int argc, char** argv, SimConfig* config, int* ticks, std::string* error);

}  // namespace rdma_fabric_sim
