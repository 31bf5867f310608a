// DCB readers: IEEE 802.1Qaz PFC and APP table of a netdev, from rtnetlink (RTM_GETDCB) or from
// fixture files holding iproute2 `dcb` output.
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <sstream>
#include <string_view>

#include "dcb_reader.h"
#include "netlink_util.h"
#include "rdma_exporter/file_util.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

constexpr int kPriorities = 8;
constexpr int kDscpValues = 64;

// A DcbConfig with an empty DSCP map (every entry -1 = no APP entry).
DcbConfig EmptyConfig() {
  DcbConfig config;
  config.dscp_to_priority.fill(-1);
  return config;
}

// Adds one APP table entry; only DSCP entries (selector 5) are kept.
void AddApp(const dcb_app& app, DcbConfig* out) {
  if (app.selector != IEEE_8021QAZ_APP_SEL_DSCP) return;
  if (app.protocol >= kDscpValues || app.priority >= kPriorities) return;
  if (out->dscp_to_priority[app.protocol] < 0) ++out->dscp_entries;
  out->dscp_to_priority[app.protocol] = app.priority;
}

// ---------------------------------------------------------------------------------------------
// rtnetlink
//
// libnl-route has no DCB API, so the RTM_GETDCB request (struct dcbmsg + DCB_ATTR_IFNAME) is
// built and its reply parsed with the libnl core message/attribute functions, the way iproute2's
// `dcb` tool does it with its own netlink code.

// The attributes read and the policy their payload must meet (a reply that breaks it is
// EBADMSG). ieee_pfc: at least pfc_cap and pfc_en; a newer kernel may send a longer struct.
constexpr auto kDcbPolicy = MakeNlaPolicy<DCB_ATTR_MAX>({
    {DCB_ATTR_IEEE, NlaOfType(NLA_NESTED)},
});
constexpr auto kDcbIeeePolicy = MakeNlaPolicy<DCB_ATTR_IEEE_MAX>({
    {DCB_ATTR_IEEE_PFC, NlaAtLeast(offsetof(ieee_pfc, pfc_en) + sizeof(ieee_pfc::pfc_en))},
    {DCB_ATTR_IEEE_APP_TABLE, NlaOfType(NLA_NESTED)},
});

[[nodiscard]] int ParseIeee(const nlattr* ieee, DcbConfig* out) {
  NlaTable<DCB_ATTR_IEEE_MAX> tb;
  if (ParseNlaNested(ieee, kDcbIeeePolicy, &tb) != 0) return EBADMSG;
  if (const nlattr* pfc_attr = tb[DCB_ATTR_IEEE_PFC]) {
    auto pfc = NlaStruct<ieee_pfc>(pfc_attr);
    out->pfc_known = true;
    out->pfc_cap = pfc.pfc_cap;
    out->pfc_enabled = pfc.pfc_en;
  }
  if (nlattr* table = tb[DCB_ATTR_IEEE_APP_TABLE]) {
    nlattr* entry;
    int remaining;
    nla_for_each_nested(entry, table, remaining) {
      // DCB_ATTR_DCB_APP entries carry non-IEEE selectors (PCP); only IEEE ones matter here.
      if (nla_type(entry) != DCB_ATTR_IEEE_APP) continue;
      if (nla_len(entry) < static_cast<int>(sizeof(dcb_app))) continue;
      AddApp(NlaStruct<dcb_app>(entry), out);
    }
  }
  return 0;
}

}  // namespace

int ParseDcbReply(const nlmsghdr* hdr, DcbConfig* out) {
  NlaTable<DCB_ATTR_MAX> tb;
  if (ParseNlaMessage(hdr, sizeof(dcbmsg), kDcbPolicy, &tb) != 0) return EBADMSG;
  out->supported = true;
  if (tb[DCB_ATTR_IEEE] != nullptr) return ParseIeee(tb[DCB_ATTR_IEEE], out);
  return 0;
}

namespace {

class DcbNetlinkReader : public DcbReader {
 public:
  [[nodiscard]] int Read(const std::string& netdev, DcbConfig* out) override {
    *out = EmptyConfig();
    int err = Request(netdev, out);
    if (err == EOPNOTSUPP) {
      // The netdev has no dcbnl_ops (veth, most non-DCB NICs): not an error.
      *out = EmptyConfig();
      return 0;
    }
    if (err != 0) *out = EmptyConfig();
    return err;
  }

 private:
  [[nodiscard]] int Request(const std::string& netdev, DcbConfig* out) {
    NlMsgPtr msg = NewNetlinkRequest(RTM_GETDCB, 0);
    if (msg == nullptr) return ENOMEM;
    dcbmsg header{};
    header.dcb_family = AF_UNSPEC;
    header.cmd = DCB_CMD_IEEE_GET;
    int err = nlmsg_append(msg.get(), &header, sizeof(header), NLMSG_ALIGNTO);
    if (err >= 0) err = nla_put_string(msg.get(), DCB_ATTR_IFNAME, netdev.c_str());
    if (err < 0) return NlErrno(err);
    return channel_.Transact(msg.get(), RTM_GETDCB,
                             [out](const nlmsghdr* hdr) { return ParseDcbReply(hdr, out); });
  }

  // The socket is opened on first use, in the network namespace of the calling thread then.
  NetlinkChannel channel_{NETLINK_ROUTE};
};

// ---------------------------------------------------------------------------------------------
// Fixture files

// DSCP as `dcb app show` prints it: a number or a name of /etc/iproute2/rt_dsfield (the
// dsfield value is DSCP << 2): default, CS0..CS7, AF11..AF43, EF.
std::optional<int> ParseDscp(std::string_view s) {
  if (auto n = ParseU64(s)) {
    if (*n < kDscpValues) return static_cast<int>(*n);
    return std::nullopt;
  }
  if (s == "default") return 0;
  if (s == "EF") return 46;
  if (s.size() == 3 && s.substr(0, 2) == "CS" && s[2] >= '0' && s[2] <= '7')
    return (s[2] - '0') * 8;
  if (s.size() == 4 && s.substr(0, 2) == "AF" && s[2] >= '1' && s[2] <= '4' && s[3] >= '1' &&
      s[3] <= '3') {
    return (s[2] - '0') * 8 + (s[3] - '0') * 2;
  }
  return std::nullopt;
}

std::optional<int> ParsePriority(std::string_view s) {
  auto n = ParseU64(s);
  if (!n || *n >= kPriorities) return std::nullopt;
  return static_cast<int>(*n);
}

// Parses the content of dcb/<netdev>. Returns 0 or EINVAL for content it does not understand.
[[nodiscard]] int ParseFixture(const std::string& content, DcbConfig* out) {
  *out = EmptyConfig();
  if (Trim(content) == "unsupported") return 0;
  out->supported = true;
  std::istringstream lines(content);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string key;
    if (!(words >> key)) continue;
    std::string word;
    if (key == "pfc-cap") {
      // "pfc-cap 8 macsec-bypass off delay 7"
      if (!(words >> word)) return EINVAL;
      auto cap = ParseU64(word);
      if (!cap || *cap > 0xff) return EINVAL;
      out->pfc_cap = static_cast<uint8_t>(*cap);
    } else if (key == "prio-pfc") {
      // "prio-pfc 0:off 1:off 2:off 3:on ..."
      out->pfc_known = true;
      while (words >> word) {
        size_t colon = word.find(':');
        if (colon == std::string::npos) return EINVAL;
        auto prio = ParsePriority(std::string_view(word).substr(0, colon));
        std::string_view state = std::string_view(word).substr(colon + 1);
        if (!prio || (state != "on" && state != "off")) return EINVAL;
        if (state == "on") out->pfc_enabled |= static_cast<uint8_t>(1u << *prio);
      }
    } else if (key == "dscp-prio") {
      // "dscp-prio 0:0 1:0 ... CS1:1 ..."
      while (words >> word) {
        size_t colon = word.find(':');
        if (colon == std::string::npos) return EINVAL;
        auto dscp = ParseDscp(std::string_view(word).substr(0, colon));
        auto prio = ParsePriority(std::string_view(word).substr(colon + 1));
        if (!dscp || !prio) return EINVAL;
        dcb_app app{};
        app.selector = IEEE_8021QAZ_APP_SEL_DSCP;
        app.priority = static_cast<uint8_t>(*prio);
        app.protocol = static_cast<uint16_t>(*dscp);
        AddApp(app, out);
      }
    }
    // Other `dcb` lines (macsec-bypass, delay, requests, indications, ets ...) are ignored.
  }
  return 0;
}

class DcbFixtureReader : public DcbReader {
 public:
  explicit DcbFixtureReader(std::string dir) : dir_(std::move(dir)) {}

  [[nodiscard]] int Read(const std::string& netdev, DcbConfig* out) override {
    *out = EmptyConfig();
    if (netdev.empty() || netdev.find('/') != std::string::npos) return ENODEV;
    std::string content;
    if (ReadWholeFile(dir_ + "/" + netdev, &content) != 0) return ENODEV;
    int err = ParseFixture(content, out);
    if (err != 0) *out = EmptyConfig();
    return err;
  }

 private:
  std::string dir_;
};

}  // namespace

std::unique_ptr<DcbReader> MakeDcbNetlinkReader() {
  return std::make_unique<DcbNetlinkReader>();
}

std::unique_ptr<DcbReader> MakeDcbFixtureReader(std::string dir) {
  return std::make_unique<DcbFixtureReader>(std::move(dir));
}

}  // namespace rdma_exporter
