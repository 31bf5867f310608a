// Netdev link state readers: rtnetlink (one RTM_GETLINK dump per poll through a libnl-route
// link cache) and sysfs class/net/<netdev> (fixture mode, and a cross-check in the tests).
#include <linux/if.h>
#include <linux/if_link.h>
#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>

#include <cerrno>

#include "netlink_util.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/parse.h"
#include "rdma_exporter/sysfs_reader.h"

namespace rdma_exporter {
namespace {

// ---------------------------------------------------------------------------------------------
// rtnetlink
//
// IFLA_CARRIER_UP_COUNT / IFLA_CARRIER_DOWN_COUNT are not parsed by libnl-route 3.7 (it keeps
// IFLA_CARRIER_CHANGES only), so carrier_up_count / carrier_down_count stay unset here; the
// netdev collector reads them from sysfs class/net/<netdev>/carrier_{up,down}_count instead.
class NetdevNetlinkReader : public NetdevReader {
 public:
  ~NetdevNetlinkReader() override {
    if (cache_ != nullptr) nl_cache_free(cache_);
    if (sock_ != nullptr) nl_socket_free(sock_);
  }

  // One RTM_GETLINK dump for all netdevs. The socket and the cache are created on first use, in
  // the network namespace of the calling thread then.
  void BeginPoll() override { refresh_error_ = Refresh(); }

  int Read(const std::string& netdev, NetdevState* out) override {
    *out = NetdevState{};
    if (cache_ == nullptr && refresh_error_ == 0) refresh_error_ = Refresh();  // no BeginPoll yet
    if (refresh_error_ != 0) return refresh_error_;
    rtnl_link* link = rtnl_link_get_by_name(cache_, netdev.c_str());
    if (link == nullptr) return ENODEV;
    out->admin_up = (rtnl_link_get_flags(link) & IFF_UP) != 0;
    out->oper_up = rtnl_link_get_operstate(link) == IF_OPER_UP;
    out->carrier = rtnl_link_get_carrier(link) != 0;
    out->mtu = rtnl_link_get_mtu(link);
    uint32_t changes = 0;
    if (rtnl_link_get_carrier_changes(link, &changes) == 0) out->carrier_changes = changes;
    out->rx_errors = rtnl_link_get_stat(link, RTNL_LINK_RX_ERRORS);
    out->tx_errors = rtnl_link_get_stat(link, RTNL_LINK_TX_ERRORS);
    out->rx_dropped = rtnl_link_get_stat(link, RTNL_LINK_RX_DROPPED);
    out->tx_dropped = rtnl_link_get_stat(link, RTNL_LINK_TX_DROPPED);
    rtnl_link_put(link);
    return 0;
  }

 private:
  int Refresh() {
    if (sock_ == nullptr) {
      sock_ = nl_socket_alloc();
      if (sock_ == nullptr) return ENOMEM;
      int err = nl_connect(sock_, NETLINK_ROUTE);
      if (err < 0) {
        nl_socket_free(sock_);
        sock_ = nullptr;
        return NlErrno(err);
      }
    }
    int err = cache_ == nullptr ? rtnl_link_alloc_cache(sock_, AF_UNSPEC, &cache_)
                                : nl_cache_refill(sock_, cache_);
    if (err < 0) {
      // Start over with a new socket and cache next time (the dump may have been cut short).
      if (cache_ != nullptr) nl_cache_free(cache_);
      cache_ = nullptr;
      nl_socket_free(sock_);
      sock_ = nullptr;
      return NlErrno(err);
    }
    return 0;
  }

  nl_sock* sock_ = nullptr;
  nl_cache* cache_ = nullptr;
  int refresh_error_ = 0;
};

// ---------------------------------------------------------------------------------------------
// sysfs

class NetdevSysfsReader : public NetdevReader {
 public:
  explicit NetdevSysfsReader(SysfsReader& sysfs) : sysfs_(sysfs) {}

  int Read(const std::string& netdev, NetdevState* out) override {
    *out = NetdevState{};
    if (netdev.empty() || netdev.find('/') != std::string::npos) return ENODEV;
    const std::string dir = JoinPath("class/net", netdev);
    std::string value;
    int err = sysfs_.ReadFile(JoinPath(dir, "operstate"), &value);
    if (err != 0) return (err == ENOENT && !sysfs_.Exists(dir)) ? ENODEV : err;
    out->oper_up = Trim(value) == "up";

    // carrier fails with EINVAL while the netdev is not running (admin down): unknown.
    err = sysfs_.ReadFile(JoinPath(dir, "carrier"), &value);
    bool running = err == 0;
    if (err == 0) {
      if (auto carrier = ParseU64(value)) out->carrier = *carrier != 0;
    }
    if (sysfs_.ReadFile(JoinPath(dir, "flags"), &value) == 0) {
      if (auto flags = ParseHex(value)) {
        out->admin_up = (*flags & IFF_UP) != 0;
      } else {
        out->admin_up = running;
      }
    } else {
      // No flags file (trees captured without it): carrier is readable iff the netdev runs,
      // which the kernel sets on open (IFF_UP).
      out->admin_up = running;
    }
    if (auto mtu = ReadU64(dir, "mtu"); mtu && *mtu <= UINT32_MAX) {
      out->mtu = static_cast<uint32_t>(*mtu);
    }
    out->carrier_changes = ReadU64(dir, "carrier_changes");
    out->carrier_up_count = ReadU64(dir, "carrier_up_count");
    out->carrier_down_count = ReadU64(dir, "carrier_down_count");
    out->rx_errors = ReadU64(dir, "statistics/rx_errors");
    out->tx_errors = ReadU64(dir, "statistics/tx_errors");
    out->rx_dropped = ReadU64(dir, "statistics/rx_dropped");
    out->tx_dropped = ReadU64(dir, "statistics/tx_dropped");
    return 0;
  }

 private:
  // A missing or unparsable file leaves the value unset.
  std::optional<uint64_t> ReadU64(const std::string& dir, const char* file) {
    std::string value;
    if (sysfs_.ReadFile(JoinPath(dir, file), &value) != 0) return std::nullopt;
    return ParseU64(value);
  }

  SysfsReader& sysfs_;
};

}  // namespace

std::unique_ptr<NetdevReader> MakeNetdevNetlinkReader() {
  return std::make_unique<NetdevNetlinkReader>();
}

std::unique_ptr<NetdevReader> MakeNetdevSysfsReader(SysfsReader& sysfs) {
  return std::make_unique<NetdevSysfsReader>(sysfs);
}

}  // namespace rdma_exporter
