// RDMA netlink readers: resource summaries (RDMA_NLDEV_CMD_RES_GET) and per-port hw counters
// (RDMA_NLDEV_CMD_STAT_GET) of an RDMA device, from NETLINK_RDMA or from fixture files holding
// iproute2 `rdma resource show` / `rdma statistic show` output.
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <rdma/rdma_netlink.h>

#include <cerrno>
#include <sstream>

#include "netlink_util.h"
#include "rdma_exporter/file_util.h"
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

// One attribute space for the message and every nest in it (nldev numbers all attributes in one
// enum), as iproute2's rdma/utils.c validates them: the attributes read, by type.
constexpr auto kNldevPolicy = MakeNlaPolicy<kMaxAttr>({
    {RDMA_NLDEV_ATTR_DEV_INDEX, NlaOfType(NLA_U32)},
    {RDMA_NLDEV_ATTR_DEV_NAME, NlaOfType(NLA_STRING)},
    {RDMA_NLDEV_ATTR_PORT_INDEX, NlaOfType(NLA_U32)},
    {RDMA_NLDEV_ATTR_RES_SUMMARY, NlaOfType(NLA_NESTED)},
    {RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY, NlaOfType(NLA_NESTED)},
    {RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, NlaOfType(NLA_STRING)},
    {RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, NlaOfType(NLA_U64)},
    {RDMA_NLDEV_ATTR_STAT_HWCOUNTERS, NlaOfType(NLA_NESTED)},
    {RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY, NlaOfType(NLA_NESTED)},
    {RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, NlaOfType(NLA_STRING)},
    {RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, NlaOfType(NLA_U64)},
    {RDMA_NLDEV_ATTR_RES_QP, NlaOfType(NLA_NESTED)},
    {RDMA_NLDEV_ATTR_RES_QP_ENTRY, NlaOfType(NLA_NESTED)},
    {RDMA_NLDEV_ATTR_RES_LQPN, NlaOfType(NLA_U32)},
    {RDMA_NLDEV_ATTR_RES_PID, NlaOfType(NLA_U32)},
    {RDMA_NLDEV_ATTR_RES_KERN_NAME, NlaOfType(NLA_STRING)},
});
using NldevTable = NlaTable<kMaxAttr>;

uint16_t MessageType(int cmd) {
  return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
}

// The message's attributes (the nldev layout has no family header). Returns 0 or EBADMSG.
[[nodiscard]] int ParseAttrs(const nlmsghdr* hdr, NldevTable* tb) {
  return ParseNlaMessage(hdr, 0, kNldevPolicy, tb);
}

// Replies carry DEV_NAME; a different name means the index now belongs to another device.
bool OtherDevice(const NldevTable& tb, const std::string& device) {
  auto name = NlaString(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
  return name && *name != device;
}

// Calls add(name, value) for each entry of a table nest (RES_SUMMARY, STAT_HWCOUNTERS) whose
// entries hold a name and a u64. Returns 0 or EBADMSG (an entry without both).
template <typename Add>
[[nodiscard]] int ForEachNamedU64(const nlattr* table, int name_attr, int value_attr,
                                  const Add& add) {
  const nlattr* entry;
  int remaining;
  nla_for_each_nested(entry, table, remaining) {
    NldevTable line;
    if (ParseNlaNested(entry, kNldevPolicy, &line) != 0) return EBADMSG;
    auto name = NlaString(line[name_attr]);
    auto value = NlaU64(line[value_attr]);
    if (!name || !value) return EBADMSG;
    add(std::move(*name), *value);
  }
  return 0;
}

}  // namespace

int ParseRdmaDevGetReply(const nlmsghdr* hdr, std::string* name, uint32_t* index) {
  NldevTable tb;
  if (ParseAttrs(hdr, &tb) != 0) return EBADMSG;
  auto got_index = NlaU32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
  auto got_name = NlaString(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
  if (!got_index || !got_name) return ENOENT;
  *name = std::move(*got_name);
  *index = *got_index;
  return 0;
}

int ParseRdmaResGetReply(const nlmsghdr* hdr, const std::string& device,
                         std::map<std::string, uint64_t>* counts) {
  NldevTable tb;
  if (ParseAttrs(hdr, &tb) != 0) return EBADMSG;
  if (OtherDevice(tb, device)) return ENODEV;
  const nlattr* table = tb[RDMA_NLDEV_ATTR_RES_SUMMARY];
  if (table == nullptr) return EBADMSG;
  return ForEachNamedU64(
      table, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR,
      [&](std::string name, uint64_t curr) { (*counts)[std::move(name)] = curr; });
}

int ParseRdmaStatGetReply(const nlmsghdr* hdr, const std::string& device,
                          std::vector<std::pair<std::string, uint64_t>>* out) {
  NldevTable tb;
  if (ParseAttrs(hdr, &tb) != 0) return EBADMSG;
  if (OtherDevice(tb, device)) return ENODEV;
  const nlattr* table = tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS];
  if (table == nullptr) return EBADMSG;
  return ForEachNamedU64(
      table, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE,
      [&](std::string name, uint64_t value) { out->emplace_back(std::move(name), value); });
}

int ParseRdmaResQpReply(const nlmsghdr* hdr, const std::string& device,
                        std::vector<RdmaQpOwner>* out) {
  NldevTable tb;
  if (ParseAttrs(hdr, &tb) != 0) return EBADMSG;
  if (OtherDevice(tb, device)) return ENODEV;
  const nlattr* table = tb[RDMA_NLDEV_ATTR_RES_QP];
  if (table == nullptr) return 0;  // a device without QPs answers with no table
  const nlattr* entry;
  int remaining;
  nla_for_each_nested(entry, table, remaining) {
    NldevTable qp;
    if (ParseNlaNested(entry, kNldevPolicy, &qp) != 0) return EBADMSG;
    // Every entry has its QP number (nldev.c fill_res_qp_entry); the port only once the QP is
    // bound to one, the pid only for a user QP (a kernel QP has RES_KERN_NAME instead).
    if (!NlaU32(qp[RDMA_NLDEV_ATTR_RES_LQPN])) return EBADMSG;
    RdmaQpOwner owner;
    owner.port = NlaU32(qp[RDMA_NLDEV_ATTR_PORT_INDEX]).value_or(0);
    owner.pid = NlaU32(qp[RDMA_NLDEV_ATTR_RES_PID]).value_or(0);
    out->push_back(owner);
  }
  return 0;
}

namespace {

class RdmaNetlinkKernelReader : public RdmaNetlinkReader {
 public:
  void BeginPoll() override {
    indexes_loaded_ = false;
    reloaded_this_poll_ = false;
    load_error_ = 0;
  }

  [[nodiscard]] int ReadResources(const std::string& device,
                                  std::map<std::string, uint64_t>* counts) override {
    counts->clear();
    uint32_t index = 0;
    int err = Lookup(device, &index);
    if (err != 0) return err;
    std::map<std::string, uint64_t> result;
    err = Request(RDMA_NLDEV_CMD_RES_GET, index, 0,
                  [&](const nlmsghdr* hdr) { return ParseRdmaResGetReply(hdr, device, &result); });
    err = AfterRequest(device, err);
    if (err == 0) *counts = std::move(result);
    return err;
  }

  [[nodiscard]] int ReadHwCounters(const std::string& device, unsigned port,
                                   std::vector<std::pair<std::string, uint64_t>>* out) override {
    out->clear();
    uint32_t index = 0;
    int err = Lookup(device, &index);
    if (err != 0) return err;
    std::vector<std::pair<std::string, uint64_t>> result;
    err = Request(RDMA_NLDEV_CMD_STAT_GET, index, port,
                  [&](const nlmsghdr* hdr) { return ParseRdmaStatGetReply(hdr, device, &result); });
    err = AfterRequest(device, err);
    if (err == 0) *out = std::move(result);
    return err;
  }

  // `rdma resource show qp dev DEV`: a dump of RES_QP_GET with DEV_INDEX (the kernel's res
  // dumps need it), many QPs per message.
  [[nodiscard]] int ReadQps(const std::string& device, std::vector<RdmaQpOwner>* out) override {
    out->clear();
    uint32_t index = 0;
    int err = Lookup(device, &index);
    if (err != 0) return err;
    std::vector<RdmaQpOwner> result;
    err = RetryInterruptedDump([&] {
      result.clear();
      NlMsgPtr msg = NewNetlinkRequest(MessageType(RDMA_NLDEV_CMD_RES_QP_GET), NLM_F_DUMP);
      if (msg == nullptr) return ENOMEM;
      int put = nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_DEV_INDEX, index);
      if (put < 0) return NlErrno(put);
      return channel_.Transact(
          msg.get(), MessageType(RDMA_NLDEV_CMD_RES_QP_GET),
          [&](const nlmsghdr* hdr) { return ParseRdmaResQpReply(hdr, device, &result); });
    });
    err = AfterRequest(device, err);
    if (err == 0) *out = std::move(result);
    return err;
  }

 private:
  // A doit request for one device (and port, unless 0). Returns 0 or an errno value.
  [[nodiscard]] int Request(int cmd, uint32_t index, unsigned port,
                            const NetlinkReplyHandler& on_reply) {
    NlMsgPtr msg = NewNetlinkRequest(MessageType(cmd), 0);
    if (msg == nullptr) return ENOMEM;
    int err = nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_DEV_INDEX, index);
    if (err >= 0 && port != 0) err = nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_PORT_INDEX, port);
    if (err < 0) return NlErrno(err);
    return channel_.Transact(msg.get(), MessageType(cmd), on_reply);
  }

  // Loads the name -> index map once per poll.
  [[nodiscard]] int LoadIndexes() {
    std::map<std::string, uint32_t> indexes;
    int err = RetryInterruptedDump([&] {
      indexes.clear();
      NlMsgPtr msg = NewNetlinkRequest(MessageType(RDMA_NLDEV_CMD_GET), NLM_F_DUMP);
      if (msg == nullptr) return ENOMEM;
      return channel_.Transact(msg.get(), MessageType(RDMA_NLDEV_CMD_GET),
                               [&](const nlmsghdr* hdr) {
                                 std::string name;
                                 uint32_t index = 0;
                                 int parsed = ParseRdmaDevGetReply(hdr, &name, &index);
                                 if (parsed == 0) indexes[name] = index;
                                 return parsed == ENOENT ? 0 : parsed;
                               });
    });
    if (err != 0) return err;
    indexes_ = std::move(indexes);
    indexes_loaded_ = true;
    return 0;
  }

  // The device's index from the map; the map is loaded on first use in a poll and reloaded at
  // most once more in the poll when a device is not in it (a device that appeared, or an index
  // that went stale).
  [[nodiscard]] int Lookup(const std::string& device, uint32_t* index) {
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
  [[nodiscard]] int AfterRequest(const std::string& device, int err) {
    if (err != EINVAL && err != ENODEV) return err;
    if (reloaded_this_poll_) return err;
    reloaded_this_poll_ = true;
    if (LoadIndexes() != 0) return err;
    return indexes_.count(device) == 0 ? ENODEV : err;
  }

  // The socket is opened on first use, in the network namespace of the calling thread then
  // (devices are looked up in the socket's namespace).
  NetlinkChannel channel_{NETLINK_RDMA};
  std::map<std::string, uint32_t> indexes_;
  bool indexes_loaded_ = false;
  bool reloaded_this_poll_ = false;
  int load_error_ = 0;  // of this poll's failed map load
};

// ---------------------------------------------------------------------------------------------
// Fixture files

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
  [[nodiscard]] int ReadResources(const std::string& device,
                                  std::map<std::string, uint64_t>* counts) override {
    counts->clear();
    std::string content;
    if (ReadWholeFile(dir_ + "/res", &content) != 0) return ENODEV;
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
  [[nodiscard]] int ReadHwCounters(const std::string& device, unsigned port,
                                   std::vector<std::pair<std::string, uint64_t>>* out) override {
    out->clear();
    std::string content;
    if (ReadWholeFile(dir_ + "/statistic", &content) != 0) return ENODEV;
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

  // rdma/qp, `rdma resource show qp` lines: "link rxe0/1 lqpn 17 type RC state RTS ... pid 812
  // comm ibv_rc_pingpong" (a kernel QP has "comm [ib_core]" and no pid; an unbound QP
  // "link rxe0/-"). No file: no QPs.
  [[nodiscard]] int ReadQps(const std::string& device, std::vector<RdmaQpOwner>* out) override {
    out->clear();
    std::string content;
    if (ReadWholeFile(dir_ + "/qp", &content) != 0) return 0;
    std::istringstream lines(content);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream words(line);
      std::string kind, link, word;
      if (!(words >> kind >> link) || kind != "link" || link.rfind(device + "/", 0) != 0) continue;
      RdmaQpOwner owner;
      owner.port = static_cast<uint32_t>(ParseU64(link.substr(device.size() + 1)).value_or(0));
      while (words >> word) {
        if (word != "pid") continue;
        if (!(words >> word)) return EINVAL;
        auto pid = ParseU64(word);
        if (!pid) return EINVAL;
        owner.pid = static_cast<uint32_t>(*pid);
      }
      out->push_back(owner);
    }
    return 0;
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
