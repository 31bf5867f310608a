// Loaded under the SONAME "libcrypto.so" (see CMakeLists.txt). It only depends on libcrypto.so.3,
// so CivetWeb's dlopen("libcrypto.so") finds every OpenSSL 3 crypto symbol through it.

extern "C" __attribute__((visibility("default"))) int rdma_exporter_crypto_shim_version() {
  return 1;
}
