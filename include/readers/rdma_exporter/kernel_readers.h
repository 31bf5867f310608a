// Readers for the kernel interfaces that are not sysfs files: the ethtool ioctl, DCB over
// rtnetlink, and netdev link state over rtnetlink. Each has a kernel implementation and a
// fixture implementation (for tests and the demo fabric, selected by --path.fixtures), so the
// collectors on top are tested with mlx5 content that no test machine has.
//
// Fixture formats under the fixtures directory (all text, captured from real tools):
//   ethtool/<netdev>   the output of `ethtool -S <netdev>`: "NIC statistics:" then
//                      "     <name>: <value>" lines. A missing file = ENODEV.
//   dcb/<netdev>       iproute2 `dcb` lines: "prio-pfc 0:off 1:off 2:off 3:on ..." and
//                      "dscp-prio 0:0 1:0 ..." (the APP table's DSCP entries; no line = none).
//                      The single word "unsupported" = the netdev has no DCB (EOPNOTSUPP).
//   netdev link state  read from the sysfs tree: class/net/<netdev>/{operstate,flags,carrier,
//                      mtu,carrier_changes,carrier_up_count,carrier_down_count,statistics/*}.
//   verbs/<device>     the output of `ibv_devinfo -v -d <device>` ("hca_id: rxe0", "max_qp: N",
//                      "port: 1", "max_mtu: 4096 (5)", "active_mtu: 1024 (3)", ...). A missing
//                      file or no "hca_id: <device>" block = ENODEV. No verbs/ directory = no
//                      verbs reader.
//   rdma/res           `rdma resource show` of all devices: "0: rxe0: pd 2 cq 2 qp 3 ...".
//   rdma/statistic     `rdma statistic show` of all ports: "link rxe0/1 sent_pkts 181252 ...".
//                      A device (or port) without a line = ENODEV. No rdma/ directory = no
//                      RDMA netlink reader.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rdma_exporter/ib_peer.h"
#include "rdma_exporter/lldp.h"
#include "rdma_exporter/module_eeprom.h"

namespace rdma_exporter {

class SysfsReader;

struct EthtoolStats {
  std::vector<std::string> names;
  std::vector<uint64_t> values;  // same length as names
};

class EthtoolReader {
 public:
  virtual ~EthtoolReader() = default;
  // All ETH_SS_STATS statistics of a netdev. Returns 0 or an errno value (ENODEV: no such
  // netdev, EOPNOTSUPP: no statistics).
  [[nodiscard]] virtual int ReadStats(const std::string& netdev, EthtoolStats* out) = 0;
};

struct DcbConfig {
  DcbConfig() { dscp_to_priority.fill(-1); }
  bool supported = false;   // false: the netdev has no DCB (EOPNOTSUPP)
  bool pfc_known = false;   // DCB_ATTR_IEEE_PFC present
  uint8_t pfc_enabled = 0;  // bit p = PFC enabled on priority p (ieee_pfc.pfc_en)
  uint8_t pfc_cap = 0;
  // APP table DSCP (selector 5) entries: dscp -> priority, -1 = no entry.
  std::array<int, 64> dscp_to_priority{};
  int dscp_entries = 0;  // trust is "dscp" iff > 0 (mlx5 keeps firmware trust in sync)
};

class DcbReader {
 public:
  virtual ~DcbReader() = default;
  // Called once at the start of each poll.
  virtual void BeginPoll() {}
  // Returns 0 (with out->supported false for EOPNOTSUPP) or an errno value.
  [[nodiscard]] virtual int Read(const std::string& netdev, DcbConfig* out) = 0;
};

// Remembers each netdev's DCB reply for the rest of a poll: the dcb and roce_config collectors
// both need it, and on mlx5 each query is a firmware register read.
class PerPollDcbCache : public DcbReader {
 public:
  explicit PerPollDcbCache(std::unique_ptr<DcbReader> inner) : inner_(std::move(inner)) {}
  void BeginPoll() override {
    replies_.clear();
    inner_->BeginPoll();
  }
  [[nodiscard]] int Read(const std::string& netdev, DcbConfig* out) override;

 private:
  std::unique_ptr<DcbReader> inner_;
  std::map<std::string, std::pair<int, DcbConfig>> replies_;
};

struct NetdevState {
  bool admin_up = false;  // IFF_UP
  bool oper_up = false;   // operstate "up" (IF_OPER_UP)
  std::optional<bool> carrier;
  std::optional<uint32_t> mtu;
  std::optional<uint64_t> carrier_changes, carrier_up_count, carrier_down_count;
  std::optional<uint64_t> rx_errors, tx_errors, rx_dropped, tx_dropped;
};

class NetdevReader {
 public:
  virtual ~NetdevReader() = default;
  // Called once at the start of each poll (the rtnetlink reader dumps all links once here).
  virtual void BeginPoll() {}
  // Returns 0 or an errno value (ENODEV: no such netdev).
  [[nodiscard]] virtual int Read(const std::string& netdev, NetdevState* out) = 0;
};

// One port as ibv_query_port reports it.
struct VerbsPort {
  unsigned port = 0;
  uint32_t active_mtu_bytes = 0;  // IBV_MTU_* enum -> 256..4096; 0 = unknown
  uint32_t max_mtu_bytes = 0;
  int state = 0;  // enum ibv_port_state (4 = ACTIVE)
};

// Device limits (ibv_query_device) and ports of one device. The limits are absent when the
// source does not show them (an `ibv_devinfo` capture without -v); libibverbs always sets them.
struct VerbsDevice {
  std::optional<uint64_t> max_qp, max_cq, max_mr, max_pd, max_srq;
  std::optional<uint64_t> max_qp_wr, max_cqe;
  std::vector<VerbsPort> ports;  // ordered by port number
};

class VerbsReader {
 public:
  virtual ~VerbsReader() = default;
  // Called once at the start of each poll (the libibverbs reader refreshes its device list).
  virtual void BeginPoll() {}
  // Returns 0 or an errno value (ENODEV: no such verbs device; EACCES/ENOENT: the uverbs
  // character device cannot be opened).
  [[nodiscard]] virtual int ReadDevice(const std::string& device, VerbsDevice* out) = 0;
};

// Remembers each device's reply for the rest of a poll: the verbs and roce_config collectors
// both need it, and each read opens a verbs context.
class PerPollVerbsCache : public VerbsReader {
 public:
  explicit PerPollVerbsCache(std::unique_ptr<VerbsReader> inner) : inner_(std::move(inner)) {}
  void BeginPoll() override {
    replies_.clear();
    inner_->BeginPoll();
  }
  [[nodiscard]] int ReadDevice(const std::string& device, VerbsDevice* out) override;

 private:
  std::unique_ptr<VerbsReader> inner_;
  std::map<std::string, std::pair<int, VerbsDevice>> replies_;
};

// One QP of a device (RDMA_NLDEV_CMD_RES_QP_GET, as `rdma resource show qp`).
struct RdmaQpOwner {
  uint32_t port = 0;  // 0: not bound to a port yet (created, not modified to INIT)
  uint32_t pid = 0;   // the owning process in the reader's PID namespace; 0: a kernel QP
  bool operator==(const RdmaQpOwner&) const = default;
};

// RDMA netlink (NETLINK_RDMA, the interface of iproute2's `rdma` tool).
class RdmaNetlinkReader {
 public:
  virtual ~RdmaNetlinkReader() = default;
  // Called once at the start of each poll (the netlink reader forgets its name -> index map).
  virtual void BeginPoll() {}
  // The resource summary of a device (RDMA_NLDEV_CMD_RES_GET): name ("pd", "cq", "qp", "cm_id",
  // "mr", "ctx", "srq") -> current count. Returns 0 or an errno value (ENODEV: unknown device).
  [[nodiscard]] virtual int ReadResources(const std::string& device,
                                          std::map<std::string, uint64_t>* counts) = 0;
  // Every hw counter of a port, including enabled optional ones (RDMA_NLDEV_CMD_STAT_GET), in
  // kernel order. Returns 0 or an errno value (ENODEV: unknown device or port).
  [[nodiscard]] virtual int ReadHwCounters(const std::string& device, unsigned port,
                                           std::vector<std::pair<std::string, uint64_t>>* out) = 0;
  // Every QP of a device that the reader's PID namespace can see (the kernel hides QPs of
  // processes in other PID namespaces). Returns 0 or an errno value (ENODEV: unknown device).
  [[nodiscard]] virtual int ReadQps(const std::string& device, std::vector<RdmaQpOwner>* out) = 0;
};

// Transceiver / cable module EEPROMs (rdma_exporter/module_eeprom.h has the parser).
class ModuleEepromReader {
 public:
  virtual ~ModuleEepromReader() = default;
  // The pages of the module in the netdev's cage that its memory map needs. Returns 0 or an
  // errno value: EOPNOTSUPP (no cage or module, or a driver without module access), EPERM (no
  // CAP_NET_ADMIN), ENODEV (no such netdev), EIO (the module did not answer).
  [[nodiscard]] virtual int Read(const std::string& netdev, ModuleEeprom* out) = 0;
};

struct KernelReaders {
  std::unique_ptr<EthtoolReader> ethtool;
  std::unique_ptr<DcbReader> dcb;
  std::unique_ptr<NetdevReader> netdev;
  std::unique_ptr<VerbsReader> verbs;          // nullptr: verbs data unavailable
  std::unique_ptr<RdmaNetlinkReader> rdma_nl;  // nullptr: RDMA netlink data unavailable
  std::unique_ptr<ModuleEepromReader> module;  // nullptr: module EEPROMs unavailable
  // LLDP neighbours (the kernel reader listens only once the lldp collector asks); nullptr:
  // unavailable.
  std::unique_ptr<LldpReader> lldp;
  std::unique_ptr<IbPeerReader> ib_peer;  // InfiniBand neighbours by SMP; nullptr: unavailable
  // Called by the poller before the collectors run.
  void BeginPoll() {
    if (dcb != nullptr) dcb->BeginPoll();
    if (netdev != nullptr) netdev->BeginPoll();
    if (verbs != nullptr) verbs->BeginPoll();
    if (rdma_nl != nullptr) rdma_nl->BeginPoll();
  }
};

// Kernel readers (ioctl and rtnetlink in the caller's network namespace), or fixture readers
// when fixtures_dir is non-empty. sysfs is used by the fixture netdev reader.
KernelReaders MakeKernelReaders(const std::string& fixtures_dir, SysfsReader& sysfs);

std::unique_ptr<EthtoolReader> MakeEthtoolIoctlReader();
std::unique_ptr<EthtoolReader> MakeEthtoolFixtureReader(std::string dir);
std::unique_ptr<DcbReader> MakeDcbNetlinkReader();
std::unique_ptr<DcbReader> MakeDcbFixtureReader(std::string dir);
std::unique_ptr<NetdevReader> MakeNetdevNetlinkReader();
std::unique_ptr<NetdevReader> MakeNetdevSysfsReader(SysfsReader& sysfs);
std::unique_ptr<VerbsReader> MakeVerbsLibibverbsReader();
std::unique_ptr<VerbsReader> MakeVerbsFixtureReader(std::string dir);
std::unique_ptr<RdmaNetlinkReader> MakeRdmaNetlinkKernelReader();
std::unique_ptr<RdmaNetlinkReader> MakeRdmaNetlinkFixtureReader(std::string dir);
std::unique_ptr<ModuleEepromReader> MakeModuleEepromKernelReader();
std::unique_ptr<ModuleEepromReader> MakeModuleEepromFixtureReader(std::string dir);

}  // namespace rdma_exporter
