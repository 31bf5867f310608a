// The netlink plumbing of the rtnetlink (netdev, DCB) and RDMA netlink readers, in one place:
// owning handles for the libnl objects, libnl error codes as errno values, and NetlinkChannel,
// the one socket + send/receive path every request goes through.
#pragma once

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/cache.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace rdma_exporter {

// ---------------------------------------------------------------------------------------------
// Owning handles: a class holding one of these is move-only, and the object is released once.

struct NlSockDeleter {
  void operator()(nl_sock* sock) const noexcept { nl_socket_free(sock); }
};
struct NlCacheDeleter {
  void operator()(nl_cache* cache) const noexcept { nl_cache_free(cache); }
};
struct NlCbDeleter {
  void operator()(nl_cb* cb) const noexcept { nl_cb_put(cb); }
};
struct NlMsgDeleter {
  void operator()(nl_msg* msg) const noexcept { nlmsg_free(msg); }
};
using NlSockPtr = std::unique_ptr<nl_sock, NlSockDeleter>;
using NlCachePtr = std::unique_ptr<nl_cache, NlCacheDeleter>;
using NlCbPtr = std::unique_ptr<nl_cb, NlCbDeleter>;
using NlMsgPtr = std::unique_ptr<nl_msg, NlMsgDeleter>;

// ---------------------------------------------------------------------------------------------

// libnl error codes (negative NLE_*) as errno values, for failures before the kernel answered
// (the kernel's own errors arrive as errno in NLMSG_ERROR).
[[nodiscard]] int NlErrno(int nl_err);

// Every netlink socket of the readers waits this long for a reply: the kernel answers a GET at
// once, so the timeout only guards a poll against a wedged socket.
inline constexpr std::chrono::milliseconds kNetlinkReceiveTimeout{5000};

// A request message of `type` with NLM_F_REQUEST | flags, or nullptr when out of memory.
[[nodiscard]] NlMsgPtr NewNetlinkRequest(uint16_t type, int flags);

// Called for each reply message of the expected type; returns 0 or an errno value (which ends
// the exchange). It may throw: the channel turns an exception into an error return.
using NetlinkReplyHandler = std::function<int(const nlmsghdr* hdr)>;

// A netlink socket for GET requests on one protocol, opened on first use in the network
// namespace of the calling thread then, and every request's send and receive. A GET is answered
// by a reply (or a dump) or an NLMSG_ERROR, so no ACK is requested.
class NetlinkChannel {
 public:
  // receive_timeout is for tests; the readers use the default.
  explicit NetlinkChannel(int protocol,
                          std::chrono::milliseconds receive_timeout = kNetlinkReceiveTimeout);
  NetlinkChannel(NetlinkChannel&&) noexcept = default;
  NetlinkChannel& operator=(NetlinkChannel&&) noexcept = default;

  // Sends request and hands each reply message of reply_type to on_reply: the one reply of a
  // doit, or every part of a dump (NLM_F_DUMP) up to NLMSG_DONE. Returns 0, the kernel's errno
  // from an NLMSG_ERROR, on_reply's error, ENOMEM / EBADMSG for an exception on_reply threw,
  // EIO for a doit that got no reply, EAGAIN after the receive timeout, EINTR for a dump the
  // kernel flagged interrupted, or another errno for a socket failure. After any failure but a
  // kernel error (which leaves the socket clean) the socket is closed, and the next request opens a
  // new one.
  [[nodiscard]] int Transact(nl_msg* request, uint16_t reply_type,
                             const NetlinkReplyHandler& on_reply);

  // Opens the socket if it is not open. Returns 0 or an errno value.
  [[nodiscard]] int Connect();
  void Disconnect() { sock_.reset(); }
  // The socket's descriptor, -1 when not connected (tests read its options).
  int fd() const;

 private:
  int protocol_;
  std::chrono::milliseconds receive_timeout_;
  NlSockPtr sock_;
};

// Runs a dump (attempt() starts afresh and returns Transact's result) again while the kernel
// flags it interrupted (EINTR: a netdev or device changed while it was dumped), as libnl's cache
// refill does, at most three times.
template <typename Attempt>
[[nodiscard]] int RetryInterruptedDump(const Attempt& attempt) {
  int err = attempt();
  for (int retries = 0; err == EINTR && retries < 2; ++retries)
    err = attempt();
  return err;
}

// ---------------------------------------------------------------------------------------------
// Attribute policies, as iproute2's rdma/ tool keeps them: one table per attribute space names
// the type (and so the minimum length) of each attribute read, and a reply breaking it is
// rejected whole (EBADMSG) before any attribute is looked at.

template <int kMaxType>
using NlaPolicyTable = std::array<nla_policy, kMaxType + 1>;
template <int kMaxType>
using NlaTable = std::array<nlattr*, kMaxType + 1>;

// Policies: an attribute of a libnl type (NLA_U32 ... NLA_STRING, NLA_NESTED), or a struct of at
// least `bytes` bytes.
constexpr nla_policy NlaOfType(uint16_t type) {
  return nla_policy{type, 0, 0};
}
constexpr nla_policy NlaAtLeast(size_t bytes) {
  return nla_policy{NLA_UNSPEC, static_cast<uint16_t>(bytes), 0};
}

// A policy table from {attribute, policy} pairs (C's designated array initializers, which C++
// lacks); attributes not named are accepted as they come (NLA_UNSPEC).
template <int kMaxType>
constexpr NlaPolicyTable<kMaxType> MakeNlaPolicy(
    std::initializer_list<std::pair<int, nla_policy>> entries) {
  NlaPolicyTable<kMaxType> table{};
  for (const auto& [type, policy] : entries)
    table[static_cast<size_t>(type)] = policy;
  return table;
}

// The attributes of a message after a header_len-byte family header. Returns 0 or EBADMSG.
template <size_t N>
[[nodiscard]] int ParseNlaMessage(const nlmsghdr* hdr, size_t header_len,
                                  const std::array<nla_policy, N>& policy,
                                  std::array<nlattr*, N>* tb) {
  tb->fill(nullptr);
  int err = nlmsg_parse(const_cast<nlmsghdr*>(hdr), static_cast<int>(header_len), tb->data(),
                        static_cast<int>(N - 1), policy.data());
  return err < 0 ? EBADMSG : 0;
}

// The attributes nested in nest. Returns 0 or EBADMSG.
template <size_t N>
[[nodiscard]] int ParseNlaNested(const nlattr* nest, const std::array<nla_policy, N>& policy,
                                 std::array<nlattr*, N>* tb) {
  tb->fill(nullptr);
  int err = nla_parse_nested(tb->data(), static_cast<int>(N - 1), const_cast<nlattr*>(nest),
                             policy.data());
  return err < 0 ? EBADMSG : 0;
}

// ---------------------------------------------------------------------------------------------
// Attribute access after a policy-checked parse (nlmsg_parse / nla_parse_nested with an
// nla_policy table): the policy guarantees the length, so these only handle absence.

inline std::optional<uint8_t> NlaU8(const nlattr* attr) {
  if (attr == nullptr) return std::nullopt;
  return nla_get_u8(const_cast<nlattr*>(attr));
}

inline std::optional<uint32_t> NlaU32(const nlattr* attr) {
  if (attr == nullptr) return std::nullopt;
  return nla_get_u32(const_cast<nlattr*>(attr));
}

// nla_get_u64 copies with memcpy: the kernel 8-byte aligns u64 values with a PAD attribute, but
// need not.
inline std::optional<uint64_t> NlaU64(const nlattr* attr) {
  if (attr == nullptr) return std::nullopt;
  return nla_get_u64(const_cast<nlattr*>(attr));
}

// An NLA_STRING attribute (the policy checked the terminating NUL).
inline std::optional<std::string> NlaString(const nlattr* attr) {
  if (attr == nullptr) return std::nullopt;
  const char* data = static_cast<const char*>(nla_data(attr));
  return std::string(data, strnlen(data, static_cast<size_t>(nla_len(attr))));
}

// A struct attribute (the policy's minlen covers the fields read): the attribute's bytes over a
// zeroed T, so a kernel that sends a shorter (older) or longer (newer) struct is read as far as
// both know it.
template <typename T>
T NlaStruct(const nlattr* attr) {
  T value{};
  size_t len = static_cast<size_t>(nla_len(attr));
  std::memcpy(&value, nla_data(attr), len < sizeof(T) ? len : sizeof(T));
  return value;
}

}  // namespace rdma_exporter
