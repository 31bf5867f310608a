// The parser of an RTM_NEWLINK message (one part of the RTM_GETLINK dump), exposed so tests and
// the fuzzer can feed it messages of their own.
#pragma once

#include <linux/netlink.h>

#include <string>

#include "rdma_exporter/kernel_readers.h"

namespace rdma_exporter {

// Fills *name (IFLA_IFNAME) and *out from the message: admin_up (ifi_flags), oper_up, carrier,
// mtu, carrier_changes and the error/drop counters (IFLA_STATS64, else IFLA_STATS).
// carrier_up_count / carrier_down_count stay unset (the netdev collector reads them from sysfs).
// Returns 0, ENOENT for a message without a name (skipped by the caller), or EBADMSG.
[[nodiscard]] int ParseLinkReply(const nlmsghdr* hdr, std::string* name, NetdevState* out);

}  // namespace rdma_exporter
