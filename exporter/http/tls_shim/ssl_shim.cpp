// Loaded under the SONAME "libssl.so" (see CMakeLists.txt): gives Debian's CivetWeb 1.15 the one
// OpenSSL 1.1 function name that OpenSSL 3 renamed. <openssl/ssl.h> is deliberately not included:
// with OpenSSL 3 it #defines SSL_get_peer_certificate to the new name.

extern "C" {
void* SSL_get1_peer_certificate(const void* ssl);

// OpenSSL 1.1's SSL_get_peer_certificate already returned a new reference (the caller frees it
// with X509_free), which is exactly what SSL_get1_peer_certificate does.
__attribute__((visibility("default"))) void* SSL_get_peer_certificate(const void* ssl) {
  return SSL_get1_peer_certificate(ssl);
}

// Referenced by the exporter so that the shim is provably linked (see tls_shim.h).
__attribute__((visibility("default"))) int rdma_exporter_ssl_shim_version() {
  return 1;
}
}
