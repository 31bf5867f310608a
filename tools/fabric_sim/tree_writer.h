// The file layer under both renderers: writes files, symlinks and directories below a base
// directory, remembering what it wrote so unchanged content is not rewritten.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace rdma_fabric_sim {

class TreeWriter {
 public:
  TreeWriter() = default;
  TreeWriter(const TreeWriter&) = delete;
  TreeWriter& operator=(const TreeWriter&) = delete;
  ~TreeWriter() { Reset(""); }

  // Forgets everything (closing cached fds) and sets the base directory. With `atomic`, File()
  // writes a temporary file and renames it over the target instead of rewriting in place (for
  // the fixture files, which readers re-open on every read).
  void Reset(std::string base, bool atomic = false);

  // Writes `content` to base/rel. Existing files are rewritten in place: pwrite at offset 0,
  // then ftruncate — the inode never changes. Files written more than once keep their fd
  // open (within the budget) so later ticks skip the open/close.
  bool File(const std::string& rel, const std::string& content, std::string* error);

  bool Link(const std::string& rel, const std::string& target, std::string* error);

  bool Dir(const std::string& rel, std::string* error);

  // True if base/rel was written by File() and not removed since.
  bool HasFile(const std::string& rel) const { return files_.count(rel) != 0; }

  // Removes base/rel (file, link or whole directory) and forgets everything below it.
  bool Remove(const std::string& rel, std::string* error);

 private:
  static bool Fail(const std::string& what, std::string* error);

  // Writes `content` to a hidden temporary file next to `path`, then renames it over `path`.
  static bool WriteAndRename(const std::string& path, const std::string& content,
                             std::string* error);

  bool EnsureParent(const std::string& rel, std::string* error);

  static bool Under(const std::string& path, const std::string& prefix);

  void Forget(const std::string& rel);

  std::string base_;
  std::unordered_map<std::string, std::string> files_;
  std::unordered_map<std::string, std::string> links_;
  std::unordered_set<std::string> dirs_;
  std::unordered_map<std::string, int> fds_;
  size_t fd_budget_ = 0;
  bool atomic_ = false;
};

}  // namespace rdma_fabric_sim
