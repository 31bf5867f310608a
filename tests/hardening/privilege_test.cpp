// Least privilege (root test; CI runs as root): the exporter runs as `nobody` with no
// capabilities at all (setpriv: no groups, empty bounding and inheritable sets, no_new_privs)
// and every default collector still works: on the demo fabric (sysfs and fixtures), and in a
// network namespace where the ethtool ioctl, rtnetlink and DCB readers talk to the kernel about
// a veth the RDMA port's netdev names. No read may fail for lack of permission.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "hardening_util.h"
#include "netns.h"

namespace fs = std::filesystem;

namespace rdma_exporter::testing {
namespace {

const std::vector<std::string> kAsNobody = {
    "setpriv",         "--reuid=65534",       "--regid=65534", "--clear-groups",
    "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"};

// Makes a test directory readable by others (mkdtemp creates it 0700).
void OpenUp(const std::string& dir) {
  chmod(dir.c_str(), 0755);
}

// Every rdma_exporter_collector_success sample and every read error reason.
struct Health {
  std::map<std::string, double> success;
  std::vector<std::string> permission_errors;
};
Health Check(const std::string& text) {
  Health h;
  static const std::regex kSuccess(
      "rdma_exporter_collector_success\\{collector=\"([^\"]+)\"\\} (\\S+)");
  for (std::sregex_iterator it(text.begin(), text.end(), kSuccess), end; it != end; ++it)
    h.success[(*it)[1]] = std::stod((*it)[2]);
  static const std::regex kPerm(
      "rdma_exporter_read_errors_total\\{[^}]*reason=\"permission\"[^}]*\\}");
  for (std::sregex_iterator it(text.begin(), text.end(), kPerm), end; it != end; ++it)
    h.permission_errors.push_back(it->str());
  return h;
}

// The exporter's own /proc status: effective uid and capability sets.
std::string ProcStatus(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

pid_t ChildOf(pid_t parent) {
  // setpriv execs the exporter in place, `ip netns exec` too: the PID is the exporter's.
  return parent;
}

// The built binary's RUNPATH: only absolute or $ORIGIN-relative entries. An empty entry (CMake
// pads its build RUNPATH with ':' for the install-time rewrite) is the current directory, where
// anyone who can write to it plants a library that runs inside the exporter.
TEST(LeastPrivilege, BuiltBinaryLoadsNoLibraryFromTheWorkingDirectory) {
  std::string out;
  ASSERT_EQ(RunCommand({"readelf", "-d", RDMA_EXPORTER_BIN}, &out), 0) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(\((?:RUNPATH|RPATH)\)[^\[]*\[([^\]]*)\])")))
      << out;
  std::string runpath = m[1];
  size_t start = 0;
  for (;;) {
    size_t colon = runpath.find(':', start);
    std::string entry = runpath.substr(start, colon - start);
    EXPECT_TRUE(!entry.empty() && (entry[0] == '/' || entry.rfind("$ORIGIN", 0) == 0))
        << "RUNPATH entry \"" << entry << "\" in [" << runpath << "]";
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  // The behaviour: a (broken) libcivetweb.so.1 in the working directory is not loaded.
  TempDir dir;
  std::ofstream(dir.path() + "/libcivetweb.so.1") << "";
  ASSERT_EQ(RunCommand({"sh", "-c", "cd \"$1\" && exec \"$2\" --version", "sh", dir.path(),
                        RDMA_EXPORTER_BIN},
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("rdma_exporter, version"), std::string::npos) << out;
}

TEST(LeastPrivilege, DemoFabricAsNobodyWithNoCapabilities) {
  RDMA_REQUIRE_ROOT();
  TempDir root;
  OpenUp(root.path());
  Process sim({kSimulatorBin, "--root", root.path(), "--interval", "200ms"});
  for (int i = 0; i < 400 && sim.stderr_text().find("serving") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_NE(sim.stderr_text().find("serving"), std::string::npos) << sim.stderr_text();

  int port = FreeLoopbackPort();
  std::vector<std::string> argv = kAsNobody;
  argv.insert(argv.end(),
              {kExporterBin, "--web.listen-address=127.0.0.1:" + std::to_string(port),
               "--path.sysfs=" + root.path() + "/sys",
               "--path.fixtures=" + root.path() + "/fixtures", "--poll-interval=200ms"});
  Process exporter(argv);
  ASSERT_TRUE(WaitReady(port, std::chrono::seconds(15))) << exporter.stderr_text();
  std::string status = ProcStatus(ChildOf(exporter.pid()));
  EXPECT_NE(status.find("Uid:\t65534\t65534\t65534\t65534"), std::string::npos) << status;
  EXPECT_NE(status.find("CapEff:\t0000000000000000"), std::string::npos) << status;
  EXPECT_NE(status.find("CapBnd:\t0000000000000000"), std::string::npos) << status;

  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a few polls
  std::string text = HttpGet(port, "/metrics").body;
  Health h = Check(text);
  EXPECT_GE(h.success.size(), 5u) << text.substr(0, 3000);
  for (const auto& [collector, ok] : h.success)
    EXPECT_EQ(ok, 1) << collector;
  EXPECT_TRUE(h.permission_errors.empty()) << h.permission_errors.front();
  EXPECT_NE(text.find("rdma_port_up{"), std::string::npos);
  EXPECT_NE(text.find("rdma_netdev_up{"), std::string::npos);
  EXPECT_NE(text.find("rdma_hw_"), std::string::npos);
  EXPECT_EQ(exporter.Stop(), 0) << exporter.stderr_text();
}

TEST(LeastPrivilege, KernelReadersAsNobodyInANetworkNamespace) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  TempDir dir;
  OpenUp(dir.path());
  // The rxe capture with rxe0 bound to the namespace's veth rdx0 (rxe names it in `parent`).
  fs::copy(RxeCaptureSysfs(), dir.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::ofstream(dir.path() + "/devices/virtual/infiniband/rxe0/parent") << "rdx0\n";
  std::string output;
  RunCommand({"chmod", "-R", "a+rX", dir.path()}, &output);

  const int port = 9879;  // inside the namespace nothing else listens
  std::vector<std::string> argv = {"ip", "netns", "exec", ns.name()};
  argv.insert(argv.end(), kAsNobody.begin(), kAsNobody.end());
  argv.insert(argv.end(),
              {kExporterBin, "--path.sysfs=" + dir.path(),
               "--web.listen-address=127.0.0.1:" + std::to_string(port), "--poll-interval=200ms"});
  Process exporter(argv);
  ns.Enter();
  bool ready = WaitReady(port, std::chrono::seconds(15));
  std::string text = ready ? HttpGet(port, "/metrics").body : "";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  if (ready) text = HttpGet(port, "/metrics").body;
  ns.Leave();
  ASSERT_TRUE(ready) << exporter.stderr_text();
  std::string status = ProcStatus(exporter.pid());
  EXPECT_NE(status.find("CapEff:\t0000000000000000"), std::string::npos) << status;

  Health h = Check(text);
  for (const auto& [collector, ok] : h.success)
    EXPECT_EQ(ok, 1) << collector;
  EXPECT_TRUE(h.permission_errors.empty()) << h.permission_errors.front();
  const std::string labels = "{device=\"rxe0\",port=\"1\",netdev=\"rdx0\"}";
  // rtnetlink (netdev state) and the ethtool ioctl answered an unprivileged process.
  EXPECT_NE(text.find("rdma_netdev_up" + labels + " 1"), std::string::npos) << text.substr(0, 3000);
  EXPECT_NE(text.find("rdma_netdev_mtu_bytes" + labels), std::string::npos);
  EXPECT_EQ(exporter.Stop(), 0) << exporter.stderr_text();
}

}  // namespace
}  // namespace rdma_exporter::testing
