// CollectContext: how a collector reads files and reports what it could not read.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/counter_readers.h"

namespace rdma_exporter {

bool CollectContext::Read(const std::string& path, std::string* out, SysfsReader::FileRef* ref) {
  int err = sysfs_.ReadFile(path, out, ref);
  if (err == 0) return true;
  ReadFailed(path, err);
  return false;
}

bool CollectContext::ReadOptional(const std::string& path, std::string* out) {
  int err = sysfs_.ReadFile(path, out);
  if (err == 0) return true;
  if (err != ENOENT) ReadFailed(path, err);
  return false;
}

void CollectContext::ReadFailed(const std::string& path, int err) {
  // A device removed while it is being read (rdma link delete, driver unload) fails every
  // remaining read of the poll with ENOENT/ENODEV: that is a vanished device, whose series go
  // away, not hundreds of read errors.
  constexpr std::string_view kClass = "class/infiniband/";
  if ((err == ENOENT || err == ENODEV) && path.compare(0, kClass.size(), kClass) == 0) {
    size_t slash = path.find('/', kClass.size());
    if (slash != std::string::npos && !sysfs_.Exists(path.substr(0, slash))) return;
  }
  ++failures_;
  errors_.Record(collector_, path, ErrnoReason(err), std::strerror(err));
}

void CollectContext::Malformed(const std::string& path, std::string_view content) {
  ++failures_;
  std::string shown(content.substr(0, 64));
  while (!shown.empty() && (shown.back() == '\n' || shown.back() == ' '))
    shown.pop_back();
  errors_.Record(collector_, path, "malformed", shown);
}

void CollectContext::Failed(const std::string& path, std::string_view reason,
                            std::string_view detail) {
  ++failures_;
  errors_.Record(collector_, path, reason, detail);
}

int ReadAttributeDirFiles(CollectContext& ctx, const std::string& dir, DirReadState* state,
                          std::initializer_list<std::string_view> first_names,
                          const FileVisitor& visit) {
  SysfsReader::Listing listing;
  int err = ctx.sysfs().ListAttributeDir(dir, &listing);
  if (err != 0) return err;
  const std::vector<std::string>& names = *listing;
  if (listing != state->listing) {
    state->listing = listing;
    state->refs.assign(names.size(), {});
    state->first = 0;
    for (std::string_view first : first_names) {
      auto it = std::find(names.begin(), names.end(), first);
      if (it == names.end()) continue;
      state->first = static_cast<size_t>(it - names.begin());
      break;
    }
  }
  std::string path = dir + "/";  // one buffer for every file's path
  const size_t base = path.size();
  std::string content;
  for (size_t k = 0; k < names.size(); ++k) {
    // state->first, then the others in listing order.
    size_t i = k == 0 ? state->first : (k <= state->first ? k - 1 : k);
    path.resize(base);
    path.append(names[i]);
    if (ctx.Read(path, &content, &state->refs[i])) visit(names[i], path, content);
  }
  return 0;
}

}  // namespace rdma_exporter
