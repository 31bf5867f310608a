#include "netlink_util.h"

#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <new>

namespace rdma_exporter {

int NlErrno(int nl_err) {
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
    case NLE_DUMP_INTR:
      // The dump saw a change while it ran (NLM_F_DUMP_INTR): worth running again.
      return EINTR;
    default:
      return EIO;
  }
}

NlMsgPtr NewNetlinkRequest(uint16_t type, int flags) {
  return NlMsgPtr(nlmsg_alloc_simple(type, NLM_F_REQUEST | flags));
}

namespace {

// Twice the largest message the kernel sends to a reader: dump parts are at most 32 KiB
// (netlink_dump sizes them by the reader's buffer, capped there) and the replies read here
// (RTM_GETLINK without VF info, DCB, ethtool module pages, RDMA netlink) are a few KiB.
constexpr size_t kReceiveBufferBytes = 64 * 1024;

// What the receive callbacks share with Transact.
struct Exchange {
  uint16_t reply_type = 0;
  const NetlinkReplyHandler* on_reply = nullptr;
  bool got_reply = false;
  int kernel_error = 0;  // positive errno from an NLMSG_ERROR
  int error = 0;         // positive errno from handling a reply
};

// The callbacks libnl calls run between C frames of nl_recvmsgs: an exception must not leave
// them (unwinding through C code without unwind tables terminates the process, and with them it
// skips libnl's cleanup). Each catches everything and stops the exchange with an error instead.
int OnValid(nl_msg* msg, void* arg) noexcept {
  auto* ex = static_cast<Exchange*>(arg);
  try {
    const nlmsghdr* hdr = nlmsg_hdr(msg);
    if (hdr->nlmsg_type != ex->reply_type) return NL_SKIP;
    ex->got_reply = true;
    int err = (*ex->on_reply)(hdr);
    if (err == 0) return NL_OK;
    ex->error = err;
  } catch (const std::bad_alloc&) {
    ex->error = ENOMEM;
  } catch (...) {
    // A handler that cannot make sense of the reply (std::stoi, out_of_range, ...).
    ex->error = EBADMSG;
  }
  return NL_STOP;
}

int OnError(sockaddr_nl*, nlmsgerr* error, void* arg) noexcept {
  auto* ex = static_cast<Exchange*>(arg);
  ex->kernel_error = error->error < 0 ? -error->error : error->error;
  return NL_STOP;
}

// A private copy of the socket's callbacks, to set per-request handlers on. nl_socket_get_cb
// takes a reference of its own, released here: without that the socket's nl_cb outlives
// nl_socket_free (a leak per socket, found by LeakSanitizer).
NlCbPtr CloneSocketCallbacks(nl_sock* sock) {
  NlCbPtr socket_cb(nl_socket_get_cb(sock));
  return NlCbPtr(nl_cb_clone(socket_cb.get()));
}

}  // namespace

NetlinkChannel::NetlinkChannel(int protocol, std::chrono::milliseconds receive_timeout)
    : protocol_(protocol), receive_timeout_(receive_timeout) {}

int NetlinkChannel::fd() const {
  return sock_ != nullptr ? nl_socket_get_fd(sock_.get()) : -1;
}

int NetlinkChannel::Connect() {
  if (sock_ != nullptr) return 0;
  NlSockPtr sock(nl_socket_alloc());
  if (sock == nullptr) return ENOMEM;
  int err = nl_connect(sock.get(), protocol_);
  if (err < 0) return NlErrno(err);
  nl_socket_disable_auto_ack(sock.get());
  // One recvmsg per message into a buffer larger than any the kernel sends, instead of peeking
  // at each message's size first (libnl's default), which doubled the recvmsg calls of every
  // request (per port, for STAT_GET). A larger message would fail with NLE_MSG_TRUNC: counted,
  // never read in part.
  nl_socket_disable_msg_peek(sock.get());
  if (nl_socket_set_msg_buf_size(sock.get(), kReceiveBufferBytes) < 0) return ENOMEM;
  timeval timeout{};
  timeout.tv_sec = static_cast<time_t>(receive_timeout_.count() / 1000);
  timeout.tv_usec = static_cast<suseconds_t>(receive_timeout_.count() % 1000 * 1000);
  if (setsockopt(nl_socket_get_fd(sock.get()), SOL_SOCKET, SO_RCVTIMEO, &timeout,
                 sizeof(timeout)) != 0) {
    return errno;  // without the timeout a wedged socket would stall every poll
  }
  sock_ = std::move(sock);
  return 0;
}

int NetlinkChannel::Transact(nl_msg* request, uint16_t reply_type,
                             const NetlinkReplyHandler& on_reply) {
  int err = Connect();
  if (err != 0) return err;
  err = nl_send_auto(sock_.get(), request);
  if (err < 0) {
    Disconnect();
    return NlErrno(err);
  }
  Exchange ex;
  ex.reply_type = reply_type;
  ex.on_reply = &on_reply;
  NlCbPtr cb = CloneSocketCallbacks(sock_.get());
  if (cb == nullptr) {
    Disconnect();  // the request is sent, its reply unread
    return ENOMEM;
  }
  nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, OnValid, &ex);
  nl_cb_err(cb.get(), NL_CB_CUSTOM, OnError, &ex);
  // A doit reply is one message (not multipart): nl_recvmsgs returns after it. A dump ends with
  // NLMSG_DONE.
  err = nl_recvmsgs(sock_.get(), cb.get());
  if (ex.kernel_error != 0) return ex.kernel_error;  // the request was answered; socket clean
  int result = ex.error != 0 ? ex.error : err < 0 ? NlErrno(err) : 0;
  // An empty dump (nothing in this namespace) is only NLMSG_DONE; a doit always replies.
  bool dump = (nlmsg_hdr(request)->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
  if (result == 0 && !ex.got_reply && !dump) result = EIO;
  // Unread parts or a timeout may be left on the socket: rebuild it next time.
  if (result != 0) Disconnect();
  return result;
}

}  // namespace rdma_exporter
