// rdma_exporter: Prometheus exporter for RDMA devices.
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <thread>

#include "flags.h"
#include "rdma_exporter/cli.h"
#include "rdma_exporter/host.h"
#include "rdma_exporter/http_server.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/poller.h"
#include "rdma_exporter/version.h"

using namespace rdma_exporter;

namespace {

// Counter files stay open between polls (one pread per value); a 256-port node needs more
// descriptors than the usual soft limit of 1024, so take what the hard limit allows.
void RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// glibc gives each allocating thread its own arena (up to 8 per core), each keeping its freed
// memory. The exporter allocates on the poller thread (a snapshot per poll) and on CivetWeb's
// workers (request buffers); two arenas are plenty and keep RSS close to what is live.
void TuneAllocator() {
  mallopt(M_ARENA_MAX, 2);
}

PollerConfig MakePollerConfig(const Options& options) {
  PollerConfig config;
  auto enabled = [&options](const CollectorFactory& factory) {
    auto it = options.collector_overrides.find(std::string(factory.name));
    return it != options.collector_overrides.end() ? it->second : factory.enabled_by_default;
  };
  CollectorOptions collector_options = options.collector_options;
  for (const auto& factory : CollectorRegistry()) {
    if (factory.name == "ib_peer") collector_options.pma_xmit_wait = enabled(factory);
  }
  for (const auto& factory : CollectorRegistry()) {
    if (enabled(factory)) config.collectors.push_back(factory.create(collector_options));
  }
  if (!options.device_include.empty()) config.filter.include.emplace(options.device_include);
  if (!options.device_exclude.empty()) config.filter.exclude.emplace(options.device_exclude);
  config.slow_interval = options.slow_poll_interval;
  std::string fixtures = options.fixtures_dir;
  config.make_kernel_readers = [fixtures](SysfsReader& sysfs) {
    return MakeKernelReaders(fixtures, sysfs);
  };
  return config;
}

// The termination signals and SIGHUP are blocked in every thread (threads started later inherit
// the mask); the main thread waits for them with sigwait.
sigset_t BlockSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // reloads --web.config.file
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return signals;
}

// Call after the poller is built: InitHttpLibrary starts the TLS library.
HttpConfig MakeHttpConfig(const Options& options) {
  HttpConfig http;
  std::string error;  // the address was validated with the flags
  ListenAddressToCivetweb(options.listen_address, &http.civetweb_ports, &error);
  http.telemetry_path = options.telemetry_path;
  http.collect_on_scrape = options.poll_interval.count() == 0;
  http.web_config_file = options.web_config_file;
  http.max_connections = options.web_max_connections;
  http.max_pending_connections = options.web_max_pending_connections;
  http.read_timeout = options.web_read_timeout;
  http.node_name = HostName();
  http.nccl_ib_tc = options.collector_options.nccl_ib_tc;
  http.roce_min_mtu = options.collector_options.roce_min_mtu;
  // A refresh sooner than the next poll would show the same snapshot (with --poll-interval=0
  // the snapshot changes only when Prometheus scrapes).
  auto interval = std::chrono::duration_cast<std::chrono::seconds>(options.poll_interval).count();
  http.page_refresh_seconds =
      options.poll_interval.count() == 0 ? 10 : static_cast<int>(std::max<int64_t>(interval, 1));
  // TLS can only be asked for by a web config file (at start or on a reload).
  http.tls_available = InitHttpLibrary(!options.web_config_file.empty());
  return http;
}

// Polls on its own thread: once, then every interval until Stop. With --poll-interval=0 only
// the first poll runs here (for readiness); scrapes collect.
class PollLoop {
 public:
  PollLoop(Poller& poller, std::chrono::milliseconds interval)
      : thread_([this, &poller, interval] { Run(poller, interval); }) {}
  // Waits for the poll under way, if any.
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void Run(Poller& poller, std::chrono::milliseconds interval) {
    std::unique_lock lock(mu_);
    do {
      lock.unlock();
      auto snapshot = poller.Collect();
      if (snapshot->sequence == 1) LogInfo("first poll completed; ready");
      lock.lock();
    } while (interval.count() > 0 && !cv_.wait_for(lock, interval, [&] { return stopping_; }));
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members it uses exist
};

// Serves until SIGINT or SIGTERM (returned); SIGHUP reloads the web config. Returns 0 when a
// reload lost the listener.
int WaitForTermination(const sigset_t& signals, HttpServer& server, const Options& options) {
  int sig = 0;
  std::string error;
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
    if (server.Reload(&error)) {
      LogInfo("reloaded web config", {{"file", options.web_config_file}});
    } else if (server.listener_lost()) {
      // Alive but not listening would look healthy to a supervisor that only watches the process.
      LogError("web config reload lost the listener; exiting so that the supervisor restarts",
               {{"error", error}});
      return 0;
    } else {
      LogError("web config reload failed; keeping the previous one", {{"error", error}});
    }
  }
  return sig;
}

// The exporter: polls and serves until terminated. Returns the exit code.
int Serve(const Options& options) {
  ConfigureLogging(options.log_level, options.log_format);
  RaiseFileLimit();
  TuneAllocator();
  sigset_t signals = BlockSignals();

  // An unusable web config is a start-up error like a bad flag (a reload keeps the old one).
  std::string error;
  if (WebConfig web; !LoadWebConfig(options.web_config_file, &web, &error)) {
    std::fprintf(stderr, "rdma_exporter: --web.config.file: %s\n", error.c_str());
    return 2;
  }
  std::atomic<HttpServer*> web_server{nullptr};
  PollerConfig poller_config = MakePollerConfig(options);
  poller_config.self_metrics = [&web_server](MetricSink& sink) {
    if (HttpServer* s = web_server.load()) s->AddSelfMetrics(sink);
  };
  Poller poller(std::make_unique<SysfsReader>(options.sysfs_root), std::move(poller_config));
  HttpServer server(MakeHttpConfig(options), poller);
  if (!server.Start(&error)) {
    LogError("cannot start HTTP server", {{"error", error}});
    return 1;
  }
  web_server = &server;
  LogInfo("listening", {{"address", options.listen_address},
                        {"port", std::to_string(server.port())},
                        {"sysfs", options.sysfs_root},
                        {"tls", server.tls() ? "true" : "false"},
                        {"version", kVersion}});

  PollLoop poll_loop(poller, options.poll_interval);
  int sig = WaitForTermination(signals, server, options);
  if (sig != 0) LogInfo("shutting down", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
  poll_loop.Stop();
  web_server = nullptr;
  server.Stop();
  ShutdownHttpLibrary();
  return sig == 0 ? 1 : 0;  // 0: the listener was lost
}

}  // namespace

int main(int argc, char** argv) {
  // Operator subcommands (show-gids, show-counters, ibdev2netdev, doctor) run and exit.
  if (argc > 1 && IsCliCommand(argv[1])) {
    return RunCli(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
  }
  Options options;
  std::string error;
  if (!ParseFlags(std::vector<std::string>(argv + 1, argv + argc), &options, &error)) {
    std::fprintf(stderr, "rdma_exporter: %s\n", error.c_str());
    return 2;
  }
  if (options.show_help) {
    std::cout << UsageText();
    return 0;
  }
  if (options.show_help_markdown) {
    std::cout << FlagsMarkdown();
    return 0;
  }
  if (options.show_version) {
    std::cout << "rdma_exporter, version " << kVersion << " (revision: " << kRevision << ")\n"
              << "  compiler: " << kCompiler << "\n";
    return 0;
  }
  return Serve(options);
}
