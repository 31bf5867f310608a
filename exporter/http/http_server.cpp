#include "rdma_exporter/http_server.h"
#include "rdma_exporter/host.h"

#include <civetweb.h>
#include <openssl/ssl.h>
#include <strings.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <string_view>
#include <vector>

#include "accept_gate.h"
#include "node_page.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/version.h"

namespace rdma_exporter {
namespace {

constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// The comma-separated tokens of a request header (Connection, Accept-Encoding), without the
// spaces and tabs around them; empty when the header is absent.
std::vector<std::string_view> HeaderTokens(mg_connection* conn, const char* name) {
  std::vector<std::string_view> tokens;
  const char* value = mg_get_header(conn, name);
  if (value == nullptr) return tokens;
  std::string_view rest(value);
  for (;;) {
    size_t comma = std::min(rest.find(','), rest.size());
    std::string_view token = rest.substr(0, comma);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t'))
      token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t'))
      token.remove_suffix(1);
    tokens.push_back(token);
    if (comma == rest.size()) return tokens;
    rest.remove_prefix(comma + 1);
  }
}

// Whether CivetWeb keeps the connection open after this response (its should_keep_alive):
// keep-alive is enabled in our options, so the client's Connection header decides, else the
// HTTP version (1.1 keeps it). Our Connection header must agree with what CivetWeb then does.
bool KeepsAlive(mg_connection* conn) {
  if (mg_get_header(conn, "Connection") != nullptr) {
    for (std::string_view token : HeaderTokens(conn, "Connection")) {
      if (token.size() == 10 && strncasecmp(token.data(), "keep-alive", 10) == 0) return true;
    }
    return false;
  }
  const mg_request_info* info = mg_get_request_info(conn);
  return info != nullptr && info->http_version != nullptr &&
         std::strcmp(info->http_version, "1.1") == 0;
}

// Responses up to this size go out as one write; larger bodies follow the head in a second
// write rather than being copied behind it.
constexpr size_t kSingleWriteBody = 64 * 1024;

// Every response: a length, no MIME sniffing, and the headers of http_server_config.
// False if CivetWeb could not start a response on conn (nothing was sent).
//
// The head is written by us, not by mg_response_header_send: CivetWeb writes the status line
// and each header with its own send(), and with TCP_NODELAY each becomes a TCP segment (9
// syscalls and 9 segments per scrape). mg_response_header_start still records the status for
// CivetWeb (access log, connection state).
bool Send(mg_connection* conn, int status, const char* content_type, const std::string& body,
          const HeaderList& extra = {}, const char* encoding = nullptr) {
  if (mg_response_header_start(conn, status) < 0) return false;
  const mg_request_info* info = mg_get_request_info(conn);
  std::string out;
  out.reserve(512 + (body.size() <= kSingleWriteBody ? body.size() : 0));
  out.append("HTTP/")
      .append(info != nullptr && info->http_version != nullptr ? info->http_version : "1.0")
      .append(" ")
      .append(std::to_string(status))
      .append(" ")
      .append(mg_get_response_code_text(conn, status))
      .append("\r\n");
  auto header = [&out](std::string_view name, std::string_view value) {
    out.append(name).append(": ").append(value).append("\r\n");
  };
  header("Content-Type", content_type);
  if (encoding != nullptr) header("Content-Encoding", encoding);
  header("Content-Length", std::to_string(body.size()));
  // A configured X-Content-Type-Options replaces this one (not a second header).
  bool own_nosniff = std::none_of(extra.begin(), extra.end(), [](const auto& h) {
    return strcasecmp(h.first.c_str(), "X-Content-Type-Options") == 0;
  });
  if (own_nosniff) header("X-Content-Type-Options", "nosniff");
  for (const auto& [name, value] : extra)
    header(name, value);
  char date[64];
  time_t now = time(nullptr);
  tm utc{};
  gmtime_r(&now, &utc);
  if (strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &utc) > 0) header("Date", date);
  header("Connection", KeepsAlive(conn) ? "keep-alive" : "close");
  out.append("\r\n");
  // Error answers to a malformed request have no method.
  bool head = info != nullptr && info->request_method != nullptr &&
              std::strcmp(info->request_method, "HEAD") == 0;
  if (head) {
    mg_write(conn, out.data(), out.size());
  } else if (body.size() <= kSingleWriteBody) {
    out.append(body);
    mg_write(conn, out.data(), out.size());
  } else {
    mg_write(conn, out.data(), out.size());
    mg_write(conn, body.data(), body.size());
  }
  return true;
}

bool AcceptsGzip(mg_connection* conn) {
  // Tokens may carry ;q=. "gzip;q=0" refuses gzip.
  for (std::string_view token : HeaderTokens(conn, "Accept-Encoding")) {
    if (token.substr(0, 4) == "gzip") {
      std::string_view params = token.substr(4);
      return params.find("q=0") == std::string_view::npos ||
             params.find("q=0.") != std::string_view::npos;
    }
  }
  return false;
}

}  // namespace

namespace {

// Headers of every response: the configured ones (http_server_config.headers).
HeaderList ConfiguredHeaders(const WebConfig& web) {
  return HeaderList(web.headers.begin(), web.headers.end());
}

// The node page is the only HTML: its own script and style only, no framing, no referrer, not
// cached.
HeaderList PageHeaders(const WebConfig& web) {
  HeaderList h = {{"Content-Security-Policy",
                   "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; "
                   "connect-src 'self'; frame-ancestors 'none'"},
                  {"X-Frame-Options", "DENY"},
                  {"Referrer-Policy", "no-referrer"},
                  {"Cache-Control", "no-store"}};
  for (const auto& [name, value] : web.headers) {
    bool replaced = false;
    for (auto& [n, v] : h) {
      if (n == name) {
        v = value;
        replaced = true;
      }
    }
    if (!replaced) h.emplace_back(name, value);
  }
  return h;
}

}  // namespace

HttpServer::HttpServer(HttpConfig config, Poller& poller)
    : config_(std::move(config)),
      poller_(poller),
      gate_stats_(std::make_unique<AcceptGateStats>()) {}

HttpServer::~HttpServer() {
  Stop();
}

std::shared_ptr<const HttpServer::Active> HttpServer::active() const {
  std::lock_guard lock(mu_);
  return active_;
}

bool HttpServer::tls() const {
  auto a = active();
  return a != nullptr && a->web.tls.has_value();
}

bool HttpServer::Start(std::string* error) {
  WebConfig web;
  if (!LoadWebConfig(config_.web_config_file, &web, error)) return false;
  return Listen(web, error);
}

bool HttpServer::Listen(const WebConfig& web, std::string* error) {
  if (web.tls && !config_.tls_available) {
    // Without the shims CivetWeb's TLS is half-initialised and the first HTTPS request would
    // crash the process: refuse instead.
    *error =
        "TLS is configured but CivetWeb could not initialise OpenSSL (the libssl.so/libcrypto.so "
        "shims next to the binary were not found); refusing to serve";
    return false;
  }
  auto next = MakeActive(web, error);
  if (next == nullptr) return false;
  {
    std::lock_guard lock(mu_);
    active_ = next;
  }
  std::string ports = config_.civetweb_ports;
  // On a restart (reload) keep the port we got, also when the flag said port 0.
  if (port_ != 0) {
    size_t colon = ports.rfind(':');
    ports = (colon == std::string::npos ? "" : ports.substr(0, colon + 1)) + std::to_string(port_);
  }
  if (web.tls) ports += "s";
  std::string threads = std::to_string(config_.max_connections);
  std::string timeout = std::to_string(config_.read_timeout.count());
  const char* options[] = {"listening_ports", ports.c_str(), "num_threads", threads.c_str(),
                           // The whole request head must arrive within this (slowloris).
                           "request_timeout_ms", timeout.c_str(),
                           // A keep-alive connection keeps its worker while idle (the gate
                           // sees it only once): give it back soon. Prometheus scrapes every
                           // 15 s or more and reconnects anyway; bursts still reuse it.
                           "keep_alive_timeout_ms", "1000", "enable_keep_alive", "yes",
                           // Request line plus headers; larger requests are refused.
                           "max_request_size", "16384", "enable_directory_listing", "no",
                           // A large body is written after its head: without TCP_NODELAY its
                           // last segment waits for a delayed ACK (~40 ms per scrape).
                           "tcp_nodelay", "1", nullptr};
  mg_callbacks callbacks{};
  callbacks.begin_request = &BeginRequest;
  callbacks.http_error = &HttpError;
  callbacks.external_ssl_ctx = &ExternalSslContext;
  callbacks.init_thread = &InitThread;
  listen_tls_error_.clear();
  {
    std::lock_guard lock(gate_mu_);
    gate_done_ = false;
    gate_error_.clear();
  }
  ctx_ = mg_start(&callbacks, this, options);
  if (ctx_ == nullptr) {
    *error = !listen_tls_error_.empty()
                 ? listen_tls_error_
                 : "cannot listen on " + ports + " (address in use or not local?)";
    return false;
  }
  {
    // The master thread starts last in mg_start and installs the gate before its first poll.
    std::unique_lock lock(gate_mu_);
    gate_cv_.wait_for(lock, std::chrono::seconds(10), [this] { return gate_done_; });
    if (gate_ == nullptr) {
      // Still serving, as before the gate: idle connections then hold workers.
      LogWarn("accept gate not installed; idle connections occupy worker threads",
              {{"error", gate_error_}});
    }
  }
  mg_server_port server_ports[4]{};
  if (mg_get_server_ports(ctx_, 4, server_ports) > 0) port_ = server_ports[0].port;
  return true;
}

std::shared_ptr<const HttpServer::Active> HttpServer::MakeActive(const WebConfig& web,
                                                                 std::string* error) {
  auto next = std::make_shared<Active>();
  next->web = web;
  auto previous = active();
  next->auth =
      std::make_shared<BasicAuth>(web.users, previous != nullptr ? previous->auth.get() : nullptr);
  if (web.tls) {
    auto* ctx = static_cast<SSL_CTX*>(NewServerSslContext(*web.tls, error));
    if (ctx == nullptr) return nullptr;
    // Connections start on the context CivetWeb got when the listener started; this moves each
    // to the newest one before its handshake uses any setting (a reload in place).
    SSL_CTX_set_client_hello_cb(ctx, &HttpServer::ClientHello, this);
    next->ssl_ctx = std::shared_ptr<void>(ctx, &FreeSslContext);
  }
  return next;
}

int HttpServer::HttpError(mg_connection* conn, int status, const char* message) noexcept {
  // CivetWeb's own error pages (400 for a malformed request, 413, 505, ...) in the format and
  // with the headers of every other response.
  try {
    auto* server = static_cast<HttpServer*>(mg_get_user_data(mg_get_context(conn)));
    auto a = server->active();
    HeaderList headers = a != nullptr ? ConfiguredHeaders(a->web) : HeaderList{};
    std::string body = std::to_string(status) + " " +
                       (message != nullptr && *message != '\0' ? message : "Error") + "\n";
    return Send(conn, status, "text/plain; charset=utf-8", body, headers) ? 0 : 1;
  } catch (...) {
    return 1;  // CivetWeb's own page
  }
}

int HttpServer::ClientHello(SSL* ssl, int* /*alert*/, void* self) noexcept {
  try {
    auto a = static_cast<HttpServer*>(self)->active();
    if (a != nullptr && a->ssl_ctx != nullptr && a->web.tls)
      SwitchSslContext(ssl, a->ssl_ctx.get(), *a->web.tls);
    return SSL_CLIENT_HELLO_SUCCESS;
  } catch (...) {
    return SSL_CLIENT_HELLO_ERROR;
  }
}

int HttpServer::ExternalSslContext(void** ssl_ctx, void* self) noexcept {
  // Called with *ssl_ctx == nullptr when CivetWeb needs a context, and with the context when it
  // frees it (0 = CivetWeb frees it: it holds its own reference).
  if (*ssl_ctx != nullptr) return 0;
  auto* server = static_cast<HttpServer*>(self);
  auto a = server->active();
  if (a == nullptr || a->ssl_ctx == nullptr) return 0;
  SSL_CTX_up_ref(static_cast<SSL_CTX*>(a->ssl_ctx.get()));
  *ssl_ctx = a->ssl_ctx.get();
  return 1;
}

void* HttpServer::InitThread(const mg_context* ctx, int thread_type) noexcept {
  if (thread_type != 0) return nullptr;  // workers
  auto* server = static_cast<HttpServer*>(mg_get_user_data(ctx));
  std::unique_ptr<AcceptGate> gate;
  std::string error;
  try {
    mg_server_port ports[1]{};
    int listener = mg_get_server_ports(ctx, 1, ports) == 1
                       ? FindListeningSocket(static_cast<uint16_t>(ports[0].port))
                       : -1;
    if (listener < 0) {
      error = "listening socket not found in /proc/self/fd";
    } else {
      AcceptGateConfig config;
      config.tls = ports[0].is_ssl != 0;
      config.read_timeout = server->config_.read_timeout;
      config.max_pending = static_cast<size_t>(server->config_.max_pending_connections);
      config.max_pending_per_peer = std::max<size_t>(1, config.max_pending / 4);
      config.stats = server->gate_stats_.get();
      gate = AcceptGate::Install(listener, config, &error);
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::lock_guard lock(server->gate_mu_);
  server->gate_ = std::move(gate);
  server->gate_error_ = error;
  server->gate_done_ = true;
  server->gate_cv_.notify_all();
  return nullptr;
}

void HttpServer::Stop() {
  if (ctx_ != nullptr) {
    mg_stop(ctx_);  // closes CivetWeb's listener number (the gate's eventfd) first
    ctx_ = nullptr;
  }
  std::lock_guard lock(gate_mu_);
  gate_.reset();
}

bool HttpServer::Reload(std::string* error) {
  WebConfig web;
  bool ok = LoadWebConfig(config_.web_config_file, &web, error);
  if (ok && web.tls && !config_.tls_available) {
    *error = "TLS is configured but CivetWeb could not initialise OpenSSL";
    ok = false;
  }
  if (ok) {
    auto old = active();
    bool restart = old == nullptr || old->web.tls.has_value() != web.tls.has_value();
    if (!restart) {
      // Users, headers and TLS (certificates re-read from their files, client CAs, versions,
      // ciphers) change in the running listener: the port never closes. New connections use the
      // new context (ClientHello); established ones keep theirs.
      auto next = MakeActive(web, error);
      if (next == nullptr) {
        ok = false;
      } else {
        std::lock_guard lock(mu_);
        active_ = next;
      }
    } else {
      // Between HTTP and HTTPS CivetWeb needs a new listener (same port).
      Stop();
      if (!Listen(web, error)) {
        std::string ignored;
        if (old == nullptr || !Listen(old->web, &ignored)) listener_lost_ = true;
        ok = false;
      }
    }
  }
  last_reload_ok_ = ok;
  (ok ? reloads_ok_ : reloads_failed_)++;
  return ok;
}

void HttpServer::AddSelfMetrics(MetricSink& sink) const {
  sink.Gauge("rdma_exporter_web_config_last_reload_successful",
             "1 if the last reload of --web.config.file (SIGHUP) succeeded or none happened.", {},
             last_reload_ok_ ? 1 : 0);
  sink.Counter("rdma_exporter_web_config_reloads_total",
               "Reloads of --web.config.file on SIGHUP, by result; a failed one keeps the "
               "previous configuration.",
               {{"result", "success"}}, static_cast<double>(reloads_ok_.load()));
  sink.Counter("rdma_exporter_web_config_reloads_total", "", {{"result", "failure"}},
               static_cast<double>(reloads_failed_.load()));
  sink.Gauge("rdma_exporter_web_pending_connections",
             "Connections accepted whose request head has not arrived yet (they hold no worker).",
             {}, static_cast<double>(gate_stats_->pending.load()));
  sink.Counter("rdma_exporter_web_pending_connections_closed_total",
               "Connections closed before their request head arrived: at --web.read-timeout, or "
               "to stay within --web.max-pending-connections.",
               {{"reason", "read_timeout"}},
               static_cast<double>(gate_stats_->closed_timeout.load()));
  sink.Counter("rdma_exporter_web_pending_connections_closed_total", "", {{"reason", "limit"}},
               static_cast<double>(gate_stats_->closed_limit.load()));
}

int HttpServer::BeginRequest(mg_connection* conn) noexcept {
  auto* server = static_cast<HttpServer*>(mg_get_user_data(mg_get_context(conn)));
  std::string what = "unknown exception";
  try {
    return server->Route(conn);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  // A bug (or bad_alloc) in a handler: answer 500 and keep the server, instead of unwinding
  // through CivetWeb's C frames (std::terminate, or worse).
  try {
    LogError("request failed", {{"error", what}});
    Send(conn, 500, "text/plain; charset=utf-8", "Internal Server Error\n", {});
  } catch (...) {
  }
  return 500;
}

int HttpServer::Route(mg_connection* conn) {
  auto a = active();
  const mg_request_info* info = mg_get_request_info(conn);
  HeaderList headers = ConfiguredHeaders(a->web);
  // Only GET and HEAD, for every path (and before authentication, like a router would).
  if (std::strcmp(info->request_method, "GET") != 0 &&
      std::strcmp(info->request_method, "HEAD") != 0) {
    headers.emplace_back("Allow", "GET, HEAD");
    Send(conn, 405, "text/plain; charset=utf-8", "Method Not Allowed\n", headers);
    return 405;
  }
  if (a->auth->enabled() && !a->auth->Check(mg_get_header(conn, "Authorization"))) {
    headers.emplace_back("WWW-Authenticate", "Basic realm=\"rdma_exporter\"");
    Send(conn, 401, "text/plain; charset=utf-8", "Unauthorized\n", headers);
    return 401;
  }
  std::string_view path = info->local_uri != nullptr ? info->local_uri : "";
  if (config_.on_request_for_testing) config_.on_request_for_testing(path);
  if (path == config_.telemetry_path) return HandleMetrics(conn, *a);
  if (path == "/") return HandlePage(conn, *a);
  if (path == "/api/v1/status") return HandleStatus(conn, *a);
  if (path == "/node-page.js") {
    HeaderList script = PageHeaders(a->web);
    Send(conn, 200, "text/javascript; charset=utf-8", kNodePageScript, script);
    return 200;
  }
  if (path == "/-/healthy") {
    Send(conn, 200, "text/plain; charset=utf-8", "Healthy\n", headers);
    return 200;
  }
  if (path == "/-/ready") {
    if (poller_.Latest() == nullptr) {
      Send(conn, 503, "text/plain; charset=utf-8", "Not ready: first poll has not completed\n",
           headers);
      return 503;
    }
    Send(conn, 200, "text/plain; charset=utf-8", "Ready\n", headers);
    return 200;
  }
  // No files are served: everything else is 404 (never a directory listing).
  Send(conn, 404, "text/plain; charset=utf-8", "Not Found\n", headers);
  return 404;
}

int HttpServer::HandleMetrics(mg_connection* conn, const Active& active) {
  HeaderList headers = ConfiguredHeaders(active.web);
  std::shared_ptr<const Snapshot> snapshot =
      config_.collect_on_scrape ? poller_.Collect() : poller_.Latest();
  if (snapshot == nullptr) {
    Send(conn, 503, "text/plain; charset=utf-8", "first poll has not completed yet\n", headers);
    return 503;
  }
  if (AcceptsGzip(conn) && !snapshot->gzip().empty()) {
    Send(conn, 200, kTextContentType, snapshot->gzip(), headers, "gzip");
  } else {
    Send(conn, 200, kTextContentType, snapshot->text, headers);
  }
  return 200;
}

std::shared_ptr<const NodeHealth> HttpServer::Status() {
  auto [latest, previous] = poller_.LatestTwo();
  if (latest == nullptr) return nullptr;
  std::lock_guard lock(status_mu_);
  // Built once per snapshot (the families are parsed once per snapshot too); every request
  // then only ages it.
  if (status_ == nullptr || status_->sequence != latest->sequence) {
    NodeHealthInput in;
    in.inventory = latest->inventory.get();
    in.now = &latest->families();
    if (previous != nullptr) {
      in.before = &previous->families();
      in.before_timestamp = previous->timestamp_seconds;
    }
    in.now_timestamp = latest->timestamp_seconds;
    in.sequence = latest->sequence;
    in.wall_clock = WallClockSeconds();
    in.node = config_.node_name;
    in.nccl_ib_tc = config_.nccl_ib_tc;
    in.roce_min_mtu = config_.roce_min_mtu;
    status_ = std::make_shared<const NodeHealth>(BuildNodeHealth(in));
  }
  auto aged = std::make_shared<NodeHealth>(*status_);
  SetPollAge(*aged, WallClockSeconds(), MixinThresholds());
  return aged;
}

int HttpServer::HandlePage(mg_connection* conn, const Active& active) {
  auto status = Status();
  NodePageOptions options;
  options.telemetry_path = config_.telemetry_path;
  options.refresh_seconds = config_.page_refresh_seconds;
  Send(conn, 200, "text/html; charset=utf-8", RenderNodePage(status.get(), options),
       PageHeaders(active.web));
  return 200;
}

int HttpServer::HandleStatus(mg_connection* conn, const Active& active) {
  HeaderList headers = ConfiguredHeaders(active.web);
  headers.emplace_back("Cache-Control", "no-store");
  auto status = Status();
  if (status == nullptr) {
    Send(conn, 503, "application/json", "{\"error\":\"the first poll has not completed yet\"}\n",
         headers);
    return 503;
  }
  Send(conn, 200, "application/json", NodeHealthJson(*status), headers);
  return 200;
}

bool InitHttpLibrary(bool tls) {
  // Initialising TLS makes ~1.7 MB of OpenSSL resident (error strings, algorithm tables): only
  // when a web config file (which may ask for TLS, now or after a reload) is given.
  return (mg_init_library(tls ? MG_FEATURES_TLS : 0) & MG_FEATURES_TLS) != 0;
}

void ShutdownHttpLibrary() {
  mg_exit_library();
}

}  // namespace rdma_exporter
