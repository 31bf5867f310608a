#include "tree_writer.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace rdma_fabric_sim {

namespace fs = std::filesystem;

void TreeWriter::Reset(std::string base, bool atomic) {
  atomic_ = atomic;
  for (auto& [rel, fd] : fds_)
    ::close(fd);
  fds_.clear();
  files_.clear();
  links_.clear();
  dirs_.clear();
  base_ = std::move(base);
  // Keep up to half of the fd limit open for files that are rewritten every tick.
  struct rlimit rl;
  fd_budget_ = 0;
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    fd_budget_ = static_cast<size_t>(rl.rlim_cur / 2);
  } else {
    fd_budget_ = 4096;
  }
}

bool TreeWriter::File(const std::string& rel, const std::string& content, std::string* error) {
  auto it = files_.find(rel);
  if (it != files_.end() && it->second == content) return true;
  if (it == files_.end() && !EnsureParent(rel, error)) return false;
  const std::string path = base_ + "/" + rel;
  if (atomic_) {
    if (!WriteAndRename(path, content, error)) return false;
    files_[rel] = content;
    return true;
  }
  int fd = -1;
  bool cached = false;
  if (auto f = fds_.find(rel); f != fds_.end()) {
    fd = f->second;
    cached = true;
  } else {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Fail("open " + path, error);
  }
  size_t off = 0;
  bool ok = true;
  std::string what;
  while (off < content.size()) {
    ssize_t n = ::pwrite(fd, content.data() + off, content.size() - off, static_cast<off_t>(off));
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      what = "pwrite " + path;
      break;
    }
    off += static_cast<size_t>(n);
  }
  if (ok && ::ftruncate(fd, static_cast<off_t>(content.size())) != 0) {
    ok = false;
    what = "ftruncate " + path;
  }
  const int saved = errno;
  if (!ok || (!cached && (it == files_.end() || fds_.size() >= fd_budget_))) {
    if (cached) fds_.erase(rel);
    ::close(fd);
  } else if (!cached) {
    fds_.emplace(rel, fd);
  }
  if (!ok) {
    errno = saved;
    return Fail(what, error);
  }
  files_[rel] = content;
  return true;
}

bool TreeWriter::Link(const std::string& rel, const std::string& target, std::string* error) {
  auto it = links_.find(rel);
  if (it != links_.end() && it->second == target) return true;
  if (!EnsureParent(rel, error)) return false;
  const std::string path = base_ + "/" + rel;
  ::unlink(path.c_str());
  if (::symlink(target.c_str(), path.c_str()) != 0) return Fail("symlink " + path, error);
  links_[rel] = target;
  return true;
}

bool TreeWriter::Dir(const std::string& rel, std::string* error) {
  if (dirs_.count(rel)) return true;
  std::error_code ec;
  fs::create_directories(base_ + "/" + rel, ec);
  if (ec) {
    *error = "mkdir " + base_ + "/" + rel + ": " + ec.message();
    return false;
  }
  dirs_.insert(rel);
  return true;
}

bool TreeWriter::Remove(const std::string& rel, std::string* error) {
  if (rel.empty() || rel.find("..") != std::string::npos) {
    *error = "refusing to remove '" + rel + "'";
    return false;
  }
  std::error_code ec;
  fs::remove_all(base_ + "/" + rel, ec);
  if (ec) {
    *error = "remove " + base_ + "/" + rel + ": " + ec.message();
    return false;
  }
  Forget(rel);
  return true;
}

bool TreeWriter::Fail(const std::string& what, std::string* error) {
  *error = what + ": " + std::strerror(errno);
  return false;
}

bool TreeWriter::WriteAndRename(const std::string& path, const std::string& content,
                                std::string* error) {
  const auto slash = path.rfind('/');
  const std::string tmp = path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("open " + tmp, error);
  size_t off = 0;
  while (off < content.size()) {
    const ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      return Fail("write " + tmp, error);
    }
    off += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    return Fail("close " + tmp, error);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    return Fail("rename " + tmp, error);
  }
  return true;
}

bool TreeWriter::EnsureParent(const std::string& rel, std::string* error) {
  auto slash = rel.rfind('/');
  if (slash == std::string::npos) return true;
  return Dir(rel.substr(0, slash), error);
}

bool TreeWriter::Under(const std::string& path, const std::string& prefix) {
  return path == prefix ||
         (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
          path[prefix.size()] == '/');
}

void TreeWriter::Forget(const std::string& rel) {
  std::erase_if(fds_, [&](const auto& kv) {
    if (!Under(kv.first, rel)) return false;
    ::close(kv.second);
    return true;
  });
  std::erase_if(files_, [&](const auto& kv) { return Under(kv.first, rel); });
  std::erase_if(links_, [&](const auto& kv) { return Under(kv.first, rel); });
  std::erase_if(dirs_, [&](const std::string& d) { return Under(d, rel); });
}

}  // namespace rdma_fabric_sim
