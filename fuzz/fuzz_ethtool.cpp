// Fuzz target: the ethtool ioctl string-table and stats handling, with the fuzzer playing a
// hostile kernel: it chooses the string-set counts GSSET_INFO/GSTRINGS/GSTATS report (stale,
// grown, zero, huge), the string bytes (no NUL terminators) and the values, and errors. Writes
// stay within what the kernel may write (the count the reader passed plus its slack).
#include <linux/ethtool.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "rdma_exporter/kernel_readers.h"

namespace rdma_exporter {
using EthtoolIoctlFn = std::function<int(const std::string& netdev, void* buffer)>;
std::unique_ptr<EthtoolReader> MakeEthtoolIoctlReaderForTest(EthtoolIoctlFn ioctl_fn);
}  // namespace rdma_exporter

using namespace rdma_exporter;

namespace {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v = (v << 8) | Byte();
    return v;
  }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  void Fill(char* out, size_t n) {
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<char>(Byte());
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// What the reader allows for (ethtool_reader.cpp): count + 256 spare entries.
constexpr uint32_t kSlack = 256;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  auto reader = MakeEthtoolIoctlReaderForTest([&](const std::string&, void* buffer) -> int {
    uint8_t mode = in.Byte();
    if (mode % 17 == 1) return ENODEV;
    if (mode % 17 == 2) return EOPNOTSUPP;
    auto* buf = static_cast<char*>(buffer);
    uint32_t cmd;
    std::memcpy(&cmd, buf, 4);
    if (cmd == ETHTOOL_GSSET_INFO) {
      uint64_t mask;
      std::memcpy(&mask, buf + 8, 8);
      if (mode % 17 == 3) mask = 0;  // no stats set
      std::memcpy(buf + 8, &mask, 8);
      // Counts up to 2^21 (also beyond the reader's sanity limit), mostly small.
      uint32_t count = in.U32() % (mode % 31 == 0 ? (1u << 21) : 64u);
      std::memcpy(buf + 16, &count, 4);
    } else if (cmd == ETHTOOL_GSTRINGS) {
      uint32_t asked;
      std::memcpy(&asked, buf + 8, 4);
      uint32_t reported = asked;
      if (mode % 7 == 4) reported = 0;  // current kernels: the set changed
      if (mode % 7 == 5) reported = asked + (in.Byte() % kSlack);  // old kernels: it grew
      std::memcpy(buf + 8, &reported, 4);
      uint32_t written = reported > asked + kSlack ? asked + kSlack : reported;
      in.Fill(buf + 12, size_t{written < asked ? asked : written} * ETH_GSTRING_LEN);
    } else if (cmd == ETHTOOL_GSTATS) {
      uint32_t asked;
      std::memcpy(&asked, buf + 4, 4);
      uint32_t reported = asked;
      if (mode % 7 == 4) reported = 0;
      if (mode % 7 == 5) reported = asked + (in.Byte() % kSlack);
      std::memcpy(buf + 4, &reported, 4);
      uint32_t written = reported > asked + kSlack ? asked + kSlack : reported;
      in.Fill(buf + 8, size_t{written < asked ? asked : written} * 8);
    } else {
      return EINVAL;
    }
    return 0;
  });
  EthtoolStats stats;
  for (int i = 0; i < 3; ++i) {
    int err = reader->ReadStats(i == 2 ? std::string(40, 'x') : "eth0", &stats);
    if (err == 0 && stats.names.size() != stats.values.size()) abort();
    for (const auto& name : stats.names)
      if (name.size() > ETH_GSTRING_LEN) abort();
  }
  return 0;
}
