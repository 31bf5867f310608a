// The CLI on the RoCE LAG fixture tree (tests/fixtures/mlx5-lag: mlx5_bond_0 port 1 on bond0,
// slaves ens1f0np0 and ens1f1np1): doctor checks QoS and pause storms per slave and names the
// slave; ibdev2netdev shows the bond, as Mellanox's script does.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cli_test_util.h"
#include "rdma_exporter/cli.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

ProcessEnv FixedEnv() {
  ProcessEnv env;
  env.memlock_bytes = std::nullopt;  // unlimited
  env.cap_ipc_lock = false;
  env.kernel_release = "6.1.0-28-amd64";
  return env;
}

CliRun RunLagDoctor(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"doctor", "--path.sysfs=" + FixturePath("mlx5-lag"),
                                   "--path.fixtures=" + FixturePath("mlx5-lag"),
                                   "--nccl.ib-tc=106"};
  args.insert(args.end(), extra.begin(), extra.end());
  CliOptions options;
  std::string error;
  CliRun run;
  if (!ParseCliArgs(args, &options, &error)) {
    run.err = error;
    return run;
  }
  std::ostringstream out, err;
  run.code = Doctor(options, FixedEnv(), out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// "<STATUS>  <check>  <reason>" of a check's line: {status, reason}.
std::pair<std::string, std::string> LineOf(const std::string& out, const std::string& check) {
  std::smatch m;
  std::regex line("(^|\n)(PASS|WARN|FAIL|SKIP)  " + check + " +([^\n]*)");
  if (!std::regex_search(out, m, line)) return {"", ""};
  return {m[2].str(), m[3].str()};
}

// The JSON object of one check: the report prints one per line.
std::string CheckObject(const std::string& json, const std::string& check) {
  size_t start = json.find("{\"check\":\"" + check + "\"");
  if (start == std::string::npos) return "";
  return json.substr(start, json.find('\n', start) - start);
}

TEST(CliLagDoctor, QosAndPauseStormItemsNameTheSlave) {
  TempDir dev;
  dev.Write("infiniband/uverbs0", "");
  CliRun run = RunLagDoctor({"--sample=0", "--path.dev=" + dev.path()});
  EXPECT_EQ(run.code, 1) << run.err;  // ecn FAILs
  // The bond has no DCB (dcb/bond0 = unsupported); its slaves have: never "not lossless".
  EXPECT_EQ(run.out.find("not a lossless-capable NIC"), std::string::npos) << run.out;
  // ens1f1np1 has PFC on 3 and 4, ens1f0np0 on 3 only (tests/fixtures/README.md, mlx5-lag).
  EXPECT_EQ(LineOf(run.out, "pfc"),
            (std::pair<std::string, std::string>{
                "WARN",
                "mlx5_bond_0/1 (bond0: ens1f1np1): PFC on priorities 3,4, not only on NCCL "
                "priority 3 (pauses spread to the other traffic); fix: dcb pfc set dev <netdev> "
                "prio-pfc all:off 3:on, or mlnx_qos -i <netdev> --pfc 0,0,0,1,0,0,0,0; and the "
                "same on the switch"}));
  EXPECT_EQ(LineOf(run.out, "trust_dscp").first, "PASS");
  EXPECT_EQ(LineOf(run.out, "trust_dscp").second,
            "trust dscp on all 2 RoCE PF netdevs (LAG slaves)");
  EXPECT_EQ(LineOf(run.out, "ecn").first, "FAIL");
  EXPECT_EQ(LineOf(run.out, "ecn")
                .second.rfind("mlx5_bond_0/1 (bond0: ens1f1np1): ECN rp off on NCCL priority 3", 0),
            0u);
  // ens1f1np1's capture counts 5 warnings and 2 errors, ens1f0np0's none.
  EXPECT_EQ(LineOf(run.out, "pfc_storm"),
            (std::pair<std::string, std::string>{
                "WARN",
                "mlx5_bond_0/1 (bond0: ens1f1np1): 5 warning and 2 error pause-storm events "
                "since the driver loaded, not sampled (--sample=0)"}));
  // The bond's MTU (9000) is the port's.
  EXPECT_EQ(LineOf(run.out, "netdev_mtu").first, "PASS");
  ExpectGolden("doctor-mlx5-lag.txt", run.out);
}

TEST(CliLagDoctor, JsonHasAPassItemPerHealthySlave) {
  TempDir dev;
  dev.Write("infiniband/uverbs0", "");
  CliRun run = RunLagDoctor({"--sample=0", "--json", "--path.dev=" + dev.path()});
  // pfc: one item per slave, the healthy one passes under its own name.
  EXPECT_NE(run.out.find("\"subject\":\"mlx5_bond_0/1 (bond0: ens1f0np0)\",\"status\":\"PASS\","
                         "\"reason\":\"PFC on priority 3 only\""),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("\"subject\":\"mlx5_bond_0/1 (bond0: ens1f0np0)\",\"status\":\"PASS\","
                         "\"reason\":\"no pause-storm events\""),
            std::string::npos)
      << run.out;
  // The QoS checks have no item for the bond itself (which has no DCB).
  for (const char* check : {"pfc", "trust_dscp", "ecn", "pfc_storm"}) {
    std::string object = CheckObject(run.out, check);
    EXPECT_NE(object.find("(bond0: ens1f1np1)"), std::string::npos) << check;
    EXPECT_EQ(object.find("(bond0)"), std::string::npos) << object;
  }
}

TEST(CliLagIbdev2Netdev, ShowsTheBondNotTheSlaves) {
  CliRun run = RunCliCommand({"ibdev2netdev", "--path.sysfs=" + FixturePath("mlx5-lag")});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, "mlx5_bond_0 port 1 ==> bond0 (Up)\n");
}

}  // namespace
}  // namespace rdma_exporter::testing
