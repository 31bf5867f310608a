#include "rdma_exporter/sysfs_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
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

// A FileRef skips the path lookup, so it must never outlive the entry it points at: once the
// reader drops cached files (sweep, CloseUnder), a read through an old ref finds the path again.
// (Under ASan a dangling ref would also be a heap-use-after-free.)
TEST(SysfsReader, FileRefsReadTheirFileUntilTheReaderDropsFilesThenFindThePathAgain) {
  TempDir dir;
  dir.Write("d/x", "1\n");
  dir.Write("d/y", "2\n");
  dir.Write("e/z", "3\n");
  SysfsReader reader(dir.path());
  SysfsReader::FileRef x, y, z;
  std::string out;
  ASSERT_EQ(reader.ReadFile("d/x", &out, &x), 0);
  EXPECT_EQ(out, "1\n");
  ASSERT_EQ(reader.ReadFile("d/y", &out, &y), 0);
  reader.SweepUnused();
  {
    std::fstream f(dir.path() + "/d/x", std::ios::in | std::ios::out);
    f << "7\n";
  }
  ASSERT_EQ(reader.ReadFile("d/x", &out, &x), 0);  // the kept descriptor sees the update
  EXPECT_EQ(out, "7\n");
  ASSERT_EQ(reader.ReadFile("d/x", &out, &x), 0);  // a second read in the poll: the same
  EXPECT_EQ(out, "7\n");
  reader.SweepUnused();  // y unread: dropped, and x's ref is stale too
  EXPECT_EQ(reader.cached_files(), 1u);
  ASSERT_EQ(reader.ReadFile("e/z", &out, &z), 0);  // a new entry, perhaps where y's was
  EXPECT_EQ(out, "3\n");
  ASSERT_EQ(reader.ReadFile("d/y", &out, &y), 0);
  EXPECT_EQ(out, "2\n");
  ASSERT_EQ(reader.ReadFile("d/x", &out, &x), 0);
  EXPECT_EQ(out, "7\n");
  reader.SweepUnused();
  reader.CloseUnder("d/");
  EXPECT_EQ(reader.cached_files(), 1u);
  dir.Remove("d/x");
  EXPECT_EQ(reader.ReadFile("d/x", &out, &x), ENOENT);
  ASSERT_EQ(reader.ReadFile("d/y", &out, &y), 0);
  EXPECT_EQ(out, "2\n");
  ASSERT_EQ(reader.ReadFile("e/z", &out, &z), 0);
  EXPECT_EQ(out, "3\n");
  // Beyond the descriptor budget a file has no entry to refer to: it is opened for each read.
  reader.set_max_cached_files(2);
  dir.Write("f", "4\n");
  SysfsReader::FileRef f;
  ASSERT_EQ(reader.ReadFile("f", &out, &f), 0);
  EXPECT_EQ(out, "4\n");
  dir.Write("f", "5\n");
  ASSERT_EQ(reader.ReadFile("f", &out, &f), 0);
  EXPECT_EQ(out, "5\n");
  EXPECT_EQ(reader.cached_files(), 2u);
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
  ASSERT_EQ(reader.ReadFile("x", &out), 0);
  ASSERT_EQ(reader.ReadFile("y", &out), 0);
  reader.SweepUnused();  // both used in this generation
  EXPECT_EQ(reader.cached_files(), 2u);
  ASSERT_EQ(reader.ReadFile("x", &out), 0);
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
  ASSERT_EQ(reader.ReadFile("class/infiniband/mlx5_0/a", &out), 0);
  ASSERT_EQ(reader.ReadFile("class/infiniband/mlx5_01/a", &out), 0);
  reader.CloseUnder("class/infiniband/mlx5_0/");
  EXPECT_EQ(reader.cached_files(), 1u);
}

TEST(SysfsReader, ReadsFilesOfExactlyOnePageWhole) {
  TempDir dir;
  std::string page(4096, 'p');
  dir.Write("page", page);
  dir.Write("empty", "");
  SysfsReader reader(dir.path());
  std::string out;
  ASSERT_EQ(reader.ReadFile("page", &out), 0);
  EXPECT_EQ(out, page);
  ASSERT_EQ(reader.ReadFile("empty", &out), 0);
  EXPECT_EQ(out, "");
}

TEST(SysfsReader, AttributeDirListingsAreCachedWhileInUse) {
  TempDir dir;
  dir.Write("class/infiniband/mlx5_0/ports/1/counters/a", "1");
  SysfsReader reader(dir.path());
  const std::string counters = "class/infiniband/mlx5_0/ports/1/counters";
  const std::string missing = "class/infiniband/mlx5_0/ports/1/counters_ext";
  std::vector<std::string> names;
  ASSERT_EQ(reader.ListAttributeDir(counters, &names), 0);
  EXPECT_EQ(names, std::vector<std::string>{"a"});
  EXPECT_EQ(reader.ListAttributeDir(missing, &names), ENOENT);
  EXPECT_TRUE(names.empty());
  // The kernel never adds attributes to a registered port; a file added behind the reader's
  // back is therefore not seen while the listing is in use, and neither is a new directory.
  dir.Write(counters + "/b", "2");
  dir.Write(missing + "/c", "3");
  reader.SweepUnused();
  ASSERT_EQ(reader.ListAttributeDir(counters, &names), 0);
  EXPECT_EQ(names, std::vector<std::string>{"a"});
  EXPECT_EQ(reader.ListAttributeDir(missing, &names), ENOENT);
  // A re-registered device (CloseUnder) is listed afresh.
  reader.CloseUnder("class/infiniband/mlx5_0/");
  ASSERT_EQ(reader.ListAttributeDir(counters, &names), 0);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
  // A listing not asked for during a poll is dropped by the sweep.
  reader.SweepUnused();
  reader.SweepUnused();
  ASSERT_EQ(reader.ListAttributeDir(missing, &names), 0);
  EXPECT_EQ(names, std::vector<std::string>{"c"});
}

TEST(SysfsReader, AttributeLinksAndExistenceAreCachedUntilTheDeviceGoes) {
  TempDir dir;
  dir.Write("pci/0000:01:00.0/x", "");
  dir.Write("class/infiniband/mlx5_0/hca_type", "MT4129\n");
  ASSERT_EQ(symlink((dir.path() + "/pci/0000:01:00.0").c_str(),
                    (dir.path() + "/class/infiniband/mlx5_0/device").c_str()),
            0);
  SysfsReader reader(dir.path());
  std::string target;
  ASSERT_EQ(reader.ReadAttributeLink("class/infiniband/mlx5_0/device", &target), 0);
  EXPECT_EQ(target, dir.path() + "/pci/0000:01:00.0");
  EXPECT_EQ(reader.ReadAttributeLink("class/infiniband/mlx5_0/device/physfn", &target), ENOENT);
  EXPECT_TRUE(reader.AttributeExists("class/infiniband/mlx5_0/hca_type"));
  EXPECT_FALSE(reader.AttributeExists("class/infiniband/mlx5_0/board_id"));
  // Changed behind the reader's back (the kernel does not do this to a registered device):
  // the cached answers stand for the next poll, and are dropped with the device.
  dir.Write("class/infiniband/mlx5_0/board_id", "MT_0000000838\n");
  reader.SweepUnused();
  EXPECT_FALSE(reader.AttributeExists("class/infiniband/mlx5_0/board_id"));
  EXPECT_TRUE(reader.AttributeExists("class/infiniband/mlx5_0/hca_type"));
  reader.CloseUnder("class/infiniband/mlx5_0/");
  EXPECT_TRUE(reader.AttributeExists("class/infiniband/mlx5_0/board_id"));
}

TEST(SysfsReader, TransientListingErrorsAreNotCached) {
  TempDir dir;
  dir.Write("d/file", "1");
  SysfsReader reader(dir.path());
  std::vector<std::string> names;
  EXPECT_EQ(reader.ListAttributeDir("d/file", &names), ENOTDIR);
  // ENOTDIR is not "absent": the next call lists again and sees the directory that replaced it.
  ASSERT_EQ(std::remove((dir.path() + "/d/file").c_str()), 0);
  dir.Write("d/file/x", "1");
  ASSERT_EQ(reader.ListAttributeDir("d/file", &names), 0);
  EXPECT_EQ(names, std::vector<std::string>{"x"});
}

// Open descriptors of this process whose target lies under dir.
int OpenUnder(const std::string& dir) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    auto target = std::filesystem::read_symlink(entry.path(), ec);
    if (!ec && target.string().rfind(dir, 0) == 0) ++n;
  }
  return n;
}

// A directory listed in two polls in a row keeps its descriptor (rewound and read again); one
// listed once (discovery) does not. A kept descriptor still sees entries added and removed, and
// a directory removed and created again is listed afresh.
TEST(SysfsReader, DirectoriesListedEveryPollKeepTheirDescriptor) {
  TempDir dir;
  dir.Write("class/net/eth0/x", "");
  dir.Write("once/a", "");
  SysfsReader reader(dir.path());
  std::vector<std::string> names;
  ASSERT_EQ(reader.ListDir("class/net", &names), 0);
  ASSERT_EQ(reader.ListDir("once", &names), 0);
  EXPECT_EQ(OpenUnder(dir.path()), 0);
  reader.SweepUnused();
  ASSERT_EQ(reader.ListDir("class/net", &names), 0);
  EXPECT_EQ(OpenUnder(dir.path() + "/class/net"), 1);
  reader.SweepUnused();
  dir.Write("class/net/eth1/x", "");
  ASSERT_EQ(reader.ListDir("class/net", &names), 0);
  EXPECT_EQ(names, (std::vector<std::string>{"eth0", "eth1"}));
  reader.SweepUnused();
  std::filesystem::remove_all(dir.path() + "/class/net/eth0");
  ASSERT_EQ(reader.ListDir("class/net", &names), 0);
  EXPECT_EQ(names, std::vector<std::string>{"eth1"});
  reader.SweepUnused();
  std::filesystem::remove_all(dir.path() + "/class/net");
  dir.Write("class/net/eth2/x", "");
  ASSERT_EQ(reader.ListDir("class/net", &names), 0);
  EXPECT_EQ(names, std::vector<std::string>{"eth2"});
  reader.SweepUnused();
  std::filesystem::remove_all(dir.path() + "/class/net");
  EXPECT_EQ(reader.ListDir("class/net", &names), ENOENT);
  EXPECT_TRUE(names.empty());
  // Not listed in a poll: the descriptor goes with the sweep.
  dir.Write("class/net/eth3/x", "");
  ASSERT_EQ(reader.ListDir("class/net", &names), 0);
  reader.SweepUnused();
  ASSERT_EQ(reader.ListDir("class/net", &names), 0);
  reader.SweepUnused();
  EXPECT_EQ(OpenUnder(dir.path()), 1);
  reader.SweepUnused();
  EXPECT_EQ(OpenUnder(dir.path()), 0);
}

// A directory of more entries than one getdents64 buffer holds is listed whole.
TEST(SysfsReader, LargeDirectoriesAreListedWhole) {
  TempDir dir;
  for (int i = 0; i < 3000; ++i)
    dir.Write("big/" + std::string(40, 'v') + std::to_string(i), "");
  SysfsReader reader(dir.path());
  std::vector<std::string> names;
  for (int poll = 0; poll < 3; ++poll) {
    ASSERT_EQ(reader.ListDir("big", &names), 0);
    EXPECT_EQ(names.size(), 3000u) << poll;
    reader.SweepUnused();
  }
}

}  // namespace
}  // namespace rdma_exporter
