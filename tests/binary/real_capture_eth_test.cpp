// The built exporter and CLI on real Ethernet captures (tests/fixtures/real/<capture>, see
// PROVENANCE.md in each): every value the exporter maps is compared with the value the test
// reads itself from the published raw text under raw/, including issue 15 items 1 (RoCE LAG),
// 5 (E810), 6 (curated mlx5 counters) and 10 (device limits); tests/fixtures/real/README.md
// maps each item to its test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "real_capture.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

// name{a="x",b="y"} with the labels in the order the exporter writes them.
std::string Series(const std::string& name, const Labels& labels) {
  std::string series = name + "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    series += (i == 0 ? "" : ",") + labels[i].first + "=\"" + labels[i].second + "\"";
  }
  return series + "}";
}

std::string ReadRaw(const std::string& capture, const std::string& file) {
  return ReadCaptureFile(RealCaptureDir(capture) + "/raw/" + file).value_or("");
}

using EthtoolStats = std::vector<std::pair<std::string, uint64_t>>;

// "     name: value" lines of an `ethtool -S` text, in order; comments and headers (no number
// after the last colon) are skipped.
EthtoolStats ParseEthtoolStats(const std::string& text) {
  EthtoolStats stats;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t colon = line.rfind(':');
    size_t first = line.find_first_not_of(' ');
    if (colon == std::string::npos || first == std::string::npos || line[first] == '#') continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) continue;
    stats.emplace_back(line.substr(first, colon - first), std::stoull(value));
  }
  return stats;
}

EthtoolStats RawEthtoolStats(const std::string& capture, const std::string& file) {
  return ParseEthtoolStats(ReadRaw(capture, file));
}

// One scrape of the exporter on a capture, linted with promtool.
struct Scrape {
  std::string text;
  std::map<std::string, double> samples;
};

Scrape ScrapeCapture(const std::string& capture) {
  CaptureExporter exporter(RealCaptureDir(capture));
  Scrape scrape;
  scrape.text = exporter.Scrape();
  scrape.samples = ParseSamples(scrape.text);
  ExpectPromtoolCleanExposition(scrape.text);
  return scrape;
}

std::string Cli(const std::string& capture, const std::string& subcommand,
                const std::vector<std::string>& extra = {}) {
  std::string output;
  EXPECT_EQ(RunCli(RealCaptureDir(capture), subcommand, &output, extra), 0) << output;
  return output;
}

std::vector<std::string> Fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> fields;
  std::string field;
  while (in >> field)
    fields.push_back(field);
  return fields;
}

// The ethtool -> metric mapping of docs/metrics.md for the names the exporter curates today,
// written out here so that the test does not share the code it checks. Per-priority names are
// handled by ExpectedPriorityMapping. Scale: microseconds -> seconds, percent -> ratio.
struct ExpectedMapping {
  std::string family;
  Labels extra;
  double scale = 1;
};

std::optional<ExpectedMapping> ExpectedExactMapping(const std::string& stat) {
  static const std::map<std::string, ExpectedMapping> kTable = {
      {"tx_pause_storm_warning_events", {"rdma_pfc_storm_events_total", {{"level", "warning"}}}},
      {"tx_pause_storm_error_events", {"rdma_pfc_storm_events_total", {{"level", "error"}}}},
      {"rx_global_pause", {"rdma_global_pause_frames_total", {{"direction", "rx"}}}},
      {"tx_global_pause", {"rdma_global_pause_frames_total", {{"direction", "tx"}}}},
      {"link_down_events_phy", {"rdma_phy_link_down_events_total", {}}},
      {"rx_symbol_err_phy", {"rdma_phy_symbol_errors_total", {}}},
      {"rx_crc_errors_phy", {"rdma_phy_crc_errors_total", {}}},
      {"rx_corrected_bits_phy", {"rdma_phy_fec_corrected_bit_errors_total", {}}},
      {"rx_pcs_symbol_err_phy", {"rdma_phy_uncorrectable_symbol_errors_total", {}}},
      {"rx_discards_phy", {"rdma_phy_receive_discards_total", {}}},
      {"rx_buffer_passed_thres_phy", {"rdma_phy_receive_buffer_full_events_total", {}}},
      {"rx_out_of_buffer", {"rdma_nic_receive_out_of_buffer_total", {}}},
      {"outbound_pci_stalled_rd", {"rdma_pcie_outbound_stalled_ratio", {{"kind", "read"}}, 0.01}},
      {"outbound_pci_stalled_wr", {"rdma_pcie_outbound_stalled_ratio", {{"kind", "write"}}, 0.01}},
      {"outbound_pci_stalled_rd_events",
       {"rdma_pcie_outbound_stalled_events_total", {{"kind", "read"}}}},
      {"outbound_pci_stalled_wr_events",
       {"rdma_pcie_outbound_stalled_events_total", {{"kind", "write"}}}},
      // Issue 15 item 6 (docs/metrics.md and the shared issue 15 names).
      {"tx_discards_phy", {"rdma_phy_transmit_discards_total", {}}},
      {"rx_pause_ctrl_phy", {"rdma_phy_pause_control_frames_total", {{"direction", "rx"}}}},
      {"tx_pause_ctrl_phy", {"rdma_phy_pause_control_frames_total", {{"direction", "tx"}}}},
      {"rx_pci_signal_integrity",
       {"rdma_pcie_signal_integrity_errors_total", {{"direction", "rx"}}}},
      {"tx_pci_signal_integrity",
       {"rdma_pcie_signal_integrity_errors_total", {{"direction", "tx"}}}},
      {"module_unplug", {"rdma_module_events_total", {{"event", "unplug"}}}},
      {"module_bus_stuck", {"rdma_module_events_total", {{"event", "bus_stuck"}}}},
      {"module_high_temp", {"rdma_module_events_total", {{"event", "high_temperature"}}}},
      {"module_bad_shorted", {"rdma_module_events_total", {{"event", "bad_shorted"}}}},
  };
  auto it = kTable.find(stat);
  if (it == kTable.end()) return std::nullopt;
  return it->second;
}

// rx_err_lane_<N>_phy and rx/tx_vport_rdma_<cast>_<bytes|packets> (issue 15 item 6).
std::optional<ExpectedMapping> ExpectedLaneOrVportMapping(const std::string& stat) {
  std::smatch match;
  static const std::regex lane(R"(^rx_err_lane_([0-7])_phy$)");
  if (std::regex_match(stat, match, lane)) {
    return ExpectedMapping{"rdma_phy_lane_errors_total", {{"lane", match[1].str()}}};
  }
  static const std::regex vport(R"(^(rx|tx)_vport_rdma_(unicast|multicast)_(bytes|packets)$)");
  if (std::regex_match(stat, match, vport)) {
    return ExpectedMapping{"rdma_roce_vport_" + match[3].str() + "_total",
                           {{"direction", match[1].str()}, {"cast", match[2].str()}}};
  }
  return std::nullopt;
}

// rx/tx_prio<p>_<what> names, with the discard reasons as renamed by issue 15 (item 6:
// `_discards` is the lack of port buffer, `_buf_discard` of per-host buffer).
std::optional<ExpectedMapping> ExpectedPriorityMapping(const std::string& stat) {
  if (stat.size() < 10 || stat.compare(2, 5, "_prio") != 0) return std::nullopt;
  std::string direction = stat.substr(0, 2);
  size_t underscore = stat.find('_', 7);
  std::string priority = stat.substr(7, underscore - 7);
  std::string what = stat.substr(underscore + 1);
  Labels dir_prio = {{"direction", direction}, {"priority", priority}};
  if (what == "bytes") return ExpectedMapping{"rdma_priority_bytes_total", dir_prio};
  if (what == "packets") return ExpectedMapping{"rdma_priority_packets_total", dir_prio};
  if (what == "pause") return ExpectedMapping{"rdma_pfc_pause_frames_total", dir_prio};
  if (what == "pause_duration") {
    return ExpectedMapping{"rdma_pfc_pause_duration_seconds_total", dir_prio, 1e-6};
  }
  if (direction != "rx") return std::nullopt;
  for (const auto& [suffix, reason] :
       std::map<std::string, std::string>{{"cong_discard", "congestion"},
                                          {"buf_discard", "host_buffer"},
                                          {"discards", "port_buffer"}}) {
    if (what == suffix) {
      return ExpectedMapping{"rdma_priority_discards_total",
                             {{"reason", reason}, {"priority", priority}}};
    }
  }
  if (what == "marked") {
    return ExpectedMapping{"rdma_priority_ecn_marked_packets_total", {{"priority", priority}}};
  }
  return std::nullopt;
}

// Compares every raw stat with a curated mapping with its series on `netdev`; returns how
// many were compared.
int ExpectEveryCuratedStat(const Scrape& scrape,
                           const std::vector<std::pair<std::string, uint64_t>>& raw,
                           const Labels& netdev) {
  int checked = 0;
  for (const auto& [stat, value] : raw) {
    auto mapping = ExpectedExactMapping(stat);
    if (!mapping) mapping = ExpectedLaneOrVportMapping(stat);
    if (!mapping) mapping = ExpectedPriorityMapping(stat);
    if (!mapping) continue;
    Labels labels = netdev;
    labels.insert(labels.end(), mapping->extra.begin(), mapping->extra.end());
    auto got = FindSample(scrape.samples, Series(mapping->family, labels));
    EXPECT_TRUE(got.has_value()) << stat << " -> " << Series(mapping->family, labels);
    if (got) {
      EXPECT_DOUBLE_EQ(*got, static_cast<double>(value) * mapping->scale) << stat;
    }
    ++checked;
  }
  return checked;
}

TEST(RealCaptureEth, Mlx5LaneCaptureEveryCuratedValueMatchesTheRawEthtoolOutput) {
  Scrape scrape = ScrapeCapture("mlx5-lane-ethtool");
  const Labels netdev = {{"device", "mlx5_0"}, {"port", "1"}, {"netdev", "p1"}};
  auto raw = RawEthtoolStats("mlx5-lane-ethtool", "ethtool-S.txt");
  ASSERT_EQ(raw.size(), 162u);
  // 14 phy/pcie/storm/out-of-buffer names, rx/tx prio0 bytes+packets, rx_prio0_cong_discard
  // and rx_prio0_marked; item 6: 4 lanes, tx_discards_phy, 2 pause-control, 2 PCIe signal
  // integrity, 4 module events, 8 vport RDMA, rx_prio0_discards and rx_prio0_buf_discard.
  EXPECT_EQ(ExpectEveryCuratedStat(scrape, raw, netdev), 43);
  // The port whose lane 3 is failing: FEC corrects 17.7 M bits, 386 packets are still lost.
  EXPECT_EQ(FindSample(scrape.samples, Series("rdma_phy_fec_corrected_bit_errors_total", netdev)),
            17750739);
  EXPECT_EQ(FindSample(scrape.samples, Series("rdma_phy_crc_errors_total", netdev)), 386);
  // The reasons before issue 15 are gone.
  EXPECT_EQ(scrape.text.find("reason=\"buffer\""), std::string::npos);
  EXPECT_EQ(scrape.text.find("reason=\"other\""), std::string::npos);
}

// The doctor's lines by check name ("PASS  pfc_storm  ..."). Its exit code says whether a
// check failed; these captures have no /dev/infiniband, so it is not asserted.
std::map<std::string, std::string> DoctorLines(const std::string& capture_dir) {
  std::string out;
  RunCli(capture_dir, "doctor", &out);
  std::map<std::string, std::string> checks;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    auto fields = Fields(line);
    if (fields.size() >= 2 &&
        fields[0].find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string::npos) {
      checks[fields[1]] = line;
    }
  }
  return checks;
}

// Check name -> status (PASS, SKIP, WARN, FAIL).
std::map<std::string, std::string> DoctorStatuses(const std::string& capture) {
  std::map<std::string, std::string> statuses;
  for (const auto& [check, line] : DoctorLines(RealCaptureDir(capture)))
    statuses[check] = Fields(line)[0];
  return statuses;
}

TEST(RealCaptureEth, Mlx5LaneCaptureCliFindsTheNetdevAndNoPauseStorm) {
  EXPECT_NE(Cli("mlx5-lane-ethtool", "ibdev2netdev").find("mlx5_0 port 1 ==> p1 "),
            std::string::npos);
  // Both pause-storm counters of the raw capture are 0: the check ran and passed.
  auto raw = RawEthtoolStats("mlx5-lane-ethtool", "ethtool-S.txt");
  for (const auto& [stat, value] : raw) {
    if (stat.rfind("tx_pause_storm_", 0) == 0) {
      ASSERT_EQ(value, 0u) << stat;
    }
  }
  EXPECT_EQ(DoctorStatuses("mlx5-lane-ethtool")["pfc_storm"], "PASS");
}

TEST(RealCaptureEth, Mlx5PriorityCaptureAbove32BitsMatchesTheRawEthtoolOutput) {
  Scrape scrape = ScrapeCapture("mlx5-prio-ethtool");
  const Labels netdev = {{"device", "mlx5_0"}, {"port", "1"}, {"netdev", "enp178s0f0"}};
  auto raw = RawEthtoolStats("mlx5-prio-ethtool", "ethtool-S-grep-prio-before.txt");
  ASSERT_EQ(raw.size(), 32u);
  // Priority 0 carries all the traffic: its 4 series are exported, idle priorities are not.
  EXPECT_EQ(ExpectEveryCuratedStat(scrape, {raw.begin(), raw.begin() + 4}, netdev), 4);
  for (size_t i = 4; i < raw.size(); ++i)
    ASSERT_EQ(raw[i].second, 0u) << raw[i].first;
  EXPECT_EQ(scrape.text.find("priority=\"1\""), std::string::npos);
}

TEST(RealCaptureEth, E810CaptureIsServedAndItsNetdevFound) {
  Scrape scrape = ScrapeCapture("e810-ethtool");
  EXPECT_EQ(FindSample(scrape.samples,
                       Series("rdma_exporter_collector_success", {{"collector", "ethtool"}})),
            1);
  auto raw = RawEthtoolStats("e810-ethtool", "ethtool-S-grep.txt");
  ASSERT_EQ(raw.size(), 32u);  // tx then rx, priorities 0-7, xon and xoff
  EXPECT_EQ(raw.front().first, "tx_priority_0_xon.nic");
  EXPECT_EQ(raw.back().first, "rx_priority_7_xoff.nic");
  EXPECT_NE(Cli("e810-ethtool", "ibdev2netdev").find("irdma0 port 1 ==> eth03 "),
            std::string::npos);
}

// The rdma_pfc_pause_frames_total series docs/metrics.md gives for ice stats: per priority
// and direction xon + xoff, for a priority once one of its four counters is non-zero; none for
// an all-zero priority. Returns how many series were expected.
int ExpectIcePfcSeries(const Scrape& scrape, const EthtoolStats& stats, const Labels& netdev) {
  std::map<std::string, std::map<std::string, uint64_t>> frames;  // priority -> direction -> sum
  std::set<std::string> active;
  const std::regex name(R"(^(rx|tx)_priority_([0-7])_(xon|xoff)\.nic$)");
  std::smatch match;
  for (const auto& [stat, value] : stats) {
    if (!std::regex_match(stat, match, name)) continue;
    frames[match[2].str()][match[1].str()] += value;
    if (value != 0) active.insert(match[2].str());
  }
  EXPECT_EQ(frames.size(), 8u);
  int expected = 0;
  for (const auto& [priority, by_direction] : frames) {
    for (const auto& [direction, sum] : by_direction) {
      Labels labels = netdev;
      labels.insert(labels.end(), {{"direction", direction}, {"priority", priority}});
      std::string series = Series("rdma_pfc_pause_frames_total", labels);
      if (active.count(priority) == 0) {
        EXPECT_FALSE(FindSample(scrape.samples, series).has_value()) << series;
        continue;
      }
      ++expected;
      EXPECT_EQ(FindSample(scrape.samples, series), static_cast<double>(sum)) << series;
    }
  }
  return expected;
}

// Issue 15 item 5: the published E810 port has every per-priority counter at 0, so no PFC
// series (docs/metrics.md), no read error, and doctor cannot judge a pause storm: SKIP, not PASS.
TEST(RealCaptureEth, E810AllZeroPriorityCountersGiveNoPfcSeriesAndDoctorDoesNotPass) {
  Scrape scrape = ScrapeCapture("e810-ethtool");
  const Labels netdev = {{"device", "irdma0"}, {"port", "1"}, {"netdev", "eth03"}};
  auto raw = RawEthtoolStats("e810-ethtool", "ethtool-S-grep.txt");
  for (const auto& [stat, value] : raw)
    ASSERT_EQ(value, 0u) << stat;
  EXPECT_EQ(ExpectIcePfcSeries(scrape, raw, netdev), 0);
  EXPECT_EQ(scrape.text.find("\nrdma_pfc_"), std::string::npos) << scrape.text;
  EXPECT_EQ(scrape.text.find("read_errors_total{collector=\"ethtool\""), std::string::npos);
  std::string storm = DoctorLines(RealCaptureDir("e810-ethtool"))["pfc_storm"];
  EXPECT_EQ(Fields(storm)[0], "SKIP") << storm;
  EXPECT_NE(storm.find("irdma0/1 (eth03): not checked: "), std::string::npos) << storm;
}

// The same capture with priority 3's receive XON and XOFF counts made non-zero, in a copy
// (the fixture tree is never written): rx = xon + xoff, tx (both 0) is exported as 0, and the
// other priorities stay absent.
TEST(RealCaptureEth, E810PriorityXonPlusXoffIsThePfcPauseFrameCount) {
  TempDir copy;
  std::filesystem::copy(
      RealCaptureDir("e810-ethtool"), copy.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  auto stats = RawEthtoolStats("e810-ethtool", "ethtool-S-grep.txt");
  std::string text = "NIC statistics:\n";
  for (auto& [stat, value] : stats) {
    if (stat == "rx_priority_3_xon.nic") value = 1234;
    if (stat == "rx_priority_3_xoff.nic") value = 4294967296;  // above 32 bits
    text += "     " + stat + ": " + std::to_string(value) + "\n";
  }
  copy.Write("ethtool/eth03", text);
  CaptureExporter exporter(copy.path());
  Scrape scrape;
  scrape.text = exporter.Scrape();
  scrape.samples = ParseSamples(scrape.text);
  ExpectPromtoolCleanExposition(scrape.text);
  const Labels netdev = {{"device", "irdma0"}, {"port", "1"}, {"netdev", "eth03"}};
  EXPECT_EQ(ExpectIcePfcSeries(scrape, stats, netdev), 2);
  EXPECT_EQ(FindSample(scrape.samples, Series("rdma_pfc_pause_frames_total", {{"device", "irdma0"},
                                                                              {"port", "1"},
                                                                              {"netdev", "eth03"},
                                                                              {"direction", "rx"},
                                                                              {"priority", "3"}})),
            4294968530.0);
}

// show_gids rows of the published output: device, port, index, gid, [ipv4], version, netdev.
std::vector<std::vector<std::string>> RawShowGidsRows() {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(ReadRaw("lag-host", "show_gids.txt"));
  std::string line;
  while (std::getline(lines, line)) {
    auto fields = Fields(line);
    if (fields.size() >= 6 && fields[0].rfind("mlx5_bond_", 0) == 0) rows.push_back(fields);
  }
  return rows;
}

TEST(RealCaptureEth, LagHostShowGidsMatchesThePublishedShowGids) {
  auto rows = RawShowGidsRows();
  ASSERT_EQ(rows.size(), 7u);
  std::string out = Cli("lag-host", "show-gids");
  std::vector<std::vector<std::string>> ours;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line))
    ours.push_back(Fields(line));
  for (const auto& row : rows) {
    EXPECT_NE(std::find(ours.begin(), ours.end(), row), ours.end())
        << "row missing: " << row[0] << " " << row[2] << "\n"
        << out;
  }
  // GID 3 of mlx5_bond_1, cut off in the published show_gids, is in its ibv_devinfo -vv.
  ASSERT_NE(ReadRaw("lag-host", "ibv_devinfo_gids.txt").find("::ffff:10.16.39.13, RoCE v2"),
            std::string::npos);
  std::vector<std::string> gid3 = {
      "mlx5_bond_1", "1",  "3",    "0000:0000:0000:0000:0000:ffff:0a10:270d",
      "10.16.39.13", "v2", "bond1"};
  EXPECT_NE(std::find(ours.begin(), ours.end(), gid3), ours.end()) << out;
  EXPECT_NE(out.find("\nn_gids_found=8\n"), std::string::npos) << out;
}

TEST(RealCaptureEth, LagHostPortAndDeviceMatchThePublishedIbstat) {
  Scrape scrape = ScrapeCapture("lag-host");
  const std::string ibstat = ReadRaw("lag-host", "ibstat.txt");
  ASSERT_NE(ibstat.find("State: Active"), std::string::npos);
  ASSERT_NE(ibstat.find("Firmware version: 22.36.1010"), std::string::npos);
  ASSERT_NE(ibstat.find("CA type: MT4125"), std::string::npos);
  EXPECT_EQ(FindSample(scrape.samples,
                       Series("rdma_port_up", {{"device", "mlx5_bond_0"}, {"port", "1"}})),
            1);
  EXPECT_NE(scrape.text.find("fw_ver=\"22.36.1010\""), std::string::npos) << scrape.text;
  EXPECT_NE(scrape.text.find("hca_type=\"MT4125\""), std::string::npos);
  std::string out = Cli("lag-host", "ibdev2netdev");
  EXPECT_NE(out.find("mlx5_bond_0 port 1 ==> bond0 "), std::string::npos) << out;
  EXPECT_NE(out.find("mlx5_bond_1 port 1 ==> bond1 "), std::string::npos) << out;
  // Both LAG devices have a routable RoCE v2 GID (::ffff:10.16.x.13) in the published tables.
  EXPECT_EQ(DoctorStatuses("lag-host")["roce_v2_gid"], "PASS");
}

// The capture's RoCE LAG ports: RDMA device -> its bond (the netdev of its GID 0) -> the bond's
// slaves (bonding/slaves).
struct LagPort {
  std::string device;
  std::string bond;
  std::vector<std::string> slaves;
};

std::vector<LagPort> RawLagPorts() {
  std::string sys = RealCaptureDir("lag-host") + "/sys/class";
  std::vector<LagPort> ports;
  for (const auto& entry : std::filesystem::directory_iterator(sys + "/infiniband")) {
    LagPort port;
    port.device = entry.path().filename().string();
    port.bond = ReadCaptureFile(entry.path().string() + "/ports/1/gid_attrs/ndevs/0").value_or("");
    port.slaves =
        Fields(ReadCaptureFile(sys + "/net/" + port.bond + "/bonding/slaves").value_or(""));
    ports.push_back(port);
  }
  std::sort(ports.begin(), ports.end(),
            [](const LagPort& a, const LagPort& b) { return a.device < b.device; });
  return ports;
}

// Issue 15 item 1: ethtool and DCB are read from each slave of the bond, never from the bond.
// The capture has no slave ethtool/dcb files, so each poll costs exactly one ethtool and one
// DCB no_device error per slave, and no ethtool/DCB series names a bond as its netdev.
TEST(RealCaptureEth, LagHostReadsEthtoolAndDcbFromEachSlaveNotTheBond) {
  auto lag = RawLagPorts();
  ASSERT_EQ(lag.size(), 2u);
  size_t slaves = 0;
  for (const auto& port : lag) {
    ASSERT_EQ(port.bond.rfind("bond", 0), 0u) << port.device;
    ASSERT_FALSE(port.slaves.empty()) << port.bond;
    slaves += port.slaves.size();
    for (const auto& slave : port.slaves) {
      ASSERT_FALSE(std::filesystem::exists(RealCaptureDir("lag-host") + "/ethtool/" + slave));
    }
  }
  // Slow collectors (DCB) every poll too, so both count per poll.
  CaptureExporter exporter(RealCaptureDir("lag-host"), {"--poll-interval.slow=0"});
  std::string first_text = exporter.Scrape();
  ExpectPromtoolCleanExposition(first_text);
  auto first = ParseSamples(first_text);
  auto second = ParseSamples(exporter.Scrape());  // one more poll
  for (const std::string collector : {"ethtool", "dcb"}) {
    std::string series = Series("rdma_exporter_read_errors_total",
                                {{"collector", collector}, {"reason", "no_device"}});
    auto before = FindSample(first, series);
    auto after = FindSample(second, series);
    ASSERT_TRUE(before && after) << series;
    EXPECT_EQ(*after - *before, static_cast<double>(slaves)) << series;
    EXPECT_EQ(std::fmod(*before, static_cast<double>(slaves)), 0) << series << " " << *before;
    for (const auto& [name, value] : second) {
      if (name.rfind("rdma_exporter_read_errors_total{collector=\"" + collector + "\"", 0) == 0) {
        EXPECT_EQ(name, series) << "other " << collector << " read errors";
      }
    }
  }
  // A bond is the netdev only of the port itself, its GIDs and its netdev state; every series
  // with a bond label is a slave of that bond's.
  for (const auto& sample : second) {
    const std::string& name = sample.first;  // a structured binding cannot be captured in C++17
    for (const auto& port : lag) {
      if (name.find("netdev=\"" + port.bond + "\"") != std::string::npos) {
        EXPECT_TRUE(name.rfind("rdma_port_info{", 0) == 0 || name.rfind("rdma_gid_info{", 0) == 0 ||
                    name.rfind("rdma_netdev_", 0) == 0)
            << name;
      }
      if (name.find("bond=\"" + port.bond + "\"") == std::string::npos) continue;
      EXPECT_TRUE(std::any_of(port.slaves.begin(), port.slaves.end(), [&](const auto& slave) {
        return name.find("netdev=\"" + slave + "\",bond=\"" + port.bond + "\"") !=
               std::string::npos;
      })) << name;
    }
  }
  // One series set per slave: the RoCE GID check (the only one with an input here) per slave.
  for (const auto& port : lag) {
    for (const auto& slave : port.slaves) {
      EXPECT_TRUE(
          FindSample(second, Series("rdma_roce_config_ok", {{"device", port.device},
                                                            {"port", "1"},
                                                            {"netdev", slave},
                                                            {"bond", port.bond},
                                                            {"check", "roce_v2_gid_present"}})))
          << port.device << " " << slave;
    }
  }
}

// Issue 15 item 1 in doctor: the PFC, trust, ECN and pause-storm items name each slave
// ("mlx5_bond_0/1 (bond0: <slave>)"); with no slave DCB or ethtool data they are SKIP, never
// PASS (before, "not a lossless-capable NIC" and pfc_storm PASS).
TEST(RealCaptureEth, LagHostDoctorChecksEachSlaveAndPassesNoneItCouldNotRun) {
  auto lag = RawLagPorts();
  auto checks = DoctorLines(RealCaptureDir("lag-host"));
  for (const std::string check : {"pfc", "trust_dscp", "ecn", "pfc_storm"}) {
    const std::string& line = checks[check];
    EXPECT_EQ(Fields(line).empty() ? "" : Fields(line)[0], "SKIP") << line;
    EXPECT_NE(line.find("not checked"), std::string::npos) << line;
    for (const auto& port : lag) {
      for (const auto& slave : port.slaves) {
        std::string item = port.device + "/1 (" + port.bond + ": " + slave + ")";
        EXPECT_NE(line.find(item), std::string::npos) << item << " missing: " << line;
      }
    }
  }
}

// ibv_devinfo values of a device block: key -> first word of the value ("max_qp" -> "262144").
std::map<std::string, std::string> RawDevinfo(const std::string& capture, const std::string& file) {
  std::map<std::string, std::string> values;
  std::istringstream lines(ReadRaw(capture, file));
  std::string line;
  while (std::getline(lines, line)) {
    auto fields = Fields(line);
    if (fields.size() >= 2 && fields[0].back() == ':') {
      values.emplace(fields[0].substr(0, fields[0].size() - 1), fields[1]);
    }
  }
  return values;
}

// ibv_devinfo -v key -> device limit family (docs/metrics.md).
const std::map<std::string, std::string> kDeviceLimits = {{"max_qp", "rdma_device_max_qps"},
                                                          {"max_cq", "rdma_device_max_cqs"},
                                                          {"max_mr", "rdma_device_max_mrs"},
                                                          {"max_pd", "rdma_device_max_pds"},
                                                          {"max_srq", "rdma_device_max_srqs"}};

// Issue 15 item 10: each limit the output shows is exported with its value; one it does not
// show (max_srq is not in this excerpt) is absent, not 0.
TEST(RealCaptureEth, DevinfoWithVerboseLimitsMatchTheRawOutput) {
  Scrape scrape = ScrapeCapture("devinfo-v");
  auto raw = RawDevinfo("devinfo-v", "ibv_devinfo-v.txt");
  ASSERT_EQ(raw.count("max_srq"), 0u);
  int shown = 0;
  for (const auto& [key, family] : kDeviceLimits) {
    auto got = FindSample(scrape.samples, Series(family, {{"device", "mlx5_1"}}));
    if (raw.count(key) == 0) {
      EXPECT_FALSE(got.has_value()) << family << " without " << key;
      continue;
    }
    ++shown;
    EXPECT_EQ(got, std::stod(raw[key])) << key;
  }
  EXPECT_EQ(shown, 4);
}

TEST(RealCaptureEth, DevinfoWithoutVerbosePortMtuMatchesTheRawOutput) {
  Scrape scrape = ScrapeCapture("devinfo-nov");
  auto raw = RawDevinfo("devinfo-nov", "ibv_devinfo.txt");
  ASSERT_EQ(raw.count("max_qp"), 0u);                // the point of this capture: no device limits
  for (const auto& [key, family] : kDeviceLimits) {  // issue 15 item 10: absent, not 0
    ASSERT_EQ(raw.count(key), 0u) << key;
    EXPECT_FALSE(FindSample(scrape.samples, Series(family, {{"device", "rdmaP23800p0s2"}})))
        << family;
  }
  const Labels port = {{"device", "rdmaP23800p0s2"}, {"port", "1"}};
  EXPECT_EQ(FindSample(scrape.samples, Series("rdma_port_active_mtu_bytes", port)),
            std::stod(raw["active_mtu"]));
  EXPECT_EQ(FindSample(scrape.samples, Series("rdma_port_max_mtu_bytes", port)),
            std::stod(raw["max_mtu"]));
  EXPECT_NE(scrape.text.find("fw_ver=\"" + raw["fw_ver"] + "\""), std::string::npos);
  // The port and its link layer, as ibv_devinfo printed them.
  std::string out = Cli("devinfo-nov", "show-counters");
  EXPECT_NE(out.find("rdmaP23800p0s2 port 1 (" + raw["link_layer"]), std::string::npos) << out;
}

}  // namespace
}  // namespace rdma_exporter::testing
