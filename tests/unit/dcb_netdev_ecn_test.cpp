// The DCB fixture reader, the sysfs netdev reader and the dcb, netdev and ecn collectors on the
// mlx5-roce fixture tree (mlx5_0 PF port 1 -> ens1f0np0, mlx5_1 VF -> ens1f0v0, mlx5_2 PF ->
// ens2f0np0) with DCB fixture files (tests/fixtures/dcb) and class/net files added in TempDir
// copies. The rtnetlink readers are tested against a veth pair in tests/kernel.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectors/dcb.h"
#include "collectors/ecn.h"
#include "collectors/netdev.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/file_util.h"
#include "rdma_exporter/inventory.h"
#include "rdma_exporter/kernel_readers.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

namespace fs = std::filesystem;
using Families = std::vector<prometheus::MetricFamily>;
using LabelMap = std::map<std::string, std::string>;
using ErrorMap = std::map<std::pair<std::string, std::string>, uint64_t>;

std::string Roce() {
  return FixturePath("mlx5-roce");
}
std::string DcbFixture(const std::string& name) {
  return FixturePath("dcb/" + name);
}

void CopyTree(const std::string& from, const TempDir& to) {
  fs::copy(from, to.path(), fs::copy_options::copy_symlinks | fs::copy_options::recursive);
}

std::string ReadText(const std::string& path) {
  std::string text;
  EXPECT_EQ(ReadWholeFile(path, &text), 0) << path;
  return text;
}

// Like RunCollector, with kernel readers in the context.
CollectResult RunWithKernel(Collector& collector, SysfsReader& sysfs, KernelReaders* kernel) {
  std::vector<DiscoveryError> discovery_errors;
  Inventory inventory = DiscoverInventory(sysfs, {}, &discovery_errors);
  EXPECT_TRUE(discovery_errors.empty());
  ErrorTracker errors;
  CollectContext ctx(sysfs, errors, collector.name(), kernel);
  MetricSink sink;
  EXPECT_TRUE(collector.Collect(inventory, ctx, sink));
  sysfs.SweepUnused();
  return {sink.Take(), ctx.failures(), errors.Totals()};
}

LabelMap Netdev(const std::string& device, const std::string& netdev) {
  return {{"device", device}, {"port", "1"}, {"netdev", netdev}};
}
LabelMap With(LabelMap labels, const std::string& name, const std::string& value) {
  labels[name] = value;
  return labels;
}

size_t CountWithLabel(const Families& families, const std::string& label,
                      const std::string& value) {
  size_t n = 0;
  for (const auto& family : families) {
    for (const auto& m : family.metric) {
      for (const auto& l : m.label) {
        if (l.name == label && l.value == value) ++n;
      }
    }
  }
  return n;
}

// Runs `promtool check metrics` on the rendered families.
void ExpectPromtoolClean(const Families& families) {
  TempDir tmp;
  std::string file = tmp.path() + "/metrics.prom";
  std::ofstream(file) << RenderText(families);
  std::string command = "promtool check metrics < '" + file + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0)
    output.append(buf, n);
  int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "promtool check metrics:\n"
                                                             << output << "\n"
                                                             << RenderText(families);
}

// ---------------------------------------------------------------------------------------------
// DCB fixture reader

TEST(DcbFixtureReader, Mlx5PfWithPfcOnPriority3AndDefaultDscpMap) {
  auto reader = MakeDcbFixtureReader(FixturePath("dcb"));
  DcbConfig config;
  ASSERT_EQ(reader->Read("ens1f0np0", &config), 0);
  EXPECT_TRUE(config.supported);
  EXPECT_TRUE(config.pfc_known);
  EXPECT_EQ(config.pfc_cap, 8);
  EXPECT_EQ(config.pfc_enabled, 0x08);
  EXPECT_EQ(config.dscp_entries, 64);
  for (int dscp = 0; dscp < 64; ++dscp)
    EXPECT_EQ(config.dscp_to_priority[dscp], dscp >> 3) << "dscp " << dscp;
}

TEST(DcbFixtureReader, PcpTrustHasNoDscpEntries) {
  auto reader = MakeDcbFixtureReader(FixturePath("dcb"));
  DcbConfig config;
  ASSERT_EQ(reader->Read("ens2f0np0", &config), 0);
  EXPECT_TRUE(config.supported);
  EXPECT_TRUE(config.pfc_known);
  EXPECT_EQ(config.pfc_cap, 8);
  EXPECT_EQ(config.pfc_enabled, 0x08);
  EXPECT_EQ(config.dscp_entries, 0);
  for (int dscp = 0; dscp < 64; ++dscp)
    EXPECT_EQ(config.dscp_to_priority[dscp], -1) << "dscp " << dscp;
}

TEST(DcbFixtureReader, UnsupportedWordMeansNoDcbAndIsNotAnError) {
  auto reader = MakeDcbFixtureReader(FixturePath("dcb"));
  DcbConfig config;
  config.supported = true;
  ASSERT_EQ(reader->Read("eth0", &config), 0);
  EXPECT_FALSE(config.supported);
  EXPECT_FALSE(config.pfc_known);
  EXPECT_EQ(config.pfc_enabled, 0);
  EXPECT_EQ(config.dscp_entries, 0);
  EXPECT_EQ(config.dscp_to_priority[0], -1);
}

TEST(DcbFixtureReader, MissingFileIsNoDevice) {
  auto reader = MakeDcbFixtureReader(FixturePath("dcb"));
  DcbConfig config;
  EXPECT_EQ(reader->Read("nosuch0", &config), ENODEV);
  EXPECT_EQ(reader->Read("", &config), ENODEV);
  EXPECT_EQ(reader->Read("../dcb/eth0", &config), ENODEV);
  EXPECT_FALSE(config.supported);
}

TEST(DcbFixtureReader, SymbolicDscpNamesOnSeveralLinesAndNoPfcLine) {
  TempDir dir;
  // `dcb app show` without -N prints rt_dsfield names; a later entry for a DSCP replaces it.
  dir.Write("p0", "dscp-prio default:0 CS1:1 AF41:4\ndscp-prio EF:5 63:7 CS1:2\n");
  auto reader = MakeDcbFixtureReader(dir.path());
  DcbConfig config;
  ASSERT_EQ(reader->Read("p0", &config), 0);
  EXPECT_TRUE(config.supported);
  EXPECT_FALSE(config.pfc_known);
  EXPECT_EQ(config.pfc_cap, 0);
  EXPECT_EQ(config.dscp_entries, 5);
  EXPECT_EQ(config.dscp_to_priority[0], 0);
  EXPECT_EQ(config.dscp_to_priority[8], 2);
  EXPECT_EQ(config.dscp_to_priority[34], 4);
  EXPECT_EQ(config.dscp_to_priority[46], 5);
  EXPECT_EQ(config.dscp_to_priority[63], 7);
  EXPECT_EQ(config.dscp_to_priority[1], -1);
}

TEST(DcbFixtureReader, MalformedContentIsInvalid) {
  TempDir dir;
  dir.Write("a", "prio-pfc 0:off 3:maybe\n");
  dir.Write("b", "prio-pfc 8:on\n");
  dir.Write("c", "dscp-prio 64:1\n");
  dir.Write("d", "dscp-prio 10:8\n");
  dir.Write("e", "dscp-prio CS9:1\n");
  dir.Write("f", "pfc-cap many\n");
  auto reader = MakeDcbFixtureReader(dir.path());
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) {
    DcbConfig config;
    EXPECT_EQ(reader->Read(name, &config), EINVAL) << name;
    EXPECT_FALSE(config.supported) << name;
  }
}

// ---------------------------------------------------------------------------------------------
// DcbCollector

// DCB fixture files named after the mlx5-roce netdevs.
struct DcbSetup {
  TempDir dcb_dir;
  SysfsReader sysfs{Roce()};
  KernelReaders kernel;
  DcbSetup() { kernel.dcb = MakeDcbFixtureReader(dcb_dir.path()); }
  void Put(const std::string& netdev, const std::string& fixture) const {
    dcb_dir.Write(netdev, ReadText(DcbFixture(fixture)));
  }
};

TEST(DcbCollector, PfcPriority3DscpTrustOnPfAndPcpTrustOnSecondPfVfSkipped) {
  DcbSetup s;
  s.Put("ens1f0np0", "ens1f0np0");  // DSCP trust
  s.Put("ens2f0np0", "ens2f0np0");  // PCP trust
  // No file for the VF's ens1f0v0: reading it would count a no_device error.
  DcbCollector collector;
  auto r = RunWithKernel(collector, s.sysfs, &s.kernel);
  EXPECT_EQ(r.failures, 0u);
  EXPECT_TRUE(r.errors.empty());

  EXPECT_EQ(Count(r.families, "rdma_dcb_supported"), 2u);
  EXPECT_EQ(Value(r.families, "rdma_dcb_supported", Netdev("mlx5_0", "ens1f0np0")), 1);
  EXPECT_EQ(Value(r.families, "rdma_dcb_supported", Netdev("mlx5_2", "ens2f0np0")), 1);
  EXPECT_EQ(CountWithLabel(r.families, "device", "mlx5_1"), 0u);

  EXPECT_EQ(Count(r.families, "rdma_pfc_enabled"), 16u);
  for (const char* device : {"mlx5_0", "mlx5_2"}) {
    std::string netdev = std::string(device) == "mlx5_0" ? "ens1f0np0" : "ens2f0np0";
    for (int prio = 0; prio < 8; ++prio) {
      EXPECT_EQ(Value(r.families, "rdma_pfc_enabled",
                      With(Netdev(device, netdev), "priority", std::to_string(prio))),
                prio == 3 ? 1 : 0)
          << device << " priority " << prio;
    }
  }

  EXPECT_EQ(Count(r.families, "rdma_qos_trust_info"), 2u);
  EXPECT_EQ(
      Value(r.families, "rdma_qos_trust_info", With(Netdev("mlx5_0", "ens1f0np0"), "mode", "dscp")),
      1);
  EXPECT_EQ(
      Value(r.families, "rdma_qos_trust_info", With(Netdev("mlx5_2", "ens2f0np0"), "mode", "pcp")),
      1);
  // The 64-entry DSCP map is not exported.
  EXPECT_EQ(r.families.size(), 3u);
  ExpectPromtoolClean(r.families);
}

TEST(DcbCollector, UnsupportedIsZeroWithoutPfcTrustOrError) {
  DcbSetup s;
  s.Put("ens1f0np0", "eth0");
  s.Put("ens2f0np0", "eth0");
  DcbCollector collector;
  for (int poll = 0; poll < 2; ++poll) {
    auto r = RunWithKernel(collector, s.sysfs, &s.kernel);
    EXPECT_EQ(r.failures, 0u);
    EXPECT_TRUE(r.errors.empty());
    EXPECT_EQ(Count(r.families, "rdma_dcb_supported"), 2u);
    EXPECT_EQ(Value(r.families, "rdma_dcb_supported", Netdev("mlx5_0", "ens1f0np0")), 0);
    EXPECT_EQ(Value(r.families, "rdma_dcb_supported", Netdev("mlx5_2", "ens2f0np0")), 0);
    EXPECT_EQ(Count(r.families, "rdma_pfc_enabled"), 0u);
    EXPECT_EQ(Count(r.families, "rdma_qos_trust_info"), 0u);
  }
}

TEST(DcbCollector, MissingNetdevCostsOnlyItsSeriesAndIsLeftToTheNetdevCollector) {
  DcbSetup s;
  s.Put("ens1f0np0", "ens1f0np0");
  DcbCollector collector;
  auto r = RunWithKernel(collector, s.sysfs, &s.kernel);
  // ENODEV: the netdev collector reports the missing netdev; dcb does not count it twice.
  EXPECT_EQ(r.failures, 0u);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(Count(r.families, "rdma_dcb_supported"), 1u);
  EXPECT_EQ(Value(r.families, "rdma_dcb_supported", Netdev("mlx5_0", "ens1f0np0")), 1);
  EXPECT_EQ(Count(r.families, "rdma_pfc_enabled"), 8u);
}

// A DcbReader failing with a chosen errno.
class FailingDcbReader : public DcbReader {
 public:
  explicit FailingDcbReader(int err) : err_(err) {}
  int Read(const std::string&, DcbConfig* out) override {
    *out = DcbConfig{};
    return err_;
  }

 private:
  int err_;
};

TEST(DcbCollector, OtherReadErrorsAreCountedPerNetdev) {
  SysfsReader sysfs(Roce());
  KernelReaders kernel;
  kernel.dcb = std::make_unique<FailingDcbReader>(EIO);
  DcbCollector collector;
  auto r = RunWithKernel(collector, sysfs, &kernel);
  EXPECT_TRUE(r.families.empty());
  EXPECT_EQ(r.errors, (ErrorMap{{{"dcb", "io"}, 2}}));  // ens1f0np0 and ens2f0np0, not the VF
}

TEST(DcbCollector, NoKernelReadersNoSeries) {
  SysfsReader sysfs(Roce());
  DcbCollector collector;
  auto r = RunCollector(collector, sysfs);
  EXPECT_TRUE(r.families.empty());
  EXPECT_EQ(r.failures, 0u);
}

// ---------------------------------------------------------------------------------------------
// NetdevSysfsReader and NetdevCollector

constexpr const char* kPf = "class/net/ens1f0np0/";
constexpr const char* kPf2 = "class/net/ens2f0np0/";
constexpr const char* kVf = "class/net/ens1f0v0/";

// mlx5-roce with full class/net files: ens1f0np0 up at 100G, ens2f0np0 admin up without link
// (speed -1), ens1f0v0 admin down (no carrier file, no speed file).
void WriteNetdevFiles(const TempDir& tmp) {
  auto put = [&](const std::string& dir, const std::string& file, const std::string& value) {
    tmp.Write(dir + file, value + "\n");
  };
  put(kPf, "flags", "0x1003");
  put(kPf, "mtu", "4200");
  put(kPf, "speed", "100000");
  put(kPf, "carrier_changes", "5");
  put(kPf, "carrier_up_count", "3");
  put(kPf, "carrier_down_count", "2");
  put(kPf, "statistics/rx_errors", "7");
  put(kPf, "statistics/tx_errors", "8");
  put(kPf, "statistics/rx_dropped", "9");
  put(kPf, "statistics/tx_dropped", "10");

  put(kPf2, "flags", "0x1003");
  put(kPf2, "speed", "-1");
  put(kPf2, "carrier_changes", "1");
  put(kPf2, "carrier_up_count", "0");
  put(kPf2, "carrier_down_count", "1");
  for (const char* stat : {"rx_errors", "tx_errors", "rx_dropped", "tx_dropped"})
    put(kPf2, std::string("statistics/") + stat, "0");

  put(kVf, "flags", "0x1002");
  put(kVf, "operstate", "down");
  tmp.Remove(std::string(kVf) + "carrier");
  put(kVf, "carrier_changes", "0");
  put(kVf, "carrier_up_count", "0");
  put(kVf, "carrier_down_count", "0");
  for (const char* stat : {"rx_errors", "tx_errors", "rx_dropped", "tx_dropped"})
    put(kVf, std::string("statistics/") + stat, "0");
}

TEST(NetdevSysfsReader, ReadsEveryFieldOfAnUpNetdev) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  WriteNetdevFiles(tmp);
  SysfsReader sysfs(tmp.path());
  auto reader = MakeNetdevSysfsReader(sysfs);
  reader->BeginPoll();
  NetdevState s;
  ASSERT_EQ(reader->Read("ens1f0np0", &s), 0);
  EXPECT_TRUE(s.admin_up);
  EXPECT_TRUE(s.oper_up);
  EXPECT_EQ(s.carrier, true);
  EXPECT_EQ(s.mtu, 4200u);
  EXPECT_EQ(s.carrier_changes, 5u);
  EXPECT_EQ(s.carrier_up_count, 3u);
  EXPECT_EQ(s.carrier_down_count, 2u);
  EXPECT_EQ(s.rx_errors, 7u);
  EXPECT_EQ(s.tx_errors, 8u);
  EXPECT_EQ(s.rx_dropped, 9u);
  EXPECT_EQ(s.tx_dropped, 10u);
}

TEST(NetdevSysfsReader, AdminDownHasNoCarrierAndNoLinkIsCarrierZero) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  WriteNetdevFiles(tmp);
  SysfsReader sysfs(tmp.path());
  auto reader = MakeNetdevSysfsReader(sysfs);
  NetdevState vf;
  ASSERT_EQ(reader->Read("ens1f0v0", &vf), 0);
  EXPECT_FALSE(vf.admin_up);
  EXPECT_FALSE(vf.oper_up);
  EXPECT_FALSE(vf.carrier.has_value());
  EXPECT_EQ(vf.mtu, 1500u);
  EXPECT_EQ(vf.carrier_changes, 0u);
  NetdevState pf2;
  ASSERT_EQ(reader->Read("ens2f0np0", &pf2), 0);
  EXPECT_TRUE(pf2.admin_up);
  EXPECT_FALSE(pf2.oper_up);
  EXPECT_EQ(pf2.carrier, false);
  EXPECT_EQ(pf2.carrier_down_count, 1u);
}

TEST(NetdevSysfsReader, CarrierEinvalOfAdminDownNetdevIsUnknown) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  tmp.Write(std::string(kPf) + "flags", "0x1002\n");
  tmp.Write(std::string(kPf) + "operstate", "down\n");
  FaultyReader sysfs(tmp.path());
  sysfs.read_faults[std::string(kPf) + "carrier"] = EINVAL;
  auto reader = MakeNetdevSysfsReader(sysfs);
  NetdevState s;
  ASSERT_EQ(reader->Read("ens1f0np0", &s), 0);
  EXPECT_FALSE(s.admin_up);
  EXPECT_FALSE(s.oper_up);
  EXPECT_FALSE(s.carrier.has_value());
}

TEST(NetdevSysfsReader, TreeWithoutFlagsTakesAdminStateFromCarrierReadability) {
  // The committed mlx5-roce tree has operstate/carrier/mtu but no flags or counters.
  SysfsReader sysfs(Roce());
  auto reader = MakeNetdevSysfsReader(sysfs);
  NetdevState s;
  ASSERT_EQ(reader->Read("ens2f0np0", &s), 0);
  EXPECT_TRUE(s.admin_up);  // carrier readable = running
  EXPECT_FALSE(s.oper_up);
  EXPECT_EQ(s.carrier, false);
  EXPECT_EQ(s.mtu, 1500u);
  EXPECT_FALSE(s.carrier_changes.has_value());
  EXPECT_FALSE(s.rx_errors.has_value());
}

TEST(NetdevSysfsReader, MissingNetdevIsNoDevice) {
  SysfsReader sysfs(Roce());
  auto reader = MakeNetdevSysfsReader(sysfs);
  NetdevState s;
  EXPECT_EQ(reader->Read("nosuch0", &s), ENODEV);
  EXPECT_EQ(reader->Read("", &s), ENODEV);
}

TEST(NetdevCollector, AllFamiliesWithExactValues) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  WriteNetdevFiles(tmp);
  SysfsReader sysfs(tmp.path());
  KernelReaders kernel;
  kernel.netdev = MakeNetdevSysfsReader(sysfs);
  NetdevCollector collector;
  auto r = RunWithKernel(collector, sysfs, &kernel);
  EXPECT_EQ(r.failures, 0u);
  EXPECT_TRUE(r.errors.empty());

  auto pf = Netdev("mlx5_0", "ens1f0np0");
  auto vf = Netdev("mlx5_1", "ens1f0v0");
  auto pf2 = Netdev("mlx5_2", "ens2f0np0");
  const std::map<std::string, std::vector<std::optional<double>>> expected = {
      // family: {ens1f0np0, ens1f0v0, ens2f0np0}
      {"rdma_netdev_up", {1, 0, 0}},
      {"rdma_netdev_admin_up", {1, 0, 1}},
      {"rdma_netdev_carrier", {1, std::nullopt, 0}},
      {"rdma_netdev_carrier_changes_total", {5, 0, 1}},
      {"rdma_netdev_carrier_up_total", {3, 0, 0}},
      {"rdma_netdev_carrier_down_total", {2, 0, 1}},
      {"rdma_netdev_mtu_bytes", {4200, 1500, 1500}},
      {"rdma_netdev_speed_bytes_per_second", {12.5e9, std::nullopt, std::nullopt}},
      {"rdma_netdev_receive_errors_total", {7, 0, 0}},
      {"rdma_netdev_transmit_errors_total", {8, 0, 0}},
      {"rdma_netdev_receive_drops_total", {9, 0, 0}},
      {"rdma_netdev_transmit_drops_total", {10, 0, 0}},
  };
  for (const auto& [family, values] : expected) {
    SCOPED_TRACE(family);
    EXPECT_EQ(Value(r.families, family, pf), values[0]);
    EXPECT_EQ(Value(r.families, family, vf), values[1]);
    EXPECT_EQ(Value(r.families, family, pf2), values[2]);
    size_t present = 0;
    for (const auto& v : values)
      present += v.has_value() ? 1 : 0;
    EXPECT_EQ(Count(r.families, family), present);
  }
  EXPECT_EQ(r.families.size(), expected.size());
  ExpectPromtoolClean(r.families);
}

TEST(NetdevCollector, SpeedEinvalOfDownNetdevIsNoSeriesAndNoError) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  WriteNetdevFiles(tmp);
  FaultyReader sysfs(tmp.path());
  sysfs.read_faults[std::string(kPf2) + "speed"] = EINVAL;
  sysfs.read_faults[std::string(kVf) + "carrier"] = EINVAL;
  sysfs.read_faults[std::string(kPf) + "speed"] = EIO;
  KernelReaders kernel;
  kernel.netdev = MakeNetdevSysfsReader(sysfs);
  NetdevCollector collector;
  auto r = RunWithKernel(collector, sysfs, &kernel);
  EXPECT_EQ(Count(r.families, "rdma_netdev_speed_bytes_per_second"), 0u);
  EXPECT_EQ(Count(r.families, "rdma_netdev_carrier"), 2u);
  // Only the EIO of a speed file is an error.
  EXPECT_EQ(r.errors, (ErrorMap{{{"netdev", "io"}, 1}}));
}

TEST(NetdevCollector, VanishedNetdevIsANoDeviceErrorAndCostsOnlyItsSeries) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  WriteNetdevFiles(tmp);
  SysfsReader sysfs(tmp.path());
  KernelReaders kernel;
  kernel.netdev = MakeNetdevSysfsReader(sysfs);
  NetdevCollector collector;
  // Discovery still names ens2f0np0 (mlx5_2's PCI function net/ dir), class/net lost it.
  tmp.Remove("class/net/ens2f0np0");
  auto r = RunWithKernel(collector, sysfs, &kernel);
  EXPECT_EQ(r.errors, (ErrorMap{{{"netdev", "no_device"}, 1}}));
  EXPECT_EQ(Count(r.families, "rdma_netdev_up"), 2u);
  EXPECT_FALSE(Value(r.families, "rdma_netdev_up", Netdev("mlx5_2", "ens2f0np0")).has_value());
}

// A NetdevReader like the rtnetlink one: no carrier up/down counts.
class NoCarrierCountsReader : public NetdevReader {
 public:
  int Read(const std::string& netdev, NetdevState* out) override {
    reads.push_back(netdev);
    *out = NetdevState{};
    out->admin_up = out->oper_up = true;
    out->carrier = true;
    out->carrier_changes = 4;
    return 0;
  }
  std::vector<std::string> reads;
};

TEST(NetdevCollector, CarrierUpDownCountsFallBackToSysfsAndEachNetdevIsReadOnce) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  WriteNetdevFiles(tmp);
  SysfsReader sysfs(tmp.path());
  KernelReaders kernel;
  auto reader = std::make_unique<NoCarrierCountsReader>();
  auto* raw = reader.get();
  kernel.netdev = std::move(reader);
  NetdevCollector collector;
  auto r = RunWithKernel(collector, sysfs, &kernel);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(raw->reads, (std::vector<std::string>{"ens1f0np0", "ens1f0v0", "ens2f0np0"}));
  auto pf = Netdev("mlx5_0", "ens1f0np0");
  EXPECT_EQ(Value(r.families, "rdma_netdev_carrier_changes_total", pf), 4);
  EXPECT_EQ(Value(r.families, "rdma_netdev_carrier_up_total", pf), 3);
  EXPECT_EQ(Value(r.families, "rdma_netdev_carrier_down_total", pf), 2);
  EXPECT_EQ(Count(r.families, "rdma_netdev_mtu_bytes"), 0u);
  EXPECT_EQ(Count(r.families, "rdma_netdev_receive_errors_total"), 0u);
}

TEST(NetdevCollector, NoKernelReadersNoSeries) {
  SysfsReader sysfs(Roce());
  NetdevCollector collector;
  auto r = RunCollector(collector, sysfs);
  EXPECT_TRUE(r.families.empty());
  EXPECT_EQ(r.failures, 0u);
}

// ---------------------------------------------------------------------------------------------
// EcnCollector

void WriteEcnFiles(const TempDir& tmp, const std::string& netdev) {
  for (int prio = 0; prio < 8; ++prio) {
    std::string p = std::to_string(prio);
    tmp.Write("class/net/" + netdev + "/ecn/roce_np/enable/" + p, prio == 3 ? "1\n" : "0\n");
    tmp.Write("class/net/" + netdev + "/ecn/roce_rp/enable/" + p,
              prio == 3 || prio == 5 ? "1\n" : "0\n");
  }
}

TEST(EcnCollector, OfedPfNpOnPriority3RpOn3And5) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  WriteEcnFiles(tmp, "ens1f0np0");
  SysfsReader sysfs(tmp.path());
  EcnCollector collector;
  auto r = RunCollector(collector, sysfs);
  EXPECT_EQ(r.failures, 0u);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(Count(r.families, "rdma_ecn_enabled"), 16u);
  auto pf = Netdev("mlx5_0", "ens1f0np0");
  for (int prio = 0; prio < 8; ++prio) {
    std::string p = std::to_string(prio);
    EXPECT_EQ(Value(r.families, "rdma_ecn_enabled", With(With(pf, "role", "np"), "priority", p)),
              prio == 3 ? 1 : 0)
        << "np " << prio;
    EXPECT_EQ(Value(r.families, "rdma_ecn_enabled", With(With(pf, "role", "rp"), "priority", p)),
              prio == 3 || prio == 5 ? 1 : 0)
        << "rp " << prio;
  }
  EXPECT_EQ(CountWithLabel(r.families, "device", "mlx5_1"), 0u);  // VF: no ecn directory
  EXPECT_EQ(CountWithLabel(r.families, "device", "mlx5_2"), 0u);
  ExpectPromtoolClean(r.families);
}

TEST(EcnCollector, UpstreamTreeWithoutEcnDirectoryHasNoSeriesAndNoError) {
  SysfsReader sysfs(Roce());
  EcnCollector collector;
  auto r = RunCollector(collector, sysfs);
  EXPECT_TRUE(r.families.empty());
  EXPECT_EQ(r.failures, 0u);
  EXPECT_TRUE(r.errors.empty());
}

TEST(EcnCollector, GarbageValueIsMalformedAndCostsOnlyItsSeries) {
  TempDir tmp;
  CopyTree(Roce(), tmp);
  WriteEcnFiles(tmp, "ens1f0np0");
  tmp.Write("class/net/ens1f0np0/ecn/roce_rp/enable/5", "2\n");
  tmp.Remove("class/net/ens1f0np0/ecn/roce_np/enable/7");
  SysfsReader sysfs(tmp.path());
  EcnCollector collector;
  auto r = RunCollector(collector, sysfs);
  EXPECT_EQ(r.errors, (ErrorMap{{{"ecn", "malformed"}, 1}}));
  EXPECT_EQ(Count(r.families, "rdma_ecn_enabled"), 14u);
}

}  // namespace
}  // namespace rdma_exporter::testing
