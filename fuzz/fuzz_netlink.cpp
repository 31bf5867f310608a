// Fuzz target: netlink reply parsing. The first byte picks the parser: the DCB reply
// (ParseDcbReply), the RDMA netlink GET, RES_GET and STAT_GET replies, or an RTM_NEWLINK message
// through libnl-route's link parser (what the netdev reader's cache is filled with). The rest is
// the message; nlmsg_len is set to the buffer size as libnl guarantees after receiving, and
// the buffer is exactly that size so ASan sees any read past it.
#include <linux/rtnetlink.h>
#include <netlink/cache.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "exporter/readers/dcb_reader.h"
#include "exporter/readers/rdma_netlink_reader.h"

using namespace rdma_exporter;

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
    case 3: {
      hdr->nlmsg_type = RTM_NEWLINK;
      nl_cache* cache = nullptr;
      if (rtnl_link_alloc_cache(nullptr, AF_UNSPEC, &cache) < 0) return 0;
      nl_msg* msg = nlmsg_convert(hdr);
      if (msg != nullptr) {
        nl_cache_parse_and_add(cache, msg);
        nlmsg_free(msg);
      }
      nl_cache_free(cache);
      break;
    }
    case 4: {
      std::string name;
      uint32_t index = 0;
      (void)ParseRdmaDevGetReply(hdr, &name, &index);
      break;
    }
  }
  return 0;
}
