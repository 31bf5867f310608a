// The module EEPROM reader against a real kernel: a veth has no transceiver, so ethtool netlink
// MODULE_EEPROM_GET answers EOPNOTSUPP, the ioctl fallback too, and the module collector
// exports nothing and counts no error (what every port without a cage looks like: rxe, VFs).
#include <gtest/gtest.h>

#include <cerrno>

#include "collectors/module.h"
#include "netns.h"
#include "rdma_exporter/collector.h"
#include "rdma_exporter/error_tracker.h"
#include "rdma_exporter/inventory.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/metrics.h"
#include "test_util.h"

namespace rdma_exporter::testing {
namespace {

TEST(ModuleEepromKernel, VethHasNoModuleAndMissingNetdevIsEnodev) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  auto reader = MakeModuleEepromKernelReader();
  ModuleEeprom eeprom;
  EXPECT_EQ(reader->Read("rdx0", &eeprom), EOPNOTSUPP);
  EXPECT_EQ(reader->Read("rdx0", &eeprom), EOPNOTSUPP);  // again, after the family is resolved
  EXPECT_EQ(reader->Read("rdxnone0", &eeprom), ENODEV);
  EXPECT_EQ(reader->Read("a_name_of_16_chr", &eeprom), ENODEV);
  ns.Leave();
}

TEST(ModuleCollectorKernel, PortWithoutAModuleExportsNothingAndIsNoError) {
  RDMA_REQUIRE_ROOT();
  NetnsWithVeth ns;
  ASSERT_TRUE(ns.ok());
  ns.Enter();
  // One RoCE port whose netdev is the veth.
  TempDir sys;
  sys.Write("class/infiniband/rxe0/ports/1/link_layer", "Ethernet\n");
  sys.Write("class/infiniband/rxe0/ports/1/state", "4: ACTIVE\n");
  sys.Write("class/infiniband/rxe0/parent", "rdx0\n");
  SysfsReader sysfs(sys.path());
  KernelReaders kernel;
  kernel.module = MakeModuleEepromKernelReader();
  ModuleCollector collector;
  for (int poll = 0; poll < 2; ++poll) {
    auto r = RunCollector(collector, sysfs, {}, &kernel);
    EXPECT_EQ(r.failures, 0u);
    EXPECT_TRUE(r.families.empty());
  }
  ns.Leave();
}

}  // namespace
}  // namespace rdma_exporter::testing
