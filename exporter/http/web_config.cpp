#include "rdma_exporter/web_config.h"

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/logging.h"

#include <crypt.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace rdma_exporter {
namespace {

// Go's crypto/tls names (what the toolkit accepts) -> OpenSSL names.
struct CipherName {
  const char* go;
  const char* openssl;
  bool tls13;
};
constexpr CipherName kCiphers[] = {
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA", false},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA", false},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256", false},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384", false},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA", false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA", false},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA", false},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA", false},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", false},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", false},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", false},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", false},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305", false},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305", false},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305", false},
    {"TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", true},
    {"TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", true},
    {"TLS_CHACHA20_POLY1305_SHA256", "TLS_CHACHA20_POLY1305_SHA256", true},
};

constexpr std::pair<const char*, const char*> kCurves[] = {
    {"CurveP256", "P-256"}, {"CurveP384", "P-384"}, {"CurveP521", "P-521"}, {"X25519", "X25519"}};

constexpr std::pair<const char*, int> kVersions[] = {
    {"TLS10", 0x0301}, {"TLS11", 0x0302}, {"TLS12", 0x0303}, {"TLS13", 0x0304}};

// The headers the toolkit lets a config set, with their allowed values (empty = any).
const std::map<std::string, std::vector<std::string>>& AllowedHeaders() {
  static const std::map<std::string, std::vector<std::string>> kHeaders = {
      {"Strict-Transport-Security", {}},
      {"X-Content-Type-Options", {"nosniff"}},
      {"X-Frame-Options", {"deny", "sameorigin"}},
      {"X-XSS-Protection", {}},
      {"Content-Security-Policy", {}}};
  return kHeaders;
}

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string Where(const YAML::Node& node) {
  return "line " + std::to_string(node.Mark().line + 1) + ": ";
}

const char* KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "!!map";
    case YAML::NodeType::Sequence:
      return "!!seq";
    default:
      return "!!str";
  }
}

// A string field: scalars (also numbers and booleans, as Go's yaml does) or null (empty).
std::string Str(const YAML::Node& node, const char* what) {
  if (node.IsNull()) return "";
  if (!node.IsScalar())
    throw ConfigError(Where(node) + "cannot unmarshal " + KindName(node) + " into " + what);
  return node.Scalar();
}

bool Bool(const YAML::Node& node, const char* what) {
  if (node.IsNull()) return false;
  std::string v = node.IsScalar() ? node.Scalar() : "";
  static const std::set<std::string> kTrue = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                              "on",   "On",   "ON",   "y",   "Y"};
  static const std::set<std::string> kFalse = {"false", "False", "FALSE", "no", "No", "NO",
                                               "off",   "Off",   "OFF",   "n",  "N"};
  if (node.IsScalar() && kTrue.count(v)) return true;
  if (node.IsScalar() && kFalse.count(v)) return false;
  throw ConfigError(Where(node) + "cannot unmarshal " + KindName(node) + " `" + v + "` into " +
                    what);
}

std::vector<std::string> StrList(const YAML::Node& node, const char* what) {
  std::vector<std::string> out;
  if (node.IsNull()) return out;
  if (!node.IsSequence())
    throw ConfigError(Where(node) + "cannot unmarshal " + KindName(node) + " into []" + what);
  for (const auto& item : node)
    out.push_back(Str(item, what));
  return out;
}

// The (key, value) pairs of a mapping, rejecting keys that are not in `known` and duplicates,
// as Go's strict unmarshalling does.
std::vector<std::pair<std::string, YAML::Node>> Fields(const YAML::Node& node, const char* type,
                                                       const std::set<std::string>& known) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  if (node.IsNull()) return out;
  if (!node.IsMap())
    throw ConfigError(Where(node) + "cannot unmarshal " + KindName(node) + " into " + type);
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar())
      throw ConfigError(Where(kv.first) + "cannot unmarshal " + KindName(kv.first) + " key in " +
                        type);
    std::string key = kv.first.Scalar();
    if (!known.empty() && !known.count(key))
      throw ConfigError(Where(kv.first) + "field " + key + " not found in type " + type);
    if (!seen.insert(key).second)
      throw ConfigError(Where(kv.first) + "field " + key + " already set in type " + type);
    out.emplace_back(key, kv.second);
  }
  return out;
}

int TlsVersion(const YAML::Node& node) {
  std::string v = Str(node, "web.TLSVersion");
  for (const auto& [name, number] : kVersions) {
    if (v == name) return number;
  }
  throw ConfigError("unknown TLS version: " + v);
}

std::string Resolve(const std::string& base_dir, const std::string& file) {
  if (file.empty() || file[0] == '/' || base_dir.empty()) return file;
  return base_dir + "/" + file;
}

// yaml-cpp recurses once per nesting level: refuse absurd nesting before it sees the text, so a
// hostile or corrupt file cannot exhaust the stack. A web config nests three levels deep.
bool NestingTooDeep(std::string_view text) {
  int depth = 0;
  for (char c : text) {
    if (c == '[' || c == '{') {
      if (++depth > 64) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  size_t indent = 0;
  bool line_start = true;
  for (char c : text) {
    if (c == '\n') {
      line_start = true;
      indent = 0;
    } else if (line_start && (c == ' ' || c == '-' || c == '\t' || c == '?' || c == ':')) {
      if (++indent > 256) return true;
    } else {
      line_start = false;
    }
  }
  return false;
}

// Go crypto/tls names -> OpenSSL names; an unknown name is a config error.
std::vector<std::string> CipherSuites(const YAML::Node& node) {
  std::vector<std::string> out;
  for (const auto& name : StrList(node, "web.Cipher")) {
    const CipherName* found = nullptr;
    for (const auto& c : kCiphers) {
      if (name == c.go) found = &c;
    }
    if (found == nullptr) throw ConfigError("unknown cipher: " + name);
    out.push_back(found->openssl);
  }
  return out;
}

std::vector<std::string> CurvePreferences(const YAML::Node& node) {
  std::vector<std::string> out;
  for (const auto& name : StrList(node, "web.Curve")) {
    const char* found = nullptr;
    for (const auto& [go, openssl] : kCurves) {
      if (name == go) found = openssl;
    }
    if (found == nullptr) throw ConfigError("unknown curve: " + name);
    out.push_back(found);
  }
  return out;
}

// The checks the toolkit makes of a non-empty tls_server_config.
void ValidateTls(const TlsServerConfig& tls, bool client_auth_set) {
  if (tls.cert_file.empty()) throw ConfigError("missing cert_file");
  if (tls.key_file.empty()) throw ConfigError("missing key_file");
  static const std::set<std::string> kAuthTypes = {
      "NoClientCert",      "RequestClientCert",       "RequireAnyClientCert",
      "RequireClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert"};
  if (!kAuthTypes.count(tls.client_auth_type))
    throw ConfigError("Invalid ClientAuth: " + tls.client_auth_type);
  if (!tls.client_ca_file.empty() && (!client_auth_set || tls.client_auth_type == "NoClientCert"))
    throw ConfigError("Client CA's have been configured without a Client Auth Policy");
  bool verifies = tls.client_auth_type == "VerifyClientCertIfGiven" ||
                  tls.client_auth_type == "RequireAndVerifyClientCert";
  if (verifies && tls.client_ca_file.empty())
    throw ConfigError("client_auth_type " + tls.client_auth_type + " needs client_ca_file");
  if (tls.min_version > tls.max_version)
    throw ConfigError("min_version is greater than max_version");
}

// tls_server_config; nullopt when no file or client auth type is set (plain HTTP, as in the
// toolkit, even if versions or ciphers are).
std::optional<TlsServerConfig> ParseTlsServerConfig(const YAML::Node& node,
                                                    const std::string& base_dir) {
  TlsServerConfig tls;
  bool any = false;  // the toolkit serves TLS once any of the files or the auth type is set
  bool client_auth_set = false;
  for (const auto& [k, v] : Fields(
           node, "web.TLSConfig",
           {"cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version",
            "max_version", "cipher_suites", "curve_preferences", "prefer_server_cipher_suites"})) {
    if (k == "cert_file" || k == "key_file" || k == "client_ca_file") {
      std::string& file = k == "cert_file"  ? tls.cert_file
                          : k == "key_file" ? tls.key_file
                                            : tls.client_ca_file;
      file = Resolve(base_dir, Str(v, "string"));
      any = any || !file.empty();
    } else if (k == "client_auth_type") {
      std::string type = Str(v, "string");
      if (!type.empty()) {
        tls.client_auth_type = type;
        client_auth_set = true;
        any = true;
      }
    } else if (k == "min_version") {
      tls.min_version = TlsVersion(v);
    } else if (k == "max_version") {
      tls.max_version = TlsVersion(v);
    } else if (k == "cipher_suites") {
      tls.cipher_suites = CipherSuites(v);
    } else if (k == "curve_preferences") {
      tls.curve_preferences = CurvePreferences(v);
    } else if (k == "prefer_server_cipher_suites") {
      tls.prefer_server_cipher_suites = Bool(v, "bool");
    }
  }
  if (!any) return std::nullopt;
  ValidateTls(tls, client_auth_set);
  return tls;
}

// http_server_config: http2 (accepted) and the response headers the toolkit allows.
void ParseHttpServerConfig(const YAML::Node& node, WebConfig* out) {
  for (const auto& [k, v] : Fields(node, "web.HTTPConfig", {"http2", "headers"})) {
    if (k == "http2") {
      Bool(v, "bool");  // CivetWeb speaks HTTP/1.1 only; accepted for compatibility
      continue;
    }
    for (const auto& [name, header_value] : Fields(v, "map[string]string", {})) {
      auto allowed = AllowedHeaders().find(name);
      if (allowed == AllowedHeaders().end())
        throw ConfigError("HTTP header \"" + name + "\" can not be configured");
      std::string text = Str(header_value, "string");
      if (!allowed->second.empty()) {
        bool ok = false;
        for (const auto& a : allowed->second)
          ok = ok || a == text;
        if (!ok) throw ConfigError("invalid value for " + name + ": \"" + text + "\"");
      }
      if (text.find_first_of("\r\n") != std::string::npos)
        throw ConfigError("invalid value for " + name + ": line break");
      out->headers[name] = text;
    }
  }
}

void ParseBasicAuthUsers(const YAML::Node& node, WebConfig* out) {
  for (const auto& [user, hash] : Fields(node, "map[string]config.Secret", {})) {
    std::string h = Str(hash, "config.Secret");
    if (!ValidBcryptHash(h))
      throw ConfigError("basic_auth_users: the password of \"" + user +
                        "\" is not a bcrypt hash ($2y$10$... with 53 characters after the cost)");
    out->users[user] = h;
  }
}

}  // namespace

bool ValidBcryptHash(std::string_view hash) {
  // $2<minor>$<cost>$<53 characters of bcrypt base64: 22 salt + 31 hash>.
  size_t p = 0;
  if (hash.size() < 3 || hash[0] != '$' || hash[1] != '2') return false;
  p = 2;
  if (hash[p] != '$') {
    if (hash[p] != 'a' && hash[p] != 'b' && hash[p] != 'x' && hash[p] != 'y') return false;
    ++p;
  }
  if (p + 4 > hash.size() || hash[p] != '$' || hash[p + 3] != '$') return false;
  char d1 = hash[p + 1], d2 = hash[p + 2];
  if (d1 < '0' || d1 > '9' || d2 < '0' || d2 > '9') return false;
  int cost = (d1 - '0') * 10 + (d2 - '0');
  if (cost < 4 || cost > 31) return false;
  std::string_view rest = hash.substr(p + 4);
  if (rest.size() != 53) return false;
  for (char c : rest) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

bool ParseWebConfig(std::string_view yaml, const std::string& base_dir, WebConfig* out,
                    std::string* error) {
  *out = WebConfig{};
  if (yaml.size() > (1 << 20)) {
    *error = "web config larger than 1 MiB";
    return false;
  }
  if (NestingTooDeep(yaml)) {
    *error = "web config nested too deeply";
    return false;
  }
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    for (const auto& [key, value] : Fields(
             root, "web.Config", {"tls_server_config", "http_server_config", "basic_auth_users"})) {
      if (key == "tls_server_config") {
        if (auto tls = ParseTlsServerConfig(value, base_dir)) out->tls = std::move(*tls);
      } else if (key == "http_server_config") {
        ParseHttpServerConfig(value, out);
      } else {
        ParseBasicAuthUsers(value, out);
      }
    }
  } catch (const ConfigError& e) {
    *error = e.what();
    return false;
  } catch (const YAML::Exception& e) {
    *error = std::string("yaml: ") + e.what();
    return false;
  }
  return true;
}

namespace {
// The OpenSSL cipher lists of a config: {TLS 1.2 list, TLS 1.3 suites ("" = OpenSSL's, all AEAD)}.
std::pair<std::string, std::string> CipherLists(const TlsServerConfig& tls) {
  std::string tls12, tls13;
  for (const auto& name : tls.cipher_suites) {
    bool is13 = name.rfind("TLS_", 0) == 0;
    std::string& list = is13 ? tls13 : tls12;
    list += (list.empty() ? "" : ":") + name;
  }
  // Without cipher_suites, TLS 1.2 offers only forward-secret AEAD suites (ECDHE with AES-GCM or
  // ChaCha20-Poly1305), as exporter-toolkit's Go default does: OpenSSL's own default would also
  // accept static-RSA key exchange and CBC suites.
  if (tls12.empty()) {
    tls12 =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
  }
  return {tls12, tls13};
}
}  // namespace

void SwitchSslContext(void* ssl_connection, void* ssl_ctx, const TlsServerConfig& tls) {
  SSL* ssl = static_cast<SSL*>(ssl_connection);
  SSL_CTX* ctx = static_cast<SSL_CTX*>(ssl_ctx);
  if (SSL_get_SSL_CTX(ssl) == ctx) return;
  // Certificate, key, client CA names and session id context come with the context; what an SSL
  // copied from its first context when it was created is set again here.
  SSL_set_SSL_CTX(ssl, ctx);
  SSL_set_verify(ssl, SSL_CTX_get_verify_mode(ctx), SSL_CTX_get_verify_callback(ctx));
  SSL_clear_options(ssl, SSL_get_options(ssl));
  SSL_set_options(ssl, SSL_CTX_get_options(ctx));
  SSL_set_min_proto_version(ssl, SSL_CTX_get_min_proto_version(ctx));
  SSL_set_max_proto_version(ssl, SSL_CTX_get_max_proto_version(ctx));
  auto [tls12, tls13] = CipherLists(tls);
  SSL_set_cipher_list(ssl, tls12.c_str());
  SSL_set_ciphersuites(
      ssl, tls13.empty()
               ? "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"
               : tls13.c_str());
  // Without curve_preferences: OpenSSL 3's default groups (the SSL may hold an older config's).
  std::string groups = "X25519:P-256:X448:P-521:P-384";
  if (!tls.curve_preferences.empty()) {
    groups.clear();
    for (const auto& g : tls.curve_preferences)
      groups += (groups.empty() ? "" : ":") + g;
  }
  SSL_set1_groups_list(ssl, groups.c_str());
}

void* NewServerSslContext(const TlsServerConfig& tls, std::string* error) {
  auto fail = [&](SSL_CTX* ctx, const std::string& what) -> void* {
    unsigned long e = ERR_get_error();
    char buf[256] = "";
    if (e != 0) ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    *error = what + (e != 0 ? std::string(": ") + buf : std::string());
    SSL_CTX_free(ctx);
    return nullptr;
  };
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return fail(nullptr, "cannot create TLS context");
  if (SSL_CTX_use_certificate_chain_file(ctx, tls.cert_file.c_str()) != 1)
    return fail(ctx, "failed to load certificate " + tls.cert_file);
  if (SSL_CTX_use_PrivateKey_file(ctx, tls.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return fail(ctx, "failed to load private key " + tls.key_file);
  if (SSL_CTX_check_private_key(ctx) != 1)
    return fail(ctx, "private key " + tls.key_file + " does not match " + tls.cert_file);
  SSL_CTX_set_min_proto_version(ctx, tls.min_version);
  SSL_CTX_set_max_proto_version(ctx, tls.max_version);
  auto [tls12, tls13] = CipherLists(tls);
  if (SSL_CTX_set_cipher_list(ctx, tls12.c_str()) != 1)
    return fail(ctx, "cipher_suites not supported by OpenSSL");
  if (!tls13.empty() && SSL_CTX_set_ciphersuites(ctx, tls13.c_str()) != 1)
    return fail(ctx, "TLS 1.3 cipher_suites not supported by OpenSSL");
  if (!tls.curve_preferences.empty()) {
    std::string groups;
    for (const auto& g : tls.curve_preferences)
      groups += (groups.empty() ? "" : ":") + g;
    if (SSL_CTX_set1_groups_list(ctx, groups.c_str()) != 1)
      return fail(ctx, "curve_preferences not supported by OpenSSL");
  }
  if (tls.prefer_server_cipher_suites) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  // No TLS compression, no renegotiation by clients.
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  if (!tls.client_ca_file.empty()) {
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(tls.client_ca_file.c_str());
    if (names == nullptr || sk_X509_NAME_num(names) == 0) {
      if (names != nullptr) sk_X509_NAME_pop_free(names, X509_NAME_free);
      return fail(ctx, "no certificate in client_ca_file " + tls.client_ca_file);
    }
    SSL_CTX_set_client_CA_list(ctx, names);
    if (SSL_CTX_load_verify_locations(ctx, tls.client_ca_file.c_str(), nullptr) != 1)
      return fail(ctx, "failed to load client_ca_file " + tls.client_ca_file);
  }
  // OpenSSL refuses to resume a session on a context that verifies peers unless the session
  // carries this context's id ("internal error" on the second mTLS handshake of a client).
  static constexpr unsigned char kSessionIdContext[] = "rdma_exporter";
  SSL_CTX_set_session_id_context(ctx, kSessionIdContext, sizeof(kSessionIdContext) - 1);
  // Go's ClientAuthType -> OpenSSL verify mode. "Require*" without "Verify" asks for any
  // certificate and does not check it against the CAs.
  const std::string& type = tls.client_auth_type;
  int mode = SSL_VERIFY_NONE;
  SSL_verify_cb accept_any = [](int, X509_STORE_CTX*) { return 1; };
  if (type == "RequestClientCert") {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any);
  } else if (type == "RequireAnyClientCert" || type == "RequireClientCert") {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any);
  } else if (type == "VerifyClientCertIfGiven") {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  } else if (type == "RequireAndVerifyClientCert") {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  } else {
    SSL_CTX_set_verify(ctx, mode, nullptr);
  }
  return ctx;
}

void FreeSslContext(void* ctx) {
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx));
}

bool LoadWebConfig(const std::string& path, WebConfig* out, std::string* error) {
  *out = WebConfig{};
  if (path.empty()) return true;
  std::string text;
  if (int err = ReadWholeFile(path, &text); err != 0) {
    *error = "cannot read web config " + path + ": " + std::strerror(err);
    return false;
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (!ParseWebConfig(text, dir, out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  // Secrets others can read: the config holds password hashes (offline guessing), the key file
  // the server's identity. Served anyway (the toolkit does not check either), with a warning.
  auto warn_if_world_readable = [](const std::string& file, const char* what) {
    struct stat st {};
    if (stat(file.c_str(), &st) == 0 && (st.st_mode & S_IROTH) != 0) {
      LogWarn(std::string(what) + " is readable by every user; chmod o-r it", {{"path", file}});
    }
  };
  if (!out->users.empty()) warn_if_world_readable(path, "web config with basic_auth_users");
  if (out->tls) warn_if_world_readable(out->tls->key_file, "TLS private key");
  if (out->tls) {
    void* ctx = NewServerSslContext(*out->tls, error);
    if (ctx == nullptr) {
      *error = path + ": " + *error;
      return false;
    }
    FreeSslContext(ctx);
  }
  return true;
}

std::optional<std::string> DecodeBase64(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  while (!in.empty() && in.back() == '=')
    in.remove_suffix(1);
  if (in.size() % 4 == 1) return std::nullopt;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

namespace {
// A valid bcrypt hash of no known password; only its cost is changed (the cost is a parameter of
// the computation, so the result still never matches).
constexpr std::string_view kPlaceholderHash =
    "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";

int BcryptCost(std::string_view hash) {
  if (hash.size() < 7 || hash[0] != '$' || hash[3] != '$' || !std::isdigit(hash[4]) ||
      !std::isdigit(hash[5]))
    return 0;
  return (hash[4] - '0') * 10 + (hash[5] - '0');
}
}  // namespace

BasicAuth::BasicAuth(std::map<std::string, std::string> users) : users_(std::move(users)) {
  // Unknown users are checked against the placeholder at the highest configured cost, so that a
  // wrong user name takes as long as a wrong password (no user enumeration by timing).
  int cost = 10;
  for (const auto& [user, hash] : users_)
    cost = std::max(cost, BcryptCost(hash));
  placeholder_hash_ = std::string(kPlaceholderHash);
  placeholder_hash_[4] = static_cast<char>('0' + cost / 10);
  placeholder_hash_[5] = static_cast<char>('0' + cost % 10);
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users, const BasicAuth* previous)
    : BasicAuth(std::move(users)) {
  if (previous == nullptr) return;
  // Entries are keyed by (user, password, hash) under the process's key: one of a user whose
  // hash changed never matches, and one of a removed user is never consulted. Keeping them spares
  // every scraper a bcrypt right after a reload.
  std::scoped_lock lock(mu_, previous->mu_);
  verified_ = previous->verified_;
}

const unsigned char* BasicAuth::CacheKey() {
  // One key per process (so cached results survive a reload), drawn at first use.
  static unsigned char key[kCacheKeySize];
  static std::once_flag once;
  std::call_once(once, [] {
    if (RAND_bytes(key, sizeof(key)) != 1) {
      // Practically unreachable (the kernel's getrandom); a fixed key only weakens the HMAC to
      // a keyed hash the process knows, which is what a bare SHA-256 was.
      LogWarn("no random bytes for the credential cache key", {});
    }
  });
  return key;
}

uint64_t BasicAuth::refused_without_bcrypt() const {
  std::lock_guard lock(mu_);
  return refused_without_bcrypt_;
}

int BasicAuth::placeholder_cost() const {
  return BcryptCost(placeholder_hash_);
}

uint64_t BasicAuth::bcrypt_calls() const {
  std::lock_guard lock(mu_);
  return bcrypt_calls_;
}

bool BasicAuth::Check(const char* authorization_header) {
  if (authorization_header == nullptr) return false;
  std::string_view h(authorization_header);
  if (h.size() < 6 || strncasecmp(h.data(), "Basic ", 6) != 0) return false;
  h.remove_prefix(6);
  while (!h.empty() && h.front() == ' ')
    h.remove_prefix(1);
  while (!h.empty() && h.back() == ' ')
    h.remove_suffix(1);
  auto decoded = DecodeBase64(h);
  if (!decoded) return false;
  size_t colon = decoded->find(':');
  bool ok = false;
  if (colon != std::string::npos) {
    std::string password = decoded->substr(colon + 1);
    ok = Verify(decoded->substr(0, colon), password);
    OPENSSL_cleanse(password.data(), password.size());
  }
  // No copy of the password outlives the request (in freed heap memory).
  OPENSSL_cleanse(decoded->data(), decoded->size());
  return ok;
}

bool BasicAuth::Verify(const std::string& user, const std::string& password) {
  auto it = users_.find(user);
  // crypt_r takes C strings: a password with a NUL would be checked as its prefix.
  if (password.find('\0') != std::string::npos) it = users_.end();
  const std::string& hash = it == users_.end() ? placeholder_hash_ : it->second;

  // Results are remembered under an HMAC of (user, password, hash) with a key drawn at start:
  // a memory dump holds no digest an attacker could test passwords against offline.
  std::string material = user;
  material += '\0';
  material += password;
  material += '\0';
  material += hash;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned digest_len = 0;
  HMAC(EVP_sha256(), CacheKey(), kCacheKeySize,
       reinterpret_cast<const unsigned char*>(material.data()), material.size(), digest,
       &digest_len);
  OPENSSL_cleanse(material.data(), material.size());
  std::string key(reinterpret_cast<char*>(digest), digest_len);
  {
    std::lock_guard lock(mu_);
    if (it != users_.end() && verified_.count(key)) return true;
    // A wrong password seen recently is refused without a bcrypt.
    if (failed_.count(key)) {
      ++refused_without_bcrypt_;
      return false;
    }
    // One bcrypt runs at a time (wrong passwords cannot occupy every core) and each waiting
    // request holds an HTTP worker: beyond a few waiting, refuse at once, so that a flood of
    // wrong passwords cannot take every worker from the scrapes with cached credentials.
    if (bcrypt_waiting_ >= kMaxBcryptWaiting) {
      ++refused_without_bcrypt_;
      return false;
    }
    ++bcrypt_waiting_;
  }
  bool ok = false;
  {
    std::lock_guard bcrypt_lock(bcrypt_mu_);
    auto data = std::make_unique<crypt_data>();
    const char* result = crypt_r(password.c_str(), hash.c_str(), data.get());
    // crypt_r fails with a string starting with '*' (never a valid hash).
    ok = result != nullptr && result[0] != '*' && std::strcmp(result, hash.c_str()) == 0;
    OPENSSL_cleanse(data.get(), sizeof(crypt_data));
  }
  std::lock_guard lock(mu_);
  --bcrypt_waiting_;
  ++bcrypt_calls_;
  // Both sets are bounded (bcrypt ignores bytes past 72, so many passwords can match one hash,
  // and an attacker can send endless distinct wrong ones).
  if (ok && it != users_.end()) {
    if (verified_.size() >= 1024) verified_.clear();
    verified_.insert(key);
    return true;
  }
  if (failed_.size() >= 4096) failed_.clear();
  failed_.insert(key);
  return false;
}

}  // namespace rdma_exporter
