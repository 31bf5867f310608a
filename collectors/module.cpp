#include "module.h"

#include <cerrno>
#include <set>

#include "common.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/module_eeprom.h"

namespace rdma_exporter {
namespace {

// One monitored quantity: its family, the family of its thresholds, and HELP.
struct Quantity {
  std::string_view family, threshold_family, key, help;
};
constexpr Quantity kTemperature = {metric::kModuleTemperature, metric::kModuleTemperatureThreshold,
                                   "temperature", "Module temperature in degrees Celsius."};
constexpr Quantity kVoltage = {metric::kModuleVoltage, metric::kModuleVoltageThreshold,
                               "supply_voltage", "Module supply voltage (Vcc) in volts."};
constexpr Quantity kRxPower = {metric::kModuleRxPower, metric::kModuleRxPowerThreshold, "rx_power",
                               "Optical power received on the lane, in watts (0.001 = 0 dBm)."};
constexpr Quantity kTxPower = {metric::kModuleTxPower, metric::kModuleTxPowerThreshold, "tx_power",
                               "Optical power transmitted on the lane, in watts."};
constexpr Quantity kTxBias = {metric::kModuleTxBias, metric::kModuleTxBiasThreshold, "tx_bias",
                              "Laser bias current of the lane, in amperes."};

// Flags raised per quantity and level (alarm, warning), counted over the module or its lanes.
struct FlagCounts {
  std::map<std::pair<std::string, std::string>, int> raised;
  void Add(std::string_view quantity, const ModuleFlags& f) {
    auto& alarm = raised[{std::string(quantity), "alarm"}];
    auto& warning = raised[{std::string(quantity), "warning"}];
    alarm += (f.high_alarm || f.low_alarm) ? 1 : 0;
    warning += (f.high_warning || f.low_warning) ? 1 : 0;
  }
};

void ExportThresholds(const Quantity& q, const ModuleMonitor& m, const Labels& labels,
                      std::set<std::string_view>* done, MetricSink& sink) {
  // SFF-8636 and CMIS thresholds are per module: exported once, without a lane.
  if (!m.thresholds || !done->insert(q.family).second) return;
  const std::pair<const char*, double> values[] = {{"high_alarm", m.thresholds->high_alarm},
                                                   {"low_alarm", m.thresholds->low_alarm},
                                                   {"high_warning", m.thresholds->high_warning},
                                                   {"low_warning", m.thresholds->low_warning}};
  for (const auto& [name, value] : values) {
    sink.Gauge(q.threshold_family,
               "Alarm and warning thresholds the module declares for " + std::string(q.key) +
                   " (same unit as the value).",
               With(labels, "threshold", name), value);
  }
}

void Export(const ModuleInfo& info, const Labels& labels, MetricSink& sink) {
  sink.Gauge(
      metric::kModuleInfo,
      "The transceiver or cable module in the port's cage. media: mmf, smf, aoc, dac, "
      "active_copper, active_cable (an SFP+ active cable, copper or optical), unknown. Always 1.",
      [&] {
        Labels l = labels;
        l.push_back({"type", info.type});
        l.push_back({"memory_map", info.memory_map});
        l.push_back({"vendor", info.vendor});
        l.push_back({"part_number", info.part_number});
        l.push_back({"serial", info.serial});
        l.push_back({"revision", info.revision});
        l.push_back({"media", info.media});
        return l;
      }(),
      1);
  std::set<std::string_view> thresholds_done;
  FlagCounts flags;
  auto module_level = [&](const Quantity& q, const std::optional<ModuleMonitor>& m) {
    if (!m) return;
    sink.Gauge(q.family, q.help, labels, m->value);
    ExportThresholds(q, *m, labels, &thresholds_done, sink);
    flags.Add(q.key, m->flags);
  };
  module_level(kTemperature, info.temperature_celsius);
  module_level(kVoltage, info.supply_voltage_volts);
  for (const auto& lane : info.lanes) {
    const Labels lane_labels = With(labels, "lane", std::to_string(lane.lane));
    for (const auto& [q, m] :
         {std::pair{&kRxPower, &lane.rx_power_watts}, std::pair{&kTxPower, &lane.tx_power_watts},
          std::pair{&kTxBias, &lane.tx_bias_amperes}}) {
      if (!*m) continue;
      sink.Gauge(q->family, q->help, lane_labels, (*m)->value);
      ExportThresholds(*q, **m, labels, &thresholds_done, sink);
      flags.Add(q->key, (*m)->flags);
    }
  }
  for (const auto& [key, count] : flags.raised) {
    sink.Gauge(metric::kModuleFlags,
               "Alarm or warning flags the module raises now, counted over the module "
               "(temperature, supply_voltage) or its lanes (rx_power, tx_power, tx_bias).",
               With(With(labels, "quantity", key.first), "level", key.second), count);
  }
}

}  // namespace

bool ModuleCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  KernelReaders* kernel = ctx.kernel();
  if (kernel == nullptr || kernel->module == nullptr) return true;
  std::set<std::string> read;
  ModuleEeprom eeprom;
  for (const auto& device : inventory.devices) {
    if (!device.physfn.empty()) continue;  // a VF shares its PF's cage
    for (const auto& port : device.ports) {
      for (const auto& netdev : PhysicalNetdevs(port)) {
        if (!read.insert(netdev.name).second) continue;
        int err = kernel->module->Read(netdev.name, &eeprom);
        if (err == EOPNOTSUPP) continue;  // no cage, no module, or no module access
        if (err == EPERM || err == EACCES) {
          if (!said_no_permission_) {
            LogInfo("module EEPROMs need CAP_NET_ADMIN: no transceiver metrics",
                    {{"netdev", netdev.name}});
            said_no_permission_ = true;
          }
          return true;
        }
        const std::string path = "module:" + netdev.name;
        if (err != 0) {
          ctx.ReadFailed(path, err);
          continue;
        }
        std::string error;
        auto info = ParseModuleEeprom(eeprom, &error);
        if (!info) {
          ctx.Failed(path, "malformed", error);
          continue;
        }
        Export(*info, PhysicalNetdevLabels(device, port, netdev), sink);
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
