// doctor: golden output on the fixture trees, a healthy simulated RoCE node that passes, and each
// check failing on a node made to fail it (simulator scenarios or edited copies).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "cli_test_util.h"
#include "fabric_sim/fabric_sim.h"
#include "rdma_exporter/cli.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace rdma_exporter::testing {
namespace {

using rdma_fabric_sim::FabricSim;
using rdma_fabric_sim::SimConfig;

// What the doctor would learn from the process, fixed so the output does not depend on who runs
// the tests (root has CAP_IPC_LOCK; CI runners have various limits and kernels).
ProcessEnv Env(std::optional<uint64_t> memlock_bytes, bool cap_ipc_lock,
               std::optional<std::string> nccl_ib_tc = std::nullopt) {
  ProcessEnv env;
  env.memlock_bytes = memlock_bytes;
  env.cap_ipc_lock = cap_ipc_lock;
  env.kernel_release = "6.1.0-28-amd64";
  env.nccl_ib_tc = std::move(nccl_ib_tc);
  return env;
}
const ProcessEnv kUnlimited = Env(std::nullopt, false);

CliRun RunDoctor(const std::vector<std::string>& args, const ProcessEnv& env = kUnlimited) {
  std::vector<std::string> all = {"doctor"};
  all.insert(all.end(), args.begin(), args.end());
  CliOptions options;
  std::string error;
  CliRun run;
  if (!ParseCliArgs(all, &options, &error)) {
    run.err = error;
    return run;
  }
  std::ostringstream out, err;
  run.code = Doctor(options, env, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// The status word (PASS/SKIP/WARN/FAIL) of a check's line, "" if the check is missing.
std::string StatusOf(const std::string& out, const std::string& check) {
  std::smatch m;
  std::regex line("(^|\n)(PASS|SKIP|WARN|FAIL)  " + check + " +([^\n]*)");
  return std::regex_search(out, m, line) ? m[2].str() : "";
}
std::string ReasonOf(const std::string& out, const std::string& check) {
  std::smatch m;
  std::regex line("(^|\n)(PASS|SKIP|WARN|FAIL)  " + check + " +([^\n]*)");
  return std::regex_search(out, m, line) ? m[3].str() : "";
}

// Lines of a status (the summary line does not count).
size_t Lines(const std::string& out, const std::string& status) {
  std::regex line("(^|\n)" + status + "  ");
  auto it = std::sregex_iterator(out.begin(), out.end(), line);
  return static_cast<size_t>(std::distance(it, std::sregex_iterator()));
}

// A /dev with n uverbs nodes (plain files: opening them is what the check does).
class DevDir {
 public:
  explicit DevDir(int n) {
    for (int i = 0; i < n; ++i)
      dir_.Write("infiniband/uverbs" + std::to_string(i), "");
  }
  std::string flag() const { return "--path.dev=" + dir_.path(); }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
};

TEST(CliDoctor, Mlx5RoceFixtureGolden) {
  DevDir dev(3);
  CliRun run =
      RunDoctor({"--path.sysfs=" + FixturePath("mlx5-roce"), "--path.fixtures=" + FixturePath(""),
                 "--nccl.ib-tc=106", "--sample=0", dev.flag()});
  EXPECT_EQ(run.code, 1) << run.err;
  // Hand-checked against tests/fixtures/README.md and the dcb/ethtool captures:
  // mlx5_2's state file is garbage and phys_state Polling; its PCIe link is 8 GT/s x8 of 16 x16;
  // all three netdevs have MTU 1500; the VF and mlx5_2 have only zero GIDs; ens2f0np0 trusts
  // PCP; ens1f0np0 has PFC on 3 with the default DSCP map (TC 106 -> DSCP 26 -> priority 3);
  // its ethtool capture counts 3 storm warnings and 1 error; symbol_error and link_downed sit
  // at their all-ones values.
  EXPECT_EQ(StatusOf(run.out, "port_active"), "FAIL");
  EXPECT_EQ(ReasonOf(run.out, "port_active"),
            "mlx5_2/1 (ens2f0np0): state unreadable, phys_state Polling");
  EXPECT_EQ(ReasonOf(run.out, "pcie_link"),
            "mlx5_2 (0000:5e:00.0): PCIe 8 GT/s x8, capable of 16 GT/s x16 (downtrained: reseat "
            "or check the slot/riser)");
  EXPECT_EQ(StatusOf(run.out, "pfc"), "SKIP");  // only mlx5_2 (PCP trust) cannot be checked
  EXPECT_EQ(ReasonOf(run.out, "pfc"),
            "mlx5_2/1 (ens2f0np0): not checked: NCCL priority unknown (PCP trust, or no DSCP "
            "entry for DSCP 26); PFC on priorities 3");
  EXPECT_EQ(StatusOf(run.out, "trust_dscp"), "FAIL");
  EXPECT_EQ(StatusOf(run.out, "netdev_mtu"), "FAIL");
  EXPECT_NE(ReasonOf(run.out, "roce_v2_gid").find("mlx5_1/1 (ens1f0v0), mlx5_2/1 (ens2f0np0)"),
            std::string::npos);
  // mlx5_2's netdev has no ethtool capture: its pause storms are not checked, not passed.
  EXPECT_EQ(ReasonOf(run.out, "pfc_storm"),
            "mlx5_0/1 (ens1f0np0): 3 warning and 1 error pause-storm events since the driver "
            "loaded, not sampled (--sample=0); mlx5_2/1 (ens2f0np0): not checked: no per-priority "
            "PFC counters (ethtool) for this NIC");
  CliRun sampled =
      RunDoctor({"--path.sysfs=" + FixturePath("mlx5-roce"), "--path.fixtures=" + FixturePath(""),
                 "--nccl.ib-tc=106", "--sample=0.1", dev.flag()});
  EXPECT_EQ(ReasonOf(sampled.out, "pfc_storm"),
            "mlx5_0/1 (ens1f0np0): 3 warning and 1 error pause-storm events since the driver "
            "loaded, none during the sample; mlx5_2/1 (ens2f0np0): not checked: no per-priority "
            "PFC counters (ethtool) for this NIC");
  // Saturated error counters are blind spots (data counters are not reported here).
  EXPECT_EQ(ReasonOf(run.out, "error_counters"),
            "mlx5_0/1 (ens1f0np0): link_downed and symbol_error saturated (stuck at the all-ones "
            "value of their IBTA width, a rise cannot be seen until cleared: perfquery -R on "
            "InfiniBand)");
  // The fixture tree has no module/ directory: nothing can be said about modules.
  EXPECT_EQ(StatusOf(run.out, "kernel_modules"), "SKIP");
  EXPECT_EQ(ReasonOf(run.out, "uverbs_devices"), "uverbs0, uverbs1, uverbs2 present and openable");
  ExpectGolden("doctor-mlx5-roce.txt", run.out);
}

TEST(CliDoctor, Mlx5IbFixtureGolden) {
  DevDir dev(3);
  CliRun run = RunDoctor({"--path.sysfs=" + FixturePath("mlx5-ib"), "--sample=0", dev.flag()});
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(ReasonOf(run.out, "port_active"), "mlx5_2/12: state DOWN, phys_state Disabled");
  // The 11 multi-plane ports run 200 Gb/s 1X, the two CX-7 ports 400 Gb/s 4X: different HCA
  // types, so both groups are uniform.
  EXPECT_EQ(StatusOf(run.out, "port_rate_uniform"), "PASS");
  EXPECT_EQ(StatusOf(run.out, "roce_v2_gid"), "PASS");  // no RoCE ports
  ExpectGolden("doctor-mlx5-ib.txt", run.out);
}

TEST(CliDoctor, RxeCaptureGolden) {
  DevDir dev(2);
  CliRun run = RunDoctor({"--path.sysfs=" + RxeCaptureSysfs(), "--path.fixtures=" + FixturePath(""),
                          "--sample=0", dev.flag()});
  EXPECT_EQ(run.code, 1);
  // The capture has no module/ (SKIP: cannot tell); uverbs0/1 map to rxe0/rxe1 through
  // class/infiniband_verbs; eth0/eth1 have no DCB (dcb/eth0 = unsupported) and no ethtool
  // statistics, so the lossless checks are not checked; the GID tables were captured empty, so
  // no RoCE v2 GID; rxe has no firmware and no PCIe link.
  EXPECT_EQ(StatusOf(run.out, "kernel_modules"), "SKIP");
  EXPECT_EQ(ReasonOf(run.out, "uverbs_devices"),
            "uverbs0, uverbs1 present and openable (one per device)");
  EXPECT_EQ(ReasonOf(run.out, "pfc"),
            "rxe0/1 (eth0), rxe1/1 (eth1): not checked: the netdev has no DCB (not a "
            "lossless-capable NIC)");
  for (const char* check : {"pfc", "trust_dscp", "ecn", "pfc_storm"})
    EXPECT_EQ(StatusOf(run.out, check), "SKIP") << check;
  EXPECT_EQ(run.out.substr(run.out.rfind("doctor: ")),
            "doctor: 16 checks, 8 PASS, 7 SKIP, 0 WARN, 1 FAIL\n");
  EXPECT_EQ(StatusOf(run.out, "roce_v2_gid"), "FAIL");
  EXPECT_EQ(ReasonOf(run.out, "port_rate_uniform"), "rxe Ethernet: 2 ports at 2.5 Gb/s 1X");
  ExpectGolden("doctor-rxe-capture.txt", run.out);
}

TEST(CliDoctor, RxeCaptureWithItsLsmodNeedsRdmaRxeNotMlx5) {
  // sys/module as the capture's own lsmod (cmd/01-lsmod.txt) lists it.
  TempDir dir;
  fs::copy(RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::ifstream lsmod(RxeCaptureSysfs() + "/../../cmd/01-lsmod.txt");
  std::string line;
  int modules = 0;
  while (std::getline(lsmod, line)) {
    std::smatch m;
    if (std::regex_match(line, m, std::regex(R"(([a-z0-9_]+) +[0-9]+ +[0-9]+.*)"))) {
      dir.Write("module/" + m[1].str() + "/refcnt", "0\n");
      ++modules;
    }
  }
  ASSERT_EQ(modules, 21);
  DevDir dev(2);
  CliRun run = RunDoctor({"--path.sysfs=" + dir.path(), "--sample=0", dev.flag()});
  EXPECT_EQ(ReasonOf(run.out, "kernel_modules"), "ib_core, ib_uverbs, rdma_ucm, rdma_rxe loaded");
  EXPECT_EQ(ReasonOf(run.out, "driver_firmware"),
            "driver rdma_rxe in-tree (kernel 6.1.0-28-amd64); rxe0, rxe1: software device, no "
            "firmware");
  fs::remove_all(dir.path() + "/module/rdma_rxe");
  run = RunDoctor({"--path.sysfs=" + dir.path(), "--sample=0", dev.flag()});
  EXPECT_EQ(ReasonOf(run.out, "kernel_modules"),
            "rdma_rxe: not loaded: Soft-RoCE (modprobe rdma_rxe)");
  // A renamed Soft-RoCE device is still rxe (its `parent` attribute), not an mlx5 HCA.
  fs::rename(dir.path() + "/class/infiniband/rxe1", dir.path() + "/class/infiniband/roce_a");
  run = RunDoctor({"--path.sysfs=" + dir.path(), "--sample=0", dev.flag()});
  EXPECT_EQ(ReasonOf(run.out, "kernel_modules").find("mlx5"), std::string::npos) << run.out;
}

TEST(CliDoctor, JsonGoldenOnTheRoceFixture) {
  DevDir dev(3);
  CliRun run =
      RunDoctor({"--path.sysfs=" + FixturePath("mlx5-roce"), "--path.fixtures=" + FixturePath(""),
                 "--nccl.ib-tc=106", "--sample=0", "--json", dev.flag()});
  EXPECT_EQ(run.code, 1);
  ExpectGolden("doctor-mlx5-roce.json", run.out);
}

TEST(CliDoctor, JsonListsItemsAndCounts) {
  DevDir dev(3);
  CliRun run =
      RunDoctor({"--path.sysfs=" + FixturePath("mlx5-ib"), "--sample=0", "--json", dev.flag()});
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.out.find("{\"check\":\"port_active\",\"status\":\"FAIL\",\"reason\":\"mlx5_2/12: "
                         "state DOWN, phys_state Disabled\",\"items\":[{\"subject\":\"mlx5_0/1 "
                         "(ib0)\",\"status\":\"PASS\",\"reason\":\"ACTIVE/LinkUp\"}"),
            std::string::npos)
      << run.out;
  // No /sys/module in the fixture: kernel_modules and the driver version are not checked.
  EXPECT_TRUE(
      std::regex_search(run.out, std::regex("\"pass\":13,\"skip\":2,\"warn\":0,\"fail\":1}\n$")))
      << run.out;
}

// A simulated RoCE node (2 ConnectX-7 PFs) with the modules loaded and /dev/infiniband.
class SimNode {
 public:
  explicit SimNode(const std::string& scenario = "healthy",
                   SimConfig::LinkLayer link_layer = SimConfig::LinkLayer::Roce) {
    SimConfig config;
    config.root = dir_.path();
    config.devices = 2;
    config.vfs = 0;
    config.lag = 0;  // just the two ConnectX-7 PFs, without the demo's LAG and E810 NICs
    config.e810 = 0;
    config.link_layer = link_layer;
    config.scenario = scenario;
    config.fault_device = "mlx5_0";
    sim_ = std::make_unique<FabricSim>(config);
    std::string error;
    EXPECT_TRUE(sim_->WriteInitialTree(&error)) << error;
    for (const char* module : {"ib_core", "ib_uverbs", "rdma_ucm", "mlx5_core", "mlx5_ib"})
      dir_.Write(std::string("sys/module/") + module + "/refcnt", "1\n");
    dir_.Write("dev/infiniband/uverbs0", "");
    dir_.Write("dev/infiniband/uverbs1", "");
  }
  void Tick(int n) {
    std::string error;
    for (int i = 0; i < n; ++i)
      ASSERT_TRUE(sim_->Tick(&error)) << error;
  }
  // Ticks every 100 ms while the doctor samples for 0.5 s.
  CliRun RunSampled(std::vector<std::string> extra = {}) {
    std::thread ticker([&] {
      for (int i = 0; i < 6; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        Tick(1);
      }
    });
    extra.push_back("--sample=0.5");
    CliRun run = Run(extra);
    ticker.join();
    return run;
  }
  CliRun Run(std::vector<std::string> extra = {}, const ProcessEnv& env = kUnlimited) {
    std::vector<std::string> args = {"--path.sysfs=" + sim_->sysfs_root(),
                                     "--path.fixtures=" + sim_->fixtures_root(),
                                     "--path.dev=" + dir_.path() + "/dev", "--nccl.ib-tc=106"};
    bool sample = false;
    for (const auto& e : extra)
      sample = sample || e.rfind("--sample", 0) == 0;
    if (!sample) args.push_back("--sample=0");
    args.insert(args.end(), extra.begin(), extra.end());
    return RunDoctor(args, env);
  }
  const TempDir& dir() const { return dir_; }
  // The PF netdev of mlx5_0 port 1 in the simulator's layout.
  std::string netdev_dir() const { return "sys/class/net/ens1f0np0/"; }

 private:
  TempDir dir_;
  std::unique_ptr<FabricSim> sim_;
};

TEST(CliDoctor, HealthySimulatedRoceNodePassesEveryCheck) {
  SimNode node;
  CliRun run = node.Run();
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_EQ(Lines(run.out, "FAIL"), 0u) << run.out;
  EXPECT_EQ(Lines(run.out, "WARN"), 0u) << run.out;
  EXPECT_EQ(Lines(run.out, "PASS"), 16u) << run.out;
  EXPECT_EQ(ReasonOf(run.out, "pfc"), "PFC on the NCCL priority only on all 2 RoCE PF ports");
  EXPECT_EQ(ReasonOf(run.out, "port_rate_uniform"), "MT4129 Ethernet: 2 ports at 400 Gb/s 4X");
  EXPECT_NE(run.out.find("doctor: 16 checks, 16 PASS, 0 SKIP, 0 WARN, 0 FAIL\n"),
            std::string::npos);
}

TEST(CliDoctor, MissingKernelModuleFails) {
  SimNode node;
  fs::remove_all(node.dir().path() + "/sys/module/mlx5_ib");
  fs::remove_all(node.dir().path() + "/sys/module/rdma_ucm");
  CliRun run = node.Run();
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(ReasonOf(run.out, "kernel_modules"),
            "mlx5_ib: not loaded: RDMA on ConnectX (modprobe mlx5_ib); rdma_ucm: not loaded: "
            "librdmacm for perftest -R, UCX, rping (modprobe rdma_ucm)");
}

TEST(CliDoctor, FirmwareMismatchWithinOneHcaTypeWarns) {
  SimNode node;
  node.dir().Write("sys/class/infiniband/mlx5_1/fw_ver", "28.36.1010\n");
  CliRun run = node.Run();
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(StatusOf(run.out, "driver_firmware"), "WARN");
  EXPECT_NE(ReasonOf(run.out, "driver_firmware")
                .find("different firmware on one HCA type: 28.36.1010 on mlx5_1, 28.39.1002 on "
                      "mlx5_0"),
            std::string::npos);
}

TEST(CliDoctor, MissingOrUnopenableUverbsFails) {
  SimNode node;
  fs::remove(node.dir().path() + "/dev/infiniband/uverbs1");
  fs::create_directory(node.dir().path() + "/dev/infiniband/uverbs1");  // open(O_RDWR): EISDIR
  CliRun run = node.Run();
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(ReasonOf(run.out, "uverbs_devices").find("uverbs1: cannot open: Is a directory"),
            std::string::npos);
  fs::remove_all(node.dir().path() + "/dev/infiniband");
  run = node.Run();
  EXPECT_NE(
      ReasonOf(run.out, "uverbs_devices").find("No such file or directory (a container needs"),
      std::string::npos);
}

TEST(CliDoctor, MemlockLimitBelow512MiBFailsAboveWarnsCapIpcLockPasses) {
  SimNode node;
  CliRun low = node.Run({}, Env(uint64_t{8} << 20, false));
  EXPECT_EQ(low.code, 1);
  EXPECT_EQ(StatusOf(low.out, "memlock"), "FAIL");
  EXPECT_NE(ReasonOf(low.out, "memlock").find("8 MiB < 512 MiB"), std::string::npos);
  EXPECT_NE(ReasonOf(low.out, "memlock").find("unhandled system error"), std::string::npos);
  CliRun high = node.Run({}, Env(uint64_t{1} << 30, false));
  EXPECT_EQ(StatusOf(high.out, "memlock"), "WARN");
  EXPECT_EQ(high.code, 0);
  CliRun cap = node.Run({}, Env(uint64_t{64} << 10, true));
  EXPECT_EQ(ReasonOf(cap.out, "memlock"),
            "CAP_IPC_LOCK: the locked-memory limit (64 KiB) does not apply");
}

TEST(CliDoctor, NoDevicesFails) {
  SimNode node;
  auto start = std::chrono::steady_clock::now();
  CliRun run = node.Run({"--device-include=nomatch", "--sample=2"});
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(StatusOf(run.out, "devices_present"), "FAIL");
  EXPECT_TRUE(std::regex_search(ReasonOf(run.out, "devices_present"),
                                std::regex(": no RDMA devices \\(after the device filters\\)$")))
      << run.out;
  // Nothing to look at: the port checks say so, and there is no sample to wait for.
  EXPECT_EQ(ReasonOf(run.out, "port_active"), "no ports");
  EXPECT_EQ(ReasonOf(run.out, "error_counters"), "no devices");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(CliDoctor, LinkDownFailsPortActive) {
  SimNode node("link-down");
  node.Tick(3);
  CliRun run = node.Run();
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(ReasonOf(run.out, "port_active"),
            "mlx5_0/1 (ens1f0np0): state DOWN, phys_state Disabled");
}

TEST(CliDoctor, MixedLinkLayersWarn) {
  SimNode node("healthy", SimConfig::LinkLayer::Mixed);
  CliRun run = node.Run();
  EXPECT_EQ(StatusOf(run.out, "link_layer"), "WARN");
  EXPECT_NE(ReasonOf(run.out, "link_layer").find("InfiniBand and RoCE ports mixed"),
            std::string::npos);
}

TEST(CliDoctor, DowngradedPortFailsRateUniformity) {
  SimNode node("downgrade");
  node.Tick(3);
  CliRun run = node.Run();
  EXPECT_EQ(ReasonOf(run.out, "port_rate_uniform"),
            "mlx5_0/1: 200 Gb/s 2X, the other MT4129 Ethernet ports run 400 Gb/s 4X");
  EXPECT_EQ(run.code, 1);
}

TEST(CliDoctor, DowntrainedPcieFails) {
  SimNode node("pcie-downtrain");
  node.Tick(3);
  CliRun run = node.Run();
  EXPECT_EQ(StatusOf(run.out, "pcie_link"), "FAIL");
  EXPECT_NE(ReasonOf(run.out, "pcie_link").find("PCIe 16 GT/s x8, capable of 32 GT/s x16"),
            std::string::npos);
}

// A Gen5 x16 card in a Gen4 x16 slot trains to Gen4 at best: expected = min(card, slot) (the
// bridge above the card, rdma_pcie_upstream_max_*). At Gen4 it passes with a note; below, it
// fails against the slot's maximum. mlx5_2's own downtrain is repaired so only mlx5_0 counts.
TEST(CliDoctor, PcieCardFasterThanItsSlotIsComparedWithTheSlot) {
  TempDir tree;
  fs::copy(FixturePath("mlx5-roce"), tree.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::string card = "devices/pci0000:00/0000:00:02.0/0000:3b:00.0/";
  std::string other = "devices/pci0000:00/0000:00:02.0/0000:5e:00.0/";
  tree.Write(card + "max_link_speed", "32.0 GT/s PCIe\n");
  tree.Write(other + "current_link_speed", "16.0 GT/s PCIe\n");
  tree.Write(other + "current_link_width", "16\n");
  DevDir dev(3);
  std::vector<std::string> args = {"--path.sysfs=" + tree.path(),
                                   "--path.fixtures=" + FixturePath(""), "--sample=0", dev.flag()};
  CliRun run = RunDoctor(args);
  EXPECT_EQ(StatusOf(run.out, "pcie_link"), "PASS") << run.out;
  EXPECT_EQ(ReasonOf(run.out, "pcie_link"),
            "at max: mlx5_0 16 GT/s x16 (slot max, card 32 GT/s x16), mlx5_2 16 GT/s x16");

  tree.Write(card + "current_link_speed", "8.0 GT/s PCIe\n");
  run = RunDoctor(args);
  EXPECT_EQ(StatusOf(run.out, "pcie_link"), "FAIL") << run.out;
  EXPECT_EQ(ReasonOf(run.out, "pcie_link"),
            "mlx5_0 (0000:3b:00.0): PCIe 8 GT/s x16, capable of 16 GT/s x16 (card 32 GT/s x16 in "
            "a slower slot) (downtrained: reseat or check the slot/riser)");
}

TEST(CliDoctor, MissingRoceV2GidFails) {
  SimNode node("no-rocev2-gid");
  CliRun run = node.Run();
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(
      ReasonOf(run.out, "roce_v2_gid").rfind("mlx5_0/1 (ens1f0np0): no routable RoCE v2 GID", 0),
      0u);
}

TEST(CliDoctor, SmallMtuFails) {
  SimNode node("mtu");
  CliRun run = node.Run();
  EXPECT_EQ(ReasonOf(run.out, "netdev_mtu"),
            "mlx5_0/1 (ens1f0np0): MTU 1500 < 4200: the RoCE path MTU cannot reach 4096; fix: ip "
            "link set dev <netdev> mtu 4200 (and the switch ports)");
  // --roce.min-mtu raises the bar for the healthy port too (9000 < 9100).
  CliRun strict = node.Run({"--roce.min-mtu=9100"});
  EXPECT_NE(ReasonOf(strict.out, "netdev_mtu").find("mlx5_1/1 (ens2f0np0): MTU 9000 < 9100"),
            std::string::npos);
}

TEST(CliDoctor, PfcOffFailsAndPfcOnOtherPrioritiesWarns) {
  SimNode off("pfc-off");
  CliRun run = off.Run();
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(ReasonOf(run.out, "pfc").find("PFC off on NCCL priority 3 (PFC on: none)"),
            std::string::npos);
  SimNode extra;
  std::string dcb = extra.dir().path() + "/fixtures/dcb/ens1f0np0";
  std::ifstream in(dcb);
  std::stringstream text;
  text << in.rdbuf();
  std::string edited = std::regex_replace(text.str(), std::regex("0:off"), "0:on");
  extra.dir().Write("fixtures/dcb/ens1f0np0", edited);
  run = extra.Run();
  EXPECT_EQ(ReasonOf(run.out, "pfc"),
            "mlx5_0/1 (ens1f0np0): PFC on priorities 0,3, not only on NCCL priority 3 (pauses "
            "spread to the other traffic); fix: dcb pfc set dev <netdev> prio-pfc all:off 3:on, "
            "or mlnx_qos -i <netdev> --pfc 0,0,0,1,0,0,0,0; and the same on the switch");
  EXPECT_EQ(run.code, 0);
  // Without --nccl.ib-tc the priority is unknown: a warning that says so.
  CliOptions options;
  std::string error;
  ASSERT_TRUE(ParseCliArgs({"doctor", "--path.sysfs=" + extra.dir().path() + "/sys",
                            "--path.fixtures=" + extra.dir().path() + "/fixtures", "--sample=0"},
                           &options, &error));
  std::ostringstream out, err;
  Doctor(options, kUnlimited, out, err);
  EXPECT_NE(ReasonOf(out.str(), "pfc").find("give --nccl.ib-tc"), std::string::npos);
}

TEST(CliDoctor, PcpTrustFailsTrustDscp) {
  SimNode node("misconfig");
  CliRun run = node.Run();
  EXPECT_EQ(StatusOf(run.out, "trust_dscp"), "FAIL");
  EXPECT_EQ(ReasonOf(run.out, "trust_dscp"),
            "mlx5_0/1 (ens1f0np0): trust pcp: the DSCP of NCCL_IB_TC does not select the "
            "priority; fix: mlnx_qos -i <netdev> --trust dscp, or dcb app add dev <netdev> "
            "dscp-prio 26:<priority> (a DSCP entry switches mlx5 to DSCP trust)");
}

TEST(CliDoctor, EcnOffOnTheNcclPriorityFails) {
  SimNode node;
  node.dir().Write(node.netdev_dir() + "ecn/roce_np/enable/3", "0\n");
  CliRun run = node.Run();
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(ReasonOf(run.out, "ecn"),
            "mlx5_0/1 (ens1f0np0): ECN np off on NCCL priority 3: no DCQCN congestion control, "
            "PFC pauses instead; fix: echo 1 > /sys/class/net/<netdev>/ecn/roce_np/enable/3");
}

TEST(CliDoctor, PfcStormDuringTheSampleFails) {
  SimNode node("pfc-storm");
  node.Tick(4);  // storm warning events from tick 2, errors from tick 4
  CliRun before = node.Run();
  EXPECT_EQ(StatusOf(before.out, "pfc_storm"), "WARN") << before.out;
  CliRun run = node.RunSampled();
  EXPECT_EQ(run.code, 1);
  // One item for the port: the watchdog events of the window and the share of it priority 3
  // was paused (50-80 % of each simulated second; ticks of 1 s every 100 ms make it more, capped
  // at 100 %). mlx5_1 (healthy) passes.
  std::string reason = ReasonOf(run.out, "pfc_storm");
  EXPECT_TRUE(std::regex_match(
      reason, std::regex("mlx5_0/1 \\(ens1f0np0\\): [0-9]+ warning( and [0-9]+ error)? "
                         "pause-storm events in the last 0\\.[5-9] s, (priority 3 rx paused "
                         "[0-9]+%, )?priority 3 tx paused [0-9]+% of it")))
      << reason;
  CliRun json = node.Run({"--json"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(json.out, m, std::regex("\\{\"check\":\"pfc_storm\".*")));
  std::string line = m[0];
  EXPECT_NE(line.find("{\"subject\":\"mlx5_1/1 (ens2f0np0)\",\"status\":\"PASS\""),
            std::string::npos)
      << line;
  // Each port is one item.
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = line.find(needle); at != std::string::npos; at = line.find(needle, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("\"subject\":\"mlx5_0/1 (ens1f0np0)\""), 1u) << line;
  EXPECT_EQ(count("\"subject\":"), 2u) << line;
}

// tests/fixtures (dcb, verbs, rdma) with `capture` as the ethtool statistics of ens1f0np0, the
// PF netdev of the mlx5-roce tree: that port's NIC as another driver sees it.
class FixturesWithCapture {
 public:
  explicit FixturesWithCapture(const std::string& capture) {
    for (const char* sub : {"dcb", "verbs", "rdma"}) {
      fs::copy(FixturePath(sub), dir_.path() + "/" + sub, fs::copy_options::recursive);
    }
    Replace(capture);
  }
  // Written whole then renamed, so a collection never reads half a file.
  void Replace(const std::string& capture) const {
    dir_.Write("ethtool/ens1f0np0.new", capture);
    fs::rename(dir_.path() + "/ethtool/ens1f0np0.new", dir_.path() + "/ethtool/ens1f0np0");
  }
  std::string flag() const { return "--path.fixtures=" + dir_.path(); }

 private:
  TempDir dir_;
};

std::string ReadFixture(const std::string& relative) {
  std::ifstream in(FixturePath(relative));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(CliDoctor, E810PauseStormsAreJudgedByItsPauseFrames) {
  // ice counts PFC XON/XOFF frames per priority but no pause time and no storm watchdog.
  const std::string ice = ReadFixture("ethtool/ens5f0");
  FixturesWithCapture fixtures(ice);
  DevDir dev(3);
  std::vector<std::string> args = {"--path.sysfs=" + FixturePath("mlx5-roce"), fixtures.flag(),
                                   "--nccl.ib-tc=106", dev.flag()};
  auto with = [&](const std::string& extra) {
    auto all = args;
    all.push_back(extra);
    return all;
  };
  // Not sampled: nothing to judge the frames by, so not checked (never PASS).
  CliRun once = RunDoctor(with("--sample=0"));
  EXPECT_EQ(StatusOf(once.out, "pfc_storm"), "SKIP") << once.out;
  EXPECT_EQ(ReasonOf(once.out, "pfc_storm"),
            "mlx5_0/1 (ens1f0np0): not checked: no pause-storm watchdog on this NIC; give "
            "--sample to watch its PFC pause frames; mlx5_2/1 (ens2f0np0): not checked: no "
            "per-priority PFC counters (ethtool) for this NIC");
  EXPECT_EQ(once.code, 1);  // other checks fail on this tree; SKIP itself never does
  // Sampled, no frame counted during the window: the ice port passes.
  CliRun quiet = RunDoctor(with("--sample=0.2"));
  CliRun quiet_json = RunDoctor({args[0], args[1], args[2], args[3], "--sample=0.2", "--json"});
  EXPECT_TRUE(std::regex_search(
      quiet_json.out,
      std::regex("\\{\"subject\":\"mlx5_0/1 \\(ens1f0np0\\)\",\"status\":\"PASS\",\"reason\":"
                 "\"no PFC pause frames in the last 0\\.[1-9] s\"\\}")))
      << quiet_json.out;
  EXPECT_EQ(StatusOf(quiet.out, "pfc_storm"), "SKIP");  // mlx5_2 still not checked
  // Frames counted during the window, XON + XOFF of priority 3: +80 (congestion, below a storm's
  // rate: PASS), then +5000 (at a storm's rate: WARN).
  auto sampled_with = [&](int xoff, int xon, bool json) {
    std::string more = std::regex_replace(ice, std::regex("rx_priority_3_xoff\\.nic: 3400"),
                                          "rx_priority_3_xoff.nic: " + std::to_string(xoff));
    more = std::regex_replace(more, std::regex("rx_priority_3_xon\\.nic: 1200"),
                              "rx_priority_3_xon.nic: " + std::to_string(xon));
    EXPECT_NE(more, ice);
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      fixtures.Replace(more);
    });
    auto flags = with("--sample=1.2");
    if (json) flags.push_back("--json");
    CliRun run = RunDoctor(flags);
    writer.join();
    fixtures.Replace(ice);
    return run;
  };
  CliRun slow = sampled_with(3450, 1230, true);
  EXPECT_TRUE(std::regex_search(
      slow.out,
      std::regex("\\{\"subject\":\"mlx5_0/1 \\(ens1f0np0\\)\",\"status\":\"PASS\",\"reason\":"
                 "\"priority 3 rx \\+80 PFC pause frames in the last [0-9.]+ s, below the 500/s "
                 "of a storm\"\\}")))
      << slow.out;
  CliRun busy = sampled_with(6400, 3200, false);
  EXPECT_EQ(StatusOf(busy.out, "pfc_storm"), "WARN") << busy.out;
  EXPECT_TRUE(std::regex_search(
      ReasonOf(busy.out, "pfc_storm"),
      std::regex("^mlx5_0/1 \\(ens1f0np0\\): priority 3 rx \\+5000 PFC pause frames in the "
                 "last [0-9.]+ s: at a pause storm's rate")))
      << busy.out;
  EXPECT_EQ(busy.code, 1);
}

TEST(CliDoctor, NicWithoutPerPriorityCountersIsNotCheckedNotPassed) {
  // An Ethernet NIC whose statistics have no per-priority PFC counter at all.
  FixturesWithCapture fixtures("NIC statistics:\n     rx_packets: 10\n     tx_packets: 12\n");
  DevDir dev(3);
  CliRun run = RunDoctor({"--path.sysfs=" + FixturePath("mlx5-roce"), fixtures.flag(),
                          "--nccl.ib-tc=106", "--sample=0.1", dev.flag()});
  EXPECT_EQ(StatusOf(run.out, "pfc_storm"), "SKIP") << run.out;
  EXPECT_EQ(ReasonOf(run.out, "pfc_storm"),
            "mlx5_0/1 (ens1f0np0), mlx5_2/1 (ens2f0np0): not checked: no per-priority PFC "
            "counters (ethtool) for this NIC");
  EXPECT_NE(run.out.find(" SKIP, "), std::string::npos);
  CliRun json = RunDoctor({"--path.sysfs=" + FixturePath("mlx5-roce"), fixtures.flag(),
                           "--nccl.ib-tc=106", "--sample=0", "--json", dev.flag()});
  EXPECT_NE(json.out.find("{\"check\":\"pfc_storm\",\"status\":\"SKIP\""), std::string::npos)
      << json.out;
  EXPECT_TRUE(std::regex_search(json.out, std::regex(",\"skip\":[1-9][0-9]*,\"warn\":")))
      << json.out;
}

TEST(CliDoctor, NcclIbTcFromTheEnvironmentWhenTheFlagIsMissing) {
  SimNode node;
  CliOptions options;
  std::string error;
  ASSERT_TRUE(ParseCliArgs({"doctor", "--path.sysfs=" + node.dir().path() + "/sys",
                            "--path.fixtures=" + node.dir().path() + "/fixtures",
                            "--path.dev=" + node.dir().path() + "/dev", "--sample=0"},
                           &options, &error));
  std::ostringstream out, err;
  EXPECT_EQ(Doctor(options, Env(std::nullopt, false, "106"), out, err), 0) << out.str();
  EXPECT_EQ(ReasonOf(out.str(), "pfc"),
            "PFC on the NCCL priority only on all 2 RoCE PF ports (NCCL_IB_TC=106 from the "
            "environment)");
  // NCCL_IB_TC=128 (the deployment guide's) is DSCP 32, priority 4: PFC is on 3 only.
  std::ostringstream out128;
  EXPECT_EQ(Doctor(options, Env(std::nullopt, false, "128"), out128, err), 1);
  EXPECT_EQ(ReasonOf(out128.str(), "pfc")
                .rfind("mlx5_0/1 (ens1f0np0), mlx5_1/1 (ens2f0np0): PFC "
                       "off on NCCL priority 4 (PFC on: 3)",
                       0),
            0u)
      << out128.str();
  EXPECT_NE(ReasonOf(out128.str(), "pfc")
                .find("prio-pfc all:off 4:on, or mlnx_qos -i <netdev> "
                      "--pfc 0,0,0,0,1,0,0,0"),
            std::string::npos);
  // A bad value is reported, not silently ignored; the flag wins over the environment.
  std::ostringstream bad;
  Doctor(options, Env(std::nullopt, false, "high"), bad, err);
  EXPECT_NE(ReasonOf(bad.str(), "pfc").find("NCCL_IB_TC=\"high\" of the environment is not 0..255"),
            std::string::npos)
      << bad.str();
  options.collector_options.nccl_ib_tc = 106;
  std::ostringstream flag;
  EXPECT_EQ(Doctor(options, Env(std::nullopt, false, "128"), flag, err), 0);
  EXPECT_EQ(ReasonOf(flag.str(), "pfc"), "PFC on the NCCL priority only on all 2 RoCE PF ports");
}

// Every regular file of the tree replaced by `content` (or by a directory: reads fail EISDIR).
void Corrupt(const std::string& root, const std::optional<std::string>& content) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_symlink() && entry.is_regular_file()) files.push_back(entry.path());
  }
  for (const auto& f : files) {
    fs::remove(f);
    if (content) {
      std::ofstream(f) << *content;
    } else {
      fs::create_directory(f);
    }
  }
}

TEST(CliDoctor, MalformedOrUnreadableFilesGiveReasonsNotCrashes) {
  const std::vector<std::pair<std::string, std::optional<std::string>>> cases = {
      {"garbage", std::string("garbage \xff\x01 -1 99999999999999999999999\n")},
      {"empty", std::string()},
      {"directories", std::nullopt},
  };
  for (const auto& [what, content] : cases) {
    SimNode node;
    node.Tick(1);
    Corrupt(node.dir().path() + "/sys", content);
    Corrupt(node.dir().path() + "/fixtures", content);
    CliRun run = node.Run();
    EXPECT_EQ(run.code, 1) << what << "\n" << run.out;
    EXPECT_EQ(run.err, "") << what;
    // Every check still reports, with a reason.
    EXPECT_EQ(Lines(run.out, "PASS") + Lines(run.out, "SKIP") + Lines(run.out, "WARN") +
                  Lines(run.out, "FAIL"),
              16u)
        << what << "\n"
        << run.out;
    EXPECT_NE(run.out.find("\ndoctor: 16 checks, "), std::string::npos) << what;
    // The ports are still found (the tree's layout is intact), but nothing on them reads.
    EXPECT_TRUE(std::regex_match(ReasonOf(run.out, "port_active"),
                                 std::regex("mlx5_0/1.*, mlx5_1/1.*: state unreadable, "
                                            "phys_state unreadable")))
        << what << "\n"
        << run.out;
    EXPECT_EQ(StatusOf(run.out, "devices_present"), "PASS") << what;
    // What cannot be read is not passed: link layer and firmware are warnings, the PCIe link
    // is not checked, and the RoCE checks cannot tell whether the ports are RoCE.
    for (const char* check : {"driver_firmware", "link_layer", "roce_v2_gid", "netdev_mtu", "pfc",
                              "trust_dscp", "ecn"}) {
      EXPECT_EQ(StatusOf(run.out, check), "WARN") << what << " " << check << "\n" << run.out;
    }
    EXPECT_EQ(StatusOf(run.out, "pcie_link"), "SKIP") << what << "\n" << run.out;
    EXPECT_NE(ReasonOf(run.out, "pcie_link").find("not checked: PCIe link speed/width unreadable"),
              std::string::npos)
        << what;
    // JSON too.
    CliRun json = node.Run({"--json"});
    EXPECT_NE(json.out.find("\"fail\":"), std::string::npos) << what;
  }
}

// The mlx5-ib fixture with mlx5_0 port 1's state and phys_state files replaced.
CliRun RunDoctorWithPortStates(const std::string& state, const std::string& phys_state) {
  TempDir dir;
  fs::copy(FixturePath("mlx5-ib"), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  dir.Write("class/infiniband/mlx5_0/ports/1/state", state);
  dir.Write("class/infiniband/mlx5_0/ports/1/phys_state", phys_state);
  DevDir dev(3);
  return RunDoctor({"--path.sysfs=" + dir.path(), "--sample=0", dev.flag()});
}

TEST(CliDoctor, OutOfRangePortStatesAreUnknown) {
  struct Case {
    std::string state, phys_state, reason;
  };
  const std::vector<Case> cases = {
      // The port collector reads "<n>: <name>" as an unsigned number, so 4294967295 reaches the
      // doctor as a sample value no int holds (converting it to int is undefined behaviour): the
      // shared range-checked table names it UNKNOWN, as it does values just past either table.
      {"4294967295: X\n", "4294967295: X\n", "state UNKNOWN, phys_state UNKNOWN"},
      {"6: X\n", "0: X\n", "state UNKNOWN, phys_state UNKNOWN"},
      {"5: X\n", "8: X\n", "state ACTIVE_DEFER, phys_state UNKNOWN"},
      // Larger than 32 bits or negative: the collector rejects the file as malformed, so the
      // doctor has no sample and says the state is unreadable.
      {"99999999999999999999: X\n", "-1: X\n", "state unreadable, phys_state unreadable"},
      {"4294967296: X\n", "-4294967295: X\n", "state unreadable, phys_state unreadable"},
  };
  for (const auto& c : cases) {
    CliRun run = RunDoctorWithPortStates(c.state, c.phys_state);
    EXPECT_EQ(run.code, 1) << c.state;
    EXPECT_EQ(run.err, "") << c.state;
    // mlx5_0/1 first, then the fixture's own down port (mlx5_2/12).
    EXPECT_EQ(ReasonOf(run.out, "port_active").rfind("mlx5_0/1 (ib0): " + c.reason + "; ", 0), 0u)
        << c.state << c.phys_state << run.out;
  }
}

TEST(CliDoctor, ConnectXOnThePciBusWithoutAnRdmaDeviceFails) {
  // mlx5_ib unloaded for mlx5_1's function: the PCI function stays, its infiniband/ goes.
  SimNode node;
  std::string link = node.dir().path() + "/sys/class/infiniband/mlx5_1";
  fs::path device = fs::canonical(link);
  std::string bdf = device.parent_path().parent_path().filename();
  fs::remove_all(device.parent_path());  // <pci>/infiniband
  fs::remove(link);
  CliRun run = node.Run();
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(ReasonOf(run.out, "devices_present"),
            bdf +
                ": Mellanox network function without an RDMA device (mlx5_core bound): mlx5_ib "
                "not loaded, or RDMA disabled on it")
      << run.out;
  // With device filters the operator scoped the check to named devices.
  run = node.Run({"--device-include=mlx5_0"});
  EXPECT_EQ(StatusOf(run.out, "devices_present"), "PASS") << run.out;
}

TEST(CliDoctor, UnreadablePortsDirectoryFailsDevicesPresent) {
  SimNode node;
  std::string ports = node.dir().path() + "/sys/class/infiniband/mlx5_1/ports";
  fs::remove_all(fs::canonical(ports));
  node.dir().Write("sys/class/infiniband/mlx5_1/ports", "not a directory\n");
  CliRun run = node.Run();
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(ReasonOf(run.out, "devices_present"),
            "mlx5_1: no ports; /sys/class/infiniband/mlx5_1/ports: unreadable: Not a directory")
      << run.out;
}

TEST(CliDoctor, RisingErrorCountersWarnAndALinkFlapFails) {
  SimNode errors("symbol-errors");
  CliRun run = errors.RunSampled();
  EXPECT_EQ(StatusOf(run.out, "error_counters"), "WARN") << run.out;
  EXPECT_NE(ReasonOf(run.out, "error_counters").find("mlx5_0/1 (ens1f0np0): symbol_errors +"),
            std::string::npos);
  SimNode flap("flap");
  run = flap.RunSampled();
  EXPECT_EQ(StatusOf(run.out, "error_counters"), "FAIL") << run.out;
  EXPECT_NE(ReasonOf(run.out, "error_counters").find("netdev_carrier_down"), std::string::npos);
}

}  // namespace
}  // namespace rdma_exporter::testing
