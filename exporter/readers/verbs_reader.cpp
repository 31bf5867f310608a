// Verbs readers: device limits and port MTUs of an RDMA device, from libibverbs
// (ibv_query_device / ibv_query_port) or from fixture files holding `ibv_devinfo -v` output.
#include <infiniband/verbs.h>

#include <cerrno>
#include <optional>
#include <sstream>
#include <string_view>

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

// enum ibv_mtu (IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5) -> bytes; 0 for anything else.
uint32_t MtuBytes(int mtu) {
  if (mtu < IBV_MTU_256 || mtu > IBV_MTU_4096) return 0;
  return 128u << mtu;
}

// ---------------------------------------------------------------------------------------------
// libibverbs
//
// The device list is fetched once per poll (libibverbs rescans sysfs on every
// ibv_get_device_list, so devices added or removed are seen at the next poll). A context is
// opened per read and closed right after: an open context is a `ctx` resource of the device
// (rdma res) and, on drivers without disassociate support (rxe), keeps `rdma link delete` and
// driver unload waiting until it is closed.

class DeviceList {
 public:
  DeviceList() = default;
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
  ~DeviceList() { Reset(); }

  // Fetches the list. Without kernel verbs support (no ib_uverbs: ENOSYS) the list is empty, so
  // every device reads as ENODEV.
  void Load() {
    Reset();
    int count = 0;
    list_ = ibv_get_device_list(&count);
    count_ = list_ != nullptr ? count : 0;
    loaded_ = true;
  }
  void Reset() {
    if (list_ != nullptr) ibv_free_device_list(list_);
    list_ = nullptr;
    count_ = 0;
    loaded_ = false;
  }
  bool loaded() const { return loaded_; }
  ibv_device* Find(const std::string& name) const {
    for (int i = 0; i < count_; ++i) {
      const char* n = ibv_get_device_name(list_[i]);
      if (n != nullptr && name == n) return list_[i];
    }
    return nullptr;
  }

 private:
  ibv_device** list_ = nullptr;
  int count_ = 0;
  bool loaded_ = false;
};

// Closes a verbs context on scope exit.
class Context {
 public:
  explicit Context(ibv_context* context) : context_(context) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() {
    if (context_ != nullptr) ibv_close_device(context_);
  }
  ibv_context* get() const { return context_; }

 private:
  ibv_context* context_;
};

class LibibverbsReader : public VerbsReader {
 public:
  void BeginPoll() override { devices_.Reset(); }

  [[nodiscard]] int ReadDevice(const std::string& device, VerbsDevice* out) override {
    *out = VerbsDevice{};
    if (!devices_.loaded()) devices_.Load();
    ibv_device* dev = devices_.Find(device);
    if (dev == nullptr) return ENODEV;  // no provider for it, or not in this namespace

    errno = 0;
    Context context(ibv_open_device(dev));
    if (context.get() == nullptr) {
      // EACCES/EPERM: no permission on /dev/infiniband/uverbsN; ENOENT/ENXIO: no device node
      // (not mounted into the container) or the device is going away.
      return errno != 0 ? errno : EIO;
    }
    ibv_device_attr attr{};
    int err = ibv_query_device(context.get(), &attr);
    if (err != 0) return err > 0 ? err : EIO;  // returns an errno value, not -1

    out->max_qp = static_cast<uint64_t>(attr.max_qp);
    out->max_cq = static_cast<uint64_t>(attr.max_cq);
    out->max_mr = static_cast<uint64_t>(attr.max_mr);
    out->max_pd = static_cast<uint64_t>(attr.max_pd);
    out->max_srq = static_cast<uint64_t>(attr.max_srq);
    out->max_qp_wr = static_cast<uint64_t>(attr.max_qp_wr);
    out->max_cqe = static_cast<uint64_t>(attr.max_cqe);

    for (unsigned port = 1; port <= attr.phys_port_cnt; ++port) {
      ibv_port_attr port_attr{};
      err = ibv_query_port(context.get(), static_cast<uint8_t>(port), &port_attr);
      if (err != 0) {
        *out = VerbsDevice{};
        return err > 0 ? err : EIO;
      }
      VerbsPort p;
      p.port = port;
      p.active_mtu_bytes = MtuBytes(port_attr.active_mtu);
      p.max_mtu_bytes = MtuBytes(port_attr.max_mtu);
      p.state = port_attr.state;
      out->ports.push_back(p);
    }
    return 0;
  }

 private:
  DeviceList devices_;
};

// ---------------------------------------------------------------------------------------------
// Fixture files: `ibv_devinfo -v` text.

// "4096 (5)" -> 4096 bytes (the number in parentheses is the ibv_mtu enum).
std::optional<uint32_t> ParseMtu(std::string_view value) {
  std::string_view text = Trim(value);
  size_t space = text.find(' ');
  auto bytes = ParseU64(text.substr(0, space));
  if (!bytes || *bytes > 4096) return std::nullopt;
  return static_cast<uint32_t>(*bytes);
}

// "PORT_ACTIVE (4)" -> 4.
std::optional<int> ParseState(std::string_view value) {
  size_t open = value.find('(');
  size_t close = value.find(')', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
  auto n = ParseU64(value.substr(open + 1, close - open - 1));
  if (!n || *n > 255) return std::nullopt;
  return static_cast<int>(*n);
}

// Parses the hca_id block of `device` in `ibv_devinfo [-v]` output (without -v the max_* limit
// lines are missing and stay absent). Returns 0, ENODEV (no such block) or EINVAL (a value it
// does not understand).
[[nodiscard]] int ParseDevinfo(const std::string& content, const std::string& device,
                               VerbsDevice* out) {
  std::istringstream lines(content);
  std::string line;
  bool in_device = false, found = false;
  VerbsPort* port = nullptr;
  while (std::getline(lines, line)) {
    std::string_view text = Trim(line);
    size_t colon = text.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = Trim(text.substr(0, colon));
    std::string_view value = Trim(text.substr(colon + 1));
    if (key == "hca_id") {
      in_device = value == device;
      found = found || in_device;
      port = nullptr;
      continue;
    }
    if (!in_device) continue;
    if (key == "port") {
      auto n = ParseU64(value);
      if (!n || *n == 0 || *n > 255) return EINVAL;
      out->ports.push_back(VerbsPort{});
      port = &out->ports.back();
      port->port = static_cast<unsigned>(*n);
      continue;
    }
    if (port != nullptr) {
      if (key == "active_mtu" || key == "max_mtu") {
        auto mtu = ParseMtu(value);
        if (!mtu) return EINVAL;
        (key == "active_mtu" ? port->active_mtu_bytes : port->max_mtu_bytes) = *mtu;
      } else if (key == "state") {
        auto state = ParseState(value);
        if (!state) return EINVAL;
        port->state = *state;
      }
      continue;
    }
    std::optional<uint64_t>* field = nullptr;
    if (key == "max_qp") field = &out->max_qp;
    if (key == "max_cq") field = &out->max_cq;
    if (key == "max_mr") field = &out->max_mr;
    if (key == "max_pd") field = &out->max_pd;
    if (key == "max_srq") field = &out->max_srq;
    if (key == "max_qp_wr") field = &out->max_qp_wr;
    if (key == "max_cqe") field = &out->max_cqe;
    if (field == nullptr) continue;
    auto n = ParseU64(value);
    if (!n) return EINVAL;
    *field = *n;
  }
  return found ? 0 : ENODEV;
}

class VerbsFixtureReader : public VerbsReader {
 public:
  explicit VerbsFixtureReader(std::string dir) : dir_(std::move(dir)) {}

  [[nodiscard]] int ReadDevice(const std::string& device, VerbsDevice* out) override {
    *out = VerbsDevice{};
    if (device.empty() || device.find('/') != std::string::npos) return ENODEV;
    std::string content;
    if (ReadWholeFile(dir_ + "/" + device, &content) != 0) return ENODEV;
    int err = ParseDevinfo(content, device, out);
    if (err != 0) *out = VerbsDevice{};
    return err;
  }

 private:
  std::string dir_;
};

}  // namespace

std::unique_ptr<VerbsReader> MakeVerbsLibibverbsReader() {
  return std::make_unique<LibibverbsReader>();
}

std::unique_ptr<VerbsReader> MakeVerbsFixtureReader(std::string dir) {
  return std::make_unique<VerbsFixtureReader>(std::move(dir));
}

}  // namespace rdma_exporter
