// Netlink helpers shared by the rtnetlink, DCB and RDMA netlink readers.
#pragma once

#include <netlink/errno.h>
#include <netlink/handlers.h>
#include <netlink/socket.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>

namespace rdma_exporter {

// libnl error codes (negative NLE_*) as errno values, for failures before the kernel answered
// (the kernel's own errors arrive as errno in NLMSG_ERROR).
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

// Opens a socket for GET requests on a netlink protocol, in the network namespace of the calling
// thread. A GET is answered by a reply (or a dump) or an NLMSG_ERROR, so no ACK is requested;
// the receive timeout only guards against a wedged socket. Returns 0 or an errno value.
inline int OpenNetlinkGetSocket(int protocol, nl_sock** out) {
  nl_sock* sock = nl_socket_alloc();
  if (sock == nullptr) return ENOMEM;
  int err = nl_connect(sock, protocol);
  if (err < 0) {
    nl_socket_free(sock);
    return NlErrno(err);
  }
  nl_socket_disable_auto_ack(sock);
  nl_socket_enable_msg_peek(sock);
  timeval timeout{};
  timeout.tv_sec = 5;
  setsockopt(nl_socket_get_fd(sock), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  *out = sock;
  return 0;
}

// A private copy of the socket's callbacks, to set per-request handlers on; release it with
// nl_cb_put. nl_socket_get_cb takes a reference of its own, released here: without that the
// socket's nl_cb outlives nl_socket_free (a leak per socket, found by LeakSanitizer).
inline nl_cb* CloneSocketCallbacks(nl_sock* sock) {
  nl_cb* socket_cb = nl_socket_get_cb(sock);
  nl_cb* cb = nl_cb_clone(socket_cb);
  nl_cb_put(socket_cb);
  return cb;
}

}  // namespace rdma_exporter
