#include "real_capture.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace rdma_exporter::testing {

std::string RealCaptureDir(const std::string& capture) {
  return std::string(RDMA_TEST_FIXTURES) + "/real/" + capture;
}

std::vector<std::string> CapturePathFlags(const std::string& capture_dir) {
  // Always fixture mode, even for a capture without ethtool/ dcb/ verbs/ rdma/ files: the
  // exporter then reads netdev state from the capture's sysfs tree and has no verbs or RDMA
  // netlink reader, so nothing of the host running the test leaks into the scrape.
  return {"--path.sysfs=" + capture_dir + "/sys", "--path.fixtures=" + capture_dir};
}

CaptureExporter::CaptureExporter(const std::string& capture_dir,
                                 const std::vector<std::string>& extra_flags) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = FreeLoopbackPort();
    std::vector<std::string> argv = {RDMA_EXPORTER_BIN, "--poll-interval=0",
                                     "--web.listen-address=127.0.0.1:" + std::to_string(port_)};
    for (const auto& flag : CapturePathFlags(capture_dir))
      argv.push_back(flag);
    argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
    process_ = std::make_unique<Process>(argv);
    if (WaitReady(port_, std::chrono::seconds(15))) return;
    // Lost the race for the port to another test: try another one.
    if (process_->Running()) break;
  }
  ADD_FAILURE() << "exporter did not become ready on " << capture_dir << "; stderr:\n"
                << process_->stderr_text();
}

std::string CaptureExporter::Scrape() {
  HttpResponse response = HttpGet(port_, "/metrics");
  EXPECT_EQ(response.status, 200) << process_->stderr_text();
  return response.body;
}

std::map<std::string, double> ParseSamples(const std::string& exposition) {
  std::map<std::string, double> samples;
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    // Label values may hold spaces; the value follows the last space.
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

std::optional<double> FindSample(const std::map<std::string, double>& samples,
                                 const std::string& series) {
  auto it = samples.find(series);
  if (it == samples.end()) return std::nullopt;
  return it->second;
}

int RunCli(const std::string& capture_dir, const std::string& subcommand, std::string* output,
           const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {RDMA_EXPORTER_BIN, subcommand};
  for (const auto& flag : CapturePathFlags(capture_dir))
    argv.push_back(flag);
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunCommand(argv, output);
}

void ExpectPromtoolCleanExposition(const std::string& exposition) {
  std::string output;
  int rc = RunCommand({"promtool", "check", "metrics"}, &output, exposition);
  EXPECT_EQ(rc, 0) << "promtool check metrics:\n" << output;
}

std::optional<std::string> ReadCaptureFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace rdma_exporter::testing
