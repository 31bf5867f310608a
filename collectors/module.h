// module: transceiver and cable health per port (DOM): identity and media, temperature, supply
// voltage, per-lane rx/tx optical power and laser bias, the module's own alarm/warning flags and
// thresholds, from the module EEPROM (ethtool netlink MODULE_EEPROM_GET by page, else the
// GMODULEEEPROM ioctl; rdma_exporter/module_eeprom.h parses SFF-8472, SFF-8636 and CMIS).
// Each page read is an I2C transfer (milliseconds): slow tier. Needs CAP_NET_ADMIN; without it
// one log line and nothing else. Ports without a module or a driver without module access
// (EOPNOTSUPP: veth, rxe, most VFs) export nothing and are not errors.
#pragma once

#include "rdma_exporter/collector.h"

namespace rdma_exporter {

class ModuleCollector : public Collector {
 public:
  std::string_view name() const override { return "module"; }
  std::string_view description() const override {
    return "Transceiver/cable health (DOM): temperature, voltage, per-lane optical power and bias, "
           "flags and the module's thresholds (needs CAP_NET_ADMIN)";
  }
  bool slow_changing() const override { return true; }
  bool Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) override;

 private:
  bool said_no_permission_ = false;
};

}  // namespace rdma_exporter
