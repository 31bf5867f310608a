#include "rdma_exporter/sysfs_reader.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>

#include "test_util.h"

namespace rdma_exporter {
namespace {

using testing::TempDir;

TEST(SysfsReader, KeepsFilesOpenAndSeesInPlaceUpdates) {
  TempDir dir;
  dir.Write("a/value", "1\n");
  SysfsReader reader(dir.path());
  std::string out;
  ASSERT_EQ(reader.ReadFile("a/value", &out), 0);
  EXPECT_EQ(out, "1\n");
  EXPECT_EQ(reader.cached_files(), 1u);
  // Rewritten in place (as sysfs values change): within the same poll the first read's
  // content is reused; after the poll ends the cached descriptor sees the new value.
  {
    std::fstream f(dir.path() + "/a/value", std::ios::in | std::ios::out);
    f << "22\n";
  }
  ASSERT_EQ(reader.ReadFile("a/value", &out), 0);
  EXPECT_EQ(out, "1\n");
  reader.SweepUnused();
  ASSERT_EQ(reader.ReadFile("a/value", &out), 0);
  EXPECT_EQ(out, "22\n");
  EXPECT_EQ(reader.cached_files(), 1u);
}

TEST(SysfsReader, RepeatsAFailedReadsErrnoWithinAPoll) {
  TempDir dir;
  dir.Write("d/x", "1");
  SysfsReader reader(dir.path());
  std::string out;
  EXPECT_EQ(reader.ReadFile("d", &out), EISDIR);
  EXPECT_EQ(reader.ReadFile("d", &out), EISDIR);
}

TEST(SysfsReader, ReturnsErrnoForMissingFiles) {
  TempDir dir;
  SysfsReader reader(dir.path());
  std::string out = "stale";
  EXPECT_EQ(reader.ReadFile("nope", &out), ENOENT);
  EXPECT_EQ(reader.cached_files(), 0u);
  std::vector<std::string> names;
  EXPECT_EQ(reader.ListDir("nope", &names), ENOENT);
  EXPECT_EQ(reader.ReadLink("nope", &out), ENOENT);
}

TEST(SysfsReader, ReadsLargeFilesWhole) {
  TempDir dir;
  std::string big(10000, 'x');
  dir.Write("big", big);
  SysfsReader reader(dir.path());
  std::string out;
  ASSERT_EQ(reader.ReadFile("big", &out), 0);
  EXPECT_EQ(out, big);
}

TEST(SysfsReader, ListsDirectoriesSortedWithoutDots) {
  TempDir dir;
  dir.Write("d/b", "");
  dir.Write("d/a", "");
  dir.Write("d/c/x", "");
  SysfsReader reader(dir.path());
  std::vector<std::string> names;
  ASSERT_EQ(reader.ListDir("d", &names), 0);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(SysfsReader, SweepClosesFilesNotReadSinceLastSweep) {
  TempDir dir;
  dir.Write("x", "1");
  dir.Write("y", "2");
  SysfsReader reader(dir.path());
  std::string out;
  reader.ReadFile("x", &out);
  reader.ReadFile("y", &out);
  reader.SweepUnused();  // both used in this generation
  EXPECT_EQ(reader.cached_files(), 2u);
  reader.ReadFile("x", &out);
  reader.SweepUnused();  // y not read since the last sweep
  EXPECT_EQ(reader.cached_files(), 1u);
}

TEST(SysfsReader, BeyondTheDescriptorBudgetFilesAreReadUncached) {
  TempDir dir;
  for (int i = 0; i < 5; ++i)
    dir.Write("f" + std::to_string(i), std::to_string(i) + "\n");
  SysfsReader reader(dir.path());
  reader.set_max_cached_files(3);
  std::string out;
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(reader.ReadFile("f" + std::to_string(i), &out), 0);
    EXPECT_EQ(out, std::to_string(i) + "\n");
  }
  EXPECT_EQ(reader.cached_files(), 3u);
}

TEST(SysfsReader, CloseUnderDropsOneDevicesFiles) {
  TempDir dir;
  dir.Write("class/infiniband/mlx5_0/a", "1");
  dir.Write("class/infiniband/mlx5_01/a", "1");
  SysfsReader reader(dir.path());
  std::string out;
  reader.ReadFile("class/infiniband/mlx5_0/a", &out);
  reader.ReadFile("class/infiniband/mlx5_01/a", &out);
  reader.CloseUnder("class/infiniband/mlx5_0/");
  EXPECT_EQ(reader.cached_files(), 1u);
}

}  // namespace
}  // namespace rdma_exporter
