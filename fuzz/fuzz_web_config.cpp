// Fuzz target: --web.config.file parsing (yaml-cpp plus the exporter-toolkit semantics) and the
// base64 of Authorization headers. Files are never opened by ParseWebConfig.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "rdma_exporter/web_config.h"

using namespace rdma_exporter;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  WebConfig config;
  std::string error;
  bool ok = ParseWebConfig(text, "/etc/rdma_exporter", &config, &error);
  if (!ok && error.empty()) abort();
  if (ok) {
    for (const auto& [user, hash] : config.users)
      if (!ValidBcryptHash(hash)) abort();
    if (config.tls && (config.tls->cert_file.empty() || config.tls->key_file.empty())) abort();
    for (const auto& [name, value] : config.headers)
      if (value.find('\n') != std::string::npos) abort();
  }
  if (auto decoded = DecodeBase64(text)) {
    if (decoded->size() > size) abort();
  }
  return 0;
}
