// Binary tests: the built rdma_exporter (and rdma_fabric_sim) as separate processes, scraped
// over HTTP on 127.0.0.1, output linted with promtool. Every process is stopped by its PID.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "process.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace rdma_exporter::testing {
namespace {

const std::string kExporter = RDMA_EXPORTER_BIN;
const std::string kSimulator = RDMA_FABRIC_SIM_BIN;

// Waits until the simulator has written its whole initial tree (it says "serving" then).
void WaitForSimulator(Process& sim) {
  for (int i = 0; i < 400 && sim.stderr_text().find("serving") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_NE(sim.stderr_text().find("serving"), std::string::npos) << sim.stderr_text();
}

// A running exporter on a free loopback port, ready (first poll done) when constructed.
class Exporter {
 public:
  explicit Exporter(std::vector<std::string> flags, const std::string& binary = kExporter) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = FreeLoopbackPort();
      std::vector<std::string> argv = {binary,
                                       "--web.listen-address=127.0.0.1:" + std::to_string(port_)};
      argv.insert(argv.end(), flags.begin(), flags.end());
      process_ = std::make_unique<Process>(argv);
      if (WaitReady(port_, std::chrono::seconds(15))) return;
      // Lost the race for the port to another test: try another one.
      if (process_->Running()) break;
    }
    ADD_FAILURE() << "exporter did not become ready; stderr:\n" << process_->stderr_text();
  }
  int port() const { return port_; }
  Process& process() { return *process_; }
  std::string Metrics() { return HttpGet(port_, "/metrics").body; }

 private:
  int port_ = 0;
  std::unique_ptr<Process> process_;
};

// Value of the first sample line that starts with `series` (name plus labels), or -1.
double SampleValue(const std::string& text, const std::string& series) {
  size_t pos = text.find("\n" + series + " ");
  if (pos == std::string::npos) return -1;
  return std::stod(text.substr(pos + series.size() + 2));
}

void ExpectPromtoolClean(const std::string& text) {
  std::string output;
  int rc = RunCommand({"promtool", "check", "metrics"}, &output, text);
  EXPECT_EQ(rc, 0) << "promtool check metrics:\n" << output;
}

TEST(Binary, ServesRxeCaptureMetricsThatPassPromtool) {
  Exporter exporter({"--path.sysfs=" + RxeCaptureSysfs()});
  HttpResponse r = HttpGet(exporter.port(), "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r.body.find("rdma_port_up{device=\"rxe0\",port=\"1\"} 1"), std::string::npos);
  EXPECT_NE(r.body.find("rdma_hw_rdma_sends_total{device=\"rxe0\",port=\"1\"} 3110"),
            std::string::npos);
  EXPECT_NE(r.body.find("process_resident_memory_bytes "), std::string::npos);
  EXPECT_NE(r.body.find("rdma_exporter_build_info{"), std::string::npos);
  ExpectPromtoolClean(r.body);
}

TEST(Binary, CompressesWithGzipOnlyWhenAsked) {
  Exporter exporter({"--path.sysfs=" + RxeCaptureSysfs(), "--poll-interval=1h"});
  HttpResponse plain = HttpGet(exporter.port(), "/metrics");
  HttpResponse gz = HttpGet(exporter.port(), "/metrics", {{"Accept-Encoding", "gzip, deflate"}});
  HttpResponse refused = HttpGet(exporter.port(), "/metrics", {{"Accept-Encoding", "gzip;q=0"}});
  ASSERT_EQ(gz.status, 200);
  EXPECT_EQ(plain.headers.count("content-encoding"), 0u);
  EXPECT_EQ(gz.headers["content-encoding"], "gzip");
  EXPECT_EQ(refused.headers.count("content-encoding"), 0u);
  EXPECT_LT(gz.body.size(), plain.body.size());
  EXPECT_EQ(Gunzip(gz.body), plain.body);
}

TEST(Binary, ServesHealthReadinessNodePageStatusAndNotFound) {
  Exporter exporter({"--path.sysfs=" + RxeCaptureSysfs()});
  HttpResponse healthy = HttpGet(exporter.port(), "/-/healthy");
  EXPECT_EQ(healthy.status, 200);
  EXPECT_EQ(HttpGet(exporter.port(), "/-/ready").status, 200);
  HttpResponse page = HttpGet(exporter.port(), "/");
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("href=\"/metrics\""), std::string::npos);
  EXPECT_NE(page.body.find("href=\"/api/v1/status\""), std::string::npos);
  // One row per port: its name, netdev and link layer, state and rate.
  size_t row = page.body.find("data-port=\"rxe1/1\"");
  ASSERT_NE(row, std::string::npos) << page.body;
  std::string tr = page.body.substr(row, page.body.find("</tr>", row) - row);
  EXPECT_NE(tr.find("<b>rxe1/1</b><br><small>eth1 · Ethernet</small>"), std::string::npos) << tr;
  EXPECT_NE(tr.find("ACTIVE<br><small>LinkUp</small>"), std::string::npos) << tr;
  EXPECT_NE(tr.find("2.5 Gb/s"), std::string::npos) << tr;
  HttpResponse status = HttpGet(exporter.port(), "/api/v1/status");
  EXPECT_EQ(status.status, 200);
  EXPECT_NE(status.body.find("\"device\":\"rxe1\",\"port\":1,\"netdev\":\"eth1\""),
            std::string::npos)
      << status.body;
  EXPECT_EQ(HttpGet(exporter.port(), "/nope").status, 404);
  EXPECT_EQ(HttpGet(exporter.port(), "/metrics", {}, "POST").status, 405);
}

TEST(Binary, CustomTelemetryPath) {
  Exporter exporter({"--path.sysfs=" + RxeCaptureSysfs(), "--web.telemetry-path=/rdma"});
  EXPECT_EQ(HttpGet(exporter.port(), "/rdma").status, 200);
  EXPECT_EQ(HttpGet(exporter.port(), "/metrics").status, 404);
}

TEST(Binary, WrongFlagsExitTwoWithOneLine) {
  for (std::string flag :
       {"--bogus", "--poll-interval=abc", "--log.format=xml", "--device-include=(",
        "--no-collector.nosuch", "--web.listen-address=x"}) {
    std::string output;
    int rc = RunCommand({kExporter, flag}, &output);
    EXPECT_EQ(rc, 2) << flag;
    EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 1) << output;
    EXPECT_EQ(output.rfind("rdma_exporter: ", 0), 0u) << output;
  }
}

TEST(Binary, VersionAndHelpExitZero) {
  std::string output;
  EXPECT_EQ(RunCommand({kExporter, "--version"}, &output), 0);
  EXPECT_NE(output.find("rdma_exporter, version "), std::string::npos);
  EXPECT_EQ(RunCommand({kExporter, "--help"}, &output), 0);
  EXPECT_NE(output.find("--collector.hw_counters"), std::string::npos);
}

TEST(Binary, PortInUseIsAClearError) {
  Exporter first({"--path.sysfs=" + RxeCaptureSysfs()});
  std::string output;
  int rc = RunCommand({kExporter, "--path.sysfs=" + RxeCaptureSysfs(),
                       "--web.listen-address=127.0.0.1:" + std::to_string(first.port())},
                      &output);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(output.find("cannot start HTTP server"), std::string::npos) << output;
}

TEST(Binary, PollIntervalZeroCollectsOnEveryScrape) {
  TempDir dir;
  fs::copy(RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::string counter =
      dir.path() + "/devices/virtual/infiniband/rxe1/ports/1/hw_counters/rdma_sends";
  Exporter on_scrape({"--path.sysfs=" + dir.path(), "--poll-interval=0"});
  Exporter polled({"--path.sysfs=" + dir.path(), "--poll-interval=1h"});
  std::string series = "rdma_hw_rdma_sends_total{device=\"rxe1\",port=\"1\"}";
  EXPECT_EQ(SampleValue(on_scrape.Metrics(), series), 200);
  EXPECT_EQ(SampleValue(polled.Metrics(), series), 200);
  { std::fstream(counter, std::ios::in | std::ios::out) << "201\n"; }
  EXPECT_EQ(SampleValue(on_scrape.Metrics(), series), 201);
  EXPECT_EQ(SampleValue(polled.Metrics(), series), 200);  // served from the last poll
}

TEST(Binary, DeviceFiltersSelectDevices) {
  Exporter only0({"--path.sysfs=" + RxeCaptureSysfs(), "--device-include=rxe0"});
  std::string text = only0.Metrics();
  EXPECT_NE(text.find("device=\"rxe0\""), std::string::npos);
  EXPECT_EQ(text.find("device=\"rxe1\""), std::string::npos);
  Exporter not0({"--path.sysfs=" + RxeCaptureSysfs(), "--device-exclude=rxe0"});
  text = not0.Metrics();
  EXPECT_EQ(text.find("device=\"rxe0\""), std::string::npos);
  EXPECT_NE(text.find("device=\"rxe1\""), std::string::npos);
}

TEST(Binary, DisabledCollectorIsAbsent) {
  Exporter exporter({"--path.sysfs=" + RxeCaptureSysfs(), "--no-collector.hw_counters"});
  std::string text = exporter.Metrics();
  EXPECT_EQ(text.find("rdma_hw_"), std::string::npos);
  EXPECT_EQ(text.find("collector=\"hw_counters\""), std::string::npos);
  EXPECT_NE(text.find("rdma_port_up"), std::string::npos);
}

TEST(Binary, JsonLogsAreOneObjectPerLine) {
  Exporter exporter({"--path.sysfs=" + RxeCaptureSysfs(), "--log.format=json"});
  exporter.process().Stop();
  std::istringstream lines(exporter.process().stderr_text());
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    // An empty line (a sanitizer report starts with one) is not an object either; front() and
    // back() of an empty string are undefined.
    ASSERT_FALSE(line.empty()) << "empty line " << count << " in:\n"
                               << exporter.process().stderr_text();
    EXPECT_EQ(line.front(), '{') << line;
    EXPECT_EQ(line.back(), '}') << line;
    EXPECT_NE(line.find("\"level\":"), std::string::npos) << line;
  }
  EXPECT_GE(count, 3);
}

TEST(Binary, StopsCleanlyOnSigterm) {
  Exporter exporter({"--path.sysfs=" + RxeCaptureSysfs()});
  EXPECT_EQ(exporter.process().Stop(), 0);
}

// The shared objects mapped into a process (/proc/<pid>/maps), one path per line.
std::string MappedFiles(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string maps((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(maps.empty()) << "no /proc/" << pid << "/maps";
  return maps;
}

// A unix socket that listens and never answers: enough for the kubelet client to try.
class SilentUnixSocket {
 public:
  explicit SilentUnixSocket(const std::string& path) : fd_(BindUnixSocket(path, true)) {
    EXPECT_GE(fd_, 0) << path;
  }
  ~SilentUnixSocket() {
    if (fd_ >= 0) close(fd_);
  }

 private:
  int fd_ = -1;
};

// gRPC and protobuf (~5 MB resident once loaded) live in librdma_exporter_kubelet.so, loaded
// only once a kubelet socket is there.
TEST(Binary, LoadsTheKubeletModuleOnlyWhenAKubeletSocketAppears) {
  TempDir dir;
  const std::string socket_path = dir.path() + "/kubelet.sock";
  Exporter exporter({"--path.sysfs=" + RxeCaptureSysfs(),
                     "--collector.pod_resources.socket=" + socket_path,
                     "--collector.pod_resources.interval=1s", "--poll-interval=1s"});
  pid_t pid = exporter.process().pid();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // a watcher round without it
  std::string maps = MappedFiles(pid);
  EXPECT_EQ(maps.find("librdma_exporter_kubelet.so"), std::string::npos) << maps;
  EXPECT_EQ(maps.find("libgrpc"), std::string::npos) << maps;
  EXPECT_EQ(maps.find("libprotobuf"), std::string::npos) << maps;

  SilentUnixSocket kubelet(socket_path);
  bool loaded = false;
  for (int i = 0; i < 100 && !loaded; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    maps = MappedFiles(pid);
    loaded = maps.find("librdma_exporter_kubelet.so") != std::string::npos;
  }
  EXPECT_TRUE(loaded) << maps;
  EXPECT_NE(maps.find("libgrpc"), std::string::npos);
  EXPECT_EQ(exporter.process().Stop(), 0) << exporter.process().stderr_text();
}

// Without the module (a copy of the binary beside only the OpenSSL shims) a kubelet socket gives
// one warning and a counted error; every other metric is still served.
TEST(Binary, AMissingKubeletModuleIsACountedErrorNotACrash) {
  TempDir dir;
  fs::create_directories(dir.path() + "/bin");
  fs::create_directories(dir.path() + "/lib/rdma_exporter");
  const std::string binary = dir.path() + "/bin/rdma_exporter";
  fs::copy_file(kExporter, binary);
  fs::path shims = fs::path(kExporter).parent_path() / ".." / "lib" / "rdma_exporter";
  for (const char* shim : {"libssl.so", "libcrypto.so"})
    fs::copy_file(shims / shim, dir.path() + "/lib/rdma_exporter/" + shim);
  const std::string socket_path = dir.path() + "/kubelet.sock";
  SilentUnixSocket kubelet(socket_path);
  Exporter exporter(
      {"--path.sysfs=" + RxeCaptureSysfs(), "--collector.pod_resources.socket=" + socket_path,
       "--collector.pod_resources.interval=1s", "--poll-interval=1s"},
      binary);
  const std::string series =
      "rdma_exporter_read_errors_total{collector=\"pod_resources\",reason=\"module_unavailable\"}";
  std::string text;
  for (int i = 0; i < 50 && SampleValue(text, series) < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    text = exporter.Metrics();
  }
  EXPECT_GE(SampleValue(text, series), 1) << text;
  EXPECT_NE(text.find("\nrdma_port_up{"), std::string::npos);
  EXPECT_EQ(exporter.process().Stop(), 0);
  const std::string log = exporter.process().stderr_text();
  EXPECT_NE(log.find("cannot load the kubelet module"), std::string::npos) << log;
}

// The demo fabric: the simulator keeps a tree moving and the exporter shows it.
TEST(Binary, DemoFabricMetricsMoveAndPassPromtool) {
  TempDir dir;
  Process sim({kSimulator, "--root", dir.path(), "--interval", "200ms"});
  std::string sys = dir.path() + "/sys";
  WaitForSimulator(sim);
  // As scripts/demo.sh runs it: the simulator's ethtool/DCB captures instead of the host's kernel.
  Exporter exporter({"--path.sysfs=" + sys, "--path.fixtures=" + dir.path() + "/fixtures",
                     "--poll-interval=200ms"});
  std::string first = exporter.Metrics();
  std::string series = "rdma_port_data_transmitted_bytes_total{device=\"mlx5_0\",port=\"1\"}";
  double before = SampleValue(first, series);
  ASSERT_GT(before, 0) << first.substr(0, 2000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  std::string second = exporter.Metrics();
  EXPECT_GT(SampleValue(second, series), before);
  EXPECT_NE(second.find("rdma_port_info{device=\"mlx5_0\",port=\"1\",link_layer=\"Ethernet\""),
            std::string::npos);
  EXPECT_NE(second.find("link_layer=\"InfiniBand\""), std::string::npos);
  EXPECT_NE(std::regex_search(second, std::regex("rdma_device_info\\{[^}]*physfn=\"0000:")), false);
  size_t errors = second.find("rdma_exporter_read_errors_total{");
  EXPECT_EQ(errors, std::string::npos) << second.substr(errors, 300);
  ExpectPromtoolClean(second);
  EXPECT_EQ(sim.Stop(), 0);
}

// The simulator with a scenario, and the exporter reading its ethtool/DCB fixtures.
class RoceDemo {
 public:
  explicit RoceDemo(const std::string& scenario, const std::string& fault_device = "mlx5_0") {
    sim_ = std::make_unique<Process>(
        std::vector<std::string>{kSimulator, "--root", dir_.path(), "--interval", "200ms",
                                 "--scenario", scenario, "--fault-device", fault_device});
    WaitForSimulator(*sim_);
    exporter_ = std::make_unique<Exporter>(std::vector<std::string>{
        "--path.sysfs=" + dir_.path() + "/sys", "--path.fixtures=" + dir_.path() + "/fixtures",
        "--nccl.ib-tc=106", "--poll-interval=200ms"});
  }
  ~RoceDemo() {
    exporter_.reset();
    EXPECT_EQ(sim_->Stop(), 0);
  }
  std::string Metrics() { return exporter_->Metrics(); }

 private:
  TempDir dir_;
  std::unique_ptr<Process> sim_;
  std::unique_ptr<Exporter> exporter_;
};

const std::string kRocePort = "device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\"";

TEST(Binary, DemoShowsLosslessFabricSignalsOfAHealthyRocePort) {
  RoceDemo demo("healthy");
  std::string text = demo.Metrics();
  EXPECT_EQ(SampleValue(text, "rdma_nccl_priority{" + kRocePort + "}"), 3);  // TC 106 -> DSCP 26
  for (const char* check : {"pfc_on_nccl_priority", "pfc_only_on_nccl_priority", "trust_dscp",
                            "ecn_np_on_nccl_priority", "ecn_rp_on_nccl_priority",
                            "mtu_at_least_4200", "roce_v2_gid_present"}) {
    EXPECT_EQ(SampleValue(text, "rdma_roce_config_ok{" + kRocePort + ",check=\"" + check + "\"}"),
              1)
        << check;
  }
  EXPECT_EQ(SampleValue(text, "rdma_pfc_enabled{" + kRocePort + ",priority=\"3\"}"), 1);
  EXPECT_EQ(SampleValue(text, "rdma_pfc_enabled{" + kRocePort + ",priority=\"0\"}"), 0);
  EXPECT_EQ(SampleValue(text, "rdma_qos_trust_info{" + kRocePort + ",mode=\"dscp\"}"), 1);
  EXPECT_EQ(SampleValue(text, "rdma_ecn_enabled{" + kRocePort + ",role=\"np\",priority=\"3\"}"), 1);
  EXPECT_GE(SampleValue(text, "rdma_pfc_pause_frames_total{" + kRocePort +
                                  ",direction=\"tx\",priority=\"3\"}"),
            0);
  EXPECT_EQ(SampleValue(text, "rdma_netdev_up{" + kRocePort + "}"), 1);
  EXPECT_EQ(SampleValue(text, "rdma_netdev_mtu_bytes{" + kRocePort + "}"), 9000);
  size_t errors = text.find("rdma_exporter_read_errors_total{");
  EXPECT_EQ(errors, std::string::npos) << text.substr(errors, 200);
  ExpectPromtoolClean(text);
}

TEST(Binary, MisconfigScenarioFailsTheRoceChecks) {
  RoceDemo demo("misconfig");
  std::string text = demo.Metrics();
  auto check = [&](const char* name) {
    return SampleValue(text, "rdma_roce_config_ok{" + kRocePort + ",check=\"" + name + "\"}");
  };
  EXPECT_EQ(check("mtu_at_least_4200"), 0);
  EXPECT_EQ(check("trust_dscp"), 0);
  EXPECT_EQ(check("roce_v2_gid_present"), 0);
  // PCP trust: the NCCL priority cannot be derived, so the priority checks are unknown, not bad.
  EXPECT_EQ(check("pfc_on_nccl_priority"), -1);
  EXPECT_EQ(SampleValue(text, "rdma_nccl_priority{" + kRocePort + "}"), -1);
  EXPECT_EQ(SampleValue(text, "rdma_pfc_enabled{" + kRocePort + ",priority=\"0\"}"), 1);
  EXPECT_EQ(SampleValue(text, "rdma_pfc_enabled{" + kRocePort + ",priority=\"3\"}"), 0);
  EXPECT_EQ(SampleValue(text, "rdma_qos_trust_info{" + kRocePort + ",mode=\"pcp\"}"), 1);
}

TEST(Binary, PfcStormScenarioShowsPauseTimeAndStormEvents) {
  RoceDemo demo("pfc-storm");
  std::string series =
      "rdma_pfc_pause_duration_seconds_total{" + kRocePort + ",direction=\"tx\",priority=\"3\"}";
  double before = SampleValue(demo.Metrics(), series);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::string text = demo.Metrics();
  EXPECT_GT(SampleValue(text, series), before + 0.3);  // paused for much of the 1.5 s
  EXPECT_GT(SampleValue(text, "rdma_pfc_storm_events_total{" + kRocePort + ",level=\"warning\"}"),
            0);
  EXPECT_GT(SampleValue(text, "rdma_pfc_storm_events_total{" + kRocePort + ",level=\"error\"}"), 0);
}

// The demo's RoCE LAG: mlx5_bond_0 on bond0 over the ConnectX-6 Dx PFs ens9f0np0/ens9f1np1.
const std::string kBond = "device=\"mlx5_bond_0\",port=\"1\"";
std::string Slave(const std::string& netdev) {
  return kBond + ",netdev=\"" + netdev + "\",bond=\"bond0\"";
}
// The demo's Intel E810: irdma rocep51s0f0 on the ice netdev ens10f0np0.
const std::string kE810 = "device=\"rocep51s0f0\",port=\"1\"";
const std::string kE810Port = kE810 + ",netdev=\"ens10f0np0\"";

TEST(Binary, DemoLagIsReadFromItsSlavesAndE810FromItsIceCounters) {
  RoceDemo demo("healthy");
  std::string text = demo.Metrics();
  // The bond has no ethtool statistics or DCB: every slave has its own set, the bond none.
  for (const char* slave : {"ens9f0np0", "ens9f1np1"}) {
    EXPECT_EQ(SampleValue(text, "rdma_dcb_supported{" + Slave(slave) + "}"), 1) << slave;
    EXPECT_EQ(SampleValue(text, "rdma_pfc_enabled{" + Slave(slave) + ",priority=\"3\"}"), 1);
    EXPECT_EQ(SampleValue(
                  text, "rdma_roce_config_ok{" + Slave(slave) + ",check=\"pfc_on_nccl_priority\"}"),
              1);
    EXPECT_GE(SampleValue(text, "rdma_phy_lane_errors_total{" + Slave(slave) + ",lane=\"3\"}"), 0);
    EXPECT_EQ(SampleValue(text, "rdma_module_events_total{" + Slave(slave) + ",event=\"unplug\"}"),
              0);
  }
  EXPECT_EQ(text.find("netdev=\"bond0\",bond="), std::string::npos);
  EXPECT_EQ(text.find("rdma_dcb_supported{" + kBond + ",netdev=\"bond0\"}"), std::string::npos);
  EXPECT_EQ(SampleValue(text, "rdma_netdev_up{" + kBond + ",netdev=\"bond0\"}"), 1);
  // E810: no PMA (irdma), PFC from the ice XON + XOFF counters, its DCB checked like mlx5's.
  EXPECT_EQ(SampleValue(text, "rdma_port_pma_supported{" + kE810 + "}"), 0);
  EXPECT_GT(SampleValue(text, "rdma_pfc_pause_frames_total{" + kE810Port +
                                  ",direction=\"rx\",priority=\"3\"}"),
            0);
  EXPECT_EQ(
      SampleValue(text, "rdma_roce_config_ok{" + kE810Port + ",check=\"pfc_on_nccl_priority\"}"),
      1);
  size_t errors = text.find("rdma_exporter_read_errors_total{");
  EXPECT_EQ(errors, std::string::npos) << text.substr(errors, 200);
  ExpectPromtoolClean(text);
}

TEST(Binary, BadLaneScenarioRaisesOneLaneOfALagSlave) {
  RoceDemo demo("bad-lane", "mlx5_bond_0");
  auto lane = [&](const std::string& text, int n) {
    return SampleValue(text, "rdma_phy_lane_errors_total{" + Slave("ens9f0np0") + ",lane=\"" +
                                 std::to_string(n) + "\"}");
  };
  std::string first = demo.Metrics();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::string second = demo.Metrics();
  double bad = lane(second, 3) - lane(first, 3);
  EXPECT_GT(bad, 10 * std::max(1.0, lane(second, 0) - lane(first, 0)));
  EXPECT_GT(bad, 10 * std::max(1.0, lane(second, 1) - lane(first, 1)));
}

TEST(Binary, PfcStormOnTheE810ShowsInItsPauseFrames) {
  RoceDemo demo("pfc-storm", "rocep51s0f0");
  std::string series =
      "rdma_pfc_pause_frames_total{" + kE810Port + ",direction=\"tx\",priority=\"3\"}";
  double before = SampleValue(demo.Metrics(), series);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_GT(SampleValue(demo.Metrics(), series), before + 10000);  // >= 10k XOFF/s
}

TEST(Binary, VanishedDeviceDisappearsAndReturnsWithoutRestart) {
  TempDir dir;
  Process sim({kSimulator, "--root", dir.path(), "--interval", "400ms", "--scenario", "vanish",
               "--fault-device", "mlx5_1"});
  std::string sys = dir.path() + "/sys";
  WaitForSimulator(sim);
  Exporter exporter({"--path.sysfs=" + sys, "--poll-interval=100ms"});
  auto has_device = [&] {
    return exporter.Metrics().find("device=\"mlx5_1\"") != std::string::npos;
  };
  auto wait_for = [&](bool want) {
    for (int i = 0; i < 100; ++i) {
      if (has_device() == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  EXPECT_TRUE(wait_for(false)) << "mlx5_1 never vanished";
  EXPECT_NE(exporter.Metrics().find("device=\"mlx5_0\""), std::string::npos);
  EXPECT_TRUE(wait_for(true)) << "mlx5_1 never came back";
  EXPECT_TRUE(exporter.process().Running());
  sim.Stop();
}

}  // namespace
}  // namespace rdma_exporter::testing
