// Whole-file reads for the text files the exporter reads once (fixture captures, configuration):
// one implementation, errors as errno values, no exceptions.
#pragma once

#include <string>

namespace rdma_exporter {

// Replaces *out with the whole content of the file at path. Returns 0 or an errno value (ENOENT:
// no such file, EISDIR: a directory); *out is empty on error.
[[nodiscard]] int ReadWholeFile(const std::string& path, std::string* out);

}  // namespace rdma_exporter
