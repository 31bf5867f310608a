// Helpers for the binary tests that run the built exporter and CLI on the real captures under
// tests/fixtures/real/<capture>/ (sysfs tree in sys/, fixture-format files beside it) and check
// every exported value against the raw files of the capture.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process.h"

namespace rdma_exporter::testing {

// Absolute path of tests/fixtures/real/<capture> (independent of the working directory).
std::string RealCaptureDir(const std::string& capture);

// The exporter flags that point at a capture: --path.sysfs=<dir>/sys, plus
// --path.fixtures=<dir> (fixture mode always: no host data in the scrape).
std::vector<std::string> CapturePathFlags(const std::string& capture_dir);

// rdma_exporter serving a capture on a free 127.0.0.1 port, polled once (--poll-interval=0)
// and ready when constructed; stopped by PID when destroyed.
class CaptureExporter {
 public:
  explicit CaptureExporter(const std::string& capture_dir,
                           const std::vector<std::string>& extra_flags = {});
  int port() const { return port_; }
  Process& process() { return *process_; }
  // GET /metrics; fails the test unless the answer is 200.
  std::string Scrape();

 private:
  int port_ = 0;
  std::unique_ptr<Process> process_;
};

// The sample lines of an exposition: series (name{labels}) -> value. Comments are skipped.
std::map<std::string, double> ParseSamples(const std::string& exposition);

// Value of the exact series `name{labels}` (labels in exposition order), if present.
std::optional<double> FindSample(const std::map<std::string, double>& samples,
                                 const std::string& series);

// Runs `rdma_exporter <subcommand> <capture path flags> <extra>`; returns the exit status.
int RunCli(const std::string& capture_dir, const std::string& subcommand, std::string* output,
           const std::vector<std::string>& extra = {});

// promtool check metrics on an exposition; a failing lint fails the test.
void ExpectPromtoolCleanExposition(const std::string& exposition);

// A raw sysfs file's text without its trailing newline; nullopt if it does not exist.
std::optional<std::string> ReadCaptureFile(const std::string& path);

}  // namespace rdma_exporter::testing
