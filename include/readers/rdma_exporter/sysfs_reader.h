// SysfsReader: the only code that touches the sysfs tree.
//
// Paths are relative to the root given by --path.sysfs (default /sys). Value files are kept open
// between polls and re-read with pread(fd, buf, n, 0): the syscall floor is one pread per value.
// Errors are returned as errno values, never thrown. Methods are virtual so tests can inject
// faults (EINVAL, EIO, ...) that a fixture tree of plain files cannot produce.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rdma_exporter/unique_fd.h"

namespace rdma_exporter {

class SysfsReader {
  struct CachedFile;

 public:
  explicit SysfsReader(std::string root);
  virtual ~SysfsReader() = default;
  SysfsReader(const SysfsReader&) = delete;
  SysfsReader& operator=(const SysfsReader&) = delete;

  const std::string& root() const { return root_; }

  // Reads a whole (small) file into *out. Returns 0 or an errno value. The file descriptor stays
  // cached for the next call; a cached descriptor that reports ENODEV/ESTALE (device removed and
  // re-added) is reopened once. Within one poll (between two SweepUnused calls) a file is read
  // from the kernel once: later calls return the same content, so discovery and collectors
  // that need the same file (gids/0, gid_attrs/ndevs/0) do not cost a second read.
  [[nodiscard]] int ReadFile(const std::string& path, std::string* out) {
    return ReadFile(path, out, nullptr);
  }
  // A file read on every poll, found by path once: reads through the same ref go straight to
  // the cached descriptor, with no path hash or map lookup (that lookup was 7-10 % of a poll's
  // CPU at 256 ports, issue 17). The ref goes stale whenever the reader drops a cached file
  // (a sweep or CloseUnder that removed something, a failed descriptor); the next read then
  // finds the path again. A default-constructed ref is empty.
  class FileRef {
   public:
    FileRef() = default;

   private:
    friend class SysfsReader;
    FileRef(CachedFile* file, uint64_t epoch) : file_(file), epoch_(epoch) {}
    CachedFile* file_ = nullptr;
    uint64_t epoch_ = 0;
  };
  // ReadFile through ref (nullptr: none). Fault-injecting test readers override this one.
  [[nodiscard]] virtual int ReadFile(const std::string& path, std::string* out, FileRef* ref);
  // Sorted entry names of a directory, without "." and "..". Returns 0 or an errno value.
  [[nodiscard]] int ListDir(const std::string& path, std::vector<std::string>* names);
  // The same listing with each entry's inode number (d_ino, no stat): in sysfs every kernel
  // object registration creates new nodes with new numbers, so an unchanged (name, inode) pair
  // is the same object as before.
  struct DirEntry {
    std::string name;
    uint64_t inode = 0;
    bool operator==(const DirEntry&) const = default;
  };
  [[nodiscard]] virtual int ListDirEntries(const std::string& path, std::vector<DirEntry>* entries);
  // ListDir for an attribute directory of a registered port or device (counters/, hw_counters/,
  // gids/): the kernel creates its entries when the object registers and never changes them
  // while it exists, so the listing (or its error) is cached and costs no syscall on later
  // polls. Dropped with the object's files (CloseUnder) or when not asked for in a poll
  // (SweepUnused), so a re-registered device is listed afresh.
  [[nodiscard]] int ListAttributeDir(const std::string& path, std::vector<std::string>* names);
  // The same cached listing without a copy. A new listing (the object registered again) is a
  // new vector, so a caller that keeps the pointer can tell it from the one it saw before.
  using Listing = std::shared_ptr<const std::vector<std::string>>;
  [[nodiscard]] int ListAttributeDir(const std::string& path, Listing* names);
  // ReadLink and Exists with the same caching, for links and attributes that are fixed while the
  // device is registered (its `device` link, `device/physfn`, whether `hca_type` exists).
  [[nodiscard]] int ReadAttributeLink(const std::string& path, std::string* target);
  bool AttributeExists(const std::string& path);
  // Target of a symbolic link, as stored. Returns 0 or an errno value.
  [[nodiscard]] virtual int ReadLink(const std::string& path, std::string* target);
  virtual bool Exists(const std::string& path);
  // The canonical path of path (every link resolved), relative to the root: e.g.
  // "devices/pci0000:00/0000:00:01.0/0000:01:00.0" for "bus/pci/devices/0000:01:00.0".
  // EXDEV when it resolves outside the root. Returns 0 or an errno value.
  [[nodiscard]] virtual int RealPath(const std::string& path, std::string* resolved);

  // Closes cached descriptors whose path starts with prefix (a device that vanished).
  void CloseUnder(std::string_view prefix);
  // Closes cached descriptors not used since the previous call: files of objects that went away.
  void SweepUnused();
  size_t cached_files() const { return files_.size(); }
  // At most this many descriptors are kept open (derived from RLIMIT_NOFILE); files beyond it are
  // opened for each read.
  void set_max_cached_files(size_t n) { max_cached_files_ = n; }

 private:
  struct CachedFile {
    UniqueFd fd;
    uint64_t last_used = 0;  // generation of the last read
    int last_error = 0;
    std::string content;  // of the read in generation last_used
  };
  [[nodiscard]] int ReadCached(const std::string& path, CachedFile* file, std::string* out);
  // A cached listing, link target or existence test; keyed by path plus a kind suffix, so
  // CloseUnder's prefix match covers all three.
  struct CachedAttribute {
    uint64_t last_used = 0;
    int error = 0;
    Listing names;
    std::string target;
  };
  template <typename Fill>
  const CachedAttribute& LookupAttribute(const std::string& key, Fill fill);

  std::string root_;
  std::unordered_map<std::string, CachedFile> files_;
  std::unordered_map<std::string, CachedAttribute> attributes_;
  // Directories listed in this or the previous poll; the descriptor is kept from the second
  // poll in a row on.
  struct CachedDir {
    UniqueFd fd;
    uint64_t last_used = 0;
  };
  std::unordered_map<std::string, CachedDir> dirs_;
  std::vector<char> dirent_buf_;
  uint64_t generation_ = 1;
  // Counts the times cached files were dropped: a FileRef filled at another epoch may point at
  // a freed entry and is looked up by path again.
  uint64_t drop_epoch_ = 1;
  // Entries of files_ and attributes_ whose last_used is generation_.
  size_t files_used_ = 0;
  size_t attributes_used_ = 0;
  bool fd_cache_full_ = false;
  size_t max_cached_files_ = 1 << 20;
};

// Joins sysfs path components with '/'.
std::string JoinPath(std::string_view a, std::string_view b);

}  // namespace rdma_exporter
