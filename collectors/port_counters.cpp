#include "port_counters.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>

#include "common.h"
#include "rdma_exporter/ib_peer.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

// Widths from IBTA PortCounters / PortCountersExtended (reference §1.5).
constexpr std::array kPmaCounters = {
    PmaCounterSpec{
        "symbol_error", metric::kPortSymbolErrors,
        "Minor link errors detected on one or more physical lanes (PMA SymbolErrorCounter).", 1,
        16},
    PmaCounterSpec{"link_error_recovery", metric::kPortLinkErrorRecovery,
                   "Times the link error recovery process completed successfully.", 1, 8},
    PmaCounterSpec{"link_downed", metric::kPortLinkDowned,
                   "Times the link error recovery process failed and the link went down.", 1, 8},
    PmaCounterSpec{"port_rcv_errors", metric::kPortReceiveErrors,
                   "Packets received with errors (malformed, bad CRC, buffer overrun, ...).", 1,
                   16},
    PmaCounterSpec{"port_rcv_remote_physical_errors", metric::kPortReceiveRemotePhysicalErrors,
                   "Packets received marked with the EBP delimiter (error upstream).", 1, 16},
    PmaCounterSpec{"port_rcv_switch_relay_errors", metric::kPortReceiveSwitchRelayErrors,
                   "Packets received that could not be forwarded by a switch.", 1, 16},
    PmaCounterSpec{"port_xmit_discards", metric::kPortTransmitDiscards,
                   "Outbound packets discarded because the port was down or congested.", 1, 16},
    PmaCounterSpec{"port_xmit_constraint_errors", metric::kPortTransmitConstraintErrors,
                   "Packets not transmitted due to outbound raw filtering or partition checks.", 1,
                   8},
    PmaCounterSpec{"port_rcv_constraint_errors", metric::kPortReceiveConstraintErrors,
                   "Packets received and discarded due to inbound raw filtering or partition "
                   "checks.",
                   1, 8},
    PmaCounterSpec{"local_link_integrity_errors", metric::kPortLocalLinkIntegrityErrors,
                   "Times the local physical error threshold was exceeded.", 1, 4},
    PmaCounterSpec{"excessive_buffer_overrun_errors", metric::kPortExcessiveBufferOverrunErrors,
                   "Times consecutive flow-control update periods had buffer overruns.", 1, 4},
    PmaCounterSpec{"VL15_dropped", "rdma_port_vl15_dropped_total",
                   "Incoming VL15 (subnet management) packets dropped for lack of buffers.", 1, 16},
    PmaCounterSpec{"port_xmit_wait", "rdma_port_transmit_wait_ticks_total",
                   "Ticks during which the port had data to send but no flow-control credits "
                   "(PortXmitWait; a tick is a few ns, device dependent).",
                   1, 32},
    PmaCounterSpec{"port_xmit_data", "rdma_port_data_transmitted_bytes_total",
                   "Data octets transmitted (the file counts 4-byte words; multiplied by 4).", 4,
                   0},
    PmaCounterSpec{"port_rcv_data", "rdma_port_data_received_bytes_total",
                   "Data octets received (the file counts 4-byte words; multiplied by 4).", 4, 0},
    PmaCounterSpec{"port_xmit_packets", "rdma_port_packets_transmitted_total",
                   "Packets transmitted on the port.", 1, 0},
    PmaCounterSpec{"port_rcv_packets", "rdma_port_packets_received_total",
                   "Packets received on the port.", 1, 0},
    PmaCounterSpec{"unicast_xmit_packets", "rdma_port_unicast_packets_transmitted_total",
                   "Unicast packets transmitted.", 1, 64},
    PmaCounterSpec{"unicast_rcv_packets", "rdma_port_unicast_packets_received_total",
                   "Unicast packets received.", 1, 64},
    PmaCounterSpec{"multicast_xmit_packets", "rdma_port_multicast_packets_transmitted_total",
                   "Multicast packets transmitted.", 1, 64},
    PmaCounterSpec{"multicast_rcv_packets", "rdma_port_multicast_packets_received_total",
                   "Multicast packets received.", 1, 64},
};

// Legacy counters_ext/ (old MLNX_OFED/mlx4): 64-bit values, same meaning as the counters/ files.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kLegacyExt = {{
    {"port_xmit_data_64", "port_xmit_data"},
    {"port_rcv_data_64", "port_rcv_data"},
    {"port_xmit_packets_64", "port_xmit_packets"},
    {"port_rcv_packets_64", "port_rcv_packets"},
    {"port_unicast_xmit_packets", "unicast_xmit_packets"},
    {"port_unicast_rcv_packets", "unicast_rcv_packets"},
    {"port_multicast_xmit_packets", "multicast_xmit_packets"},
    {"port_multicast_rcv_packets", "multicast_rcv_packets"},
}};

}  // namespace

const PmaCounterSpec* FindPmaCounter(std::string_view file) {
  for (const auto& spec : kPmaCounters) {
    if (spec.file == file) return &spec;
  }
  return nullptr;
}

namespace {

// What an older kernel prints for every counters/ file of a port whose device cannot answer PMA
// queries (show_pma_counter when get_perf_mad fails, e.g. no process_mad).
constexpr std::string_view kNoPma = "N/A (no PMA)";

// The data/packet files whose width depends on the kernel's table: 32-bit in the basic
// PortCounters table, 64-bit (PortCountersExtended) in the "ext" and "noietf" tables.
bool IsTableWidthCounter(const PmaReading& reading) {
  return reading.spec != nullptr && reading.spec->width == 0;
}

// Width of the table-dependent counters, from what the kernel shows: the extended table has
// unicast_*/multicast_* files; the basic and "noietf" tables have the same 17 files, and only a
// value above 2^32-1 proves the 64-bit one.
bool ProveWideData(const std::vector<std::string>& files,
                   const std::map<std::string, PmaReading>& readings) {
  if (std::find(files.begin(), files.end(), "unicast_xmit_packets") != files.end()) return true;
  return std::any_of(readings.begin(), readings.end(), [](const auto& r) {
    return IsTableWidthCounter(r.second) && r.second.value > UINT32_MAX;
  });
}

// Legacy counters_ext/ (old MLNX_OFED/mlx4): its 64-bit values replace the counters/ ones.
void MergeLegacyExt(CollectContext& ctx, const PortInfo& port, DirReadState* state,
                    std::map<std::string, PmaReading>* readings) {
  std::string ext_dir = JoinPath(port.dir, "counters_ext");
  int err = ReadAttributeDirFiles(
      ctx, ext_dir, state, {},
      [&](const std::string& file, const std::string& path, const std::string& value) {
        auto parsed = ParseU64(value);
        if (!parsed) {
          ctx.Malformed(path, value);
          return;
        }
        auto legacy = std::find_if(kLegacyExt.begin(), kLegacyExt.end(),
                                   [&](const auto& e) { return e.first == file; });
        if (legacy != kLegacyExt.end()) {
          // The 64-bit value wins unless it is smaller than what counters/ shows (a counters_ext
          // the port does not really fill reads 0): never export less than the kernel shows.
          auto basic = readings->find(std::string(legacy->second));
          if (basic == readings->end() || *parsed >= basic->second.value) {
            (*readings)[std::string(legacy->second)] = {*parsed, 64,
                                                        FindPmaCounter(legacy->second)};
          }
        } else {
          (*readings)["ext_" + file] = {*parsed, 0};
        }
      });
  if (err != 0 && err != ENOENT) ctx.ReadFailed(ext_dir, err);
}

}  // namespace

std::map<std::string, PmaReading> ReadPmaCounters(CollectContext& ctx, const PortInfo& port,
                                                  PmaPortStatus* status, PmaDirs* dirs) {
  PmaPortStatus local;
  if (status == nullptr) status = &local;
  PmaDirs local_dirs;
  if (dirs == nullptr) dirs = &local_dirs;
  // Values by file name, width still 0 for the table-dependent counters. Files reading
  // "N/A (no PMA)" are collected in no_pma instead of being reported.
  std::map<std::string, PmaReading> readings;
  std::vector<std::string> no_pma;
  std::string dir = JoinPath(port.dir, "counters");
  int err = ReadAttributeDirFiles(
      ctx, dir, &dirs->counters, {},
      [&](const std::string& file, const std::string& path, const std::string& value) {
        auto parsed = ParseU64(value);  // rejects "N/A (no PMA)", garbage, empty
        if (!parsed) {
          if (Trim(value) == kNoPma) {
            no_pma.push_back(path);
          } else {
            ctx.Malformed(path, value);
          }
          return;
        }
        const PmaCounterSpec* spec = FindPmaCounter(file);
        readings[file] = {*parsed, spec == nullptr ? 0 : spec->width, spec};
      });
  if (err != 0 && err != ENOENT) ctx.ReadFailed(dir, err);
  static const std::vector<std::string> kNone;
  const std::vector<std::string>& files = err == 0 ? *dirs->counters.listing : kNone;
  if (err == ENOENT || (readings.empty() && !no_pma.empty())) {
    // A property of the port, not a failed read: no errors for its files.
    status->supported = false;
    return {};
  }
  status->supported = readings.empty() ? std::nullopt : std::optional<bool>(true);
  // On a port that answers PMA queries, a file reading "N/A (no PMA)" is a failed query.
  for (const auto& path : no_pma)
    ctx.Malformed(path, kNoPma);
  status->wide_data = status->wide_data || ProveWideData(files, readings);
  for (auto& [file, reading] : readings) {
    if (IsTableWidthCounter(reading)) reading.width = status->wide_data ? 64 : 32;
  }
  MergeLegacyExt(ctx, port, &dirs->counters_ext, &readings);
  return readings;
}

bool PortCountersCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                    MetricSink& sink) {
  // Only this poll's ports are kept: what was learnt of a port that is gone is forgotten, so a
  // card swapped in under the same name proves its counter width and PMA capabilities afresh,
  // and removed ports cost no memory.
  std::unordered_map<std::string, PortMemory> kept;
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      Labels labels = PortLabels(device, port);
      std::string key = device.name + "/" + std::to_string(port.number);
      PortMemory& memory = kept[key];
      if (auto known = ports_.find(key); known != ports_.end()) memory = std::move(known->second);
      // A noietf port proves its 64-bit width only once a value passes 2^32-1, and must not
      // fall back to 32-bit when its counters are cleared.
      PmaPortStatus status;
      status.wide_data = memory.wide_data;
      auto readings = ReadPmaCounters(ctx, port, &status, &memory.dirs);
      memory.wide_data = status.wide_data;
      if (pma_xmit_wait_ && port.link_layer == "InfiniBand") {
        PreferExtendedXmitWait(ctx, device, port, key, &memory, &readings);
      }
      if (status.supported) {
        sink.Gauge("rdma_port_pma_supported",
                   "1 when the port answers IB PMA counter queries (ports/<N>/counters/), 0 when "
                   "it has none (devices without process_mad: iWARP, irdma, rxe).",
                   labels, *status.supported ? 1 : 0);
      }
      for (const auto& [file, reading] : readings)
        Export(labels, file, reading, sink);
    }
  }
  ports_ = std::move(kept);
  return true;
}

void PortCountersCollector::PreferExtendedXmitWait(CollectContext& ctx, const DeviceInfo& device,
                                                   const PortInfo& port, const std::string& key,
                                                   PortMemory* memory,
                                                   std::map<std::string, PmaReading>* readings) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->ib_peer == nullptr || readings->count("port_xmit_wait") == 0) {
    return;
  }
  if (!memory->xmit_wait64) {
    // A down link answers no loopback GMP (only the timeout): ask once it is up.
    if (!PhysLinkUp(ctx, port)) return;
    IbPmaClassPortInfo info;
    int err = kernel->ib_peer->ReadClassPortInfo(device.name, port.number, &info);
    if (err == ENXIO) return;  // no LID yet: ask again next poll
    const bool has = err == 0 && HasExtendedXmitWait(info);
    memory->xmit_wait64 = has;
    if (has) {
      LogInfo("the port's PMA has a 64-bit PortXmitWait: it replaces counters/port_xmit_wait",
              {{"device", device.name}, {"port", std::to_string(port.number)}});
    }
  }
  if (!*memory->xmit_wait64) return;
  IbPortCountersExt ext;
  int err = kernel->ib_peer->ReadPortCountersExt(device.name, port.number, &ext);
  if (err != 0) {
    // No value this poll rather than the 32-bit file's: switching sources would make the
    // series jump (a counter reset to Prometheus).
    ctx.ReadFailed("pma:" + key + "/port_counters_ext", err);
    readings->erase("port_xmit_wait");
    return;
  }
  PmaReading& reading = (*readings)["port_xmit_wait"];  // present: checked above
  reading.value = ext.xmit_wait;
  reading.width = 64;
}

void PortCountersCollector::Export(const Labels& labels, const std::string& file,
                                   const PmaReading& reading, MetricSink& sink) {
  const PmaCounterSpec* spec = reading.spec;
  if (spec != nullptr) {
    sink.Counter(spec->metric, spec->help, labels,
                 static_cast<double>(reading.value) * spec->scale);
  } else {
    sink.Counter(GenericMetricName("rdma_port_", file, "_total"),
                 "PMA port counter file " + file + " (not known to this exporter version).", labels,
                 static_cast<double>(reading.value));
  }
  if (reading.width == 0 || reading.width > 32) return;
  sink.Gauge(metric::kPortCountersSaturated,
             "1 while a PMA counter sits at the all-ones value of its IBTA width (it stops "
             "counting there until cleared), else 0.",
             With(labels, "counter", file), reading.saturated() ? 1 : 0);
}

}  // namespace rdma_exporter
