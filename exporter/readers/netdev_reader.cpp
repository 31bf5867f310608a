// Netdev link state readers: rtnetlink (one RTM_GETLINK dump per poll) and sysfs
// class/net/<netdev> (fixture mode, and a cross-check in the tests).
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <unordered_map>

#include "netdev_reader.h"
#include "netlink_util.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/parse.h"
#include "rdma_exporter/sysfs_reader.h"

namespace rdma_exporter {
namespace {

// ---------------------------------------------------------------------------------------------
// rtnetlink
//
// One RTM_GETLINK dump per poll, each RTM_NEWLINK parsed here (as `ip link` reads it) into a map
// by name. The values are those libnl-route's link cache gave before: a missing IFLA_MTU,
// IFLA_CARRIER or statistics attribute reads as 0, a missing IFLA_CARRIER_CHANGES as unset.

// The attributes read and the policy their payload must meet. The statistics structs grow with
// the kernel: what is needed is up to tx_dropped.
constexpr auto kLinkPolicy = MakeNlaPolicy<IFLA_MAX>({
    {IFLA_IFNAME, NlaOfType(NLA_STRING)},
    {IFLA_MTU, NlaOfType(NLA_U32)},
    {IFLA_OPERSTATE, NlaOfType(NLA_U8)},
    {IFLA_CARRIER, NlaOfType(NLA_U8)},
    {IFLA_CARRIER_CHANGES, NlaOfType(NLA_U32)},
    {IFLA_STATS, NlaAtLeast(offsetof(rtnl_link_stats, tx_dropped) + sizeof(uint32_t))},
    {IFLA_STATS64, NlaAtLeast(offsetof(rtnl_link_stats64, tx_dropped) + sizeof(uint64_t))},
});

// The error and drop counters of whichever statistics attribute the kernel sent (64-bit ones
// preferred), 0 without either.
template <typename Stats>
void SetCounters(const Stats& stats, NetdevState* out) {
  out->rx_errors = stats.rx_errors;
  out->tx_errors = stats.tx_errors;
  out->rx_dropped = stats.rx_dropped;
  out->tx_dropped = stats.tx_dropped;
}

}  // namespace

int ParseLinkReply(const nlmsghdr* hdr, std::string* name, NetdevState* out) {
  *out = NetdevState{};
  NlaTable<IFLA_MAX> tb;
  if (ParseNlaMessage(hdr, sizeof(ifinfomsg), kLinkPolicy, &tb) != 0) return EBADMSG;
  auto ifname = NlaString(tb[IFLA_IFNAME]);
  if (!ifname) return ENOENT;
  *name = std::move(*ifname);
  const auto* info = static_cast<const ifinfomsg*>(nlmsg_data(hdr));
  out->admin_up = (info->ifi_flags & IFF_UP) != 0;
  out->oper_up = NlaU8(tb[IFLA_OPERSTATE]).value_or(IF_OPER_UNKNOWN) == IF_OPER_UP;
  out->carrier = NlaU8(tb[IFLA_CARRIER]).value_or(0) != 0;
  out->mtu = NlaU32(tb[IFLA_MTU]).value_or(0);
  if (auto changes = NlaU32(tb[IFLA_CARRIER_CHANGES])) out->carrier_changes = *changes;
  if (tb[IFLA_STATS64] != nullptr) {
    SetCounters(NlaStruct<rtnl_link_stats64>(tb[IFLA_STATS64]), out);
  } else if (tb[IFLA_STATS] != nullptr) {
    SetCounters(NlaStruct<rtnl_link_stats>(tb[IFLA_STATS]), out);
  } else {
    SetCounters(rtnl_link_stats64{}, out);
  }
  return 0;
}

namespace {

class NetdevNetlinkReader : public NetdevReader {
 public:
  // One RTM_GETLINK dump for all netdevs per poll, sent by the poll's first Read: a poll in
  // which no collector asks (netdev and roce_config disabled) sends none. The socket is opened
  // on first use, in the network namespace of the calling thread then.
  void BeginPoll() override { stale_ = true; }

  [[nodiscard]] int Read(const std::string& netdev, NetdevState* out) override {
    *out = NetdevState{};
    if (stale_) {
      refresh_error_ = Refresh();
      stale_ = false;
    }
    if (refresh_error_ != 0) return refresh_error_;
    auto it = links_.find(netdev);
    if (it == links_.end()) return ENODEV;
    *out = it->second;
    return 0;
  }

 private:
  [[nodiscard]] int Refresh() {
    std::unordered_map<std::string, NetdevState> links;
    int err = RetryInterruptedDump([&] {
      links.clear();
      NlMsgPtr msg = NewNetlinkRequest(RTM_GETLINK, NLM_F_DUMP);
      if (msg == nullptr) return ENOMEM;
      ifinfomsg header{};
      header.ifi_family = AF_UNSPEC;
      int put = nlmsg_append(msg.get(), &header, sizeof(header), NLMSG_ALIGNTO);
      if (put < 0) return NlErrno(put);
      return channel_.Transact(msg.get(), RTM_NEWLINK, [&](const nlmsghdr* hdr) {
        std::string name;
        NetdevState state;
        int parsed = ParseLinkReply(hdr, &name, &state);
        if (parsed == 0) links.insert_or_assign(std::move(name), state);
        return parsed == ENOENT ? 0 : parsed;
      });
    });
    // A failed dump leaves no links: every Read reports its error until the next poll.
    links_ = err == 0 ? std::move(links) : decltype(links_){};
    return err;
  }

  NetlinkChannel channel_{NETLINK_ROUTE};
  std::unordered_map<std::string, NetdevState> links_;
  bool stale_ = true;  // no dump yet in this poll
  int refresh_error_ = 0;
};

// ---------------------------------------------------------------------------------------------
// sysfs

class NetdevSysfsReader : public NetdevReader {
 public:
  explicit NetdevSysfsReader(SysfsReader& sysfs) : sysfs_(sysfs) {}

  [[nodiscard]] int Read(const std::string& netdev, NetdevState* out) override {
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
