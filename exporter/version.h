// Build identity; RDMA_EXPORTER_VERSION and RDMA_EXPORTER_REVISION are compile definitions set
// by CMake.
#pragma once

namespace rdma_exporter {

inline constexpr const char* kVersion = RDMA_EXPORTER_VERSION;
inline constexpr const char* kRevision = RDMA_EXPORTER_REVISION;
#ifdef __clang__
inline constexpr const char* kCompiler = "clang-" __clang_version__;
#else
inline constexpr const char* kCompiler = "gcc-" __VERSION__;
#endif

}  // namespace rdma_exporter
