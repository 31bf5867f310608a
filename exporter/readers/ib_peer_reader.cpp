// IbPeerReader implementations: directed-route SMPs through libibmad (kernel), or fixture files.
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <cerrno>
#include <mutex>
#include <vector>

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/ib_peer.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

constexpr unsigned kSmpTimeoutMs = 500;

class UmadReader : public IbPeerReader {
 public:
  UmadReader() {
    // libibmad prints every failed MAD to stderr unless told not to; failures are our errno
    // values (and the collector's one log line), not a line per poll.
    std::call_once(quiet_once_, [] { madrpc_show_errors(0); });
  }

  int Read(const std::string& device, unsigned port, IbPeer* out) override {
    // No umad device for the port (rxe, iWARP, a missing ib_umad module): say so without
    // opening anything.
    umad_port_t uport{};
    if (umad_get_port(device.c_str(), static_cast<int>(port), &uport) < 0) return ENODEV;
    umad_release_port(&uport);
    int classes[] = {IB_SMI_DIRECT_CLASS};
    errno = 0;
    ibmad_port* src =
        mad_rpc_open_port(const_cast<char*>(device.c_str()), static_cast<int>(port), classes, 1);
    if (src == nullptr) return errno == EACCES || errno == EPERM || errno == 0 ? EACCES : errno;
    int err = Query(src, port, out);
    mad_rpc_close_port(src);
    return err;
  }

 private:
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
    return 0;
  }

  static std::once_flag quiet_once_;
};
std::once_flag UmadReader::quiet_once_;

class FixtureReader : public IbPeerReader {
 public:
  explicit FixtureReader(std::string dir) : dir_(std::move(dir)) {}
  int Read(const std::string& device, unsigned port, IbPeer* out) override {
    if (device.empty() || device.find('/') != std::string::npos || device[0] == '.') {
      return ENODEV;
    }
    std::string base = dir_ + "/smp/" + device + "/" + std::to_string(port) + "/";
    std::string info_hex, desc_hex;
    int err = ReadWholeFile(base + "node_info", &info_hex);
    if (err == ENOENT) return ENODEV;
    if (err != 0) return err;
    if ((err = ReadWholeFile(base + "node_description", &desc_hex)) != 0) return err;
    std::string error;
    auto node = ParseNodeInfo(ParseHexBytes(info_hex), &error);
    if (!node) return EIO;
    out->node_info = *node;
    out->description = ParseNodeDescription(ParseHexBytes(desc_hex));
    return 0;
  }

 private:
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
