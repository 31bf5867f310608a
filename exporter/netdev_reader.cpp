// Placeholder until the netdev readers land.
#include <cerrno>

#include "rdma_exporter/kernel_readers.h"

namespace rdma_exporter {
namespace {
class Unsupported : public NetdevReader {
 public:
  int Read(const std::string&, NetdevState*) override { return ENODEV; }
};
}  // namespace
std::unique_ptr<NetdevReader> MakeNetdevNetlinkReader() {
  return std::make_unique<Unsupported>();
}
std::unique_ptr<NetdevReader> MakeNetdevSysfsReader(SysfsReader&) {
  return std::make_unique<Unsupported>();
}
}  // namespace rdma_exporter
