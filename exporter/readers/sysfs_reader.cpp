#include "rdma_exporter/sysfs_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>

#include "rdma_exporter/logging.h"

namespace rdma_exporter {
namespace {

// sysfs attributes are at most one page; a few files (aer_dev_*) are a few hundred bytes.
constexpr size_t kMaxFileSize = 64 * 1024;
constexpr rlim_t kReservedFds = 512;

// pread that retries when interrupted by a signal.
ssize_t PreadRetrying(int fd, char* buf, size_t size, off_t offset) {
  ssize_t n;
  do {
    n = pread(fd, buf, size, offset);
  } while (n < 0 && errno == EINTR);
  return n;
}

[[nodiscard]] int ReadAll(int fd, std::string* out) {
  // Read into a stack buffer: resizing the string first would zero-fill a page per read.
  char buf[4096];
  out->clear();
  // sysfs returns a whole attribute in one read; a short read means end of file.
  for (;;) {
    ssize_t n = PreadRetrying(fd, buf, sizeof(buf), static_cast<off_t>(out->size()));
    if (n < 0) {
      int err = errno;
      out->clear();
      return err;
    }
    out->append(buf, static_cast<size_t>(n));
    if (static_cast<size_t>(n) < sizeof(buf) || out->size() >= kMaxFileSize) return 0;
  }
}

}  // namespace

std::string JoinPath(std::string_view a, std::string_view b) {
  std::string path;
  path.reserve(a.size() + b.size() + 1);
  path.append(a);
  if (!path.empty() && path.back() != '/') path.push_back('/');
  path.append(b);
  return path;
}

SysfsReader::SysfsReader(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/')
    root_.pop_back();
  // Keep cached value files within the descriptor limit, leaving room for directory listings,
  // sockets (HTTP clients, netlink) and libraries.
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    max_cached_files_ =
        limit.rlim_cur > 2 * kReservedFds ? limit.rlim_cur - kReservedFds : limit.rlim_cur / 2;
  }
}

int SysfsReader::ReadCached(const std::string& path, CachedFile* file, std::string* out) {
  if (!file->fd.valid()) {
    file->fd.reset(open(JoinPath(root_, path).c_str(), O_RDONLY | O_CLOEXEC));
    if (!file->fd.valid()) return errno;
  }
  return ReadAll(file->fd.get(), out);
}

int SysfsReader::ReadFile(const std::string& path, std::string* out, FileRef* ref) {
  CachedFile* file = nullptr;
  if (ref != nullptr && ref->file_ != nullptr && ref->epoch_ == drop_epoch_) {
    file = ref->file_;
  } else if (auto it = files_.find(path); it != files_.end()) {
    file = &it->second;
  }
  if (ref != nullptr) *ref = {};
  if (file != nullptr && file->last_used == generation_) {
    *out = file->content;  // already read in this poll
    if (ref != nullptr) *ref = FileRef(file, drop_epoch_);
    return file->last_error;
  }
  if (file != nullptr) {
    file->last_used = generation_;
    ++files_used_;
    int err = ReadCached(path, file, out);
    // A cached descriptor of a removed-and-re-added device reads ENODEV: reopen once.
    if (err == ENODEV || err == ESTALE) {
      file->fd.reset();
      err = ReadCached(path, file, out);
    }
    if (err != 0 && file->fd.valid() && err != EINVAL && err != EIO && err != EAGAIN) {
      files_.erase(path);
      ++drop_epoch_;
      --files_used_;
      return err;
    }
    file->content = *out;
    file->last_error = err;
    if (ref != nullptr) *ref = FileRef(file, drop_epoch_);
    return err;
  }
  UniqueFd fd(open(JoinPath(root_, path).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return errno;
  if (files_.size() >= max_cached_files_) {
    // The descriptor budget is spent: this file is opened for each read instead.
    if (!fd_cache_full_) {
      LogWarn("sysfs descriptor cache full; further files are opened for each read",
              {{"cached", std::to_string(files_.size())}, {"path", path}});
      fd_cache_full_ = true;
    }
    return ReadAll(fd.get(), out);
  }
  int err = ReadAll(fd.get(), out);
  if (err != 0 && err != EINVAL && err != EIO && err != EAGAIN) return err;
  // Keep the descriptor even when the read failed with EINVAL/EIO: the kernel re-evaluates the
  // attribute on every read, so a later pread may succeed.
  auto added = files_.emplace(path, CachedFile{std::move(fd), generation_, err, *out}).first;
  ++files_used_;
  // References to unordered_map elements survive rehashing: the ref stays good until an erase.
  if (ref != nullptr) *ref = FileRef(&added->second, drop_epoch_);
  return err;
}

int SysfsReader::ListDir(const std::string& path, std::vector<std::string>* names) {
  names->clear();
  std::vector<DirEntry> entries;
  int err = ListDirEntries(path, &entries);
  names->reserve(entries.size());
  for (auto& entry : entries)
    names->push_back(std::move(entry.name));
  return err;
}

namespace {

// A linux_dirent64 of the longest name (19-byte header, NAME_MAX, NUL, 8-byte aligned).
constexpr size_t kMaxDirentSize = 280;

// Entries of an open directory from its current position to the end. getdents64 stops at the
// first entry that does not fit the buffer, so a reply that leaves room for the longest entry
// is the whole rest of the directory: one call instead of readdir's call plus an empty one.
int ReadDirEntries(int fd, std::vector<char>* buf, std::vector<SysfsReader::DirEntry>* entries) {
  for (;;) {
    ssize_t n = getdents64(fd, buf->data(), buf->size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    for (ssize_t off = 0; off < n;) {
      auto* entry = reinterpret_cast<dirent64*>(buf->data() + off);
      std::string_view name = entry->d_name;
      if (name != "." && name != "..") entries->push_back({std::string(name), entry->d_ino});
      off += entry->d_reclen;
    }
    if (n == 0 || buf->size() - static_cast<size_t>(n) >= kMaxDirentSize) return 0;
  }
}

}  // namespace

int SysfsReader::ListDirEntries(const std::string& path, std::vector<DirEntry>* entries) {
  entries->clear();
  // The directories listed on every poll (class/infiniband, class/net) keep their descriptor:
  // rewinding it and one getdents64 is 2 syscalls, opendir/readdir/closedir 5. Only a
  // directory listed in the previous poll too keeps it (the entry outlived one sweep):
  // discovery lists each device's directories once, and thousands of them held open would
  // take descriptors from the value files and the HTTP server.
  if (dirent_buf_.empty()) dirent_buf_.resize(32 * 1024);
  auto [it, inserted] = dirs_.try_emplace(path);
  bool keep = !inserted && it->second.last_used < generation_ &&
              files_.size() + dirs_.size() < max_cached_files_;
  keep = keep || it->second.fd.valid();
  it->second.last_used = generation_;
  UniqueFd& fd = it->second.fd;
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool kept = fd.valid();
    if (!kept) {
      fd.reset(open(JoinPath(root_, path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!fd.valid()) {
        int err = errno;
        dirs_.erase(it);
        return err;
      }
    } else if (lseek(fd.get(), 0, SEEK_SET) != 0) {
      fd.reset();
      continue;
    }
    int err = ReadDirEntries(fd.get(), &dirent_buf_, entries);
    // A kept descriptor of a directory removed since (and perhaps created again) lists nothing
    // or fails: open the path afresh once.
    if (kept && (err != 0 || entries->empty())) {
      fd.reset();
      entries->clear();
      continue;
    }
    if (err != 0) {
      dirs_.erase(it);
      entries->clear();
      return err;
    }
    break;
  }
  if (!keep) fd.reset();
  std::sort(entries->begin(), entries->end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return 0;
}

template <typename Fill>
const SysfsReader::CachedAttribute& SysfsReader::LookupAttribute(const std::string& key,
                                                                 Fill fill) {
  auto [it, inserted] = attributes_.try_emplace(key);
  CachedAttribute& entry = it->second;
  // Absent (ENOENT) is as fixed as present; other failures (EMFILE, ENOMEM, EACCES) are retried.
  if (inserted || (entry.error != 0 && entry.error != ENOENT)) entry.error = fill(&entry);
  if (inserted || entry.last_used != generation_) ++attributes_used_;
  entry.last_used = generation_;
  return entry;
}

int SysfsReader::ListAttributeDir(const std::string& path, Listing* names) {
  const CachedAttribute& entry = LookupAttribute(path, [&](CachedAttribute* e) {
    auto listing = std::make_shared<std::vector<std::string>>();
    int err = ListDir(path, listing.get());
    e->names = std::move(listing);
    return err;
  });
  *names = entry.names;
  return entry.error;
}

int SysfsReader::ListAttributeDir(const std::string& path, std::vector<std::string>* names) {
  Listing listing;
  int err = ListAttributeDir(path, &listing);
  *names = *listing;
  return err;
}

int SysfsReader::ReadAttributeLink(const std::string& path, std::string* target) {
  const CachedAttribute& entry = LookupAttribute(
      path + "\n->", [&](CachedAttribute* e) { return ReadLink(path, &e->target); });
  if (entry.error == 0) *target = entry.target;
  return entry.error;
}

bool SysfsReader::AttributeExists(const std::string& path) {
  return LookupAttribute(path + "\n?", [&](CachedAttribute*) {
           return Exists(path) ? 0 : ENOENT;
         }).error == 0;
}

int SysfsReader::ReadLink(const std::string& path, std::string* target) {
  char buf[4096];
  ssize_t n = readlink(JoinPath(root_, path).c_str(), buf, sizeof(buf));
  if (n < 0) return errno;
  target->assign(buf, static_cast<size_t>(n));
  return 0;
}

int SysfsReader::RealPath(const std::string& path, std::string* resolved) {
  // realpath(3) of the root too: the root may itself be reached through a link (/tmp trees).
  char root_buf[PATH_MAX];
  char path_buf[PATH_MAX];
  if (realpath(root_.c_str(), root_buf) == nullptr) return errno;
  if (realpath(JoinPath(root_, path).c_str(), path_buf) == nullptr) return errno;
  std::string_view root(root_buf);
  std::string_view full(path_buf);
  if (root == "/") root = "";
  if (full.substr(0, root.size()) != root || full.size() <= root.size() ||
      full[root.size()] != '/') {
    return EXDEV;
  }
  resolved->assign(full.substr(root.size() + 1));
  return 0;
}

bool SysfsReader::Exists(const std::string& path) {
  return access(JoinPath(root_, path).c_str(), F_OK) == 0;
}

void SysfsReader::CloseUnder(std::string_view prefix) {
  auto under = [&](const std::string& path) {
    return std::string_view(path).substr(0, prefix.size()) == prefix;
  };
  std::erase_if(attributes_, [&](const auto& entry) { return under(entry.first); });
  std::erase_if(dirs_, [&](const auto& entry) { return under(entry.first); });
  if (std::erase_if(files_, [&](const auto& entry) { return under(entry.first); }) > 0) {
    ++drop_epoch_;
  }
  // Some of the entries used in this poll may be gone: count again.
  attributes_used_ = static_cast<size_t>(
      std::count_if(attributes_.begin(), attributes_.end(),
                    [&](const auto& entry) { return entry.second.last_used == generation_; }));
  files_used_ = static_cast<size_t>(std::count_if(files_.begin(), files_.end(), [&](const auto& e) {
    return e.second.last_used == generation_;
  }));
}

void SysfsReader::SweepUnused() {
  // In a steady state every cached file and attribute was used in the poll: then nothing is
  // swept and the (thousands of entries long) maps are not walked.
  auto unused = [&](const auto& entry) { return entry.second.last_used < generation_; };
  if (attributes_used_ != attributes_.size()) std::erase_if(attributes_, unused);
  if (files_used_ != files_.size() && std::erase_if(files_, unused) > 0) ++drop_epoch_;
  std::erase_if(dirs_, unused);
  attributes_used_ = 0;
  files_used_ = 0;
  ++generation_;
}

}  // namespace rdma_exporter
