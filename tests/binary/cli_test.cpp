// The operator subcommands as processes on the live demo fabric (rdma_fabric_sim), as an
// operator would run them: output, exit codes and wrong flags. Every process is stopped by PID.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <fstream>
#include <regex>
#include <thread>

#include "process.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

const std::string kExporter = RDMA_EXPORTER_BIN;
const std::string kSimulator = RDMA_FABRIC_SIM_BIN;

// The simulator with a scenario, plus what a real node has and the simulator does not write:
// the RDMA modules under sys/module and a /dev/infiniband with one uverbs node per device.
class Demo {
 public:
  explicit Demo(const std::string& scenario) {
    sim_ = std::make_unique<Process>(
        std::vector<std::string>{kSimulator, "--root", dir_.path(), "--interval", "200ms",
                                 "--scenario", scenario, "--fault-device", "mlx5_0"});
    for (int i = 0; i < 400 && sim_->stderr_text().find("serving") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    EXPECT_NE(sim_->stderr_text().find("serving"), std::string::npos) << sim_->stderr_text();
    for (const char* module :
         {"ib_core", "ib_uverbs", "rdma_ucm", "mlx5_core", "mlx5_ib", "ice", "irdma"})
      dir_.Write(std::string("sys/module/") + module + "/refcnt", "1\n");
    for (int i = 0; i < 11; ++i)  // 8 PFs, the VF, the RoCE LAG and the E810
      dir_.Write("dev/infiniband/uverbs" + std::to_string(i), "");
  }
  ~Demo() { EXPECT_EQ(sim_->Stop(), 0); }

  // Runs `rdma_exporter <args> --path.sysfs=... --path.fixtures=...`; returns the exit code.
  // `prefix` runs it under another command (prlimit, env, setpriv).
  int Run(std::vector<std::string> args, std::string* output,
          const std::vector<std::string>& prefix = {}) {
    args.insert(args.begin(), kExporter);
    args.insert(args.begin(), prefix.begin(), prefix.end());
    args.push_back("--path.sysfs=" + dir_.path() + "/sys");
    args.push_back("--path.fixtures=" + dir_.path() + "/fixtures");
    if (args[prefix.size() + 1] == "doctor") args.push_back("--path.dev=" + dir_.path() + "/dev");
    return RunCommand(args, output);
  }

 private:
  TempDir dir_;
  std::unique_ptr<Process> sim_;
};

std::string StatusOf(const std::string& out, const std::string& check) {
  std::smatch m;
  std::regex line("(^|\n)(PASS|SKIP|WARN|FAIL)  " + check + " ");
  return std::regex_search(out, m, line) ? m[2].str() : "";
}

TEST(BinaryCli, SubcommandsOnTheHealthyDemoFabric) {
  Demo demo("healthy");
  std::string out;
  ASSERT_EQ(demo.Run({"show-gids"}, &out), 0) << out;
  // RoCE PF mlx5_0: gids 0/1 fe80 v1/v2, 2/3 ::ffff:10.x.y.1 v1/v2 on ens1f0np0.
  EXPECT_TRUE(std::regex_search(
      out, std::regex("\nmlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a[0-9a-f]{2}:[0-9a-f]{2}01\t"
                      "10\\.[0-9]+\\.[0-9]+\\.1  \tv2\tens1f0np0\n")))
      << out;
  size_t rows = static_cast<size_t>(std::count(out.begin(), out.end(), '\n')) - 3;
  EXPECT_NE(out.find("\nn_gids_found=" + std::to_string(rows) + "\n"), std::string::npos) << out;

  ASSERT_EQ(demo.Run({"ibdev2netdev"}, &out), 0) << out;
  EXPECT_NE(out.find("mlx5_0 port 1 ==> ens1f0np0 (Up)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("mlx5_1 port 1 ==> ib0 (Up)\n"), std::string::npos) << out;
  ASSERT_EQ(demo.Run({"ibdev2netdev", "-v"}, &out), 0) << out;
  EXPECT_TRUE(
      std::regex_search(out, std::regex("mlx5_0 \\(MT4129 - MT_0000000838\\) fw "
                                        "28\\.39\\.1002 port 1 \\(ACTIVE\\) ==> ens1f0np0")))
      << out;

  // The simulator moves 1-5 GB/s per direction per port.
  ASSERT_EQ(demo.Run({"show-counters", "mlx5_0", "--interval=0.6"}, &out), 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex("\n    port_xmit_data +[0-9]+ +([0-9.]+) B/s \\([0-9.]+ Gb/s\\)\n")))
      << out;
  EXPECT_GT(std::stod(m[1]), 1e8);

  int code = demo.Run({"doctor", "--sample=0.5", "--nccl.ib-tc=106"}, &out);
  for (const char* check :
       {"kernel_modules", "uverbs_devices", "devices_present", "port_active", "port_rate_uniform",
        "pcie_link", "roce_v2_gid", "netdev_mtu", "pfc", "trust_dscp"}) {
    EXPECT_EQ(StatusOf(out, check), "PASS") << check << "\n" << out;
  }
  // ECN is checked on the mlx5 ports (MLNX_OFED files) and cannot be on the E810: SKIP, not PASS.
  EXPECT_TRUE(std::regex_search(
      out, std::regex("\nSKIP  ecn +rocep51s0f0/1 \\(ens10f0np0\\): not checked: [^;\n]*\n")))
      << out;
  EXPECT_EQ(StatusOf(out, "link_layer"), "WARN");  // the demo mixes InfiniBand and RoCE HCAs
  // memlock depends on who runs the test (root has CAP_IPC_LOCK); the exit code follows the lines.
  bool failed = std::regex_search(out, std::regex("(^|\n)FAIL  "));
  EXPECT_EQ(code, failed ? 1 : 0) << out;
  EXPECT_NE(out.find("\ndoctor: 16 checks, "), std::string::npos);

  ASSERT_EQ(demo.Run({"show-gids", "--json", "mlx5_0"}, &out), 0);
  EXPECT_NE(out.find("\"n_gids_found\":4}"), std::string::npos) << out;
}

// True when this process has CAP_IPC_LOCK in its effective set (root, usually).
bool HaveCapIpcLock() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) == 0)
      return ((std::stoull(line.substr(7), nullptr, 16) >> 14) & 1);
  }
  return false;
}

TEST(BinaryCli, DoctorMemlockAndNcclTcComeFromTheProcess) {
  // RLIMIT_MEMLOCK and CAP_IPC_LOCK are the process's, not sysfs's: set them for the child so
  // the result is the same for every user (setpriv drops CAP_IPC_LOCK when we run as root).
  Demo demo("healthy");
  std::vector<std::string> drop;
  if (HaveCapIpcLock()) drop = {"setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock"};
  auto under = [&](const std::string& memlock, const std::string& tc) {
    std::vector<std::string> prefix = drop;
    for (const std::string& s :
         {std::string("prlimit"), "--memlock=" + memlock, std::string("env"), "NCCL_IB_TC=" + tc})
      prefix.push_back(s);
    return prefix;
  };
  std::string out;
  EXPECT_EQ(demo.Run({"doctor", "--sample=0"}, &out, under("8388608:8388608", "106")), 1) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("\nFAIL  memlock +([^\n]*)"))) << out;
  EXPECT_EQ(m[1].str().rfind("RLIMIT_MEMLOCK: 8 MiB < 512 MiB: memory registration (ibv_reg_mr) "
                             "fails with ENOMEM, NCCL reports \"unhandled system error\"",
                             0),
            0u)
      << m[1];
  // NCCL_IB_TC=106 from the environment: DSCP 26, priority 3, where the demo has PFC.
  // 4 ConnectX PFs, the LAG's two slaves and the E810.
  EXPECT_NE(out.find("PASS  pfc                PFC on the NCCL priority only on all 7 RoCE PF "
                     "netdevs (LAG slaves) (NCCL_IB_TC=106 from the environment)\n"),
            std::string::npos)
      << out;
  // NCCL_IB_TC=128 (the deployment guide's value): priority 4, where PFC is off.
  EXPECT_EQ(demo.Run({"doctor", "--sample=0"}, &out, under("8388608:8388608", "128")), 1) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("\nFAIL  pfc +[^\n]*PFC off on NCCL priority 4")))
      << out;
  // With CAP_IPC_LOCK the limit does not apply (only checkable when we have it to keep).
  if (!drop.empty()) {
    EXPECT_EQ(demo.Run({"doctor", "--sample=0", "--nccl.ib-tc=106"}, &out,
                       {"prlimit", "--memlock=65536:65536"}),
              0)
        << out;
    EXPECT_NE(out.find("PASS  memlock            CAP_IPC_LOCK: the locked-memory limit (64 KiB) "
                       "does not apply\n"),
              std::string::npos)
        << out;
  }
  // Raising the limit needs CAP_SYS_RESOURCE unless the hard limit allows it; then an unlimited
  // limit passes.
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_max == RLIM_INFINITY) {
    EXPECT_EQ(demo.Run({"doctor", "--sample=0"}, &out, under("unlimited", "106")), 0) << out;
    EXPECT_NE(out.find("PASS  memlock            RLIMIT_MEMLOCK unlimited\n"), std::string::npos)
        << out;
  }
}

TEST(BinaryCli, DoctorFailsOnTheMisconfiguredDemo) {
  Demo demo("misconfig");
  std::string out;
  EXPECT_EQ(demo.Run({"doctor", "--sample=0", "--nccl.ib-tc=106", "--json"}, &out), 1);
  EXPECT_NE(out.find("{\"check\":\"trust_dscp\",\"status\":\"FAIL\""), std::string::npos) << out;
  EXPECT_NE(out.find("{\"check\":\"netdev_mtu\",\"status\":\"FAIL\""), std::string::npos);
  EXPECT_NE(out.find("{\"check\":\"roce_v2_gid\",\"status\":\"FAIL\""), std::string::npos);
}

TEST(BinaryCli, StatusGradesThePortsAsTheNodePageDoes) {
  {
    Demo demo("healthy");
    std::string out;
    ASSERT_EQ(demo.Run({"status", "--sample=0.5", "--nccl.ib-tc=106"}, &out), 0) << out;
    EXPECT_TRUE(std::regex_search(out, std::regex("^[^\n]+: ok, healthy: ready for NCCL traffic "
                                                  "\\(rates over 0\\.[0-9] s\\)\n")))
        << out;
    // One line per port: level, name, state, rate, traffic as a share of line rate.
    EXPECT_TRUE(std::regex_search(
        out, std::regex("\nOK   mlx5_0/1 \\(ens1f0np0\\) +ACTIVE/LinkUp +400 Gb/s 4X +tx +[0-9.]+% "
                        "rx +[0-9.]+%  pause tx +[0-9.]+% rx +[0-9.]+%\n")))
        << out;
    EXPECT_NE(out.find("\nchecks: "), std::string::npos) << out;
  }
  {
    // The fault device mlx5_0 goes down at tick 3 (200 ms ticks).
    Demo demo("link-down");
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    std::string out;
    EXPECT_EQ(demo.Run({"status", "--sample=0.3", "--json"}, &out), 1) << out;
    EXPECT_EQ(out.rfind("{\"node\":", 0), 0u) << out;
    EXPECT_NE(out.find("\"level\":\"critical\",\"sequence\":2,"), std::string::npos) << out;
    EXPECT_NE(out.find("{\"device\":\"mlx5_0\",\"port\":1,\"netdev\":\"ens1f0np0\","
                       "\"link_layer\":\"Ethernet\",\"level\":\"critical\",\"findings\":["
                       "\"DOWN/Disabled\""),
              std::string::npos)
        << out;
  }
}

TEST(BinaryCli, WrongFlagsExitTwoWithOneLine) {
  for (std::vector<std::string> args : {std::vector<std::string>{"doctor", "--bogus"},
                                        {"show-counters", "--interval=-1"},
                                        {"ibdev2netdev", "-x"},
                                        {"show-gids", "--path.sysfs"}}) {
    args.insert(args.begin(), kExporter);
    std::string output;
    EXPECT_EQ(RunCommand(args, &output), 2) << args[1];
    EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 1) << output;
    EXPECT_EQ(output.rfind("rdma_exporter: " + args[1] + ": ", 0), 0u) << output;
  }
  std::string output;
  EXPECT_EQ(RunCommand({kExporter, "show-gid"}, &output), 2);  // a typo of a command
  EXPECT_EQ(output,
            "rdma_exporter: unknown command \"show-gid\" (commands: show-gids, show-counters, "
            "ibdev2netdev, doctor, status; flags start with --; see --help)\n");
  for (const char* command : {"show-gids", "show-counters", "ibdev2netdev", "doctor"}) {
    EXPECT_EQ(RunCommand({kExporter, command, "--help"}, &output), 0) << command;
    EXPECT_EQ(output.rfind("usage: rdma_exporter " + std::string(command), 0), 0u) << output;
  }
  EXPECT_EQ(RunCommand({kExporter, "show-gids", "--path.sysfs=/nonexistent"}, &output), 0);
  EXPECT_EQ(output, std::string("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n") +
                        "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n" +
                        "n_gids_found=0\n");
  EXPECT_EQ(RunCommand({kExporter, "doctor", "--help"}, &output), 0);
}

}  // namespace
}  // namespace rdma_exporter::testing
