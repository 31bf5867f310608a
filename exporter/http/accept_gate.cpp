#include "accept_gate.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace rdma_exporter {
namespace {

constexpr uint64_t kListenerId = 0;
constexpr uint64_t kStopId = 1;
// Out of descriptors with nothing pending to close: stop accepting for this long.
constexpr auto kPauseOnEmfile = std::chrono::milliseconds(100);

// Gates by CivetWeb listener number, for our accept(). A fixed table: accept() may run before
// and after static construction and destruction.
struct Registry {
  std::mutex mu;
  std::array<std::pair<int, AcceptGate*>, 8> gates{};
};
constinit Registry registry;

bool Register(int number, AcceptGate* gate) {
  std::lock_guard lock(registry.mu);
  for (auto& [fd, g] : registry.gates) {
    if (g == nullptr) {
      fd = number;
      g = gate;
      return true;
    }
  }
  return false;
}

void Unregister(AcceptGate* gate) {
  std::lock_guard lock(registry.mu);
  for (auto& [fd, g] : registry.gates) {
    if (g == gate) {
      fd = -1;
      g = nullptr;
    }
  }
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

int FindListeningSocket(uint16_t port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    int listening = 0;
    socklen_t len = sizeof(listening);
    if (getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 ||
        listening == 0) {
      continue;
    }
    sockaddr_storage addr{};
    len = sizeof(addr);
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    uint16_t bound = 0;
    if (addr.ss_family == AF_INET) bound = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) {
      bound = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    }
    if (bound == port) {
      found = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
  return found;
}

AcceptGate::AcceptGate(const AcceptGateConfig& config) : config_(config) {}

std::unique_ptr<AcceptGate> AcceptGate::Install(int listener, const AcceptGateConfig& config,
                                                std::string* error) {
  std::unique_ptr<AcceptGate> gate(new AcceptGate(config));
  gate->listener_ = fcntl(listener, F_DUPFD_CLOEXEC, 0);
  gate->ready_event_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  gate->stop_event_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  gate->epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (gate->listener_ < 0 || gate->ready_event_ < 0 || gate->stop_event_ < 0 || gate->epoll_ < 0) {
    *error = std::string("accept gate: ") + std::strerror(errno);
    return nullptr;  // the destructor closes what was opened
  }
  // The gate accepts without blocking (the flag is on the socket, which CivetWeb no longer uses).
  fcntl(gate->listener_, F_SETFL, fcntl(gate->listener_, F_GETFL) | O_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenerId;
  epoll_ctl(gate->epoll_, EPOLL_CTL_ADD, gate->listener_, &ev);
  ev.data.u64 = kStopId;
  epoll_ctl(gate->epoll_, EPOLL_CTL_ADD, gate->stop_event_, &ev);
  if (!Register(listener, gate.get())) {
    *error = "accept gate: too many listeners";
    return nullptr;
  }
  // From here CivetWeb polls the eventfd under its listener number (same file as ready_event_).
  if (dup3(gate->ready_event_, listener, O_CLOEXEC) < 0) {
    *error = std::string("accept gate: dup3: ") + std::strerror(errno);
    Unregister(gate.get());
    return nullptr;
  }
  gate->thread_ = std::thread([g = gate.get()] { g->Run(); });
  return gate;
}

AcceptGate::~AcceptGate() {
  Stop();
}

void AcceptGate::Stop() {
  Unregister(this);  // accept() on the old number is no longer ours
  if (thread_.joinable()) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(stop_event_, &one, sizeof(one));
    thread_.join();
  }
  for (auto& [id, p] : pending_)
    CloseFd(p.conn.fd);
  pending_.clear();
  peers_.clear();
  if (config_.stats != nullptr) config_.stats->pending = 0;
  {
    std::lock_guard lock(mu_);
    for (auto& c : ready_)
      CloseFd(c.fd);
    ready_.clear();
  }
  CloseFd(listener_);
  CloseFd(epoll_);
  CloseFd(ready_event_);
  CloseFd(stop_event_);
}

int AcceptGate::PopReady(sockaddr* addr, socklen_t* len) {
  std::lock_guard lock(mu_);
  if (ready_.empty()) {
    errno = EAGAIN;
    return -1;
  }
  Conn c = ready_.front();
  ready_.pop_front();
  if (ready_.empty()) {
    // Reset the eventfd so CivetWeb's poll sleeps again (counter read and zeroed).
    uint64_t count = 0;
    [[maybe_unused]] ssize_t n = read(ready_event_, &count, sizeof(count));
  }
  if (addr != nullptr && len != nullptr) {
    std::memcpy(addr, &c.addr, std::min<size_t>(*len, c.addr_len));
    *len = c.addr_len;
  }
  return c.fd;
}

size_t AcceptGate::ReadyCount() {
  std::lock_guard lock(mu_);
  return ready_.size();
}

void AcceptGate::Run() {
  std::array<epoll_event, 64> events{};
  while (true) {
    auto now = std::chrono::steady_clock::now();
    int timeout = -1;
    if (!pending_.empty()) {
      auto wait =
          std::chrono::ceil<std::chrono::milliseconds>(pending_.begin()->second.deadline - now);
      timeout = static_cast<int>(std::max<int64_t>(0, wait.count()));
    }
    if (listener_paused_) {
      auto wait = std::chrono::ceil<std::chrono::milliseconds>(resume_at_ - now);
      int ms = static_cast<int>(std::max<int64_t>(0, wait.count()));
      timeout = timeout < 0 ? ms : std::min(timeout, ms);
    }
    int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeout);
    for (int i = 0; i < n; ++i) {
      uint64_t id = events[static_cast<size_t>(i)].data.u64;
      if (id == kStopId) return;
      if (id == kListenerId) {
        AcceptAll();
      } else {
        OnReadable(id);
      }
    }
    now = std::chrono::steady_clock::now();
    // Same timeout for all: the oldest expire first.
    while (!pending_.empty() && pending_.begin()->second.deadline <= now)
      Close(pending_.begin()->first, Why::kTimeout);
    if (config_.stats != nullptr) config_.stats->pending = static_cast<int64_t>(pending_.size());
    if (listener_paused_ && now >= resume_at_) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = kListenerId;
      epoll_ctl(epoll_, EPOLL_CTL_MOD, listener_, &ev);
      listener_paused_ = false;
    }
  }
}

void AcceptGate::AcceptAll() {
  // A bounded batch per wakeup, so pending clients are not starved by a connect flood.
  for (int i = 0; i < 256; ++i) {
    Conn c;
    c.addr_len = sizeof(c.addr);
    c.fd = accept4(listener_, reinterpret_cast<sockaddr*>(&c.addr), &c.addr_len,
                   SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c.fd >= 0) {
      Admit(c);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) &&
        !listener_paused_) {
      // Out of descriptors: make room from the oldest pending client, or wait a little (the
      // listener is level-triggered and would spin).
      if (!pending_.empty()) {
        Close(pending_.begin()->first, Why::kLimit);
        continue;
      }
      epoll_event ev{};
      ev.data.u64 = kListenerId;
      epoll_ctl(epoll_, EPOLL_CTL_MOD, listener_, &ev);
      listener_paused_ = true;
      resume_at_ = std::chrono::steady_clock::now() + kPauseOnEmfile;
    }
    return;
  }
}

void AcceptGate::Admit(const Conn& conn) {
  std::string peer;
  if (conn.addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&conn.addr);
    peer.assign(reinterpret_cast<const char*>(&a->sin_addr), sizeof(a->sin_addr));
  } else if (conn.addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&conn.addr);
    peer.assign(reinterpret_cast<const char*>(&a->sin6_addr), sizeof(a->sin6_addr));
  }
  auto it = peers_.find(peer);
  if (it != peers_.end() && it->second.size() >= config_.max_pending_per_peer) {
    CloseOldestOf(peer);
  } else if (pending_.size() + ReadyCount() >= config_.max_pending) {
    // Make room at the expense of the peer holding most.
    const std::string* most = nullptr;
    size_t count = 0;
    for (const auto& [p, ids] : peers_) {
      if (ids.size() > count) {
        most = &p;
        count = ids.size();
      }
    }
    if (most == nullptr) {  // all queued for CivetWeb: nothing to evict
      close(conn.fd);
      if (config_.stats != nullptr) ++config_.stats->closed_limit;
      return;
    }
    CloseOldestOf(*most);
  }
  uint64_t id = next_id_++;
  // Edge-triggered: each arrival of bytes wakes us once; the bytes stay (peeked) for CivetWeb.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.u64 = id;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, conn.fd, &ev) != 0) {
    close(conn.fd);
    return;
  }
  pending_[id] = Pending{conn, peer, std::chrono::steady_clock::now() + config_.read_timeout};
  peers_[peer].insert(id);
}

void AcceptGate::CloseOldestOf(const std::string& peer) {
  auto it = peers_.find(peer);
  if (it != peers_.end() && !it->second.empty()) Close(*it->second.begin(), Why::kLimit);
}

bool AcceptGate::HeadComplete(const unsigned char* data, size_t size) const {
  if (config_.tls) {
    // Not a TLS handshake record: CivetWeb's handshake fails at once.
    if (size >= 1 && data[0] != 0x16) return true;
    if (size < 5) return false;
    size_t record = 5 + ((static_cast<size_t>(data[3]) << 8) | data[4]);
    return size >= record;
  }
  // As CivetWeb's get_http_header_len: a malformed byte (it answers 400) or the empty line.
  for (size_t i = 0; i < size; ++i) {
    unsigned char c = data[i];
    if (c < 128 && c != '\r' && c != '\n' && std::isprint(c) == 0) return true;
    if (c == '\n' && i + 1 < size && data[i + 1] == '\n') return true;
    if (c == '\r' && i + 3 < size && data[i + 1] == '\n' && data[i + 2] == '\r' &&
        data[i + 3] == '\n') {
      return true;
    }
  }
  return false;
}

void AcceptGate::OnReadable(uint64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // closed earlier in this batch
  // One buffer for all: the gate is single-threaded. A ClientHello record may be 16 KiB + 5.
  static thread_local std::vector<unsigned char> buffer(16384 + 5);
  size_t want = config_.tls ? std::max<size_t>(config_.max_head, 16384 + 5) : config_.max_head;
  if (buffer.size() < want) buffer.resize(want);
  ssize_t n = recv(it->second.conn.fd, buffer.data(), want, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {
    Close(id);  // closed by the client before sending a head, or reset
    return;
  }
  auto size = static_cast<size_t>(n);
  // A full buffer without an end: CivetWeb refuses it (413) rather than the gate hanging on.
  if (size >= want || HeadComplete(buffer.data(), size)) HandOver(id);
}

void AcceptGate::HandOver(uint64_t id) {
  auto it = pending_.find(id);
  Conn conn = it->second.conn;
  epoll_ctl(epoll_, EPOLL_CTL_DEL, conn.fd, nullptr);
  auto peer = peers_.find(it->second.peer);
  peer->second.erase(id);
  if (peer->second.empty()) peers_.erase(peer);
  pending_.erase(it);
  std::lock_guard lock(mu_);
  ready_.push_back(conn);
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(ready_event_, &one, sizeof(one));
}

void AcceptGate::Close(uint64_t id, Why why) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  if (config_.stats != nullptr && why == Why::kTimeout) ++config_.stats->closed_timeout;
  if (config_.stats != nullptr && why == Why::kLimit) ++config_.stats->closed_limit;
  close(it->second.conn.fd);  // also leaves the epoll set
  auto peer = peers_.find(it->second.peer);
  peer->second.erase(id);
  if (peer->second.empty()) peers_.erase(peer);
  pending_.erase(it);
}

}  // namespace rdma_exporter

// CivetWeb's master thread calls accept() on its listener number when the eventfd there is
// readable: hand it a queued connection. Any other descriptor: the real accept (accept4 with no
// flags is the same call; glibc's accept is not reachable by name from here).
extern "C" int accept(int fd, sockaddr* addr, socklen_t* len) {
  {
    std::lock_guard lock(rdma_exporter::registry.mu);
    for (auto& [number, gate] : rdma_exporter::registry.gates) {
      if (gate != nullptr && number == fd) return gate->PopReady(addr, len);
    }
  }
  return accept4(fd, addr, len, 0);
}
