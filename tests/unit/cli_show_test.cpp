// show-gids, ibdev2netdev, show-counters and the subcommand argument parser, on the fixture
// trees. Golden outputs live in tests/golden/cli/ (refresh with UPDATE_GOLDEN=1, then check the
// diff against the fixture files: tests/fixtures/README.md lists the values).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "cli_test_util.h"
#include "exporter/flags.h"
#include "rdma_exporter/cli.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace rdma_exporter::testing {
namespace {

TEST(CliShowGids, Mlx5RoceTableMatchesShowGidsLayoutAndSkipsEmptyEntries) {
  CliRun run = RunCliCommand({"show-gids", "--path.sysfs=" + FixturePath("mlx5-roce")});
  EXPECT_EQ(run.code, 0) << run.err;
  // Hand-checked against the fixture: gids 0-3 of mlx5_0 (4 zero, 5 bare fe80 skipped), gids
  // 0-1 of the VF (2 zero), none of mlx5_2 (all zero). IPv4 only for the ::ffff: entries, with
  // show_gids' two spaces before the tab.
  EXPECT_NE(run.out.find("mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  "
                         "\tv2\tens1f0np0\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(
      run.out.find("mlx5_0\t1\t0\tfe80:0000:0000:0000:bace:f6ff:fea1:b2c4\t\t\tv1\tens1f0np0\n"),
      std::string::npos);
  EXPECT_EQ(run.out.find("mlx5_0\t1\t4\t"), std::string::npos);
  EXPECT_EQ(run.out.find("mlx5_0\t1\t5\t"), std::string::npos);
  EXPECT_EQ(run.out.find("mlx5_2\t"), std::string::npos);
  ExpectGolden("show-gids-mlx5-roce.txt", run.out);
}

TEST(CliShowGids, InfiniBandGidsHaveV1AndNoNetdev) {
  CliRun run = RunCliCommand({"show-gids", "--path.sysfs=" + FixturePath("mlx5-ib")});
  EXPECT_EQ(run.code, 0);
  EXPECT_NE(run.out.find("mlx5_0\t1\t0\tfe80:0000:0000:0000:a088:c203:0045:1a2c\t\t\tv1\t\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("n_gids_found=14\n"), std::string::npos);  // 2 + 12 ports, gid 0 each
  ExpectGolden("show-gids-mlx5-ib.txt", run.out);
}

TEST(CliShowGids, RxeCaptureHasAnEmptyTable) {
  CliRun run = RunCliCommand({"show-gids", "--path.sysfs=" + RxeCaptureSysfs()});
  EXPECT_EQ(run.code, 0);
  ExpectGolden("show-gids-rxe-capture.txt", run.out);
}

TEST(CliShowGids, RxeRoceV2Ipv4Row) {
  // The capture's gids/ was recorded empty; the VM's show_gids row (20-gid-index.txt: IPv4 RoCE
  // v2 at index 1) written into a copy.
  TempDir dir;
  fs::copy(RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::string port = "devices/virtual/infiniband/rxe0/ports/1/";
  dir.Write(port + "gids/0", "fe80:0000:0000:0000:5054:00ff:fe12:3456\n");
  dir.Write(port + "gids/1", "0000:0000:0000:0000:0000:ffff:0a00:020f\n");
  dir.Write(port + "gid_attrs/types/0", "RoCE v2\n");
  dir.Write(port + "gid_attrs/types/1", "RoCE v2\n");
  dir.Write(port + "gid_attrs/ndevs/0", "eth0\n");
  dir.Write(port + "gid_attrs/ndevs/1", "eth0\n");
  CliRun run = RunCliCommand({"show-gids", "rxe0", "--path.sysfs=" + dir.path()});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out,
            "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n"
            "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n"
            "rxe0\t1\t0\tfe80:0000:0000:0000:5054:00ff:fe12:3456\t\t\tv2\teth0\n"
            "rxe0\t1\t1\t0000:0000:0000:0000:0000:ffff:0a00:020f\t10.0.2.15  \tv2\teth0\n"
            "n_gids_found=2\n");
}

TEST(CliShowGids, JsonHasEveryFieldAndTheCount) {
  CliRun run =
      RunCliCommand({"show-gids", "mlx5_0", "--json", "--path.sysfs=" + FixturePath("mlx5-roce")});
  EXPECT_EQ(run.code, 0);
  EXPECT_NE(run.out.find("{\"device\":\"mlx5_0\",\"port\":1,\"index\":3,\"gid\":\"0000:0000:0000:"
                         "0000:0000:ffff:0a00:0001\",\"ipv4\":\"10.0.0.1\",\"type\":\"RoCE v2\","
                         "\"ver\":\"v2\",\"netdev\":\"ens1f0np0\"}"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("\"n_gids_found\":4}"), std::string::npos);
}

TEST(CliShowGids, DeviceArgumentsAndFiltersSelectDevices) {
  std::string sys = "--path.sysfs=" + FixturePath("mlx5-roce");
  CliRun one = RunCliCommand({"show-gids", "mlx5_1", sys});
  EXPECT_EQ(one.out.find("mlx5_0"), std::string::npos);
  EXPECT_NE(one.out.find("n_gids_found=2"), std::string::npos);
  CliRun excluded = RunCliCommand({"show-gids", "--device-exclude=mlx5_0", sys});
  EXPECT_NE(excluded.out.find("n_gids_found=2"), std::string::npos);
  CliRun missing = RunCliCommand({"show-gids", "mlx5_7", sys});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(missing.err.rfind("rdma_exporter: show-gids: no RDMA device mlx5_7", 0), 0u)
      << missing.err;
  CliRun filtered = RunCliCommand({"show-gids", "mlx5_0", "--device-exclude=mlx5_0", sys});
  EXPECT_EQ(filtered.code, 1);
  EXPECT_NE(filtered.err.find("excluded by the device filters"), std::string::npos);
}

TEST(CliIbdev2Netdev, Mlx5RoceLinesAndVerbose) {
  std::string sys = "--path.sysfs=" + FixturePath("mlx5-roce");
  CliRun plain = RunCliCommand({"ibdev2netdev", sys});
  EXPECT_EQ(plain.code, 0);
  // carrier 1 on ens1f0np0 and ens1f0v0, 0 on ens2f0np0 (the fallback netdev of mlx5_2).
  EXPECT_EQ(plain.out,
            "mlx5_0 port 1 ==> ens1f0np0 (Up)\n"
            "mlx5_1 port 1 ==> ens1f0v0 (Up)\n"
            "mlx5_2 port 1 ==> ens2f0np0 (Down)\n");
  CliRun verbose = RunCliCommand({"ibdev2netdev", "-v", sys});
  EXPECT_NE(verbose.out.find("0000:3b:00.0 mlx5_0 (MT4125 - MT_0000000359) fw 22.39.1002 port 1 "
                             "(ACTIVE) ==> ens1f0np0 (Up)\n"),
            std::string::npos)
      << verbose.out;
  ExpectGolden("ibdev2netdev-v-mlx5-roce.txt", verbose.out);
}

// A ConnectX-6 Dx VPD as the PCI spec lays it out: identifier string, VPD-R with PN/EC/SN/RV, end.
std::string ConnectX6DxVpd() {
  auto large = [](char tag, const std::string& body) {
    return std::string(1, tag) + char(body.size() & 0xff) + char(body.size() >> 8) + body;
  };
  auto keyword = [](const std::string& key, const std::string& data) {
    return key + char(data.size()) + data;
  };
  std::string id = "ConnectX-6 Dx EN adapter card, 100GbE, Dual-port QSFP56, PCIe 4.0 x16";
  std::string ro = keyword("PN", "MCX623106AN-CDAT") + keyword("EC", "A6") +
                   keyword("SN", "MT2101X12345") + keyword("RV", std::string(1, '\x5a'));
  return large('\x82', id) + large('\x90', ro) + std::string(1, '\x78');
}

TEST(CliIbdev2Netdev, VerboseTakesPartNumberAndNameFromTheVpd) {
  TempDir dir;
  fs::copy(FixturePath("mlx5-roce"), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  dir.Write("devices/pci0000:00/0000:00:02.0/0000:3b:00.0/vpd", ConnectX6DxVpd());
  // A VPD that is only garbage: the board id stays.
  dir.Write("devices/pci0000:00/0000:00:02.0/0000:3b:00.1/vpd", std::string("\xff\xff\x00\x13", 4));
  CliRun run = RunCliCommand({"ibdev2netdev", "-v", "--path.sysfs=" + dir.path()});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out,
            "0000:3b:00.0 mlx5_0 (MT4125 - MCX623106AN-CDAT) ConnectX-6 Dx EN adapter card, "
            "100GbE, Dual-port QSFP56, PCIe 4.0 x16 fw 22.39.1002 port 1 (ACTIVE) ==> ens1f0np0 "
            "(Up)\n"
            "0000:3b:00.1 mlx5_1 (MT4126 - MT_0000000359) fw 22.39.1002 port 1 (ACTIVE) ==> "
            "ens1f0v0 (Up)\n"
            "0000:5e:00.0 mlx5_2 (MT4125 - MT_0000000359) fw 22.36.1010 port 1 (NA    ) ==> "
            "ens2f0np0 (Down)\n");
  CliRun json = RunCliCommand({"ibdev2netdev", "--json", "mlx5_0", "--path.sysfs=" + dir.path()});
  EXPECT_EQ(json.code, 2);  // no device arguments
  json = RunCliCommand({"ibdev2netdev", "--json", "--path.sysfs=" + dir.path()});
  EXPECT_NE(json.out.find("\"board_id\":\"MT_0000000359\",\"part_number\":\"MCX623106AN-CDAT\","
                          "\"description\":\"ConnectX-6 Dx EN adapter card, 100GbE, Dual-port "
                          "QSFP56, PCIe 4.0 x16\""),
            std::string::npos)
      << json.out;
}

TEST(CliIbdev2Netdev, IpoibNetdevsAndPortsWithoutNetdevAreNotListed) {
  CliRun run = RunCliCommand({"ibdev2netdev", "-v", "--path.sysfs=" + FixturePath("mlx5-ib")});
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(run.out.find("mlx5_2"), std::string::npos);  // no IPoIB netdev on the 12 ports
  ExpectGolden("ibdev2netdev-v-mlx5-ib.txt", run.out);
}

TEST(CliIbdev2Netdev, RxeUsesTheParentNetdev) {
  // The Mellanox script prints nothing for rxe (it only looks at 0x15b3 netdevs).
  CliRun capture = RunCliCommand({"ibdev2netdev", "--path.sysfs=" + RxeCaptureSysfs()});
  EXPECT_EQ(capture.code, 0);
  ExpectGolden("ibdev2netdev-rxe-capture.txt", capture.out);  // no class/net captured: NA
  TempDir dir;
  fs::copy(RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  dir.Write("class/net/eth0/carrier", "1\n");
  dir.Write("class/net/eth1/carrier", "0\n");
  CliRun run = RunCliCommand({"ibdev2netdev", "--path.sysfs=" + dir.path()});
  EXPECT_EQ(run.out, "rxe0 port 1 ==> eth0 (Up)\nrxe1 port 1 ==> eth1 (Down)\n");
  CliRun verbose = RunCliCommand({"ibdev2netdev", "-v", "rxe0", "--path.sysfs=" + dir.path()});
  EXPECT_EQ(verbose.code, 2);  // ibdev2netdev takes no device arguments
  CliRun json = RunCliCommand({"ibdev2netdev", "--json", "--path.sysfs=" + dir.path()});
  EXPECT_NE(json.out.find("{\"device\":\"rxe0\",\"port\":1,\"netdev\":\"eth0\",\"link\":\"Up\","
                          "\"state\":\"ACTIVE\",\"link_layer\":\"Ethernet\",\"pci_address\":\"\""),
            std::string::npos)
      << json.out;
}

TEST(CliShowCounters, Mlx5RoceBytesSaturationAndHwCounters) {
  CliRun run = RunCliCommand({"show-counters", "--path.sysfs=" + FixturePath("mlx5-roce")});
  EXPECT_EQ(run.code, 0);
  // port_xmit_data 123456789 words = 493827156 bytes; port_rcv_data 987654321 -> 3950617284.
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    port_xmit_data +493827156 bytes\n")))
      << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    port_rcv_data +3950617284 bytes\n")));
  EXPECT_TRUE(
      std::regex_search(run.out, std::regex("\n    symbol_error +65535  SATURATED \\(16-bit")));
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    link_downed +255  SATURATED \\(8-bit")));
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    local_link_integrity_errors +11\n")));
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    new_fancy_counter +42\n")));
  EXPECT_EQ(run.out.find("lifespan"), std::string::npos);
  // mlx5_2's unreadable files are listed with why, not left out.
  EXPECT_TRUE(std::regex_search(
      run.out, std::regex("\n    symbol_error +-  not a number: \"N/A \\(no PMA\\)\"\n")));
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    port_rcv_errors +-  empty file\n")));
  EXPECT_TRUE(std::regex_search(run.out,
                                std::regex("\n    out_of_buffer +-  not a number: \"garbage\"\n")));
  ExpectGolden("show-counters-mlx5-roce.txt", run.out);
}

TEST(CliShowCounters, LegacyCountersExtAndDeviceLevelHwCounters) {
  CliRun run = RunCliCommand(
      {"show-counters", "mlx5_1", "mlx5_2", "--path.sysfs=" + FixturePath("mlx5-ib")});
  EXPECT_EQ(run.code, 0);
  // counters_ext/port_xmit_data_64 8589934592 words on mlx5_2 port 1.
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    port_xmit_data +34359738368 bytes\n")));
  EXPECT_TRUE(std::regex_search(run.out, std::regex("mlx5_1 device\n  hw_counters:\n")));
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    vport_rx_write_requests +7000\n")));
  ExpectGolden("show-counters-mlx5-ib.txt", run.out);
}

TEST(CliShowCounters, RxeCaptureHwCountersOnly) {
  CliRun run = RunCliCommand({"show-counters", "--path.sysfs=" + RxeCaptureSysfs()});
  EXPECT_EQ(run.code, 0);
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    rdma_sends +3110\n")));
  EXPECT_EQ(run.out.find("  counters:"), std::string::npos);
  ExpectGolden("show-counters-rxe-capture.txt", run.out);
}

// An older kernel's port without PMA (iWARP i40iw in node_exporter's real sysfs capture): every
// counters/ file reads "N/A (no PMA)". show-counters says so once instead of listing 17 files
// as unparsable; its hw counters are still shown, and the ports with PMA are unchanged.
TEST(CliShowCounters, OlderKernelNoPmaPortIsOneLineNotAFailurePerFile) {
  TempDir dir;
  fs::copy(FixturePath("mlx5-roce"), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::string counters = "class/infiniband/mlx5_2/ports/1/counters/";
  for (const auto& entry : fs::directory_iterator(dir.path() + "/" + counters)) {
    dir.Write(counters + entry.path().filename().string(), "N/A (no PMA)\n");
  }
  CliRun run = RunCliCommand({"show-counters", "--path.sysfs=" + dir.path()});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("mlx5_2 port 1 (Ethernet, ens2f0np0)\n  counters: none, the port has no "
                         "PMA (every counters/ file reads \"N/A (no PMA)\", as older kernels show "
                         "a device without PMA)\n  hw_counters:\n"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("N/A (no PMA)\"\n    "), std::string::npos) << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    rx_write_requests +9\n")));
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    port_xmit_data +493827156 bytes\n")));

  CliRun json = RunCliCommand({"show-counters", "mlx5_2", "--json", "--path.sysfs=" + dir.path()});
  EXPECT_EQ(json.code, 0) << json.err;
  EXPECT_NE(json.out.find("\"netdev\":\"ens2f0np0\",\"pma_supported\":false,\"hw_counters\":{"),
            std::string::npos)
      << json.out;
  EXPECT_EQ(json.out.find("\"counters\""), std::string::npos) << json.out;
}

// Installs show-counters' wait between reads for one test: fn(call index, interval seconds).
class IntervalWaitForTest {
 public:
  explicit IntervalWaitForTest(std::function<void(int, double)> fn) {
    SetIntervalWaitForTesting(
        [this, fn = std::move(fn)](double seconds) { fn(calls_++, seconds); });
  }
  ~IntervalWaitForTest() { SetIntervalWaitForTesting(nullptr); }
  IntervalWaitForTest(const IntervalWaitForTest&) = delete;
  IntervalWaitForTest& operator=(const IntervalWaitForTest&) = delete;

 private:
  int calls_ = 0;
};

TEST(CliShowCounters, IntervalPrintsRatesWrapsAndResets) {
  TempDir dir;
  fs::copy(FixturePath("mlx5-roce"), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::string port = "devices/pci0000:00/0000:00:02.0/0000:3b:00.0/infiniband/mlx5_0/ports/1/";
  // Between the two reads: +1000 words of data, the 32-bit q-counter rx_write_requests wraps
  // (4000000000 -> 100 = +294967396), symbol_error is cleared (65535 -> 0).
  IntervalWaitForTest wait([&](int call, double seconds) {
    EXPECT_EQ(call, 0);
    dir.Write(port + "counters/port_xmit_data", "123457789\n");
    dir.Write(port + "hw_counters/rx_write_requests", "100\n");
    dir.Write(port + "counters/symbol_error", "0\n");
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  });
  CliRun run = RunCliCommand(
      {"show-counters", "mlx5_0", "--interval=0.6", "--json", "--path.sysfs=" + dir.path()});
  EXPECT_EQ(run.code, 0) << run.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(run.out, m, std::regex("\"interval_seconds\":([0-9.]+)")))
      << run.out;
  double seconds = std::stod(m[1]);
  EXPECT_GE(seconds, 0.6);
  ASSERT_TRUE(
      std::regex_search(run.out, m,
                        std::regex("\"port_xmit_data\":\\{\"value\":493831156,\"raw\":123457789,"
                                   "\"unit\":\"bytes\",\"width\":64,\"rate\":([0-9.]+)\\}")))
      << run.out;
  EXPECT_NEAR(std::stod(m[1]), 4000 / seconds, 4000 / seconds * 0.01);  // seconds rounded
  ASSERT_TRUE(std::regex_search(
      run.out, m, std::regex("\"rx_write_requests\":\\{\"value\":100,\"rate\":([0-9.]+)")));
  EXPECT_NEAR(std::stod(m[1]), 294967396 / seconds, 294967396 / seconds * 0.01);
  EXPECT_NE(run.out.find("\"symbol_error\":{\"value\":0,\"width\":16,\"rate\":null}"),
            std::string::npos);
  // A saturated counter stopped counting: no rate rather than a misleading 0.
  EXPECT_NE(
      run.out.find("\"link_downed\":{\"value\":255,\"width\":8,\"saturated\":true,\"rate\":null}"),
      std::string::npos);
}

TEST(CliShowCounters, TextIntervalColumns) {
  CliRun run = RunCliCommand(
      {"show-counters", "rxe1", "--interval=100ms", "--path.sysfs=" + RxeCaptureSysfs()});
  EXPECT_EQ(run.code, 0);
  EXPECT_TRUE(std::regex_search(run.out, std::regex("^rxe1 port 1 \\(Ethernet, eth1\\): per-second "
                                                    "rates over 0\\.[0-9]+ s\n")))
      << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n    rdma_sends +200 +0\\.0 /s\n")));
}

TEST(CliShowCounters, CountRepeatsTheRateTableLikeWatch) {
  TempDir dir;
  fs::copy(RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  // rdma_sends +50 during the second interval only.
  IntervalWaitForTest wait([&](int call, double seconds) {
    if (call == 1)
      dir.Write("devices/virtual/infiniband/rxe1/ports/1/hw_counters/rdma_sends", "250\n");
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  });
  CliRun run = RunCliCommand(
      {"show-counters", "rxe1", "--interval=0.5", "--count=2", "--path.sysfs=" + dir.path()});
  EXPECT_EQ(run.code, 0) << run.err;
  std::vector<std::string> tables;
  std::regex header("rxe1 port 1 \\(Ethernet, eth1\\): per-second rates over 0\\.[0-9]+ s\n");
  for (auto it = std::sregex_iterator(run.out.begin(), run.out.end(), header);
       it != std::sregex_iterator(); ++it)
    tables.push_back(run.out.substr(static_cast<size_t>(it->position())));
  ASSERT_EQ(tables.size(), 2u) << run.out;
  EXPECT_TRUE(std::regex_search(tables[0], std::regex("\n    rdma_sends +200 +0\\.0 /s\n")))
      << run.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(tables[1], m, std::regex("\n    rdma_sends +250 +([0-9.]+) /s\n")))
      << run.out;
  EXPECT_GT(std::stod(m[1]), 50 / 1.0);  // +50 over about 0.5 s
  EXPECT_LT(std::stod(m[1]), 50 / 0.4);
}

TEST(CliJson, GoldenOnTheFixtureTrees) {
  // The --json layouts, pinned (each file was checked to parse as JSON and against the text
  // output of the same tree).
  std::string roce = "--path.sysfs=" + FixturePath("mlx5-roce");
  CliRun gids = RunCliCommand({"show-gids", "--json", roce});
  EXPECT_EQ(gids.code, 0);
  ExpectGolden("show-gids-mlx5-roce.json", gids.out);
  CliRun links = RunCliCommand({"ibdev2netdev", "--json", roce});
  EXPECT_EQ(links.code, 0);
  ExpectGolden("ibdev2netdev-mlx5-roce.json", links.out);
  CliRun counters = RunCliCommand({"show-counters", "--json", "--path.sysfs=" + RxeCaptureSysfs()});
  EXPECT_EQ(counters.code, 0);
  ExpectGolden("show-counters-rxe-capture.json", counters.out);
  CliRun mixed = RunCliCommand({"show-counters", "--json", "mlx5_2", roce});
  ExpectGolden("show-counters-mlx5_2-roce.json", mixed.out);
}

TEST(CliFilters, EveryCommandHonoursTheDeviceFilters) {
  std::string sys = "--path.sysfs=" + FixturePath("mlx5-roce");
  CliRun links = RunCliCommand({"ibdev2netdev", "--device-exclude=mlx5_[12]", sys});
  EXPECT_EQ(links.out, "mlx5_0 port 1 ==> ens1f0np0 (Up)\n");
  CliRun counters = RunCliCommand({"show-counters", "--device-include=mlx5_1", sys});
  EXPECT_EQ(counters.out.rfind("mlx5_1 port 1 (Ethernet, ens1f0v0)\n", 0), 0u) << counters.out;
  EXPECT_EQ(counters.out.find("mlx5_0"), std::string::npos);
  EXPECT_EQ(counters.out.find("mlx5_2"), std::string::npos);
  // The doctor without the broken mlx5_2: its port, PCIe and PCP-trust failures are gone.
  CliOptions options;
  std::string error;
  ASSERT_TRUE(ParseCliArgs({"doctor", sys, "--device-exclude=mlx5_2", "--sample=0",
                            "--path.fixtures=" + FixturePath("")},
                           &options, &error));
  std::ostringstream out, err;
  Doctor(options, ProcessEnv{}, out, err);
  EXPECT_NE(out.str().find("PASS  port_active        all 2 ports ACTIVE/LinkUp\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("PASS  pcie_link          at max: mlx5_0 16 GT/s x16\n"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("mlx5_2"), std::string::npos) << out.str();
}

TEST(CliArgs, WrongFlagsAreOneLineAndExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {"show-gids", "--bogus"},
      {"show-gids", "-x"},
      {"show-counters", "--interval=0"},
      {"show-counters", "--interval=abc"},
      {"show-counters", "--interval"},
      {"show-counters", "--count=2"},
      {"show-counters", "--interval=1", "--count=-1"},
      {"ibdev2netdev", "mlx5_0"},
      {"ibdev2netdev", "--interval=1"},
      {"doctor", "mlx5_0"},
      {"doctor", "--nccl.ib-tc=300"},
      {"doctor", "--sample=-1"},
      {"doctor", "--json=maybe"},
      {"doctor", "--path.dev="},
      {"show-gids", "--device-include=("},
  };
  for (const auto& args : cases) {
    CliRun run = RunCliCommand(args);
    EXPECT_EQ(run.code, 2) << args[1];
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_EQ(run.err.rfind("rdma_exporter: " + args[0] + ": ", 0), 0u) << run.err;
  }
}

TEST(CliArgs, TopLevelUsageListsTheCommandsAndATypoIsAnUnknownCommand) {
  std::string usage = UsageText();
  for (const char* command : {"show-gids", "show-counters", "ibdev2netdev", "doctor"}) {
    EXPECT_TRUE(IsCliCommand(command));
    EXPECT_NE(usage.find("\n  " + std::string(command) + " "), std::string::npos) << command;
  }
  Options options;
  std::string error;
  EXPECT_FALSE(ParseFlags({"show-gid"}, &options, &error));
  EXPECT_EQ(error,
            "unknown command \"show-gid\" (commands: show-gids, show-counters, ibdev2netdev, "
            "doctor, status; flags start with --; see --help)");
  EXPECT_FALSE(ParseFlags({"-v"}, &options, &error));
  EXPECT_EQ(error, "unexpected argument \"-v\" (flags start with --; see --help)");
}

TEST(CliArgs, HelpAndParsedValues) {
  CliRun help = RunCliCommand({"doctor", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--nccl.ib-tc"), std::string::npos);
  EXPECT_TRUE(IsCliCommand("show-gids"));
  EXPECT_FALSE(IsCliCommand("--path.sysfs=/sys"));
  CliOptions options;
  std::string error;
  ASSERT_TRUE(ParseCliArgs({"doctor", "--sample", "500ms", "--nccl.ib-tc=106", "--path.dev=/tmp/d",
                            "--roce.min-mtu", "9000", "--json"},
                           &options, &error))
      << error;
  EXPECT_DOUBLE_EQ(options.sample_seconds, 0.5);
  EXPECT_EQ(options.collector_options.nccl_ib_tc, 106);
  EXPECT_EQ(options.collector_options.roce_min_mtu, 9000u);
  EXPECT_EQ(options.dev_root, "/tmp/d");
  EXPECT_TRUE(options.json);
  ASSERT_TRUE(
      ParseCliArgs({"show-counters", "mlx5_0", "mlx5_1", "--interval=2"}, &options, &error));
  EXPECT_EQ(options.devices, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_DOUBLE_EQ(*options.interval_seconds, 2);
}

}  // namespace
}  // namespace rdma_exporter::testing
