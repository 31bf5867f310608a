// ScopeExit: runs a function when the scope ends, however it ends (return or exception).
// std::experimental::scope_exit (Library Fundamentals TS v3) is not in libstdc++ 12.
#pragma once

#include <utility>

namespace rdma_exporter {

template <typename F>
class ScopeExit {
 public:
  explicit ScopeExit(F f) : f_(std::move(f)) {}
  ~ScopeExit() { f_(); }
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;

 private:
  F f_;
};

}  // namespace rdma_exporter
