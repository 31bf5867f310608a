// LLDP readers: an AF_PACKET listener on a thread of its own (kernel) and a fixture reader.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "rdma_exporter/file_util.h"
#include "rdma_exporter/lldp.h"
#include "rdma_exporter/logging.h"
#include "rdma_exporter/parse.h"
#include "rdma_exporter/unique_fd.h"

namespace rdma_exporter {
namespace {

using Clock = std::chrono::steady_clock;

// The nearest-bridge group: switches send their LLDP frames to it, and a NIC passes it only
// when asked (PACKET_ADD_MEMBERSHIP per interface).
constexpr uint8_t kLldpMulticast[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};

// One socket for every netdev (ETH_P_LLDP: the kernel hands over nothing else), read on a
// thread so a poll never waits for a frame. Neighbours are kept by ifindex until their TTL.
class SocketReader : public LldpReader {
 public:
  ~SocketReader() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  int Neighbor(const std::string& netdev, LldpNeighbor* out) override {
    int err = Start();
    if (err != 0) return err;
    unsigned ifindex = if_nametoindex(netdev.c_str());
    if (ifindex == 0) return ENODEV;
    Join(ifindex);
    std::lock_guard lock(mu_);
    auto it = neighbors_.find(ifindex);
    if (it == neighbors_.end() || Clock::now() > it->second.expires) return ENOENT;
    *out = it->second.neighbor;
    return 0;
  }
  uint64_t frames() const override { return frames_; }
  uint64_t malformed_frames() const override { return malformed_; }

 private:
  struct Heard {
    LldpNeighbor neighbor;
    Clock::time_point expires;
  };

  // Opens the socket and starts the listener once; the error of that attempt is kept (a
  // missing CAP_NET_RAW does not come back by retrying every poll).
  int Start() {
    std::lock_guard lock(start_mu_);
    if (started_) return start_error_;
    started_ = true;
    fd_.reset(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(kEthertypeLldp)));
    if (!fd_.valid()) {
      start_error_ = errno;
      return start_error_;
    }
    thread_ = std::thread([this] { Listen(); });
    return 0;
  }

  void Join(unsigned ifindex) {
    std::lock_guard lock(start_mu_);
    if (!joined_.insert(ifindex).second) return;
    packet_mreq mreq{};
    mreq.mr_ifindex = static_cast<int>(ifindex);
    mreq.mr_type = PACKET_MR_MULTICAST;
    mreq.mr_alen = 6;
    std::copy(std::begin(kLldpMulticast), std::end(kLldpMulticast), mreq.mr_address);
    if (setsockopt(fd_.get(), SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) != 0) {
      LogWarn("LLDP: cannot join the LLDP multicast group; frames may be filtered by the NIC",
              {{"ifindex", std::to_string(ifindex)}, {"error", std::strerror(errno)}});
    }
  }

  void Listen() {
    std::vector<uint8_t> buf(9216);  // a jumbo frame; LLDPDUs are far smaller
    while (!stop_) {
      pollfd p{fd_.get(), POLLIN, 0};
      int ready = poll(&p, 1, 200);  // wakes for stop_ within 200 ms
      if (ready <= 0) continue;
      sockaddr_ll from{};
      socklen_t len = sizeof(from);
      ssize_t n = recvfrom(fd_.get(), buf.data(), buf.size(), MSG_DONTWAIT,
                           reinterpret_cast<sockaddr*>(&from), &len);
      if (n <= 0) continue;
      // Our own frames (an lldpd on this node sending) are not the neighbour.
      if (from.sll_pkttype == PACKET_OUTGOING) continue;
      ++frames_;
      std::string error;
      auto neighbor = ParseLldpFrame(std::span(buf.data(), static_cast<size_t>(n)), &error);
      if (!neighbor) {
        ++malformed_;
        continue;
      }
      std::lock_guard lock(mu_);
      // TTL 0 is the neighbour saying goodbye (802.1AB 9.2.5.5): forget it now.
      if (neighbor->ttl_seconds == 0) {
        neighbors_.erase(static_cast<unsigned>(from.sll_ifindex));
        continue;
      }
      auto expires = Clock::now() + std::chrono::seconds(neighbor->ttl_seconds);
      neighbors_[static_cast<unsigned>(from.sll_ifindex)] = {std::move(*neighbor), expires};
    }
  }

  std::mutex start_mu_;
  bool started_ = false;
  int start_error_ = 0;
  std::set<unsigned> joined_;
  UniqueFd fd_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> frames_{0}, malformed_{0};
  std::mutex mu_;
  std::map<unsigned, Heard> neighbors_;
};

class FixtureReader : public LldpReader {
 public:
  explicit FixtureReader(std::string dir) : dir_(std::move(dir)) {}
  int Neighbor(const std::string& netdev, LldpNeighbor* out) override {
    std::string text;
    if (netdev.empty() || netdev.find('/') != std::string::npos || netdev[0] == '.') {
      return ENODEV;
    }
    int err = ReadWholeFile(dir_ + "/lldp/" + netdev, &text);
    if (err != 0) return err == ENOENT ? ENOENT : err;
    std::vector<uint8_t> frame = ParseHexBytes(text);
    // A file written anew is a frame received; reading the same file again is not (as on a
    // socket, where the count grows with the switch's sends, not with our polls).
    const bool received = last_[netdev] != text;
    if (received) {
      last_[netdev] = text;
      ++frames_;
    }
    std::string error;
    auto neighbor = ParseLldpFrame(frame, &error);
    if (!neighbor) {
      if (received) ++malformed_;
      return EINVAL;
    }
    if (neighbor->ttl_seconds == 0) return ENOENT;
    *out = std::move(*neighbor);
    return 0;
  }
  uint64_t frames() const override { return frames_; }
  uint64_t malformed_frames() const override { return malformed_; }

 private:
  std::string dir_;
  std::map<std::string, std::string>
      last_;  // netdev -> the file's text last read (the poller's thread)
  std::atomic<uint64_t> frames_{0}, malformed_{0};
};

}  // namespace

std::unique_ptr<LldpReader> MakeLldpSocketReader() {
  return std::make_unique<SocketReader>();
}

std::unique_ptr<LldpReader> MakeLldpFixtureReader(std::string fixtures_dir) {
  return std::make_unique<FixtureReader>(std::move(fixtures_dir));
}

}  // namespace rdma_exporter
