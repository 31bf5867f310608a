// Operator subcommands of the rdma_exporter binary: show-gids, show-counters, ibdev2netdev and
// doctor. They read the node through the exporter's own readers and collectors (SysfsReader,
// inventory, kernel/fixture readers, the collectors' metric samples), so they work inside
// containers without MLNX_OFED and on fixture or demo trees (--path.sysfs, --path.fixtures).
#pragma once

#include <prometheus/metric_family.h>

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/error_tracker.h"
#include "rdma_exporter/flag_spec.h"
#include "rdma_exporter/inventory.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/sample_index.h"
#include "rdma_exporter/sysfs_reader.h"

namespace rdma_exporter {

struct CliOptions : NodeOptions {    // --path.sysfs, --path.fixtures, device filters, NCCL/RoCE
  std::string command;               // show-gids, show-counters, ibdev2netdev, doctor, status
  std::vector<std::string> devices;  // positional device names (show-gids, show-counters)
  std::string dev_root = "/dev";
  bool json = false;
  bool verbose = false;                    // ibdev2netdev -v
  std::optional<double> interval_seconds;  // show-counters --interval
  unsigned count = 1;                      // show-counters --count: tables; 0 = until killed
  double sample_seconds = 2;               // doctor and status --sample
};

// True if argv[1] names a subcommand (the exporter's own flags all start with --).
bool IsCliCommand(std::string_view arg);
// Parses the arguments after the binary name (args[0] is the subcommand). On error returns false
// with a one-line message.
bool ParseCliArgs(const std::vector<std::string>& args, CliOptions* options, std::string* error);
// The subcommands' flags as a Markdown table (docs/flags.md), from the tables that parse them.
std::string SubcommandFlagsMarkdown();
// Parses and runs a subcommand. Returns the exit code: 0 ok, 1 runtime failure (doctor: a check
// failed), 2 usage error (one line on err).
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// What the doctor learns from the process rather than from sysfs; injectable for tests.
struct ProcessEnv {
  // RLIMIT_MEMLOCK soft limit in bytes; nullopt = unlimited.
  std::optional<uint64_t> memlock_bytes;
  bool cap_ipc_lock = false;   // CAP_IPC_LOCK in the effective set: the limit does not apply
  std::string kernel_release;  // uname -r: the version of in-tree drivers
  // NCCL_IB_TC of the environment (an init container shares the job's), used when
  // --nccl.ib-tc is not given; kept as text so a bad value can be reported.
  std::optional<std::string> nccl_ib_tc;
};
ProcessEnv CurrentProcessEnv();

// The subcommands. Each returns its exit code; errors go to err as one line.
int ShowGids(const CliOptions& options, std::ostream& out, std::ostream& err);
int ShowCounters(const CliOptions& options, std::ostream& out, std::ostream& err);
// Test seam: replaces show-counters' wait between two reads (called with the interval in
// seconds, once per table), so a test changes counters exactly between the reads instead of
// racing a timer. An empty function restores the plain sleep.
void SetIntervalWaitForTesting(std::function<void(double)> wait);
int Ibdev2Netdev(const CliOptions& options, std::ostream& out, std::ostream& err);
int Doctor(const CliOptions& options, const ProcessEnv& env, std::ostream& out, std::ostream& err);
// The node page's status from two collections --sample seconds apart; exit 1 when critical.
int Status(const CliOptions& options, std::ostream& out, std::ostream& err);

// ---- shared by the subcommands -------------------------------------------------------------

// The node as the subcommands see it: a sysfs reader, the kernel (or fixture) readers and the
// filtered inventory, plus one-shot collections through the exporter's collectors.
class CliNode {
 public:
  explicit CliNode(const CliOptions& options);
  // Discovers the devices. False, after writing a one-line message to err, if a device named on
  // the command line does not exist or is filtered out.
  bool Discover(std::ostream& err);
  const Inventory& inventory() const { return inventory_; }
  // Device directories that could not be read during discovery (those devices are left out).
  const std::vector<DiscoveryError>& discovery_errors() const { return discovery_errors_; }
  SysfsReader& sysfs() { return *sysfs_; }
  KernelReaders& kernel() { return kernel_; }
  // A context for reading files and kernel data outside a collector.
  CollectContext Context(std::string_view what) {
    return CollectContext(*sysfs_, errors_, what, &kernel_);
  }
  // Runs collectors over the inventory (one poll: kernel readers' BeginPoll first).
  std::vector<prometheus::MetricFamily> Collect(
      const std::vector<std::unique_ptr<Collector>>& collectors);
  // The registry's collectors with these names, configured from the options.
  std::vector<std::unique_ptr<Collector>> MakeCollectors(
      const std::vector<std::string_view>& names) const;

 private:
  CliOptions options_;
  std::unique_ptr<SysfsReader> sysfs_;
  KernelReaders kernel_;
  ErrorTracker errors_;
  Inventory inventory_;
  std::vector<DiscoveryError> discovery_errors_;
};

}  // namespace rdma_exporter
