// HTTP endpoints on CivetWeb: the telemetry path (gzip when asked), the landing page,
// /-/healthy and /-/ready (ready once the first poll has completed).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "poller.h"

struct mg_context;
struct mg_connection;

namespace rdma_exporter {

struct HttpConfig {
  std::string civetweb_ports;  // from ListenAddressToCivetweb
  std::string telemetry_path = "/metrics";
  bool collect_on_scrape = false;  // --poll-interval=0
};

class HttpServer {
 public:
  HttpServer(HttpConfig config, Poller& poller);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Starts listening. Returns false (with *error) if the address cannot be bound.
  bool Start(std::string* error);
  void Stop();
  int port() const { return port_; }

 private:
  static int HandleMetrics(mg_connection* conn, void* self);
  static int HandleLanding(mg_connection* conn, void* self);
  static int HandleHealthy(mg_connection* conn, void* self);
  static int HandleReady(mg_connection* conn, void* self);

  HttpConfig config_;
  Poller& poller_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
};

// The landing page for a snapshot (nullptr before the first poll).
std::string RenderLandingPage(const Snapshot* snapshot, const std::string& telemetry_path);

}  // namespace rdma_exporter
