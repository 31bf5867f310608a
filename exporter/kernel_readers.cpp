#include "rdma_exporter/kernel_readers.h"

namespace rdma_exporter {

int PerPollDcbCache::Read(const std::string& netdev, DcbConfig* out) {
  auto it = replies_.find(netdev);
  if (it == replies_.end()) {
    DcbConfig config;
    int err = inner_->Read(netdev, &config);
    it = replies_.emplace(netdev, std::make_pair(err, config)).first;
  }
  *out = it->second.second;
  return it->second.first;
}

KernelReaders MakeKernelReaders(const std::string& fixtures_dir, SysfsReader& sysfs) {
  KernelReaders readers;
  if (fixtures_dir.empty()) {
    readers.ethtool = MakeEthtoolIoctlReader();
    readers.dcb = std::make_unique<PerPollDcbCache>(MakeDcbNetlinkReader());
    readers.netdev = MakeNetdevNetlinkReader();
  } else {
    readers.ethtool = MakeEthtoolFixtureReader(fixtures_dir + "/ethtool");
    readers.dcb = std::make_unique<PerPollDcbCache>(MakeDcbFixtureReader(fixtures_dir + "/dcb"));
    readers.netdev = MakeNetdevSysfsReader(sysfs);
  }
  return readers;
}

}  // namespace rdma_exporter
