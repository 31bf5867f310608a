// IbPeerReader implementations: directed-route SMPs through libibmad (kernel), or fixture files.
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/ib_peer.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

constexpr unsigned kSmpTimeoutMs = 500;

// Parses data with one of ib_peer.h's parsers into *out: EIO when it is not that attribute.
template <typename T>
int ParseInto(std::span<const uint8_t> data,
              std::optional<T> (*parse)(std::span<const uint8_t>, std::string*), T* out) {
  std::string error;
  auto parsed = parse(data, &error);
  if (!parsed) return EIO;
  *out = *parsed;
  return 0;
}

class UmadReader : public IbPeerReader {
 public:
  UmadReader() {
    // libibmad prints every failed MAD to stderr unless told not to; failures are our errno
    // values (and the collector's one log line), not a line per poll.
    std::call_once(quiet_once_, [] { madrpc_show_errors(0); });
  }

  int Read(const std::string& device, unsigned port, IbPeer* out) override {
    Session session;
    if (int err = session.Open(device, port); err != 0) return err;
    return Query(session.src, port, out);
  }

  int ReadClassPortInfo(const std::string& device, unsigned port,
                        IbPmaClassPortInfo* out) override {
    uint8_t data[IB_PC_DATA_SZ] = {};
    if (int err = QueryOwnPma(device, port, CLASS_PORT_INFO, data); err != 0) return err;
    return ParseInto(data, &ParsePmaClassPortInfo, out);
  }

  int ReadPortCountersExt(const std::string& device, unsigned port,
                          IbPortCountersExt* out) override {
    uint8_t data[IB_PC_DATA_SZ] = {};
    if (int err = QueryOwnPma(device, port, IB_GSI_PORT_COUNTERS_EXT, data); err != 0) return err;
    IbPortCountersExt counters;
    if (int err = ParseInto(data, &ParsePortCountersExt, &counters); err != 0) return err;
    if (counters.port_select != port) return EIO;  // the agent answered for another port
    *out = counters;
    return 0;
  }

 private:
  // One umad registration (directed-route SMPs and PMA GMPs) on device/port, closed when it goes.
  struct Session {
    Session() = default;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    ibmad_port* src = nullptr;
    uint16_t lid = 0;  // the port's own base LID (0: none assigned yet)
    int Open(const std::string& device, unsigned port) {
      // No umad device for the port (rxe, iWARP, a missing ib_umad module): say so without
      // opening anything.
      umad_port_t uport{};
      if (umad_get_port(device.c_str(), static_cast<int>(port), &uport) < 0) return ENODEV;
      lid = static_cast<uint16_t>(uport.base_lid);
      umad_release_port(&uport);
      int classes[] = {IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS};
      errno = 0;
      src =
          mad_rpc_open_port(const_cast<char*>(device.c_str()), static_cast<int>(port), classes, 2);
      if (src == nullptr) return errno == EACCES || errno == EPERM || errno == 0 ? EACCES : errno;
      return 0;
    }
    ~Session() {
      if (src != nullptr) mad_rpc_close_port(src);
    }
  };

  // The port's own agent, through a session kept per port: the counters collector asks a port
  // whose agent declared the 64-bit PortXmitWait every poll, so opening umad and registering
  // agents each time would be per-poll work. A failed query drops the session (the device may
  // have been re-registered, or the subnet manager given the port another LID); the next call
  // opens a new one.
  int QueryOwnPma(const std::string& device, unsigned port, unsigned attribute, uint8_t* data) {
    std::lock_guard lock(own_mu_);
    const std::string key = device + "/" + std::to_string(port);
    auto it = own_.find(key);
    if (it == own_.end()) {
      auto session = std::make_unique<Session>();
      if (int err = session->Open(device, port); err != 0) return err;
      if (session->lid == 0) return ENXIO;  // not kept: asked again once the port has a LID
      it = own_.emplace(key, std::move(session)).first;
    }
    int err = QueryPma(it->second->src, it->second->lid, port, attribute, data);
    if (err != 0) own_.erase(it);
    return err;
  }

  // A LID-routed Get to the PMA at lid, for its port port_select; data holds IB_PC_DATA_SZ bytes.
  static int QueryPma(ibmad_port* src, uint16_t lid, unsigned port_select, unsigned attribute,
                      uint8_t* data) {
    ib_portid_t to{};
    to.lid = lid;
    if (pma_query_via(data, &to, static_cast<int>(port_select), kSmpTimeoutMs, attribute, src) ==
        nullptr) {
      return ETIMEDOUT;
    }
    return 0;
  }

  static int Query(ibmad_port* src, unsigned port, IbPeer* out) {
    // Directed route "0,<port>": out of our own port, to whatever node is on the other end.
    ib_portid_t to{};
    std::string path = "0," + std::to_string(port);
    if (str2drpath(&to.drpath, path.data(), 0, 0) < 0) return EINVAL;
    uint8_t info[IB_SMP_DATA_SIZE] = {};
    if (smp_query_via(info, &to, IB_ATTR_NODE_INFO, 0, kSmpTimeoutMs, src) == nullptr) {
      return ETIMEDOUT;
    }
    std::string error;
    auto node = ParseNodeInfo(info, &error);
    if (!node) return EIO;
    uint8_t desc[IB_SMP_DATA_SIZE] = {};
    if (smp_query_via(desc, &to, IB_ATTR_NODE_DESC, 0, kSmpTimeoutMs, src) == nullptr) {
      return ETIMEDOUT;
    }
    out->node_info = *node;
    out->description = ParseNodeDescription(desc);
    out->port_info.reset();
    out->xmit_wait_error = ENOTSUP;
    // The neighbour port's PortInfo, then its agent's 64-bit PortXmitWait: both optional.
    const unsigned peer_port = node->local_port_num;
    uint8_t pinfo[IB_SMP_DATA_SIZE] = {};
    if (smp_query_via(pinfo, &to, IB_ATTR_PORT_INFO, peer_port, kSmpTimeoutMs, src) != nullptr) {
      out->port_info = ParsePortInfo(pinfo, &error);
    }
    if (!out->port_info) {
      out->xmit_wait_error = ETIMEDOUT;
      return 0;
    }
    uint16_t lid = out->port_info->lid;
    if (node->node_type == 2) {  // a switch answers PMA queries on the LID of its port 0
      uint8_t port0[IB_SMP_DATA_SIZE] = {};
      auto sw = smp_query_via(port0, &to, IB_ATTR_PORT_INFO, 0, kSmpTimeoutMs, src) != nullptr
                    ? ParsePortInfo(port0, &error)
                    : std::nullopt;
      lid = sw ? sw->lid : 0;
    }
    out->xmit_wait_error = ReadPeerXmitWait(src, lid, peer_port, &out->xmit_wait);
    return 0;
  }

  static int ReadPeerXmitWait(ibmad_port* src, uint16_t lid, unsigned peer_port, uint64_t* out) {
    if (lid == 0) return ENXIO;
    uint8_t data[IB_PC_DATA_SZ] = {};
    if (int err = QueryPma(src, lid, peer_port, CLASS_PORT_INFO, data); err != 0) return err;
    std::string error;
    auto info = ParsePmaClassPortInfo(data, &error);
    if (!info) return EIO;
    if (!HasExtendedXmitWait(*info)) return ENOTSUP;
    std::fill(std::begin(data), std::end(data), 0);
    if (int err = QueryPma(src, lid, peer_port, IB_GSI_PORT_COUNTERS_EXT, data); err != 0) {
      return err;
    }
    auto counters = ParsePortCountersExt(data, &error);
    if (!counters || counters->port_select != peer_port) return EIO;
    *out = counters->xmit_wait;
    return 0;
  }

  std::mutex own_mu_;
  std::map<std::string, std::unique_ptr<Session>> own_;  // "device/port" -> its open session
  static std::once_flag quiet_once_;
};
std::once_flag UmadReader::quiet_once_;

class FixtureReader : public IbPeerReader {
 public:
  explicit FixtureReader(std::string dir) : dir_(std::move(dir)) {}

  int Read(const std::string& device, unsigned port, IbPeer* out) override {
    const std::string base = PortDir("smp", device, port);
    if (base.empty()) return ENODEV;
    std::vector<uint8_t> info, desc, pinfo, cpi, pce;
    int err = ReadHex(base + "node_info", &info);
    if (err == ENOENT) return ENODEV;
    if (err != 0 || (err = ReadHex(base + "node_description", &desc)) != 0) return err;
    std::string error;
    auto node = ParseNodeInfo(info, &error);
    if (!node) return EIO;
    out->node_info = *node;
    out->description = ParseNodeDescription(desc);
    out->port_info.reset();
    out->xmit_wait_error = ENOTSUP;
    // Optional, as for a neighbour that does not answer them.
    if (ReadHex(base + "port_info", &pinfo) == 0) out->port_info = ParsePortInfo(pinfo, &error);
    if (ReadHex(base + "pma_class_port_info", &cpi) != 0) return 0;
    auto cls = ParsePmaClassPortInfo(cpi, &error);
    if (!cls || !HasExtendedXmitWait(*cls)) {
      out->xmit_wait_error = cls ? ENOTSUP : EIO;
      return 0;
    }
    out->xmit_wait_error = ReadHex(base + "pma_port_counters_ext", &pce);
    if (out->xmit_wait_error != 0) return 0;
    auto counters = ParsePortCountersExt(pce, &error);
    out->xmit_wait_error = counters ? 0 : EIO;
    if (counters) out->xmit_wait = counters->xmit_wait;
    return 0;
  }

  int ReadClassPortInfo(const std::string& device, unsigned port,
                        IbPmaClassPortInfo* out) override {
    std::vector<uint8_t> data;
    if (int err = ReadOwn(device, port, "class_port_info", &data); err != 0) return err;
    return ParseInto(std::span<const uint8_t>(data), &ParsePmaClassPortInfo, out);
  }

  int ReadPortCountersExt(const std::string& device, unsigned port,
                          IbPortCountersExt* out) override {
    std::vector<uint8_t> data;
    if (int err = ReadOwn(device, port, "port_counters_ext", &data); err != 0) return err;
    return ParseInto(std::span<const uint8_t>(data), &ParsePortCountersExt, out);
  }

 private:
  // "<dir>/<kind>/<device>/<port>/", or "" for a device name that is not a plain name.
  std::string PortDir(const char* kind, const std::string& device, unsigned port) const {
    if (device.empty() || device.find('/') != std::string::npos || device[0] == '.') return "";
    return dir_ + "/" + kind + "/" + device + "/" + std::to_string(port) + "/";
  }
  int ReadOwn(const std::string& device, unsigned port, const char* file,
              std::vector<uint8_t>* out) const {
    const std::string base = PortDir("pma", device, port);
    if (base.empty()) return ENODEV;
    int err = ReadHex(base + file, out);
    return err == ENOENT ? ENODEV : err;
  }
  static int ReadHex(const std::string& path, std::vector<uint8_t>* out) {
    std::string hex;
    if (int err = ReadWholeFile(path, &hex); err != 0) return err;
    *out = ParseHexBytes(hex);
    return 0;
  }

  std::string dir_;
};

}  // namespace

std::unique_ptr<IbPeerReader> MakeIbPeerUmadReader() {
  return std::make_unique<UmadReader>();
}

std::unique_ptr<IbPeerReader> MakeIbPeerFixtureReader(std::string fixtures_dir) {
  return std::make_unique<FixtureReader>(std::move(fixtures_dir));
}

}  // namespace rdma_exporter
