#include "rdma_exporter/version.h"

namespace rdma_exporter {

const char* const kVersion = RDMA_EXPORTER_VERSION;
const char* const kRevision = RDMA_EXPORTER_REVISION;
#ifdef __clang__
const char* const kCompiler = "clang-" __clang_version__;
#else
const char* const kCompiler = "gcc-" __VERSION__;
#endif

}  // namespace rdma_exporter
