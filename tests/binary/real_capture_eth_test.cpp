// The built exporter and CLI on real Ethernet captures (tests/fixtures/real/<capture>, see
// PROVENANCE.md in each): every value the exporter maps today is compared with the value the
// test reads itself from the published raw text under raw/. Values the exporter drops or
// mislabels today (issue 15 items 1, 5, 6, 10) are not asserted here; the lead adds them with
// the fixes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "real_capture.h"

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

// "     name: value" lines of a published `ethtool -S` text, in order; comments and headers
// (no number after the last colon) are skipped.
std::vector<std::pair<std::string, uint64_t>> RawEthtoolStats(const std::string& capture,
                                                              const std::string& file) {
  std::vector<std::pair<std::string, uint64_t>> stats;
  std::istringstream lines(ReadRaw(capture, file));
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
      {"tx_pause_storm_warning_events", {"rdma_pfc_storm_events_total", {{"severity", "warning"}}}},
      {"tx_pause_storm_error_events", {"rdma_pfc_storm_events_total", {{"severity", "error"}}}},
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
  };
  auto it = kTable.find(stat);
  if (it == kTable.end()) return std::nullopt;
  return it->second;
}

// rx/tx_prio<p>_<what> names whose family and labels stay as they are after issue 15 (the
// discard reasons "buffer" and "other" are renamed, so they are not checked here).
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
  if (what == "cong_discard") {
    return ExpectedMapping{"rdma_priority_discards_total",
                           {{"reason", "congestion"}, {"priority", priority}}};
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
  // and rx_prio0_marked.
  EXPECT_EQ(ExpectEveryCuratedStat(scrape, raw, netdev), 20);
  // The port whose lane 3 is failing: FEC corrects 17.7 M bits, 386 packets are still lost.
  EXPECT_EQ(FindSample(scrape.samples, Series("rdma_phy_fec_corrected_bit_errors_total", netdev)),
            17750739);
  EXPECT_EQ(FindSample(scrape.samples, Series("rdma_phy_crc_errors_total", netdev)), 386);
}

// The doctor's lines: check name -> status (PASS, SKIP, WARN, FAIL). Its exit code says
// whether a check failed; these captures have no /dev/infiniband, so it is not asserted.
std::map<std::string, std::string> DoctorStatuses(const std::string& capture) {
  std::string out;
  RunCli(RealCaptureDir(capture), "doctor", &out);
  std::map<std::string, std::string> statuses;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    auto fields = Fields(line);
    if (fields.size() >= 2 &&
        fields[0].find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string::npos) {
      statuses[fields[1]] = fields[0];
    }
  }
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

TEST(RealCaptureEth, DevinfoWithVerboseLimitsMatchTheRawOutput) {
  Scrape scrape = ScrapeCapture("devinfo-v");
  auto raw = RawDevinfo("devinfo-v", "ibv_devinfo-v.txt");
  for (const auto& [key, family] :
       std::map<std::string, std::string>{{"max_qp", "rdma_device_max_qps"},
                                          {"max_cq", "rdma_device_max_cqs"},
                                          {"max_mr", "rdma_device_max_mrs"},
                                          {"max_pd", "rdma_device_max_pds"}}) {
    ASSERT_EQ(raw.count(key), 1u) << key;
    EXPECT_EQ(FindSample(scrape.samples, Series(family, {{"device", "mlx5_1"}})),
              std::stod(raw[key]))
        << key;
  }
}

TEST(RealCaptureEth, DevinfoWithoutVerbosePortMtuMatchesTheRawOutput) {
  Scrape scrape = ScrapeCapture("devinfo-nov");
  auto raw = RawDevinfo("devinfo-nov", "ibv_devinfo.txt");
  ASSERT_EQ(raw.count("max_qp"), 0u);  // the point of this capture: no device limits
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
