// libnl error codes (negative NLE_*) as errno values, for failures before the kernel answered
// (the kernel's own errors arrive as errno in NLMSG_ERROR). Shared by the rtnetlink, DCB and
// RDMA netlink readers.
#pragma once

#include <netlink/errno.h>

#include <cerrno>

namespace rdma_exporter {

inline int NlErrno(int nl_err) {
  switch (-nl_err) {
    case NLE_NOMEM:
      return ENOMEM;
    case NLE_PERM:
      return EPERM;
    case NLE_AGAIN:
      return EAGAIN;
    case NLE_NODEV:
    case NLE_OBJ_NOTFOUND:
      return ENODEV;
    case NLE_PROTO_MISMATCH:
      // No such netlink family (NETLINK_RDMA without ib_core): no device is known to it.
      return ENODEV;
    case NLE_OPNOTSUPP:
      return EOPNOTSUPP;
    case NLE_MSGSIZE:
      return EMSGSIZE;
    default:
      return EIO;
  }
}

}  // namespace rdma_exporter
