// The built exporter inside a network namespace of the test's own, on a sysfs tree whose RDMA
// port's netdev is a veth of that namespace: the netdev (rtnetlink), ethtool (ioctl) and DCB
// (rtnetlink) collectors run against the real kernel. Needs root; CI runs it as root.
#include <filesystem>
#include <fstream>
#include <thread>

#include "netns.h"
#include "process.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace rdma_exporter::testing {
namespace {

double SampleValue(const std::string& text, const std::string& series) {
  size_t pos = text.find("\n" + series + " ");
  if (pos == std::string::npos) return -1;
  return std::stod(text.substr(pos + series.size() + 2));
}

class ExporterInNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    RDMA_REQUIRE_ROOT();
    ns_ = std::make_unique<NetnsWithVeth>();
    ASSERT_TRUE(ns_->ok());
    // The real rxe capture, with rxe0 bound to the namespace's veth rdx0 (rxe names its netdev
    // in `parent`).
    fs::copy(RxeCaptureSysfs(), dir_.path(),
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    std::ofstream(dir_.path() + "/devices/virtual/infiniband/rxe0/parent") << "rdx0\n";
    port_ = 9879;  // inside the namespace nothing else listens
    exporter_ = std::make_unique<Process>(std::vector<std::string>{
        "ip", "netns", "exec", ns_->name(), RDMA_EXPORTER_BIN, "--path.sysfs=" + dir_.path(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--poll-interval=100ms",
        // roce_config is slow-changing data: re-read every second here instead of every 60 s.
        "--poll-interval.slow=1s", "--collector.ethtool.metrics-include=peer_ifindex"});
    ns_->Enter();
    ASSERT_TRUE(WaitReady(port_, std::chrono::seconds(15))) << exporter_->stderr_text();
  }
  void TearDown() override {
    if (ns_ != nullptr) ns_->Leave();
    if (exporter_ != nullptr) {
      EXPECT_EQ(exporter_->Stop(), 0);
    }
  }
  std::string Metrics() { return HttpGet(port_, "/metrics").body; }
  // Polls /metrics until series has the value (the exporter polls every 100 ms).
  bool WaitFor(const std::string& series, double value) {
    for (int i = 0; i < 100; ++i) {
      if (SampleValue(Metrics(), series) == value) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  TempDir dir_;
  std::unique_ptr<NetnsWithVeth> ns_;
  std::unique_ptr<Process> exporter_;
  int port_ = 0;
};

const std::string kLabels = "{device=\"rxe0\",port=\"1\",netdev=\"rdx0\"}";

TEST_F(ExporterInNetns, CarrierFlapOfThePeerIsSeenWithinAPoll) {
  EXPECT_TRUE(WaitFor("rdma_netdev_up" + kLabels, 1)) << Metrics();
  double changes = SampleValue(Metrics(), "rdma_netdev_carrier_changes_total" + kLabels);
  ASSERT_GE(changes, 0);
  ASSERT_EQ(ns_->Ip("link set rdx1 down"), 0);
  EXPECT_TRUE(WaitFor("rdma_netdev_up" + kLabels, 0));
  EXPECT_GT(SampleValue(Metrics(), "rdma_netdev_carrier_changes_total" + kLabels), changes);
  ASSERT_EQ(ns_->Ip("link set rdx1 up"), 0);
  EXPECT_TRUE(WaitFor("rdma_netdev_up" + kLabels, 1));
  EXPECT_GE(SampleValue(Metrics(), "rdma_netdev_carrier_changes_total" + kLabels), changes + 2);
}

TEST_F(ExporterInNetns, MtuChangeIsExportedAndChecked) {
  // The netdev MTU is read every poll; the check (slow tier) follows within --poll-interval.slow.
  std::string check =
      "rdma_roce_config_ok{device=\"rxe0\",port=\"1\",netdev=\"rdx0\",check=\"mtu_at_least_4200\"}";
  ASSERT_EQ(ns_->Ip("link set rdx0 mtu 1500"), 0);
  EXPECT_TRUE(WaitFor("rdma_netdev_mtu_bytes" + kLabels, 1500));
  EXPECT_TRUE(WaitFor(check, 0));
  ASSERT_EQ(ns_->Ip("link set rdx0 mtu 4200"), 0);
  EXPECT_TRUE(WaitFor("rdma_netdev_mtu_bytes" + kLabels, 4200));
  EXPECT_TRUE(WaitFor(check, 1));
}

TEST_F(ExporterInNetns, VethHasNoDcbAndThatIsNotAnError) {
  EXPECT_TRUE(WaitFor("rdma_dcb_supported" + kLabels, 0)) << Metrics();
  std::string text = Metrics();
  EXPECT_EQ(text.find("rdma_exporter_read_errors_total{collector=\"dcb\""), std::string::npos);
  EXPECT_EQ(text.find("rdma_pfc_enabled{"), std::string::npos);
}

TEST_F(ExporterInNetns, EthtoolStatsOfTheVethAreRead) {
  // veth's `ethtool -S` has peer_ifindex: exported through --collector.ethtool.metrics-include.
  std::string series = "rdma_ethtool_peer_ifindex" + kLabels;
  double value = -1;
  for (int i = 0; i < 50 && value < 0; ++i) {
    value = SampleValue(Metrics(), series);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GT(value, 0) << Metrics();
  std::string promtool;
  EXPECT_EQ(RunCommand({"promtool", "check", "metrics"}, &promtool, Metrics()), 0) << promtool;
}

}  // namespace
}  // namespace rdma_exporter::testing
