#include "rdma_exporter/error_tracker.h"

#include <cerrno>
#include <cstring>

#include "rdma_exporter/collector.h"
#include "rdma_exporter/logging.h"

namespace rdma_exporter {

std::string ErrnoReason(int err) {
  switch (err) {
    case ENOENT:
      return "not_found";
    case EINVAL:
      return "invalid";
    case EIO:
      return "io";
    case EACCES:
    case EPERM:
      return "permission";
    case ENODEV:
    case ENXIO:
      return "no_device";
    case EAGAIN:
    case EBUSY:
      return "busy";
    case EOPNOTSUPP:
      return "not_supported";
    case ENOMEM:
      return "no_memory";
    default:
      return "errno_" + std::to_string(err);
  }
}

void ErrorTracker::Record(std::string_view collector, std::string_view path,
                          std::string_view reason, std::string_view detail) {
  bool first;
  {
    std::lock_guard lock(mu_);
    ++totals_[{std::string(collector), std::string(reason)}];
    first = logged_.emplace(std::string(collector), std::string(path), std::string(reason)).second;
  }
  if (first) {
    LogWarn("read failed; the series from this file are skipped until it reads again",
            {{"collector", collector}, {"path", path}, {"reason", reason}, {"detail", detail}});
  }
}

std::map<std::pair<std::string, std::string>, uint64_t> ErrorTracker::Totals() const {
  std::lock_guard lock(mu_);
  return totals_;
}

bool CollectContext::Read(const std::string& path, std::string* out) {
  int err = sysfs_.ReadFile(path, out);
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

}  // namespace rdma_exporter
