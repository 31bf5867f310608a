// Build identity. Defined in exporter/core/version.cpp, the only file compiled with the
// RDMA_EXPORTER_VERSION / RDMA_EXPORTER_REVISION definitions, so a new commit rebuilds one file.
#pragma once

namespace rdma_exporter {

extern const char* const kVersion;
extern const char* const kRevision;
extern const char* const kCompiler;

}  // namespace rdma_exporter
