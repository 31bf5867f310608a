// EthtoolReader implementations: the SIOCETHTOOL ioctl (ETH_SS_STATS string set and values)
// and `ethtool -S` text captures for fixture mode.
//
// Why a raw ioctl rather than a library: libnl has no ethtool support at all, and the ethtool
// netlink family (ETHTOOL_MSG_STATS_GET, _PAUSE_GET) carries only standard stats groups - none
// per priority (reference §3.4). The per-priority PFC pause counters and durations exist only in
// the driver's ETH_SS_STATS string set, which the ioctl returns with three small commands.
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/unique_fd.h"

namespace rdma_exporter {

// Test hook (declared again in tests/unit/ethtool_test.cpp): an ioctl reader whose
// SIOCETHTOOL calls go to `ioctl_fn(netdev, buffer)` instead of the kernel, so the count-change
// handling can be tested against a simulated driver. Returns 0 or an errno value.
using EthtoolIoctlFn = std::function<int(const std::string& netdev, void* buffer)>;
std::unique_ptr<EthtoolReader> MakeEthtoolIoctlReaderForTest(EthtoolIoctlFn ioctl_fn);

namespace {

// Layouts of include/uapi/linux/ethtool.h (reference §3.3). Buffers are u64 arrays (for the
// alignment of the u64 fields); the header fields are copied in and out with memcpy.
constexpr size_t kSsetInfoHeader = offsetof(ethtool_sset_info, data);  // 16
constexpr size_t kGstringsHeader = offsetof(ethtool_gstrings, data);   // 12
constexpr size_t kGstatsHeader = offsetof(ethtool_stats, data);        // 8
static_assert(kSsetInfoHeader == 16 && kGstringsHeader == 12 && kGstatsHeader == 8);
static_assert(ETH_GSTRING_LEN == 32);

// Kernels before 7b07be1ff1cb ("ethtool: Avoid overflowing userspace buffer on stats query")
// ignore the count passed in and write as many entries as the driver has *now*. If the string
// set grew since GSSET_INFO (mlx5: PFC enabled on a priority adds 5 names), they write past a
// buffer sized for the old count. The buffers get this many spare entries, far more than any
// reconfiguration between two adjacent calls adds.
constexpr uint32_t kSlackEntries = 256;
// Upper bound on a sane string-set size (mlx5 with many channels has a few thousand).
constexpr uint32_t kMaxStats = 1u << 20;

std::vector<uint64_t> Buffer(size_t bytes) {
  return std::vector<uint64_t>((bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
}

template <typename T>
T Load(const std::vector<uint64_t>& buf, size_t offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const char*>(buf.data()) + offset, sizeof(T));
  return value;
}

template <typename T>
void Store(std::vector<uint64_t>& buf, size_t offset, T value) {
  std::memcpy(reinterpret_cast<char*>(buf.data()) + offset, &value, sizeof(T));
}

class IoctlReader : public EthtoolReader {
 public:
  // Empty ioctl_fn = the kernel, through one socket kept for the reader's lifetime (created on
  // first use): SIOCETHTOOL resolves the name in the socket's network namespace, which is the
  // exporter's for its whole life, and a socket per call cost two syscalls per netdev and poll.
  explicit IoctlReader(EthtoolIoctlFn ioctl_fn) : ioctl_fn_(std::move(ioctl_fn)) {}

  [[nodiscard]] int ReadStats(const std::string& netdev, EthtoolStats* out) override {
    out->names.clear();
    out->values.clear();
    if (netdev.empty() || netdev.size() >= IFNAMSIZ || netdev.find('/') != std::string::npos) {
      return ENODEV;
    }
    std::lock_guard lock(mu_);
    if (!ioctl_fn_ && !socket_.valid()) {
      socket_.reset(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
      if (!socket_.valid()) return errno;
    }
    auto call = [&](void* buffer) -> int {
      if (ioctl_fn_) return ioctl_fn_(netdev, buffer);
      ifreq ifr{};
      std::memcpy(ifr.ifr_name, netdev.data(), netdev.size());
      ifr.ifr_data = static_cast<char*>(buffer);
      return ioctl(socket_.get(), SIOCETHTOOL, &ifr) == 0 ? 0 : errno;
    };

    // The string set is cached per netdev. A GSTATS reply whose n_stats is 0 (current kernels:
    // the count we passed is stale) or differs (older kernels: they report the current count)
    // means the set changed: read the names again and retry once.
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto cached = names_.find(netdev);
      if (cached == names_.end()) {
        std::vector<std::string> names;
        int err = ReadNames(call, &names);
        if (err != 0) return err;
        cached = names_.insert_or_assign(netdev, std::move(names)).first;
      }
      const std::vector<std::string>& names = cached->second;
      std::vector<uint64_t> values;
      int err = ReadValues(call, static_cast<uint32_t>(names.size()), &values);
      if (err == EAGAIN) {
        names_.erase(cached);
        continue;
      }
      if (err != 0) {
        names_.erase(cached);  // e.g. ENODEV: a new netdev of that name starts afresh
        return err;
      }
      out->names = names;
      out->values = std::move(values);
      return 0;
    }
    return EAGAIN;  // the set changed twice in a row; the next poll tries again
  }

 private:
  // GSSET_INFO then GSTRINGS, re-run once when GSTRINGS reports a different count.
  template <typename Call>
  [[nodiscard]] int ReadNames(Call& call, std::vector<std::string>* names) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto info = Buffer(kSsetInfoHeader + sizeof(uint32_t));
      Store<uint32_t>(info, 0, ETHTOOL_GSSET_INFO);
      Store<uint64_t>(info, 8, uint64_t{1} << ETH_SS_STATS);
      int err = call(info.data());
      if (err != 0) return err;
      // The kernel clears the bit of a set the driver does not have (lo, bridges, ...).
      if ((Load<uint64_t>(info, 8) & (uint64_t{1} << ETH_SS_STATS)) == 0) return EOPNOTSUPP;
      uint32_t count = Load<uint32_t>(info, kSsetInfoHeader);
      if (count == 0) return EOPNOTSUPP;
      if (count > kMaxStats) return EOVERFLOW;

      auto strings = Buffer(kGstringsHeader + size_t{count + kSlackEntries} * ETH_GSTRING_LEN);
      Store<uint32_t>(strings, 0, ETHTOOL_GSTRINGS);
      Store<uint32_t>(strings, 4, ETH_SS_STATS);
      Store<uint32_t>(strings, 8, count);
      err = call(strings.data());
      if (err != 0) return err;
      if (Load<uint32_t>(strings, 8) != count) continue;  // 0 or the new count: set changed
      const char* data = reinterpret_cast<const char*>(strings.data()) + kGstringsHeader;
      names->clear();
      names->reserve(count);
      for (uint32_t i = 0; i < count; ++i) {
        const char* s = data + size_t{i} * ETH_GSTRING_LEN;
        names->emplace_back(s, strnlen(s, ETH_GSTRING_LEN));
      }
      return 0;
    }
    return EAGAIN;
  }

  // GSTATS with the expected count; EAGAIN when the reply says the set changed.
  template <typename Call>
  [[nodiscard]] int ReadValues(Call& call, uint32_t count, std::vector<uint64_t>* values) {
    auto stats = Buffer(kGstatsHeader + size_t{count + kSlackEntries} * sizeof(uint64_t));
    Store<uint32_t>(stats, 0, ETHTOOL_GSTATS);
    Store<uint32_t>(stats, 4, count);
    int err = call(stats.data());
    if (err != 0) return err;
    if (Load<uint32_t>(stats, 4) != count) return EAGAIN;
    values->assign(stats.begin() + kGstatsHeader / sizeof(uint64_t),
                   stats.begin() + kGstatsHeader / sizeof(uint64_t) + count);
    return 0;
  }

  EthtoolIoctlFn ioctl_fn_;
  std::mutex mu_;
  UniqueFd socket_;  // guarded by mu_
  std::unordered_map<std::string, std::vector<std::string>> names_;
};

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

class FixtureReader : public EthtoolReader {
 public:
  explicit FixtureReader(std::string dir) : dir_(std::move(dir)) {}

  [[nodiscard]] int ReadStats(const std::string& netdev, EthtoolStats* out) override {
    out->names.clear();
    out->values.clear();
    if (netdev.empty() || netdev.find('/') != std::string::npos || netdev == "." ||
        netdev == "..") {
      return ENODEV;
    }
    std::string text;
    int err = ReadWholeFile(dir_ + "/" + netdev, &text);
    if (err != 0) return err == ENOENT ? ENODEV : err;
    // "NIC statistics:" then "     <name>: <value>" lines (ethtool do_gstats). The name is
    // everything before the last colon (values never contain one); lines without an unsigned
    // decimal value - the header, "no stats available", garbage - are skipped.
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      std::string_view view(line);
      size_t colon = view.rfind(':');
      if (colon == std::string_view::npos) continue;
      std::string_view name = TrimSpaces(view.substr(0, colon));
      std::string_view value = TrimSpaces(view.substr(colon + 1));
      if (name.empty() || value.empty()) continue;
      uint64_t parsed = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
      if (ec != std::errc() || ptr != value.data() + value.size()) continue;
      out->names.emplace_back(name);
      out->values.push_back(parsed);
    }
    // A capture without statistics (`ethtool -S lo`: "no stats available") = EOPNOTSUPP.
    return out->names.empty() ? EOPNOTSUPP : 0;
  }

 private:
  std::string dir_;
};

}  // namespace

std::unique_ptr<EthtoolReader> MakeEthtoolIoctlReader() {
  return std::make_unique<IoctlReader>(nullptr);
}

std::unique_ptr<EthtoolReader> MakeEthtoolIoctlReaderForTest(EthtoolIoctlFn ioctl_fn) {
  return std::make_unique<IoctlReader>(std::move(ioctl_fn));
}

std::unique_ptr<EthtoolReader> MakeEthtoolFixtureReader(std::string dir) {
  return std::make_unique<FixtureReader>(std::move(dir));
}

}  // namespace rdma_exporter
