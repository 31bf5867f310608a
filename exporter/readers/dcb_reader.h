// The parser of an RTM_GETDCB (DCB_CMD_IEEE_GET) reply, exposed so tests can feed it the
// replies of mlx5 hardware that no test machine has (veth and virtio answer EOPNOTSUPP).
#pragma once

#include <linux/netlink.h>

#include "rdma_exporter/kernel_readers.h"

namespace rdma_exporter {

// Fills out from a reply message: PFC (ieee_pfc) and the APP table's DSCP entries. Returns 0 or
// EBADMSG.
[[nodiscard]] int ParseDcbReply(const nlmsghdr* hdr, DcbConfig* out);

}  // namespace rdma_exporter
