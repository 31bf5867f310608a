#include "rdma_exporter/kernel_readers.h"

namespace rdma_exporter {

KernelReaders MakeKernelReaders(const std::string& fixtures_dir, SysfsReader& sysfs) {
  KernelReaders readers;
  if (fixtures_dir.empty()) {
    readers.ethtool = MakeEthtoolIoctlReader();
    readers.dcb = MakeDcbNetlinkReader();
    readers.netdev = MakeNetdevNetlinkReader();
  } else {
    readers.ethtool = MakeEthtoolFixtureReader(fixtures_dir + "/ethtool");
    readers.dcb = MakeDcbFixtureReader(fixtures_dir + "/dcb");
    readers.netdev = MakeNetdevSysfsReader(sysfs);
  }
  return readers;
}

}  // namespace rdma_exporter
