// Counter readers shared by the counters/hw_counters collectors and the show-counters and doctor
// commands: the PMA counter table and the hw_counters directory reader, with typed results.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

// Curated metric name, unit scale and IBTA width of a PMA counter file.
struct PmaCounterSpec {
  std::string_view file;
  std::string_view metric;  // full metric name
  std::string_view help;
  double scale;    // 4 for the 4-byte-word data counters
  unsigned width;  // bits; 0 = depends on the table (32 basic, 64 extended)
};
// nullptr for a file the table does not know (exported under a generic name).
const PmaCounterSpec* FindPmaCounter(std::string_view file);

struct PmaReading {
  uint64_t value;
  unsigned width;  // IBTA width in bits; 0 = unknown (generic counters): never saturated
  // The file's table entry, looked up once when it is read; nullptr for a file the table does
  // not know (then exported under a generic name).
  const PmaCounterSpec* spec = nullptr;
  // True while the counter sits at the all-ones value of a width of at most 32 bits.
  bool saturated() const {
    return width != 0 && width <= 32 && value == (uint64_t{1} << width) - 1;
  }
};
// What reading a port's PMA counters tells about the port itself.
struct PmaPortStatus {
  // true: some counters/ file reads a number. false: the port has no PMA (a device without
  // process_mad: iWARP, irdma, rxe): current kernels create no counters/ directory for it, older
  // ones (4.x) create it with every file reading "N/A (no PMA)". nullopt: nothing readable.
  std::optional<bool> supported;
  // The data/packet counters of counters/ are 64-bit (the kernel's "ext" or "noietf" table).
  // In: proven by an earlier read of the port; out: also when proven by this read.
  bool wide_data = false;
};
// What a collector keeps of an attribute directory (counters/, hw_counters/) that it reads on
// every poll: the reader's listing as last seen and one FileRef per file of it, so each value
// costs one pread and no path lookup. An empty state is fine (first poll, the CLI); a new
// listing (the device registered again) resets the refs.
struct DirReadState {
  SysfsReader::Listing listing;
  std::vector<SysfsReader::FileRef> refs;  // by position in *listing
  size_t first = 0;                        // position of the file read first
};

// Lists dir through the reader's cache and reads every file through the refs in *state, the
// first of first_names that the directory has before the others: visit(name, path, content)
// for each file read; failed reads are reported through ctx and skipped. Returns the listing's
// error (0, ENOENT, ...), not reported.
using FileVisitor = std::function<void(const std::string& name, const std::string& path,
                                       const std::string& content)>;
int ReadAttributeDirFiles(CollectContext& ctx, const std::string& dir, DirReadState* state,
                          std::initializer_list<std::string_view> first_names,
                          const FileVisitor& visit);

// Every PMA counter of a port by file name as in counters/ (legacy counters_ext/ 64-bit values
// override; other counters_ext files as "ext_<file>"). Unreadable files are reported through ctx
// and left out; a port without PMA reports nothing. Shared by the collector and the
// show-counters command; status (optional) carries what the caller remembers of the port.
// dirs (optional) is what the caller keeps of the port's counters/ and counters_ext/.
struct PmaDirs {
  DirReadState counters, counters_ext;
};
std::map<std::string, PmaReading> ReadPmaCounters(CollectContext& ctx, const PortInfo& port,
                                                  PmaPortStatus* status = nullptr,
                                                  PmaDirs* dirs = nullptr);

// HELP text for a known hw counter name (mlx5, rxe), or nullptr.
const char* HwCounterHelp(std::string_view name);
// True for mlx5 queue counters (QUERY_Q_COUNTER): 32-bit values that wrap.
bool IsMlx5QCounter(std::string_view name);

// Every file of a hw_counters/ directory (lifespan included) with its value, read in the order
// that costs mlx5 the fewest firmware commands. Unreadable or malformed files are reported
// through ctx and left out; a missing directory is not an error (*listed says whether the
// directory could be listed). Shared by the collector and the show-counters command.
std::vector<std::pair<std::string, uint64_t>> ReadHwCounterDir(CollectContext& ctx,
                                                               const std::string& dir,
                                                               bool* listed = nullptr);
// The same read without building the result: value(name, raw) for each readable file, in
// read order, through the refs kept in *state. Returns whether the directory could be listed.
bool ReadHwCounterDir(CollectContext& ctx, const std::string& dir, DirReadState* state,
                      const std::function<void(const std::string&, uint64_t)>& value);

}  // namespace rdma_exporter
