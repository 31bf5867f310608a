#include "rdma_exporter/kernel_readers.h"

#include <sys/stat.h>

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

int PerPollVerbsCache::ReadDevice(const std::string& device, VerbsDevice* out) {
  auto it = replies_.find(device);
  if (it == replies_.end()) {
    VerbsDevice reply;
    int err = inner_->ReadDevice(device, &reply);
    it = replies_.emplace(device, std::make_pair(err, reply)).first;
  }
  *out = it->second.second;
  return it->second.first;
}

namespace {

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

KernelReaders MakeKernelReaders(const std::string& fixtures_dir, SysfsReader& sysfs) {
  KernelReaders readers;
  if (fixtures_dir.empty()) {
    readers.ethtool = MakeEthtoolIoctlReader();
    readers.dcb = std::make_unique<PerPollDcbCache>(MakeDcbNetlinkReader());
    readers.netdev = MakeNetdevNetlinkReader();
    readers.verbs = std::make_unique<PerPollVerbsCache>(MakeVerbsLibibverbsReader());
    readers.rdma_nl = MakeRdmaNetlinkKernelReader();
    readers.module = MakeModuleEepromKernelReader();
    readers.lldp = MakeLldpSocketReader();
    readers.ib_peer = MakeIbPeerUmadReader();
  } else {
    readers.ethtool = MakeEthtoolFixtureReader(fixtures_dir + "/ethtool");
    readers.dcb = std::make_unique<PerPollDcbCache>(MakeDcbFixtureReader(fixtures_dir + "/dcb"));
    readers.netdev = MakeNetdevSysfsReader(sysfs);
    // Fixture trees without verbs/ or rdma/ captures (the demo fabric) have no such data at
    // all, rather than an ENODEV for every device.
    if (IsDirectory(fixtures_dir + "/verbs")) {
      readers.verbs =
          std::make_unique<PerPollVerbsCache>(MakeVerbsFixtureReader(fixtures_dir + "/verbs"));
    }
    if (IsDirectory(fixtures_dir + "/rdma")) {
      readers.rdma_nl = MakeRdmaNetlinkFixtureReader(fixtures_dir + "/rdma");
    }
    if (IsDirectory(fixtures_dir + "/module")) {
      readers.module = MakeModuleEepromFixtureReader(fixtures_dir + "/module");
    }
    if (IsDirectory(fixtures_dir + "/lldp")) readers.lldp = MakeLldpFixtureReader(fixtures_dir);
    if (IsDirectory(fixtures_dir + "/smp")) readers.ib_peer = MakeIbPeerFixtureReader(fixtures_dir);
  }
  return readers;
}

}  // namespace rdma_exporter
