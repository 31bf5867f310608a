// Core helpers: the one port-state name table, ScopeExit, ReadWholeFile.
#include "rdma_exporter/port_state.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/scope_exit.h"
#include "test_util.h"

namespace rdma_exporter {
namespace {

TEST(PortStateNames, EveryKernelValueHasItsName) {
  EXPECT_EQ(PortStateName(0), "NOP");
  EXPECT_EQ(PortStateName(static_cast<int>(PortState::kActive)), "ACTIVE");
  EXPECT_EQ(PortStateName(5), "ACTIVE_DEFER");
  EXPECT_EQ(PhysStateName(static_cast<int>(PhysState::kLinkUp)), "LinkUp");
  EXPECT_EQ(PhysStateName(4), "PortConfigurationTraining");
  EXPECT_EQ(PhysStateName(7), "PhyTest");
}

TEST(PortStateNames, ValuesOutsideTheTableAreUnknownWithoutACast) {
  for (double v :
       {-1.0, 6.0, 4.5, 4294967295.0, 1e300, -1e300, std::numeric_limits<double>::quiet_NaN(),
        std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(PortStateName(v), "UNKNOWN") << v;
  }
  for (double v : {0.0, 8.0, 5.5, 4294967295.0, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_EQ(PhysStateName(v), "UNKNOWN") << v;
  }
}

TEST(ScopeExit, RunsOnReturnAndOnException) {
  int runs = 0;
  {
    ScopeExit guard([&] { ++runs; });
  }
  EXPECT_EQ(runs, 1);
  try {
    ScopeExit guard([&] { ++runs; });
    throw std::runtime_error("x");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(runs, 2);
}

TEST(ReadWholeFile, ReadsEveryByteAndReportsErrnos) {
  testing::TempDir dir;
  std::string path = dir.path() + "/f";
  std::string content(100000, 'x');
  content[0] = '\0';  // binary content survives
  std::ofstream(path, std::ios::binary) << content;
  std::string out = "stale";
  ASSERT_EQ(ReadWholeFile(path, &out), 0);
  EXPECT_EQ(out, content);
  EXPECT_EQ(ReadWholeFile(dir.path() + "/missing", &out), ENOENT);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(ReadWholeFile(dir.path(), &out), EISDIR);
}

}  // namespace
}  // namespace rdma_exporter
