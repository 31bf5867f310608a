// HTTP endpoints on CivetWeb: the telemetry path (gzip when asked), the node page (/, with
// /node-page.js) and its data as JSON (/api/v1/status), /-/healthy and /-/ready (ready once the
// first poll has completed); TLS, mTLS and basic auth from --web.config.file (reloaded on SIGHUP);
// connection limits and timeouts.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "rdma_exporter/node_status.h"
#include "rdma_exporter/poller.h"
#include "rdma_exporter/web_config.h"

struct mg_context;
struct mg_connection;

struct ssl_st;  // OpenSSL's SSL

namespace rdma_exporter {

class AcceptGate;
struct AcceptGateStats;

struct HttpConfig {
  std::string civetweb_ports;  // from ListenAddressToCivetweb
  std::string telemetry_path = "/metrics";
  bool collect_on_scrape = false;  // --poll-interval=0
  std::string web_config_file;     // --web.config.file; empty = plain HTTP, no auth
  // --web.max-connections: requests served at once (CivetWeb worker threads, all started at
  // once). Connections reach a worker only once their request head is complete (AcceptGate).
  int max_connections = 32;
  // --web.max-pending-connections: connections still sending their request head, all peers
  // (one peer address may hold a quarter). Beyond it the oldest pending ones are closed.
  int max_pending_connections = 4096;
  // --web.read-timeout: the whole request head must arrive within it (slowloris bound).
  std::chrono::milliseconds read_timeout{5000};
  // The node page: the host name it shows, the NCCL traffic class and RoCE MTU its checks use
  // (--nccl.ib-tc, --roce.min-mtu), and how often it refreshes (the poll interval).
  std::string node_name;
  std::optional<int> nccl_ib_tc;
  unsigned roce_min_mtu = 4200;
  int page_refresh_seconds = 10;
  // mg_init_library(MG_FEATURES_TLS) returned the TLS bit (the OpenSSL shims were found).
  bool tls_available = false;
  // Test seam: called with the path of every request before it is routed (unset = nothing).
  std::function<void(std::string_view path)> on_request_for_testing;
};

class HttpServer {
 public:
  HttpServer(HttpConfig config, Poller& poller);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Loads the web config and starts listening. Returns false (with *error) if the config is
  // invalid, TLS is configured but unavailable, or the address cannot be bound.
  bool Start(std::string* error);
  void Stop();
  // SIGHUP: re-reads the web config. A bad config keeps the old one (false, *error, counted).
  // Everything applies in the running listener, except a switch between HTTP and HTTPS, which
  // restarts it on the same port.
  bool Reload(std::string* error);
  // True once a reload between HTTP and HTTPS could neither start the new listener nor restore
  // the old one: nothing listens, the process should exit so that its supervisor restarts it.
  bool listener_lost() const { return listener_lost_; }
  int port() const { return port_; }
  bool tls() const;
  // rdma_exporter_web_config_* self metrics.
  void AddSelfMetrics(MetricSink& sink) const;

 private:
  struct Active {
    WebConfig web;
    std::shared_ptr<BasicAuth> auth;
    std::shared_ptr<void> ssl_ctx;  // SSL_CTX of web.tls, new connections switch to it
  };
  // nullptr and *error if the TLS context cannot be built.
  std::shared_ptr<const Active> MakeActive(const WebConfig& web, std::string* error);
  static int ClientHello(ssl_st* ssl, int* alert, void* self) noexcept;
  bool Listen(const WebConfig& web, std::string* error);
  std::shared_ptr<const Active> active() const;
  // CivetWeb's C callbacks: exception barriers (noexcept, every exception becomes an error
  // return), so nothing unwinds through CivetWeb's C frames.
  static int BeginRequest(mg_connection* conn) noexcept;
  static int HttpError(mg_connection* conn, int status, const char* message) noexcept;
  static int ExternalSslContext(void** ssl_ctx, void* self) noexcept;
  // On CivetWeb's master thread before it polls: puts the AcceptGate in front of the listener.
  static void* InitThread(const mg_context* ctx, int thread_type) noexcept;
  int Route(mg_connection* conn);
  int HandleMetrics(mg_connection* conn, const Active& active);
  int HandlePage(mg_connection* conn, const Active& active);
  int HandleStatus(mg_connection* conn, const Active& active);
  // The node's status for the latest snapshot (nullptr before the first poll), aged to now.
  std::shared_ptr<const NodeHealth> Status();

  HttpConfig config_;
  Poller& poller_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
  mutable std::mutex mu_;
  std::shared_ptr<const Active> active_;
  std::string listen_tls_error_;  // set by ExternalSslContext while starting
  // Set by InitThread on the master thread; Listen waits for gate_done_.
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  bool gate_done_ = false;
  std::string gate_error_;
  std::unique_ptr<AcceptGate> gate_;
  std::unique_ptr<AcceptGateStats> gate_stats_;  // across gates (reloads)
  std::atomic<uint64_t> reloads_ok_{0}, reloads_failed_{0};
  std::atomic<bool> last_reload_ok_{true};
  std::atomic<bool> listener_lost_{false};
  std::mutex status_mu_;
  std::shared_ptr<const NodeHealth> status_;  // of the latest snapshot it was asked for
};

// Initialises CivetWeb once per process, before the first HttpServer; with `tls` its OpenSSL
// too. Returns whether TLS is available: CivetWeb reports it only when asked for it and it found
// every OpenSSL function it needs (through the shims in exporter/http/tls_shim); without it TLS
// is refused rather than crashing later.
bool InitHttpLibrary(bool tls);
// Releases what InitHttpLibrary set up, after the last HttpServer stopped.
void ShutdownHttpLibrary();

}  // namespace rdma_exporter
