// ParseWebConfig/LoadWebConfig against `promtool check web-config` (the reference semantics),
// the bcrypt hash format, and the basic auth cache.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "hardening_util.h"
#include "rdma_exporter/web_config.h"

namespace rdma_exporter::testing {
namespace {

constexpr const char* kHash = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";

struct Case {
  std::string yaml;
  bool valid;  // what both promtool and the exporter say
};

// Each config is checked by promtool and by LoadWebConfig; both must agree with `valid`.
TEST(WebConfig, AgreesWithPromtoolCheckWebConfig) {
  TempDir dir;
  MakePki(dir.path());
  std::string h = kHash;
  std::vector<Case> cases = {
      {"", true},
      {"tls_server_config: {}\n", true},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key}\n", true},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, min_version: TLS13}\n",
       true},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, min_version: TLS14}\n",
       false},
      {"tls_server_config: {cert_file: server.pem}\n", false},
      {"tls_server_config: {key_file: server.key}\n", false},
      {"tls_server_config: {client_auth_type: RequireAndVerifyClientCert}\n", false},
      {"tls_server_config: {cert_file: server.pem, key_file: nope.key}\n", false},
      {"tls_server_config: {cert_file: server.pem, key_file: server.pem}\n", false},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, client_ca_file: "
       "ca.pem}\n",
       false},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, client_ca_file: ca.pem, "
       "client_auth_type: RequireAndVerifyClientCert}\n",
       true},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, client_ca_file: "
       "nope.pem, client_auth_type: RequireAndVerifyClientCert}\n",
       false},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, client_auth_type: "
       "Foo}\n",
       false},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, cipher_suites: "
       "[TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]}\n",
       true},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, cipher_suites: "
       "[FOO]}\n",
       false},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, curve_preferences: "
       "[X25519, CurveP256]}\n",
       true},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, curve_preferences: "
       "[FOO]}\n",
       false},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, "
       "prefer_server_cipher_suites: false}\n",
       true},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key, client_allowed_sans: "
       "[a]}\n",
       false},
      {"tls_server_config: 7\n", false},
      {"tls_server_config: {cert_file: [a], key_file: server.key}\n", false},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key}\n"
       "tls_server_config: {cert_file: server.pem, key_file: server.key}\n",
       false},
      {"http_server_config: {http2: false}\n", true},
      {"http_server_config: {http2: 5}\n", false},
      {"http_server_config: {headers: {X-Frame-Options: deny, X-Content-Type-Options: nosniff, "
       "Strict-Transport-Security: max-age=31536000}}\n",
       true},
      {"http_server_config: {headers: {X-Frame-Options: allow}}\n", false},
      {"http_server_config: {headers: {X-Foo: bar}}\n", false},
      {"basic_auth_users: {alice: " + h + "}\n", true},
      {"basic_auth_users: {alice: \"" + h + "\", bob: \"" + h + "\"}\n", true},
      {"basic_auth_users: {alice: plain}\n", false},
      {"basic_auth_users: {alice: 5}\n", false},
      {"basic_auth_users: {alice: \"$2y$03$" + h.substr(7) + "\"}\n", false},
      {"basic_auth_users: {alice: \"$3y$10$" + h.substr(7) + "\"}\n", false},
      {"basic_auth_users: [alice]\n", false},
      {"basic_auth_users:\n", true},
      {"unknown: 1\n", false},
      {"[1, 2]\n", false},
      {"tls_server_config: {cert_file: server.pem, key_file: server.key\n", false},
  };
  int i = 0;
  for (const auto& c : cases) {
    std::string path = dir.path() + "/web" + std::to_string(i++) + ".yml";
    std::ofstream(path) << c.yaml;
    std::string output;
    int rc = RunCommand({"promtool", "check", "web-config", path}, &output);
    EXPECT_EQ(rc == 0, c.valid) << "promtool disagrees with the expectation for:\n"
                                << c.yaml << output;
    WebConfig config;
    std::string error;
    EXPECT_EQ(LoadWebConfig(path, &config, &error), c.valid) << c.yaml << error;
    if (!c.valid) {
      EXPECT_FALSE(error.empty());
      EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    }
  }
}

// Configs promtool accepts but the exporter refuses on purpose (docs/security.md).
TEST(WebConfig, StricterThanPromtoolWhereTheToolkitIsSilentlyWeak) {
  TempDir dir;
  MakePki(dir.path());
  std::vector<std::string> stricter = {
      // A client CA file without any certificate would make every client fail verification.
      "tls_server_config: {cert_file: server.pem, key_file: server.key, client_ca_file: "
      "server.key, client_auth_type: RequireAndVerifyClientCert}\n",
      // Verification needs a CA (the toolkit would fall back to the system roots).
      "tls_server_config: {cert_file: server.pem, key_file: server.key, client_auth_type: "
      "RequireAndVerifyClientCert}\n",
      // min above max: no handshake could ever succeed.
      "tls_server_config: {cert_file: server.pem, key_file: server.key, min_version: TLS13, "
      "max_version: TLS12}\n",
      // Not bcrypt-shaped beyond the length check of Go's bcrypt.
      std::string("basic_auth_users: {a: \"") + kHash + "!!\"}\n",
  };
  int i = 0;
  for (const auto& yaml : stricter) {
    std::string path = dir.path() + "/s" + std::to_string(i++) + ".yml";
    std::ofstream(path) << yaml;
    std::string output;
    EXPECT_EQ(RunCommand({"promtool", "check", "web-config", path}, &output), 0) << yaml << output;
    WebConfig config;
    std::string error;
    EXPECT_FALSE(LoadWebConfig(path, &config, &error)) << yaml;
  }
}

TEST(WebConfig, ResolvesRelativeFilesAgainstTheConfigDirectory) {
  WebConfig config;
  std::string error;
  ASSERT_TRUE(ParseWebConfig("tls_server_config: {cert_file: a.pem, key_file: /abs/b.key}\n",
                             "/etc/rdma", &config, &error))
      << error;
  ASSERT_TRUE(config.tls);
  EXPECT_EQ(config.tls->cert_file, "/etc/rdma/a.pem");
  EXPECT_EQ(config.tls->key_file, "/abs/b.key");
  EXPECT_EQ(config.tls->min_version, 0x0303);
}

TEST(WebConfig, RefusesAbsurdNestingBeforeYamlCppRecurses) {
  WebConfig config;
  std::string error;
  EXPECT_FALSE(ParseWebConfig(std::string(100000, '['), "", &config, &error));
  EXPECT_FALSE(ParseWebConfig("a: " + std::string(5000, '{'), "", &config, &error));
}

TEST(BcryptHash, Format) {
  EXPECT_TRUE(ValidBcryptHash(kHash));
  std::string h = kHash;
  EXPECT_TRUE(ValidBcryptHash("$2a$" + h.substr(4)));
  EXPECT_TRUE(ValidBcryptHash("$2b$" + h.substr(4)));
  EXPECT_FALSE(ValidBcryptHash("$2c$" + h.substr(4)));
  EXPECT_FALSE(ValidBcryptHash("$2y$32$" + h.substr(7)));
  EXPECT_FALSE(ValidBcryptHash("$2y$1x$" + h.substr(7)));
  EXPECT_FALSE(ValidBcryptHash(h.substr(0, 59)));
  EXPECT_FALSE(ValidBcryptHash(h.substr(0, 59) + "*"));
  EXPECT_FALSE(ValidBcryptHash(""));
}

TEST(BasicAuth, VerifiesWithBcryptOnceThenFromTheCache) {
  std::string hash = BcryptHash("pa:ss", 4);
  ASSERT_FALSE(hash.empty());
  BasicAuth auth({{"alice", hash}});
  EXPECT_TRUE(auth.enabled());
  EXPECT_TRUE(auth.Verify("alice", "pa:ss"));
  EXPECT_EQ(auth.bcrypt_calls(), 1u);
  for (int i = 0; i < 10; ++i)
    EXPECT_TRUE(auth.Verify("alice", "pa:ss"));
  EXPECT_EQ(auth.bcrypt_calls(), 1u);  // cached
  // Wrong passwords are never cached as right; each distinct one is checked once, a repeated
  // one is refused from memory.
  EXPECT_FALSE(auth.Verify("alice", "pa:sS"));
  EXPECT_FALSE(auth.Verify("alice", "pa:sx"));
  EXPECT_EQ(auth.bcrypt_calls(), 3u);
  EXPECT_FALSE(auth.Verify("alice", "pa:sS"));
  EXPECT_EQ(auth.bcrypt_calls(), 3u);
  EXPECT_EQ(auth.refused_without_bcrypt(), 1u);
  // Unknown users cost a bcrypt too (no user enumeration by timing), and fail.
  EXPECT_FALSE(auth.Verify("bob", "pa:ss"));
  EXPECT_EQ(auth.bcrypt_calls(), 4u);
  // A password with a NUL must not match its prefix (crypt_r sees C strings).
  EXPECT_FALSE(auth.Verify("alice", std::string("pa:ss\0x", 7)));
  // The header: the password may contain ':'.
  EXPECT_TRUE(auth.Check("Basic YWxpY2U6cGE6c3M="));  // alice:pa:ss
  EXPECT_TRUE(auth.Check("basic   YWxpY2U6cGE6c3M=  "));
  EXPECT_FALSE(auth.Check("Basic YWxpY2U6cGE6c3g="));  // alice:pa:sx
  EXPECT_FALSE(auth.Check("Basic !!!"));
  EXPECT_FALSE(auth.Check("Bearer YWxpY2U6cGE6c3M="));
  EXPECT_FALSE(auth.Check("Basic YWxpY2U="));  // no colon
  EXPECT_FALSE(auth.Check(nullptr));
  EXPECT_FALSE(BasicAuth({}).enabled());
}

TEST(BasicAuth, UnknownUsersCostAsMuchAsTheDearestConfiguredHash) {
  const std::string tail = "$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";
  EXPECT_EQ(BasicAuth({{"a", "$2y$04" + tail}}).placeholder_cost(), 10);
  BasicAuth auth({{"a", "$2y$04" + tail}, {"b", "$2b$12" + tail}, {"c", "$2y$11" + tail}});
  EXPECT_EQ(auth.placeholder_cost(), 12);
  // The placeholder is still a hash no password matches.
  EXPECT_FALSE(auth.Verify("nobody", ""));
  EXPECT_EQ(auth.bcrypt_calls(), 1u);
}

// Many requests at once with distinct wrong passwords: at most kMaxBcryptWaiting wait for the
// one bcrypt at a time, the others are refused at once; a cached right password never waits.
TEST(BasicAuth, BoundsRequestsWaitingForABcrypt) {
  std::string hash = BcryptHash("right", 8);
  ASSERT_FALSE(hash.empty());
  BasicAuth auth({{"alice", hash}});
  ASSERT_TRUE(auth.Verify("alice", "right"));
  std::vector<std::thread> threads;
  std::atomic<int> refused{0};
  for (int t = 0; t < 32; ++t) {
    threads.emplace_back([&, t] {
      if (!auth.Verify("alice", "wrong" + std::to_string(t))) ++refused;
    });
  }
  for (int i = 0; i < 20; ++i)
    EXPECT_TRUE(auth.Verify("alice", "right"));
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(refused, 32);
  EXPECT_EQ(auth.bcrypt_calls() + auth.refused_without_bcrypt(), 33u);
  EXPECT_GT(auth.refused_without_bcrypt(), 0u) << "32 concurrent wrong passwords all waited";
}

TEST(BasicAuth, VerifiedCredentialsSurviveAReloadUnlessTheUserChanged) {
  std::string hash = BcryptHash("right", 4);
  std::string other = BcryptHash("other", 4);
  BasicAuth first({{"alice", hash}, {"bob", hash}});
  ASSERT_TRUE(first.Verify("alice", "right"));
  ASSERT_TRUE(first.Verify("bob", "right"));
  // alice unchanged, bob with a new hash, carol new.
  BasicAuth second({{"alice", hash}, {"bob", other}, {"carol", hash}}, &first);
  EXPECT_TRUE(second.Verify("alice", "right"));
  EXPECT_EQ(second.bcrypt_calls(), 0u) << "alice's verified password was not kept";
  EXPECT_FALSE(second.Verify("bob", "right"));
  EXPECT_TRUE(second.Verify("bob", "other"));
  // A removed user's cached entry is never consulted.
  BasicAuth third({{"bob", other}}, &second);
  EXPECT_FALSE(third.Verify("alice", "right"));
}

TEST(Base64, Decodes) {
  EXPECT_EQ(DecodeBase64("dXNlcjpwYXNz"), "user:pass");
  EXPECT_EQ(DecodeBase64("YQ=="), "a");
  EXPECT_EQ(DecodeBase64("YWI="), "ab");
  EXPECT_EQ(DecodeBase64(""), "");
  EXPECT_FALSE(DecodeBase64("Y"));
  EXPECT_FALSE(DecodeBase64("a b"));
}

}  // namespace
}  // namespace rdma_exporter::testing
