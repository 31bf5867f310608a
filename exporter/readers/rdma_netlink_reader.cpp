// RDMA netlink readers: resource summaries (RDMA_NLDEV_CMD_RES_GET) and per-port hw counters
// (RDMA_NLDEV_CMD_STAT_GET) of an RDMA device, from NETLINK_RDMA or from fixture files holding
// iproute2 `rdma resource show` / `rdma statistic show` output.
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>

#include "netlink_util.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/parse.h"
#include "rdma_netlink_reader.h"

namespace rdma_exporter {
namespace {

// ---------------------------------------------------------------------------------------------
// NETLINK_RDMA
//
// The nldev interface has no family header: nlmsghdr, then attributes (the kernel parses with
// header length 0), type RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd). Requests carry DEV_INDEX, so a
// device name is first mapped to its index with a RDMA_NLDEV_CMD_GET dump, once per poll (and
// again when a device is not found). GET, RES_GET and STAT_GET need no capability. The messages
// are those of iproute2's `rdma resource show` (RES_GET + DEV_INDEX, no DRIVER_DETAILS, so the
// counts match its output) and `rdma statistic show link DEV/PORT` (STAT_GET + DEV_INDEX +
// PORT_INDEX, no STAT_RES: every counter of the port, enabled optional ones included, in one
// reply).

constexpr int kMaxAttr = RDMA_NLDEV_ATTR_MAX - 1;  // RDMA_NLDEV_ATTR_MAX is the enum's count
using AttrTable = nlattr* [RDMA_NLDEV_ATTR_MAX];

uint16_t MessageType(int cmd) {
  return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
}

std::optional<uint32_t> GetU32(nlattr* attr) {
  if (attr == nullptr || nla_len(attr) < static_cast<int>(sizeof(uint32_t))) return std::nullopt;
  return nla_get_u32(attr);
}

std::optional<uint64_t> GetU64(nlattr* attr) {
  if (attr == nullptr || nla_len(attr) < static_cast<int>(sizeof(uint64_t))) return std::nullopt;
  return nla_get_u64(attr);  // memcpy: the kernel 8-byte aligns with PAD, but need not
}

std::optional<std::string> GetString(nlattr* attr) {
  if (attr == nullptr) return std::nullopt;
  const char* data = static_cast<const char*>(nla_data(attr));
  return std::string(data, strnlen(data, static_cast<size_t>(nla_len(attr))));
}

// nlmsg_parse with the nldev layout (no family header). Returns 0 or EBADMSG.
int ParseAttrs(const nlmsghdr* hdr, AttrTable& tb) {
  return nlmsg_parse(const_cast<nlmsghdr*>(hdr), 0, tb, kMaxAttr, nullptr) < 0 ? EBADMSG : 0;
}

// Replies carry DEV_NAME; a different name means the index now belongs to another device.
bool OtherDevice(AttrTable& tb, const std::string& device) {
  auto name = GetString(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
  return name && *name != device;
}

}  // namespace

int ParseRdmaDevGetReply(const nlmsghdr* hdr, std::string* name, uint32_t* index) {
  AttrTable tb = {};
  if (ParseAttrs(hdr, tb) != 0) return EBADMSG;
  auto got_index = GetU32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
  auto got_name = GetString(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
  if (!got_index || !got_name) return ENOENT;
  *name = std::move(*got_name);
  *index = *got_index;
  return 0;
}

int ParseRdmaResGetReply(const nlmsghdr* hdr, const std::string& device,
                         std::map<std::string, uint64_t>* counts) {
  AttrTable tb = {};
  if (ParseAttrs(hdr, tb) != 0) return EBADMSG;
  if (OtherDevice(tb, device)) return ENODEV;
  nlattr* table = tb[RDMA_NLDEV_ATTR_RES_SUMMARY];
  if (table == nullptr) return EBADMSG;
  nlattr* entry;
  int remaining;
  nla_for_each_nested(entry, table, remaining) {
    AttrTable line = {};
    if (nla_parse_nested(line, kMaxAttr, entry, nullptr) < 0) return EBADMSG;
    auto name = GetString(line[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME]);
    auto curr = GetU64(line[RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR]);
    if (!name || !curr) return EBADMSG;
    (*counts)[*name] = *curr;
  }
  return 0;
}

int ParseRdmaStatGetReply(const nlmsghdr* hdr, const std::string& device,
                          std::vector<std::pair<std::string, uint64_t>>* out) {
  AttrTable tb = {};
  if (ParseAttrs(hdr, tb) != 0) return EBADMSG;
  if (OtherDevice(tb, device)) return ENODEV;
  nlattr* table = tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS];
  if (table == nullptr) return EBADMSG;
  nlattr* entry;
  int remaining;
  nla_for_each_nested(entry, table, remaining) {
    AttrTable line = {};
    if (nla_parse_nested(line, kMaxAttr, entry, nullptr) < 0) return EBADMSG;
    auto name = GetString(line[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME]);
    auto value = GetU64(line[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE]);
    if (!name || !value) return EBADMSG;
    out->emplace_back(std::move(*name), *value);
  }
  return 0;
}

namespace {

// What the receive callbacks share.
struct Exchange {
  uint16_t type = 0;                               // expected nlmsg_type
  std::function<int(const nlmsghdr*)> on_message;  // returns 0 or an errno value
  bool got_reply = false;
  int kernel_error = 0;  // positive errno from an NLMSG_ERROR
  int error = 0;         // positive errno from parsing a reply
};

int OnValid(nl_msg* msg, void* arg) {
  auto* ex = static_cast<Exchange*>(arg);
  nlmsghdr* hdr = nlmsg_hdr(msg);
  if (hdr->nlmsg_type != ex->type) return NL_SKIP;
  ex->got_reply = true;
  int err = ex->on_message(hdr);
  if (err != 0) {
    ex->error = err;
    return NL_STOP;
  }
  return NL_OK;
}

int OnError(sockaddr_nl*, nlmsgerr* error, void* arg) {
  auto* ex = static_cast<Exchange*>(arg);
  ex->kernel_error = error->error < 0 ? -error->error : error->error;
  return NL_STOP;
}

class RdmaNetlinkKernelReader : public RdmaNetlinkReader {
 public:
  ~RdmaNetlinkKernelReader() override { Disconnect(); }

  void BeginPoll() override {
    indexes_loaded_ = false;
    reloaded_this_poll_ = false;
    load_error_ = 0;
  }

  int ReadResources(const std::string& device, std::map<std::string, uint64_t>* counts) override {
    counts->clear();
    uint32_t index = 0;
    int err = Lookup(device, &index);
    if (err != 0) return err;
    std::map<std::string, uint64_t> result;
    err = Transact(
        RDMA_NLDEV_CMD_RES_GET, 0, [&](nl_msg* msg) { return PutIndex(msg, index, 0); },
        [&](const nlmsghdr* hdr) { return ParseRdmaResGetReply(hdr, device, &result); });
    err = AfterRequest(device, err);
    if (err == 0) *counts = std::move(result);
    return err;
  }

  int ReadHwCounters(const std::string& device, unsigned port,
                     std::vector<std::pair<std::string, uint64_t>>* out) override {
    out->clear();
    uint32_t index = 0;
    int err = Lookup(device, &index);
    if (err != 0) return err;
    std::vector<std::pair<std::string, uint64_t>> result;
    err = Transact(
        RDMA_NLDEV_CMD_STAT_GET, 0, [&](nl_msg* msg) { return PutIndex(msg, index, port); },
        [&](const nlmsghdr* hdr) { return ParseRdmaStatGetReply(hdr, device, &result); });
    err = AfterRequest(device, err);
    if (err == 0) *out = std::move(result);
    return err;
  }

 private:
  // The socket is created on first use, in the network namespace of the calling thread then
  // (devices are looked up in the socket's namespace).
  int Connect() {
    if (sock_ != nullptr) return 0;
    return OpenNetlinkGetSocket(NETLINK_RDMA, &sock_);
  }

  void Disconnect() {
    if (sock_ != nullptr) nl_socket_free(sock_);
    sock_ = nullptr;
  }

  static int PutIndex(nl_msg* msg, uint32_t index, unsigned port) {
    int err = nla_put_u32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, index);
    if (err >= 0 && port != 0) err = nla_put_u32(msg, RDMA_NLDEV_ATTR_PORT_INDEX, port);
    return err;
  }

  // Sends one request and receives its reply (or all parts of a dump). Returns 0 or an errno.
  int Transact(int cmd, int flags, const std::function<int(nl_msg*)>& put_attrs,
               std::function<int(const nlmsghdr*)> on_message) {
    int err = Connect();
    if (err != 0) return err;
    nl_msg* msg = nlmsg_alloc_simple(MessageType(cmd), NLM_F_REQUEST | flags);
    if (msg == nullptr) return ENOMEM;
    err = put_attrs(msg);
    if (err >= 0) err = nl_send_auto(sock_, msg);
    nlmsg_free(msg);
    if (err < 0) {
      Disconnect();
      return NlErrno(err);
    }
    Exchange ex;
    ex.type = MessageType(cmd);
    ex.on_message = std::move(on_message);
    nl_cb* cb = CloneSocketCallbacks(sock_);
    if (cb == nullptr) return ENOMEM;
    nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, OnValid, &ex);
    nl_cb_err(cb, NL_CB_CUSTOM, OnError, &ex);
    // A doit reply is one message (not multipart): nl_recvmsgs returns after it. A dump ends
    // with NLMSG_DONE.
    err = nl_recvmsgs(sock_, cb);
    nl_cb_put(cb);
    if (ex.kernel_error != 0) return ex.kernel_error;  // the request was answered; socket clean
    int result = ex.error != 0 ? ex.error : err < 0 ? NlErrno(err) : 0;
    // An empty dump (no device in this namespace) is only NLMSG_DONE; a doit always replies.
    if (result == 0 && !ex.got_reply && (flags & NLM_F_DUMP) == 0) result = EIO;
    // Unread parts or a timeout may be left on the socket: rebuild it next time.
    if (result != 0) Disconnect();
    return result;
  }

  // Loads the name -> index map once per poll.
  int LoadIndexes() {
    std::map<std::string, uint32_t> indexes;
    int err = Transact(
        RDMA_NLDEV_CMD_GET, NLM_F_DUMP, [](nl_msg*) { return 0; },
        [&](const nlmsghdr* hdr) {
          std::string name;
          uint32_t index = 0;
          int err = ParseRdmaDevGetReply(hdr, &name, &index);
          if (err == 0) indexes[name] = index;
          return err == ENOENT ? 0 : err;
        });
    if (err != 0) return err;
    indexes_ = std::move(indexes);
    indexes_loaded_ = true;
    return 0;
  }

  // The device's index from the map; the map is loaded on first use in a poll and reloaded at
  // most once more in the poll when a device is not in it (a device that appeared, or an index
  // that went stale).
  int Lookup(const std::string& device, uint32_t* index) {
    if (!indexes_loaded_) {
      // One attempt per poll: without ib_core (EPROTONOSUPPORT) or in a namespace without RDMA
      // netlink, every port would otherwise pay a failing socket() for the same answer.
      if (load_error_ != 0) return load_error_;
      load_error_ = LoadIndexes();
      if (load_error_ != 0) return load_error_;
    }
    auto it = indexes_.find(device);
    if (it == indexes_.end() && !reloaded_this_poll_) {
      reloaded_this_poll_ = true;
      int err = LoadIndexes();
      if (err != 0) return err;
      it = indexes_.find(device);
    }
    if (it == indexes_.end()) return ENODEV;
    *index = it->second;
    return 0;
  }

  // A request for an index that vanished fails with EINVAL (ib_device_get_by_index) or names
  // another device: report ENODEV if a fresh map no longer has the device.
  int AfterRequest(const std::string& device, int err) {
    if (err != EINVAL && err != ENODEV) return err;
    if (reloaded_this_poll_) return err;
    reloaded_this_poll_ = true;
    if (LoadIndexes() != 0) return err;
    return indexes_.count(device) == 0 ? ENODEV : err;
  }

  nl_sock* sock_ = nullptr;
  std::map<std::string, uint32_t> indexes_;
  bool indexes_loaded_ = false;
  bool reloaded_this_poll_ = false;
  int load_error_ = 0;  // of this poll's failed map load
};

// ---------------------------------------------------------------------------------------------
// Fixture files

// Reads dir/name; false if it does not exist.
bool ReadWhole(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream content;
  content << in.rdbuf();
  *out = content.str();
  return true;
}

// Parses "key value key value ..." pairs from words. Returns false on an odd count or a value
// that is not a number.
bool ParsePairs(std::istringstream& words, std::vector<std::pair<std::string, uint64_t>>* out) {
  std::string key, value;
  while (words >> key) {
    if (!(words >> value)) return false;
    auto n = ParseU64(value);
    if (!n) return false;
    out->emplace_back(key, *n);
  }
  return true;
}

class RdmaNetlinkFixtureReader : public RdmaNetlinkReader {
 public:
  explicit RdmaNetlinkFixtureReader(std::string dir) : dir_(std::move(dir)) {}

  // rdma/res: "0: rxe0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0".
  int ReadResources(const std::string& device, std::map<std::string, uint64_t>* counts) override {
    counts->clear();
    std::string content;
    if (!ReadWhole(dir_ + "/res", &content)) return ENODEV;
    std::istringstream lines(content);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream words(line);
      std::string index, name;
      if (!(words >> index >> name) || index.empty() || index.back() != ':') continue;
      if (name != device + ":") continue;
      std::vector<std::pair<std::string, uint64_t>> pairs;
      if (!ParsePairs(words, &pairs)) return EINVAL;
      counts->insert(pairs.begin(), pairs.end());
      return 0;
    }
    return ENODEV;
  }

  // rdma/statistic: "link rxe0/1 sent_pkts 181252 rcvd_pkts 181252 ...".
  int ReadHwCounters(const std::string& device, unsigned port,
                     std::vector<std::pair<std::string, uint64_t>>* out) override {
    out->clear();
    std::string content;
    if (!ReadWhole(dir_ + "/statistic", &content)) return ENODEV;
    std::string link = device + "/" + std::to_string(port);
    std::istringstream lines(content);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream words(line);
      std::string kind, name;
      if (!(words >> kind >> name) || kind != "link" || name != link) continue;
      if (!ParsePairs(words, out)) {
        out->clear();
        return EINVAL;
      }
      return 0;
    }
    return ENODEV;
  }

 private:
  std::string dir_;
};

}  // namespace

std::unique_ptr<RdmaNetlinkReader> MakeRdmaNetlinkKernelReader() {
  return std::make_unique<RdmaNetlinkKernelReader>();
}

std::unique_ptr<RdmaNetlinkReader> MakeRdmaNetlinkFixtureReader(std::string dir) {
  return std::make_unique<RdmaNetlinkFixtureReader>(std::move(dir));
}

}  // namespace rdma_exporter
