// --web.config.file: the Prometheus exporter-toolkit web configuration (TLS, mTLS, basic auth,
// response headers), validated with the semantics of `promtool check web-config`, and the basic
// auth check with its cache of verified credentials.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace rdma_exporter {

struct TlsServerConfig {
  std::string cert_file;  // resolved against the config file's directory
  std::string key_file;
  std::string client_ca_file;
  // NoClientCert, RequestClientCert, RequireAnyClientCert (= RequireClientCert),
  // VerifyClientCertIfGiven, RequireAndVerifyClientCert.
  std::string client_auth_type = "NoClientCert";
  int min_version = 0x0303;                    // TLS 1.2, as the toolkit
  int max_version = 0x0304;                    // TLS 1.3
  std::vector<std::string> cipher_suites;      // OpenSSL names (translated from Go's)
  std::vector<std::string> curve_preferences;  // OpenSSL group names
  bool prefer_server_cipher_suites = true;
  bool operator==(const TlsServerConfig&) const = default;
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;          // absent: plain HTTP
  std::map<std::string, std::string> users;    // user -> bcrypt hash
  std::map<std::string, std::string> headers;  // http_server_config.headers
};

// Parses and validates the YAML text. Relative file names are resolved against base_dir. Does
// not touch the files (see LoadWebConfig). On error returns false with a one-line *error.
bool ParseWebConfig(std::string_view yaml, const std::string& base_dir, WebConfig* out,
                    std::string* error);

// Reads, parses and validates path, including loading the certificate, key and client CAs as
// the server will. An empty path is a valid empty config.
bool LoadWebConfig(const std::string& path, WebConfig* out, std::string* error);

// True for a well-formed bcrypt hash ($2a$, $2b$, $2x$, $2y$ or $2$, cost 04..31).
bool ValidBcryptHash(std::string_view hash);

// Builds the server SSL_CTX (returned as void* so callers need no OpenSSL headers); nullptr with
// *error if a file cannot be loaded. The caller owns it (SSL_CTX_free, or hands it to CivetWeb).
void* NewServerSslContext(const TlsServerConfig& tls, std::string* error);
void FreeSslContext(void* ctx);
// Moves a server connection (SSL*) that has not started its handshake to another context built
// by NewServerSslContext from tls, with every setting of that context (for a reload in place).
void SwitchSslContext(void* ssl, void* ssl_ctx, const TlsServerConfig& tls);

// Verifies basic auth credentials against the configured bcrypt hashes. A bcrypt check costs
// ~60 ms, so verified (and recently refused) credentials are cached, keyed by an HMAC-SHA-256 of
// user, password and hash under a per-process random key (the cache never holds a password).
// Thread-safe.
class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string> users);
  // After a reload: keeps previous's verified credentials that are still valid.
  BasicAuth(std::map<std::string, std::string> users, const BasicAuth* previous);
  BasicAuth(const BasicAuth&) = delete;
  BasicAuth& operator=(const BasicAuth&) = delete;
  // Requests waiting for the one bcrypt at a time beyond which others are refused at once.
  static constexpr int kMaxBcryptWaiting = 8;
  bool enabled() const { return !users_.empty(); }
  // Checks an Authorization header value ("Basic base64(user:password)"); nullptr = absent.
  bool Check(const char* authorization_header);
  bool Verify(const std::string& user, const std::string& password);
  uint64_t bcrypt_calls() const;
  // The bcrypt cost unknown users are checked with: the highest configured one (at least 10).
  int placeholder_cost() const;
  // Wrong credentials refused without a bcrypt: seen failing recently, or too many waiting.
  uint64_t refused_without_bcrypt() const;

 private:
  std::map<std::string, std::string> users_;
  std::string placeholder_hash_;
  mutable std::mutex mu_;
  static constexpr size_t kCacheKeySize = 32;
  static const unsigned char* CacheKey();
  std::unordered_set<std::string> verified_;  // HMACs of right credentials
  std::unordered_set<std::string> failed_;    // HMACs of recently refused ones
  int bcrypt_waiting_ = 0;
  uint64_t bcrypt_calls_ = 0;
  uint64_t refused_without_bcrypt_ = 0;
  std::mutex bcrypt_mu_;  // one bcrypt at a time: wrong passwords cannot eat every core
};

// "dXNlcjpwYXNz" -> "user:pass"; nullopt on invalid base64.
std::optional<std::string> DecodeBase64(std::string_view in);

}  // namespace rdma_exporter
