// The exporter and its CLI on real, published sysfs captures (tests/fixtures/real/, see its
// README.md): every value they show is compared with what the test itself reads from the raw
// files of the capture, so a parser that only agrees with our own simulator cannot pass.
// tests/fixtures/real/README.md maps issue 15's ten items to the test asserting each.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "real_capture.h"

namespace fs = std::filesystem;

namespace rdma_exporter::testing {
namespace {

// The sysfs (InfiniBand side) captures; the Ethernet ones are tested by real_capture_eth_test.
const std::vector<std::string> kCaptures = {"procfs-ib", "node-exporter-ib", "gpud-h100",
                                            "nccl1866-roce"};

// counters/<file> -> metric and scale, from docs/metrics.md (data counters count 4-byte words).
struct PmaMetric {
  std::string metric;
  double scale;
  // IBTA width in bits. 0: port_{xmit,rcv}_{data,packets}, whose width is that of the kernel's
  // table for the port (TableWidth). Above 32: never a saturation gauge.
  unsigned width;
};
const std::map<std::string, PmaMetric> kPmaMetrics = {
    {"symbol_error", {"rdma_port_symbol_errors_total", 1, 16}},
    {"link_error_recovery", {"rdma_port_link_error_recovery_total", 1, 8}},
    {"link_downed", {"rdma_port_link_downed_total", 1, 8}},
    {"port_rcv_errors", {"rdma_port_receive_errors_total", 1, 16}},
    {"port_rcv_remote_physical_errors", {"rdma_port_receive_remote_physical_errors_total", 1, 16}},
    {"port_rcv_switch_relay_errors", {"rdma_port_receive_switch_relay_errors_total", 1, 16}},
    {"port_xmit_discards", {"rdma_port_transmit_discards_total", 1, 16}},
    {"port_xmit_constraint_errors", {"rdma_port_transmit_constraint_errors_total", 1, 8}},
    {"port_rcv_constraint_errors", {"rdma_port_receive_constraint_errors_total", 1, 8}},
    {"local_link_integrity_errors", {"rdma_port_local_link_integrity_errors_total", 1, 4}},
    {"excessive_buffer_overrun_errors", {"rdma_port_excessive_buffer_overrun_errors_total", 1, 4}},
    {"VL15_dropped", {"rdma_port_vl15_dropped_total", 1, 16}},
    {"port_xmit_wait", {"rdma_port_transmit_wait_ticks_total", 1, 32}},
    {"port_xmit_data", {"rdma_port_data_transmitted_bytes_total", 4, 0}},
    {"port_rcv_data", {"rdma_port_data_received_bytes_total", 4, 0}},
    {"port_xmit_packets", {"rdma_port_packets_transmitted_total", 1, 0}},
    {"port_rcv_packets", {"rdma_port_packets_received_total", 1, 0}},
    {"unicast_xmit_packets", {"rdma_port_unicast_packets_transmitted_total", 1, 64}},
    {"unicast_rcv_packets", {"rdma_port_unicast_packets_received_total", 1, 64}},
    {"multicast_xmit_packets", {"rdma_port_multicast_packets_transmitted_total", 1, 64}},
    {"multicast_rcv_packets", {"rdma_port_multicast_packets_received_total", 1, 64}},
};

// Legacy counters_ext/<file> (mlx4, old MLNX_OFED) -> the counters/ file it is the 64-bit
// version of.
const std::map<std::string, std::string> kLegacyExt = {
    {"port_xmit_data_64", "port_xmit_data"},
    {"port_rcv_data_64", "port_rcv_data"},
    {"port_xmit_packets_64", "port_xmit_packets"},
    {"port_rcv_packets_64", "port_rcv_packets"},
    {"port_unicast_xmit_packets", "unicast_xmit_packets"},
    {"port_unicast_rcv_packets", "unicast_rcv_packets"},
    {"port_multicast_xmit_packets", "multicast_xmit_packets"},
    {"port_multicast_rcv_packets", "multicast_rcv_packets"},
};

// A counters/ file this exporter version does not know is exported by its file name; with no
// known width it has no saturation gauge.
PmaMetric PmaMetricOf(const std::string& file) {
  auto known = kPmaMetrics.find(file);
  if (known != kPmaMetrics.end()) return known->second;
  return {"rdma_port_" + file + "_total", 1, 64};
}

struct RawPort {
  std::string device;
  std::string port;
  std::string dir;
};

std::vector<std::string> SortedEntries(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::is_directory(dir)) return names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ClassDir(const std::string& capture) {
  return RealCaptureDir(capture) + "/sys/class/infiniband";
}

std::vector<RawPort> RawPorts(const std::string& capture) {
  std::vector<RawPort> ports;
  for (const auto& device : SortedEntries(ClassDir(capture))) {
    std::string ports_dir = ClassDir(capture) + "/" + device + "/ports";
    for (const auto& port : SortedEntries(ports_dir)) {
      ports.push_back({device, port, ports_dir + "/" + port});
    }
  }
  return ports;
}

// name{device="..",port="..",<extra>} in the exporter's label order (device, port, then the
// family's own labels).
std::string Series(const std::string& name, const RawPort& port,
                   const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  std::string series = name + "{device=\"" + port.device + "\",port=\"" + port.port + "\"";
  for (const auto& [label, value] : extra)
    series += "," + label + "=\"" + value + "\"";
  return series + "}";
}

bool IsUnsigned(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), ::isdigit);
}

// The value the kernel shows for a counters/ file, and whether a legacy counters_ext/ 64-bit
// file supplied it.
struct PmaValue {
  std::string text;
  bool from_counters_ext = false;
};

// What the kernel shows for each counters/ file of a port: counters_ext/ 64-bit values replace
// the 32-bit ones unless smaller (issue 15 item 3: never export less than the kernel shows).
std::map<std::string, PmaValue> EffectivePmaValues(const RawPort& port) {
  std::map<std::string, PmaValue> values;
  for (const auto& file : SortedEntries(port.dir + "/counters")) {
    values[file] = {ReadCaptureFile(port.dir + "/counters/" + file).value_or(""), false};
  }
  for (const auto& file : SortedEntries(port.dir + "/counters_ext")) {
    auto legacy = kLegacyExt.find(file);
    if (legacy == kLegacyExt.end()) continue;
    std::string ext = ReadCaptureFile(port.dir + "/counters_ext/" + file).value_or("");
    auto basic = values.find(legacy->second);
    if (basic == values.end() || !IsUnsigned(basic->second.text) ||
        std::stoull(ext) >= std::stoull(basic->second.text)) {
      values[legacy->second] = {ext, true};
    }
  }
  return values;
}

// The four counters/ files whose width is the kernel table's (docs/metrics.md,
// rdma_port_counters_saturated).
bool IsTableWidthCounter(const std::string& file) {
  auto known = kPmaMetrics.find(file);
  return known != kPmaMetrics.end() && known->second.width == 0;
}

// Width of those four on a port, by the rule of docs/metrics.md (issue 15 item 7): 64 when
// counters/ has unicast_xmit_packets (the "ext" table) or when any of them reads above
// 4294967295 (only the 64-bit table can show that), else 32.
unsigned TableWidth(const RawPort& port) {
  if (fs::exists(port.dir + "/counters/unicast_xmit_packets")) return 64;
  for (const auto& file : SortedEntries(port.dir + "/counters")) {
    std::string raw = ReadCaptureFile(port.dir + "/counters/" + file).value_or("");
    if (IsTableWidthCounter(file) && IsUnsigned(raw) && std::stoull(raw) > UINT32_MAX) return 64;
  }
  return 32;
}

// The width the exporter must treat a counter with: legacy counters_ext values are 64-bit.
unsigned ExpectedWidth(const std::string& file, const PmaValue& value, unsigned table_width) {
  if (value.from_counters_ext) return 64;
  unsigned width = PmaMetricOf(file).width;
  return width == 0 ? table_width : width;
}

// A port without PMA: an older kernel's counters/ in which no file reads a number (iWARP
// i40iw: "N/A (no PMA)"), or no counters/ at all (current kernels).
bool HasNoPma(const RawPort& port) {
  auto files = SortedEntries(port.dir + "/counters");
  return std::none_of(files.begin(), files.end(), [&](const std::string& file) {
    return IsUnsigned(ReadCaptureFile(port.dir + "/counters/" + file).value_or(""));
  });
}

// gtest names allow only [A-Za-z0-9_]: "procfs-ib" -> "procfs_ib".
std::string CaptureTestName(const ::testing::TestParamInfo<std::string>& info) {
  return std::regex_replace(info.param, std::regex("[^A-Za-z0-9]"), "_");
}

class RealCapture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    exporter_ = std::make_unique<CaptureExporter>(RealCaptureDir(GetParam()));
    exposition_ = exporter_->Scrape();
    samples_ = ParseSamples(exposition_);
  }

  void ExpectSample(const std::string& series, double expected, const std::string& why) {
    auto value = FindSample(samples_, series);
    ASSERT_TRUE(value.has_value()) << series << " missing (" << why << ")";
    EXPECT_DOUBLE_EQ(*value, expected) << series << " (" << why << ")";
  }

  std::unique_ptr<CaptureExporter> exporter_;
  std::string exposition_;
  std::map<std::string, double> samples_;
};

TEST_P(RealCapture, ScrapeIsPromtoolClean) {
  ExpectPromtoolCleanExposition(exposition_);
}

TEST_P(RealCapture, DeviceInfoLabelsAreTheRawFiles) {
  for (const auto& device : SortedEntries(ClassDir(GetParam()))) {
    std::string dir = ClassDir(GetParam()) + "/" + device;
    auto line = std::find_if(samples_.begin(), samples_.end(), [&](const auto& sample) {
      return sample.first.rfind("rdma_device_info{", 0) == 0 &&
             sample.first.find("device=\"" + device + "\"") != std::string::npos;
    });
    ASSERT_NE(line, samples_.end()) << device;
    for (const char* label : {"fw_ver", "board_id", "hca_type", "node_guid"}) {
      // A file the capture does not have is an empty label; surrounding whitespace is trimmed.
      std::string raw = ReadCaptureFile(dir + "/" + label).value_or("");
      raw = std::regex_replace(raw, std::regex("^\\s+|\\s+$"), "");
      EXPECT_NE(line->first.find(std::string(label) + "=\"" + raw + "\""), std::string::npos)
          << device << " " << label << " raw \"" << raw << "\": " << line->first;
    }
  }
}

TEST_P(RealCapture, PortStateAndRateAreTheRawFiles) {
  // "<rate> Gb/sec (<width>X[ <speed>])", every form the kernel printed since 4.x.
  const std::regex rate_text(R"(^([0-9.]+) Gb/sec \(([0-9]+)X( [A-Z0-9]+)?\)$)");
  for (const auto& port : RawPorts(GetParam())) {
    for (const auto& [file, metric] : std::map<std::string, std::string>{
             {"state", "rdma_port_state"}, {"phys_state", "rdma_port_physical_state"}}) {
      std::string raw = ReadCaptureFile(port.dir + "/" + file).value_or("");
      ExpectSample(Series(metric, port), std::stod(raw.substr(0, raw.find(':'))),
                   port.dir + "/" + file + " = " + raw);
    }
    // Up iff ACTIVE and LinkUp (docs/metrics.md): procfs' mlx5_0 is "4: ACTIVE" with phys_state
    // "4: ACTIVE" (not LinkUp), so it is not up.
    std::string state = ReadCaptureFile(port.dir + "/state").value_or("");
    std::string phys = ReadCaptureFile(port.dir + "/phys_state").value_or("");
    ExpectSample(Series("rdma_port_up", port), state == "4: ACTIVE" && phys == "5: LinkUp" ? 1 : 0,
                 state + " / " + phys);
    std::smatch match;
    std::string rate = ReadCaptureFile(port.dir + "/rate").value_or("");
    ASSERT_TRUE(std::regex_match(rate, match, rate_text)) << port.dir << "/rate: " << rate;
    ExpectSample(Series("rdma_port_rate_bytes_per_second", port),
                 std::stod(match[1].str()) * 1e9 / 8, rate);
    ExpectSample(Series("rdma_port_link_width_lanes", port), std::stod(match[2].str()), rate);
  }
}

// Every counters/ value, and its saturation gauge by the width rule of docs/metrics.md: a
// gauge (1 at all-ones) for a counter of at most 32 bits, none for a 64-bit one (issue 15 items
// 7 and 9).
TEST_P(RealCapture, EveryPmaCounterFileIsExportedWithItsRawValueAndWidth) {
  for (const auto& port : RawPorts(GetParam())) {
    unsigned table_width = TableWidth(port);
    for (const auto& [file, value] : EffectivePmaValues(port)) {
      const std::string& raw = value.text;
      PmaMetric spec = PmaMetricOf(file);
      std::string series = Series(spec.metric, port);
      std::string saturated = Series("rdma_port_counters_saturated", port, {{"counter", file}});
      if (!IsUnsigned(raw)) {
        // "N/A (no PMA)": no value, so no series; the port property says why (item 4).
        EXPECT_FALSE(FindSample(samples_, series).has_value()) << series << " from " << raw;
        EXPECT_FALSE(FindSample(samples_, saturated).has_value()) << saturated;
        continue;
      }
      // Exact in a double: every captured value is below 2^53 / 4.
      ExpectSample(series, static_cast<double>(std::stoull(raw)) * spec.scale,
                   port.dir + "/counters/" + file + " = " + raw);
      unsigned width = ExpectedWidth(file, value, table_width);
      if (width > 32) {
        EXPECT_FALSE(FindSample(samples_, saturated).has_value())
            << saturated << ": " << file << " = " << raw << " is 64-bit";
        continue;
      }
      bool all_ones = std::stoull(raw) == (1ULL << width) - 1;
      ExpectSample(saturated, all_ones ? 1 : 0,
                   file + " = " + raw + ", " + std::to_string(width) + "-bit");
    }
  }
}

// Issue 15 item 4: whether a port has a PMA is a property of the port, exported once, and a
// port without one costs no read error, on this poll or the next.
TEST_P(RealCapture, PmaSupportIsAPortPropertyAndNeverAReadError) {
  for (const auto& port : RawPorts(GetParam())) {
    ExpectSample(Series("rdma_port_pma_supported", port), HasNoPma(port) ? 0 : 1, port.dir);
  }
  // --poll-interval=0: this second scrape is a second poll.
  for (const auto& samples : {samples_, ParseSamples(exporter_->Scrape())}) {
    for (const auto& [series, value] : samples) {
      if (series.rfind("rdma_exporter_read_errors_total{collector=\"counters\"", 0) == 0) {
        EXPECT_EQ(value, 0) << series;
      }
    }
  }
}

TEST_P(RealCapture, EveryHwCounterFileIsExportedWithItsRawValue) {
  for (const auto& port : RawPorts(GetParam())) {
    for (const auto& file : SortedEntries(port.dir + "/hw_counters")) {
      std::string raw = ReadCaptureFile(port.dir + "/hw_counters/" + file).value_or("");
      ASSERT_TRUE(IsUnsigned(raw)) << port.dir << "/hw_counters/" << file << ": " << raw;
      if (file == "lifespan") {  // milliseconds of the mlx5 counter cache, not a counter
        ExpectSample(Series("rdma_hw_counters_lifespan_seconds", port), std::stod(raw) / 1000,
                     "lifespan = " + raw);
        continue;
      }
      ExpectSample(Series("rdma_hw_" + file + "_total", port), std::stod(raw),
                   port.dir + "/hw_counters/" + file + " = " + raw);
    }
  }
}

// The files of a ttar archive excerpt ("Path: <p>", "Lines: <n>", n lines; a last line ending
// in "EOF" has no newline), keyed by the path after `strip`.
std::map<std::string, std::string> TtarFiles(const std::string& archive, const std::string& strip) {
  std::map<std::string, std::string> files;
  std::istringstream lines(ReadCaptureFile(archive).value_or(""));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("Path: ", 0) != 0) continue;
    std::string path = line.substr(6 + strip.size());
    std::getline(lines, line);
    int count = std::stoi(line.substr(line.find(' ') + 1));
    std::string text;
    for (int i = 0; i < count && std::getline(lines, line); ++i)
      text += line + "\n";
    if (text.size() >= 4 && text.compare(text.size() - 4, 4, "EOF\n") == 0) {
      text.resize(text.size() - 4);
    }
    files[path] = text;
  }
  return files;
}

// Every file of sys/ as the raw published text gives it, by the capture's own format.
std::map<std::string, std::string> ExpectedSysFiles(const std::string& capture) {
  std::string dir = RealCaptureDir(capture);
  if (capture == "procfs-ib") {
    return TtarFiles(dir + "/raw/fixtures.ttar.infiniband", "fixtures/sys/");
  }
  if (capture == "node-exporter-ib") return TtarFiles(dir + "/raw/sys.ttar.infiniband", "sys/");
  std::map<std::string, std::string> files;
  if (capture == "gpud-h100") {  // published without the trailing newline
    std::string raw = dir + "/raw/sys-class-infiniband-h100.0";
    for (const auto& entry : fs::recursive_directory_iterator(raw)) {
      if (!entry.is_regular_file()) continue;
      files["class/infiniband/" + fs::relative(entry.path(), raw).string()] =
          *ReadCaptureFile(entry.path().string()) + "\n";
    }
    return files;
  }
  // ibstatus: "Infiniband device '<dev>' port <n> status:" then "<name>: <value>" lines.
  const std::map<std::string, std::string> ibstatus_file = {
      {"default gid", "gids/0"},   {"base lid", "lid"},          {"sm lid", "sm_lid"},
      {"state", "state"},          {"phys state", "phys_state"}, {"rate", "rate"},
      {"link_layer", "link_layer"}};
  const std::regex header(R"(^Infiniband device '(\S+)' port (\d+) status:$)");
  const std::regex field(R"(^\s+([a-z_ ]+):\s+(.*)$)");
  std::istringstream lines(ReadCaptureFile(dir + "/raw/ibstatus.txt").value_or(""));
  std::string line;
  std::string port_dir;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, match, header)) {
      port_dir = "class/infiniband/" + match[1].str() + "/ports/" + match[2].str() + "/";
    } else if (std::regex_match(line, match, field)) {
      files[port_dir + ibstatus_file.at(match[1].str())] = match[2].str() + "\n";
    }
  }
  return files;
}

// The sys/ tree holds exactly the published values: no file added, none changed.
TEST_P(RealCapture, SysTreeIsExactlyTheRawCapture) {
  std::string sys = RealCaptureDir(GetParam()) + "/sys";
  auto expected = ExpectedSysFiles(GetParam());
  ASSERT_FALSE(expected.empty());
  size_t sys_files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(sys)) {
    if (!entry.is_regular_file()) continue;
    ++sys_files;
    std::string relative = fs::relative(entry.path(), sys).string();
    auto it = expected.find(relative);
    ASSERT_NE(it, expected.end()) << relative << " is not in the raw capture";
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, it->second) << relative;
  }
  EXPECT_EQ(sys_files, expected.size());
}

INSTANTIATE_TEST_SUITE_P(Sysfs, RealCapture, ::testing::ValuesIn(kCaptures), CaptureTestName);

// Issue 15 item 7 on the captures that prove it: hfi1_0 (Omni-Path) and mlx4_0 (ConnectX-3)
// have the basic 17-file table (no unicast_*), yet read data/packet values above 2^32-1, which
// only the 64-bit PortCountersExtended can show: no saturation gauge for those four counters.
TEST(RealCaptureWidth, ProcfsCountersAbove32BitsWithoutUnicastFilesAre64Bit) {
  CaptureExporter exporter(RealCaptureDir("procfs-ib"));
  auto samples = ParseSamples(exporter.Scrape());
  int ports_checked = 0;
  for (const auto& port : RawPorts("procfs-ib")) {
    if (port.device != "hfi1_0" && port.device != "mlx4_0") continue;
    ++ports_checked;
    ASSERT_FALSE(fs::exists(port.dir + "/counters/unicast_xmit_packets")) << port.dir;
    std::string above;
    for (const auto& file :
         {"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets"}) {
      std::string raw = ReadCaptureFile(port.dir + "/counters/" + file).value_or("");
      ASSERT_TRUE(IsUnsigned(raw)) << port.dir << "/counters/" << file;
      if (std::stoull(raw) > UINT32_MAX) above = std::string(file) + " = " + raw;
      std::string saturated = Series("rdma_port_counters_saturated", port, {{"counter", file}});
      EXPECT_FALSE(FindSample(samples, saturated).has_value()) << saturated;
    }
    EXPECT_FALSE(above.empty()) << port.dir << ": no value above 2^32-1 proves the width";
  }
  EXPECT_EQ(ports_checked, 3);  // hfi1_0/1, mlx4_0/1, mlx4_0/2
}

// Issue 15 item 9: node_exporter's mlx4_0 port 1 shows port_xmit_wait at 2^32-1, the 32-bit
// PortCounters value it has in every kernel table: saturated, its rate meaningless.
TEST(RealCaptureWidth, NodeExporterPortXmitWaitAtAllOnesIsSaturated) {
  CaptureExporter exporter(RealCaptureDir("node-exporter-ib"));
  auto samples = ParseSamples(exporter.Scrape());
  RawPort port{"mlx4_0", "1", ClassDir("node-exporter-ib") + "/mlx4_0/ports/1"};
  ASSERT_EQ(ReadCaptureFile(port.dir + "/counters/port_xmit_wait"), "4294967295");
  EXPECT_EQ(FindSample(samples, Series("rdma_port_transmit_wait_ticks_total", port)), 4294967295.0);
  EXPECT_EQ(FindSample(samples, Series("rdma_port_counters_saturated", port,
                                       {{"counter", "port_xmit_wait"}})),
            1);
}

// show-counters lines "    <file>   <value>[ bytes]" under "<dev> port <n> (...)" and
// "  counters:" / "  hw_counters:" headers -> "<dev>/<port>/<group>/<file>" -> value text.
std::map<std::string, std::string> ParseShowCounters(const std::string& text) {
  std::map<std::string, std::string> values;
  const std::regex header(R"(^(\S+) port (\d+) .*$)");
  const std::regex group(R"(^  (counters|hw_counters):$)");
  const std::regex value(R"(^    (\S+)\s+(\S+)( bytes)?(\s.*)?$)");
  std::string block;
  std::string current_group;
  std::istringstream lines(text);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, match, header)) {
      block = match[1].str() + "/" + match[2].str();
    } else if (std::regex_match(line, match, group)) {
      current_group = match[1].str();
    } else if (std::regex_match(line, match, value)) {
      values[block + "/" + current_group + "/" + match[1].str()] = match[2].str();
    }
  }
  return values;
}

class RealCaptureCli : public ::testing::TestWithParam<std::string> {};

TEST_P(RealCaptureCli, ShowCountersPrintsEveryRawCounter) {
  std::string output;
  ASSERT_EQ(RunCli(RealCaptureDir(GetParam()), "show-counters", &output), 0) << output;
  auto shown = ParseShowCounters(output);
  for (const auto& port : RawPorts(GetParam())) {
    std::string prefix = port.device + "/" + port.port + "/";
    bool no_pma_files = HasNoPma(port) && fs::is_directory(port.dir + "/counters");
    if (no_pma_files) {
      // An older kernel's port without PMA: one line saying so, no line per "N/A" file.
      EXPECT_NE(output.find(port.device + " port " + port.port + " (" +
                            ReadCaptureFile(port.dir + "/link_layer").value_or("?") +
                            ")\n  counters: none, the port has no PMA"),
                std::string::npos)
          << output;
    }
    for (const auto& [file, value] : EffectivePmaValues(port)) {
      const std::string& raw = value.text;
      std::string key = prefix + "counters/" + file;
      std::string expected = no_pma_files                   ? ""
                             : !IsUnsigned(raw)             ? "-"  // listed with why
                             : PmaMetricOf(file).scale == 4 ? std::to_string(std::stoull(raw) * 4)
                                                            : raw;
      EXPECT_EQ(shown[key], expected) << key << " raw " << raw << "\n" << output;
    }
    for (const auto& file : SortedEntries(port.dir + "/hw_counters")) {
      if (file == "lifespan") continue;
      std::string key = prefix + "hw_counters/" + file;
      EXPECT_EQ(shown[key], ReadCaptureFile(port.dir + "/hw_counters/" + file).value_or(""))
          << key << "\n"
          << output;
    }
  }
}

// ibdev2netdev lists only ports with a netdev (as the script does); no capture here records
// one, so a port listed would be a netdev the exporter made up.
TEST_P(RealCaptureCli, Ibdev2netdevListsNoPortWithoutARawNetdev) {
  std::string output;
  ASSERT_EQ(RunCli(RealCaptureDir(GetParam()), "ibdev2netdev", &output, {"--json"}), 0) << output;
  ASSERT_FALSE(fs::exists(RealCaptureDir(GetParam()) + "/sys/class/net"));
  EXPECT_EQ(output, "[]\n");
}

TEST_P(RealCaptureCli, ShowGidsListsEveryNonZeroRawGid) {
  std::string output;
  ASSERT_EQ(RunCli(RealCaptureDir(GetParam()), "show-gids", &output, {"--json"}), 0) << output;
  size_t expected_count = 0;
  for (const auto& port : RawPorts(GetParam())) {
    for (const auto& index : SortedEntries(port.dir + "/gids")) {
      std::string gid = ReadCaptureFile(port.dir + "/gids/" + index).value_or("");
      if (gid == "0000:0000:0000:0000:0000:0000:0000:0000") continue;
      ++expected_count;
      std::string entry = "{\"device\":\"" + port.device + "\",\"port\":" + port.port +
                          ",\"index\":" + index + ",\"gid\":\"" + gid + "\"";
      EXPECT_NE(output.find(entry), std::string::npos) << entry << "\n" << output;
    }
  }
  EXPECT_NE(output.find("\"n_gids_found\":" + std::to_string(expected_count)), std::string::npos)
      << output;
}

INSTANTIATE_TEST_SUITE_P(Sysfs, RealCaptureCli, ::testing::ValuesIn(kCaptures), CaptureTestName);

}  // namespace
}  // namespace rdma_exporter::testing
