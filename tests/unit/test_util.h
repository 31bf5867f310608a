// Helpers shared by the unit tests.
#pragma once

#include <prometheus/metric_family.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/error_tracker.h"
#include "rdma_exporter/sysfs_reader.h"

namespace rdma_exporter::testing {

// Path of a committed fixture tree under tests/fixtures (its sysfs root).
std::string FixturePath(const std::string& name);

// A scratch directory removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  // Writes path (relative) with content, creating parent directories.
  void Write(const std::string& relative, const std::string& content) const;
  void Symlink(const std::string& relative, const std::string& target) const;
  void Remove(const std::string& relative) const;

 private:
  std::string path_;
};

// A Unix stream socket bound at path (listening, backlog 8, when listen is true); -1 on failure.
// The caller closes it.
int BindUnixSocket(const std::string& path, bool listen);

// The real Soft-RoCE capture (../shared/fixtures/rxe-6.1-capture.tar.gz) unpacked once per test
// process; returns the sysfs root of the "sys-after" tree.
std::string RxeCaptureSysfs();

// A SysfsReader whose reads of chosen paths fail with a chosen errno (EINVAL, EIO, ...) -
// what real sysfs does and a tree of plain files cannot.
class FaultyReader : public SysfsReader {
 public:
  using SysfsReader::SysfsReader;
  std::map<std::string, int> read_faults;  // path -> errno
  std::vector<std::string> reads;          // every path ReadFile was asked for
  using SysfsReader::ReadFile;
  int ReadFile(const std::string& path, std::string* out, FileRef* ref) override;
};

// Runs one collector over a discovered inventory and returns its families.
struct CollectResult {
  std::vector<prometheus::MetricFamily> families;
  size_t failures = 0;
  std::map<std::pair<std::string, std::string>, uint64_t> errors;  // (collector, reason)
};
CollectResult RunCollector(Collector& collector, SysfsReader& sysfs,
                           const DeviceFilter& filter = {}, KernelReaders* kernel = nullptr);

// Value of the sample of family `name` whose labels include all of `labels`; nullopt if none.
std::optional<double> Value(const std::vector<prometheus::MetricFamily>& families,
                            const std::string& name,
                            const std::map<std::string, std::string>& labels = {});
// Number of samples of a family.
size_t Count(const std::vector<prometheus::MetricFamily>& families, const std::string& name);

}  // namespace rdma_exporter::testing
