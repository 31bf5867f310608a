#include "test_util.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>

namespace fs = std::filesystem;

namespace rdma_exporter::testing {

std::string FixturePath(const std::string& name) {
  return std::string(RDMA_TEST_FIXTURES) + "/" + name;
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "rdma-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void TempDir::Write(const std::string& relative, const std::string& content) const {
  fs::path p = fs::path(path_) / relative;
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
}

void TempDir::Symlink(const std::string& relative, const std::string& target) const {
  fs::path p = fs::path(path_) / relative;
  fs::create_directories(p.parent_path());
  fs::create_symlink(target, p);
}

void TempDir::Remove(const std::string& relative) const {
  fs::remove_all(fs::path(path_) / relative);
}

int BindUnixSocket(const std::string& path, bool listen) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      (listen && ::listen(fd, 8) != 0)) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string RxeCaptureSysfs() {
  static std::once_flag once;
  static std::string root;
  std::call_once(once, [] {
    static TempDir dir;  // lives until the test process exits
    std::string archive = std::string(RDMA_SHARED_FIXTURES) + "/rxe-6.1-capture.tar.gz";
    if (!fs::exists(archive)) archive = FixturePath("rxe-6.1-capture.tar.gz");
    std::string cmd = "tar -xzf '" + archive + "' -C '" + dir.path() + "'";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot unpack " + archive);
    root = dir.path() + "/rxe-capture/sys-after/sys";
  });
  return root;
}

int FaultyReader::ReadFile(const std::string& path, std::string* out, FileRef* ref) {
  reads.push_back(path);
  auto it = read_faults.find(path);
  if (it != read_faults.end()) {
    out->clear();
    return it->second;
  }
  return SysfsReader::ReadFile(path, out, ref);
}

CollectResult RunCollector(Collector& collector, SysfsReader& sysfs, const DeviceFilter& filter,
                           KernelReaders* kernel) {
  std::vector<DiscoveryError> discovery_errors;
  Inventory inventory = DiscoverInventory(sysfs, filter, &discovery_errors);
  ErrorTracker errors;
  if (kernel != nullptr) kernel->BeginPoll();
  CollectContext ctx(sysfs, errors, collector.name(), kernel);
  MetricSink sink;
  collector.Collect(inventory, ctx, sink);
  sysfs.SweepUnused();  // end of the poll, as Poller does
  return {sink.Take(), ctx.failures(), errors.Totals()};
}

std::optional<double> Value(const std::vector<prometheus::MetricFamily>& families,
                            const std::string& name,
                            const std::map<std::string, std::string>& labels) {
  for (const auto& family : families) {
    if (family.name != name) continue;
    for (const auto& m : family.metric) {
      size_t matched = 0;
      for (const auto& l : m.label) {
        auto it = labels.find(l.name);
        if (it != labels.end() && it->second == l.value) ++matched;
      }
      if (matched != labels.size()) continue;
      switch (family.type) {
        case prometheus::MetricType::Counter:
          return m.counter.value;
        case prometheus::MetricType::Gauge:
          return m.gauge.value;
        default:
          return m.untyped.value;
      }
    }
  }
  return std::nullopt;
}

size_t Count(const std::vector<prometheus::MetricFamily>& families, const std::string& name) {
  for (const auto& family : families) {
    if (family.name == name) return family.metric.size();
  }
  return 0;
}

}  // namespace rdma_exporter::testing
