// Micro-benchmarks of the hot path: the sysfs value parsers, the exposition rendering of a real
// snapshot, and one whole collection of the sysfs collectors on a simulated mlx5 tree of 1, 8,
// 64 and 256 ports (kernel readers off: ethtool, DCB, netdev, verbs and RDMA netlink need the
// real kernel and are measured by bench/run.sh instead).
//
//   ./build/bench/rdma_micro_bench [--benchmark_filter=Render]
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fabric_sim/fabric_sim.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/metrics.h"
#include "rdma_exporter/parse.h"
#include "rdma_exporter/poller.h"

namespace rdma_exporter {
namespace {

using rdma_fabric_sim::FabricSim;
using rdma_fabric_sim::SimConfig;

// Inputs as the kernel (mlx5, ConnectX-7) prints them, with the trailing newline.
constexpr std::string_view kCounter = "18446744073709\n";
constexpr std::string_view kCapMask = "0xa651e848\n";
constexpr std::string_view kState = "4: ACTIVE\n";
constexpr std::string_view kRate = "400 Gb/sec (4X NDR)\n";
constexpr std::string_view kPcieSpeed = "32.0 GT/s PCIe\n";
constexpr std::string_view kGid = "fe80:0000:0000:0000:b8ce:f6ff:fea1:0044\n";
constexpr std::string_view kAer =
    "RxErr 2\nBadTLP 1\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\n"
    "HeaderOF 0\nTOTAL_ERR_COR 3\n";

void BM_ParseU64(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(ParseU64(kCounter));
}
BENCHMARK(BM_ParseU64);

void BM_ParseHex(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(ParseHex(kCapMask));
}
BENCHMARK(BM_ParseHex);

void BM_ParseNumberedName(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(ParseNumberedName(kState));
}
BENCHMARK(BM_ParseNumberedName);

void BM_ParsePortRate(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(ParsePortRate(kRate));
}
BENCHMARK(BM_ParsePortRate);

void BM_ParsePcieSpeed(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(ParsePcieSpeed(kPcieSpeed));
}
BENCHMARK(BM_ParsePcieSpeed);

void BM_ParseAerTotal(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(ParseAerTotal(kAer));
}
BENCHMARK(BM_ParseAerTotal);

void BM_IsValidGid(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(IsValidGid(Trim(kGid)) && !IsEmptyGid(Trim(kGid)));
}
BENCHMARK(BM_IsValidGid);

void BM_GenericMetricName(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(GenericMetricName("rdma_hw_", "np_ecn_marked_roce_packets", "_total"));
}
BENCHMARK(BM_GenericMetricName);

// A simulated mlx5 tree per port count (PFs plus VFs as in bench/run.sh), written once and
// removed at exit.
class Trees {
 public:
  ~Trees() {
    std::error_code ec;
    for (const auto& [ports, dir] : dirs_)
      std::filesystem::remove_all(dir, ec);
  }
  // sysfs root of the tree with this many ports, or "" if it could not be written.
  std::string SysfsRoot(int ports) {
    auto it = dirs_.find(ports);
    if (it != dirs_.end()) return it->second + "/sys";
    char tmpl[] = "/tmp/rdma_micro_bench.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return "";
    dirs_[ports] = tmpl;
    SimConfig config;
    config.root = tmpl;
    // Up to 64 ports: PFs only; beyond, 64 of them are SR-IOV VFs of PF 0 (one port each).
    config.vfs = ports > 64 ? 64 : 0;
    config.devices = ports - config.vfs;
    config.lag = 0;  // exactly `ports` ports: no LAG or E810 of the demo fabric
    config.e810 = 0;
    FabricSim sim(config);
    std::string error;
    if (!sim.WriteInitialTree(&error)) return "";
    return sim.sysfs_root();
  }

 private:
  std::map<int, std::string> dirs_;
};

Trees& SharedTrees() {
  static Trees trees;
  return trees;
}

std::unique_ptr<Poller> MakePoller(const std::string& sysfs_root) {
  PollerConfig config;
  for (const auto& factory : CollectorRegistry())
    if (factory.enabled_by_default) config.collectors.push_back(factory.create({}));
  return std::make_unique<Poller>(std::make_unique<SysfsReader>(sysfs_root), std::move(config));
}

// One collection: discovery, every sysfs collector, render and gzip (descriptors stay open
// between iterations, as between polls).
void BM_Collect(benchmark::State& state) {
  std::string root = SharedTrees().SysfsRoot(static_cast<int>(state.range(0)));
  if (root.empty()) {
    state.SkipWithError("cannot write the simulated tree");
    return;
  }
  auto poller = MakePoller(root);
  poller->Collect();  // opens the descriptors
  size_t samples = 0;
  for (auto _ : state)
    samples = poller->Collect()->text.size();
  state.counters["bytes"] = static_cast<double>(samples);
  state.counters["per_port"] = benchmark::Counter(
      static_cast<double>(state.range(0)),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Collect)->Arg(1)->Arg(8)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

// The floor of any sysfs exporter: one pread per value file on a kept-open descriptor, every
// regular file of the ports' counters/ and hw_counters/ directories of the tree, nothing else.
void BM_PreadFloor(benchmark::State& state) {
  std::string root = SharedTrees().SysfsRoot(static_cast<int>(state.range(0)));
  std::vector<int> fds;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root + "/devices", ec)) {
    std::string dir = entry.path().parent_path().filename();
    if (entry.is_regular_file() && (dir == "counters" || dir == "hw_counters")) {
      int fd = open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) fds.push_back(fd);
    }
  }
  char buf[4096];
  for (auto _ : state) {
    for (int fd : fds)
      benchmark::DoNotOptimize(pread(fd, buf, sizeof(buf), 0));
  }
  for (int fd : fds)
    close(fd);
  state.counters["files"] = static_cast<double>(fds.size());
  state.counters["per_file"] = benchmark::Counter(
      static_cast<double>(fds.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_PreadFloor)->Arg(8)->Arg(256)->Unit(benchmark::kMicrosecond);

// What a poll adds after the collectors' reads: every sample into a sink that has seen the same
// series in the previous poll (the steady state), then the text exposition.
void BM_RenderText(benchmark::State& state) {
  std::string root = SharedTrees().SysfsRoot(static_cast<int>(state.range(0)));
  if (root.empty()) {
    state.SkipWithError("cannot write the simulated tree");
    return;
  }
  auto snapshot = MakePoller(root)->Collect();
  const auto& families = snapshot->families();
  MetricSink sink;
  sink.Merge(families);
  size_t bytes = 0;
  for (auto _ : state) {
    sink.Clear();
    sink.Merge(families);
    std::string text = RenderText(sink);
    bytes += text.size();
    benchmark::DoNotOptimize(text);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_RenderText)->Arg(1)->Arg(8)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

// gzip of the rendered text (also once per poll).
void BM_Gzip(benchmark::State& state) {
  std::string root = SharedTrees().SysfsRoot(static_cast<int>(state.range(0)));
  if (root.empty()) {
    state.SkipWithError("cannot write the simulated tree");
    return;
  }
  auto snapshot = MakePoller(root)->Collect();
  for (auto _ : state)
    benchmark::DoNotOptimize(Gzip(snapshot->text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * snapshot->text.size()));
}
BENCHMARK(BM_Gzip)->Arg(8)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace rdma_exporter

int main(int argc, char** argv) {
  // Device discovery logs at info level; keep the table readable.
  rdma_exporter::ConfigureLogging("error", rdma_exporter::LogFormat::kLogfmt);
  // As the exporter does: a 256-port tree keeps ~20k descriptors open between polls.
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
