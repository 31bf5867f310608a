// Placeholder until the ethtool reader lands.
#include <cerrno>

#include "rdma_exporter/kernel_readers.h"

namespace rdma_exporter {
namespace {
class Unsupported : public EthtoolReader {
 public:
  int ReadStats(const std::string&, EthtoolStats*) override { return EOPNOTSUPP; }
};
}  // namespace
std::unique_ptr<EthtoolReader> MakeEthtoolIoctlReader() {
  return std::make_unique<Unsupported>();
}
std::unique_ptr<EthtoolReader> MakeEthtoolFixtureReader(std::string) {
  return std::make_unique<Unsupported>();
}
}  // namespace rdma_exporter
