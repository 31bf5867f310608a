// Accept-side gate in front of CivetWeb (private to the http layer).
//
// Why it exists: CivetWeb hands every accepted connection to a worker thread, and a worker stays
// with its connection until the request head has arrived (or the read timeout). With a small
// worker pool, a few idle or slowloris clients would starve a scraper; with a large pool (the old
// default, 1024) every idle exporter paid ~15 MB for threads. Debian 12's CivetWeb 1.15 has no
// accept hook and no lazy thread start, so the gate works around it:
//  - CivetWeb's listening descriptor number is replaced (dup3) by an eventfd; the real listener
//    moves to a new descriptor watched by the gate thread.
//  - The gate thread accepts, and keeps each connection pending until its request head is
//    complete (HTTP: an empty line, malformed bytes or max_head bytes; TLS: the first record),
//    closing it at the read timeout. Only then it is queued and the eventfd made readable.
//  - CivetWeb's master thread wakes on the eventfd and calls accept(), which this component
//    defines (symbol interposition: the executable's definition wins over libc's), returning a
//    queued connection. accept() on any other descriptor is the real one.
// Pending connections are bounded: per peer address, and in total; beyond a bound the oldest
// pending connection (of that peer, or of the peer with most pending) is closed, so new clients
// (a scraper) always get in.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace rdma_exporter {

// Counters that outlive a gate (a reload replaces it), for the exporter's self metrics.
struct AcceptGateStats {
  std::atomic<int64_t> pending{0};          // waiting for their head now
  std::atomic<uint64_t> closed_timeout{0};  // closed at the read timeout
  std::atomic<uint64_t> closed_limit{0};    // closed by the per-peer or total bound
};

struct AcceptGateConfig {
  bool tls = false;  // wait for the first TLS record instead of an HTTP head
  std::chrono::milliseconds read_timeout{5000};
  size_t max_pending = 4096;           // pending plus queued connections, all peers
  size_t max_pending_per_peer = 1024;  // pending connections of one peer address
  size_t max_head = 16384;             // CivetWeb's max_request_size
  AcceptGateStats* stats = nullptr;    // optional; must outlive the gate
};

class AcceptGate {
 public:
  // Takes over listener (a listening socket CivetWeb polls) and starts the gate thread. Call on
  // CivetWeb's master thread before it polls (init_thread), so the swap cannot race its poll.
  // nullptr and *error when it cannot (the listener is then untouched).
  static std::unique_ptr<AcceptGate> Install(int listener, const AcceptGateConfig& config,
                                             std::string* error);
  // Stop() first. CivetWeb must have been stopped (mg_stop closes its listener number).
  ~AcceptGate();
  AcceptGate(const AcceptGate&) = delete;
  AcceptGate& operator=(const AcceptGate&) = delete;

  // Stops the thread and closes the real listener and every pending or queued connection.
  void Stop();

  // For our accept(): the next queued connection (its peer address in addr/len), or -1 with
  // errno EAGAIN when none is queued.
  int PopReady(sockaddr* addr, socklen_t* len);

 private:
  struct Conn {
    int fd = -1;
    sockaddr_storage addr{};
    socklen_t addr_len = 0;
  };
  struct Pending {
    Conn conn;
    std::string peer;  // address bytes, without the port
    std::chrono::steady_clock::time_point deadline;
  };

  explicit AcceptGate(const AcceptGateConfig& config);
  void Run();
  void AcceptAll();
  void Admit(const Conn& conn);
  void OnReadable(uint64_t id);
  bool HeadComplete(const unsigned char* data, size_t size) const;
  void HandOver(uint64_t id);
  enum class Why { kOther, kTimeout, kLimit };
  void Close(uint64_t id, Why why = Why::kOther);
  void CloseOldestOf(const std::string& peer);
  size_t ReadyCount();

  const AcceptGateConfig config_;
  int listener_ = -1;     // the real listening socket
  int ready_event_ = -1;  // readable while ready_ is not empty
  int stop_event_ = -1;
  int epoll_ = -1;
  std::thread thread_;

  // Gate thread only.
  uint64_t next_id_ = 2;                 // 0 = listener, 1 = stop
  std::map<uint64_t, Pending> pending_;  // by id = accept order = deadline order
  std::map<std::string, std::set<uint64_t>> peers_;
  bool listener_paused_ = false;  // out of descriptors: retry after a pause
  std::chrono::steady_clock::time_point resume_at_;

  std::mutex mu_;  // ready_ (gate thread pushes, CivetWeb's master pops)
  std::deque<Conn> ready_;
};

// The descriptor of this process's listening TCP socket bound to port (from /proc/self/fd), -1
// if none. CivetWeb keeps its listener numbers private; the port is public (mg_get_server_ports).
int FindListeningSocket(uint16_t port);

}  // namespace rdma_exporter
