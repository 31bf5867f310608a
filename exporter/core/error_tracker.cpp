#include "rdma_exporter/error_tracker.h"

#include <cerrno>
#include <cstring>

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

}  // namespace rdma_exporter
