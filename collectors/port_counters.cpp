#include "port_counters.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>

#include "common.h"
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

std::map<std::string, PmaReading> ReadPmaCounters(CollectContext& ctx, const PortInfo& port) {
  std::vector<std::string> files;
  std::string value;
  // file name (as in counters/) -> value; counters_ext overrides with 64-bit values.
  std::map<std::string, PmaReading> readings;
  std::string dir = JoinPath(port.dir, "counters");
  int err = ctx.sysfs().ListAttributeDir(dir, &files);
  if (err != 0 && err != ENOENT) ctx.ReadFailed(dir, err);  // no PMA: no directory (rxe)
  // The extended table (unicast_* present) has 64-bit data/packet counters; the basic
  // table's are 32-bit and saturate within seconds at 100 Gb/s.
  bool extended = std::find(files.begin(), files.end(), "unicast_xmit_packets") != files.end();
  for (const auto& file : files) {
    std::string path = JoinPath(dir, file);
    if (!ctx.Read(path, &value)) continue;
    auto parsed = ParseU64(value);  // rejects "N/A (no PMA)", garbage, empty
    if (!parsed) {
      ctx.Malformed(path, value);
      continue;
    }
    const PmaCounterSpec* spec = FindPmaCounter(file);
    unsigned width = spec == nullptr ? 0 : (spec->width != 0 ? spec->width : extended ? 64 : 32);
    readings[file] = {*parsed, width};
  }
  std::string ext_dir = JoinPath(port.dir, "counters_ext");
  err = ctx.sysfs().ListAttributeDir(ext_dir, &files);
  if (err != 0 && err != ENOENT) ctx.ReadFailed(ext_dir, err);
  for (const auto& file : files) {
    std::string path = JoinPath(ext_dir, file);
    if (!ctx.Read(path, &value)) continue;
    auto parsed = ParseU64(value);
    if (!parsed) {
      ctx.Malformed(path, value);
      continue;
    }
    auto legacy = std::find_if(kLegacyExt.begin(), kLegacyExt.end(),
                               [&](const auto& e) { return e.first == file; });
    if (legacy != kLegacyExt.end()) {
      // The 64-bit value wins unless it is smaller than what counters/ shows (a counters_ext
      // the port does not really fill reads 0): never export less than the kernel shows.
      auto basic = readings.find(std::string(legacy->second));
      if (basic == readings.end() || *parsed >= basic->second.value) {
        readings[std::string(legacy->second)] = {*parsed, 64};
      }
    } else {
      readings["ext_" + file] = {*parsed, 0};
    }
  }
  return readings;
}

bool PortCountersCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                    MetricSink& sink) {
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      Labels labels = PortLabels(device, port);
      for (const auto& [file, reading] : ReadPmaCounters(ctx, port)) {
        const PmaCounterSpec* spec = FindPmaCounter(file);
        if (spec != nullptr) {
          sink.Counter(spec->metric, spec->help, labels,
                       static_cast<double>(reading.value) * spec->scale);
        } else {
          sink.Counter(GenericMetricName("rdma_port_", file, "_total"),
                       "PMA port counter file " + file + " (not known to this exporter version).",
                       labels, static_cast<double>(reading.value));
        }
        if (reading.width == 0 || reading.width > 32) continue;
        sink.Gauge(metric::kPortCountersSaturated,
                   "1 while a PMA counter sits at the all-ones value of its IBTA width (it stops "
                   "counting there until cleared), else 0.",
                   With(labels, "counter", file), reading.saturated() ? 1 : 0);
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
