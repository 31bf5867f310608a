// Fuzz target: netlink reply parsing. The first byte picks the parser: the DCB reply
// (ParseDcbReply), the RDMA netlink GET, RES_GET and STAT_GET replies, or an RTM_NEWLINK message
// through the netdev reader's parser (ParseLinkReply), checked against libnl-route's link parser
// (the reader's former link cache) wherever both accept the message. The rest is the message;
// nlmsg_len is set to the buffer size as libnl guarantees after receiving, and the buffer is
// exactly that size so ASan sees any read past it.
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <netlink/cache.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "exporter/readers/dcb_reader.h"
#include "exporter/readers/netdev_reader.h"
#include "exporter/readers/netlink_util.h"
#include "exporter/readers/rdma_netlink_reader.h"

using namespace rdma_exporter;

namespace {

// The link libnl-route makes of the message, or nullptr where it rejects it. The cache owns it.
rtnl_link* LibnlLink(nlmsghdr* hdr, nl_cache* cache) {
  NlMsgPtr msg(nlmsg_convert(hdr));
  if (msg == nullptr || nl_cache_parse_and_add(cache, msg.get()) < 0) return nullptr;
  return reinterpret_cast<rtnl_link*>(nl_cache_get_first(cache));
}

void Expect(bool agreed) {
  if (!agreed) abort();
}

void FuzzLink(nlmsghdr* hdr) {
  hdr->nlmsg_type = RTM_NEWLINK;
  std::string name;
  NetdevState ours;
  int err = ParseLinkReply(hdr, &name, &ours);
  nl_cache* raw_cache = nullptr;
  if (rtnl_link_alloc_cache(nullptr, AF_UNSPEC, &raw_cache) < 0) return;
  NlCachePtr cache(raw_cache);
  rtnl_link* link = LibnlLink(hdr, cache.get());
  if (err != 0 || link == nullptr) return;
  if (name.size() < IFNAMSIZ) Expect(name == rtnl_link_get_name(link));
  Expect(ours.admin_up == ((rtnl_link_get_flags(link) & IFF_UP) != 0));
  Expect(ours.oper_up == (rtnl_link_get_operstate(link) == IF_OPER_UP));
  Expect(ours.carrier == (rtnl_link_get_carrier(link) != 0));
  Expect(ours.mtu == rtnl_link_get_mtu(link));
  uint32_t changes = 0;
  bool has_changes = rtnl_link_get_carrier_changes(link, &changes) == 0;
  Expect(ours.carrier_changes.has_value() == has_changes);
  if (has_changes) Expect(*ours.carrier_changes == changes);
  Expect(ours.rx_errors == rtnl_link_get_stat(link, RTNL_LINK_RX_ERRORS));
  Expect(ours.tx_errors == rtnl_link_get_stat(link, RTNL_LINK_TX_ERRORS));
  Expect(ours.rx_dropped == rtnl_link_get_stat(link, RTNL_LINK_RX_DROPPED));
  Expect(ours.tx_dropped == rtnl_link_get_stat(link, RTNL_LINK_TX_DROPPED));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 + sizeof(nlmsghdr)) return 0;
  uint8_t which = data[0];
  ++data;
  --size;
  if (size > 65536) return 0;
  // 4-byte aligned copy of exactly `size` bytes (netlink messages are aligned).
  std::vector<uint32_t> storage((size + 3) / 4);
  auto* hdr = reinterpret_cast<nlmsghdr*>(storage.data());
  std::memcpy(storage.data(), data, size);
  hdr->nlmsg_len = static_cast<uint32_t>(size);
  switch (which % 5) {
    case 0: {
      DcbConfig config;
      int err = ParseDcbReply(hdr, &config);
      if (err == 0 && config.dscp_entries > 64) abort();
      break;
    }
    case 1: {
      std::map<std::string, uint64_t> counts;
      (void)ParseRdmaResGetReply(hdr, "mlx5_0", &counts);
      break;
    }
    case 2: {
      std::vector<std::pair<std::string, uint64_t>> counters;
      (void)ParseRdmaStatGetReply(hdr, "mlx5_0", &counters);
      break;
    }
    case 3:
      FuzzLink(hdr);
      break;
    case 4: {
      std::string name;
      uint32_t index = 0;
      (void)ParseRdmaDevGetReply(hdr, &name, &index);
      break;
    }
  }
  return 0;
}
