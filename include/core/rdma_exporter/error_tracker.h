// ErrorTracker: counts read errors per (collector, reason) for
// rdma_exporter_read_errors_total and logs each distinct cause (collector, path, reason) once,
// so a permanently broken file does not flood the log.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

namespace rdma_exporter {

class ErrorTracker {
 public:
  // reason: a short snake_case word such as "invalid", "io", "malformed".
  void Record(std::string_view collector, std::string_view path, std::string_view reason,
              std::string_view detail);
  std::map<std::pair<std::string, std::string>, uint64_t> Totals() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, uint64_t> totals_;
  std::set<std::tuple<std::string, std::string, std::string>> logged_;
};

// Reason word for an errno value: ENOENT "not_found", EINVAL "invalid", EIO "io",
// EACCES/EPERM "permission", ENODEV "no_device", EAGAIN/EBUSY "busy", else "errno_<n>".
std::string ErrnoReason(int err);

}  // namespace rdma_exporter
