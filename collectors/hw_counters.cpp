#include "hw_counters.h"

#include <algorithm>
#include <array>
#include <cerrno>

#include "common.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

struct HwCounterDoc {
  std::string_view name;
  const char* help;
};

// Meanings from the kernel commits that added the counters (reference §2).
constexpr std::array kHwCounterDocs = {
    // mlx5 basic q counters
    HwCounterDoc{"rx_write_requests", "RDMA WRITE requests received (mlx5)."},
    HwCounterDoc{"rx_read_requests", "RDMA READ requests received (mlx5)."},
    HwCounterDoc{"rx_atomic_requests", "Atomic requests received (mlx5)."},
    HwCounterDoc{"rx_dct_connect", "DCT connect requests received (mlx5)."},
    HwCounterDoc{"out_of_buffer",
                 "Packets dropped because no receive WQE was posted (receiver not keeping up)."},
    HwCounterDoc{"out_of_sequence", "Packets received with a PSN sequence error."},
    HwCounterDoc{"duplicate_request", "Duplicate requests received (the requester retried)."},
    HwCounterDoc{"rnr_nak_retry_err",
                 "RNR NAKs received (receiver not ready), retry not exceeded."},
    HwCounterDoc{"packet_seq_err", "NAK-sequence-error packets received (lost packets)."},
    HwCounterDoc{"implied_nak_seq_err",
                 "Implied NAK sequence errors: an ACK or read response with a higher PSN than "
                 "expected."},
    HwCounterDoc{"local_ack_timeout_err",
                 "ACK timer expirations on the requester (transport retries; NCCL_IB_TIMEOUT)."},
    HwCounterDoc{"resp_local_length_error", "Responder local length errors."},
    HwCounterDoc{"resp_cqe_error", "Responder completions with error."},
    HwCounterDoc{"req_cqe_error", "Requester completions with error."},
    HwCounterDoc{"req_remote_invalid_request", "Requester remote invalid request errors."},
    HwCounterDoc{"req_remote_access_errors", "Requester remote access errors."},
    HwCounterDoc{"resp_remote_access_errors", "Responder remote access errors."},
    HwCounterDoc{"resp_cqe_flush_error", "Responder completions flushed with error."},
    HwCounterDoc{"req_cqe_flush_error", "Requester completions flushed with error."},
    HwCounterDoc{"req_transport_retries_exceeded",
                 "Requester transport retries exceeded: a QP went to error (NCCL job fails)."},
    HwCounterDoc{"req_rnr_retries_exceeded", "Requester RNR retries exceeded."},
    HwCounterDoc{"roce_adp_retrans", "RoCE adaptive retransmissions."},
    HwCounterDoc{"roce_adp_retrans_to", "RoCE adaptive retransmission timeouts."},
    HwCounterDoc{"roce_slow_restart", "RoCE slow restarts."},
    HwCounterDoc{"roce_slow_restart_cnps", "CNPs generated during RoCE slow restart."},
    HwCounterDoc{"roce_slow_restart_trans", "RoCE slow restart transitions."},
    HwCounterDoc{"rp_cnp_ignored", "CNPs received and ignored by the reaction point."},
    HwCounterDoc{"rp_cnp_handled",
                 "CNPs handled by the reaction point to cut the send rate (DCQCN)."},
    HwCounterDoc{"np_ecn_marked_roce_packets",
                 "ECN CE-marked RoCE packets received by the notification point (congestion)."},
    HwCounterDoc{"np_cnp_sent", "CNPs sent by the notification point for CE-marked packets."},
    HwCounterDoc{"rx_icrc_encapsulated", "RoCE packets received with an ICRC error."},
    HwCounterDoc{"cc_rx_ce_pkts", "Received packets with the CE (congestion) mark."},
    HwCounterDoc{"cc_rx_cnp_pkts", "CNP packets received."},
    HwCounterDoc{"cc_tx_cnp_pkts", "CNP packets sent."},
    HwCounterDoc{"rdma_tx_packets", "RDMA packets transmitted."},
    HwCounterDoc{"rdma_tx_bytes", "RDMA bytes transmitted."},
    HwCounterDoc{"rdma_rx_packets", "RDMA packets received."},
    HwCounterDoc{"rdma_rx_bytes", "RDMA bytes received."},
    // rxe
    HwCounterDoc{"sent_pkts", "Packets sent (rxe)."},
    HwCounterDoc{"rcvd_pkts", "Packets received (rxe)."},
    HwCounterDoc{"out_of_seq_request", "Requests received out of sequence (rxe)."},
    HwCounterDoc{"rcvd_rnr_err", "RNR NAKs received (rxe)."},
    HwCounterDoc{"send_rnr_err", "RNR NAKs sent (rxe)."},
    HwCounterDoc{"rcvd_seq_err", "Sequence errors received (rxe)."},
    HwCounterDoc{"ack_deferred", "ACKs deferred by the sender scheduler (rxe)."},
    HwCounterDoc{"ack_deffered", "ACKs deferred (rxe, the original misspelled name)."},
    HwCounterDoc{"retry_exceeded_err", "Transport retries exceeded (rxe)."},
    HwCounterDoc{"retry_rnr_exceeded_err", "RNR retries exceeded (rxe)."},
    HwCounterDoc{"completer_retry_err", "Completer retries (rxe)."},
    HwCounterDoc{"send_err", "Send errors (rxe)."},
    HwCounterDoc{"link_downed", "Times the port's link went down (rxe)."},
    HwCounterDoc{"rdma_sends", "RDMA SEND operations posted (rxe)."},
    HwCounterDoc{"rdma_recvs", "RDMA receive completions (rxe)."},
    HwCounterDoc{"sent_bytes", "Bytes sent (rxe)."},
    HwCounterDoc{"rcvd_bytes", "Bytes received (rxe)."},
};

// mlx5 QUERY_Q_COUNTER groups 1-5 (reference §2.1): 32-bit firmware fields.
constexpr std::array<std::string_view, 26> kMlx5QCounters = {
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "rx_dct_connect",
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "req_transport_retries_exceeded",
    "req_rnr_retries_exceeded",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
};

constexpr std::string_view kVportPrefix = "vport_";  // switchdev representor counters

std::string_view StripVport(std::string_view name) {
  return name.substr(0, kVportPrefix.size()) == kVportPrefix ? name.substr(kVportPrefix.size())
                                                             : name;
}

}  // namespace

const char* HwCounterHelp(std::string_view name) {
  name = StripVport(name);
  for (const auto& doc : kHwCounterDocs) {
    if (doc.name == name) return doc.help;
  }
  return nullptr;
}

bool IsMlx5QCounter(std::string_view name) {
  name = StripVport(name);
  return std::find(kMlx5QCounters.begin(), kMlx5QCounters.end(), name) != kMlx5QCounters.end();
}

uint64_t Wrap32::Extend(uint64_t raw) {
  constexpr uint64_t kRange = uint64_t{1} << 32;
  if (seen && raw < last_raw) {
    // Going down is a wrap when the forward distance modulo 2^32 is short; otherwise the
    // counter was reset (driver reload) and the exported value restarts too.
    if (raw + kRange - last_raw <= kRange / 2) {
      high += kRange;
    } else {
      high = 0;
    }
  }
  seen = true;
  last_raw = raw;
  return high + raw;
}

uint64_t WrapExtender::Extend(const std::string& key, uint64_t raw) {
  State& s = state_[key];
  s.generation = generation_;
  return s.wrap.Extend(raw);
}

void WrapExtender::EndPoll() {
  // A counter missing from a few polls (a transient read error) keeps its history; one gone for
  // longer (its device vanished) is forgotten.
  constexpr uint64_t kForgetAfterPolls = 10;
  for (auto it = state_.begin(); it != state_.end();) {
    if (it->second.generation + kForgetAfterPolls < generation_) {
      it = state_.erase(it);
    } else {
      ++it;
    }
  }
  ++generation_;
}

HwCountersCollector::TargetState& HwCountersCollector::StateOf(const std::string& key) {
  TargetState& state = targets_[key];  // elements keep their address as the map grows
  state.last_poll = poll_;
  return state;
}

void HwCountersCollector::Export(size_t position, const std::string& name, uint64_t raw,
                                 const Target& target, MetricSink& sink) {
  std::vector<Slot>& slots = target.state->slots;
  if (position >= slots.size() || slots[position].name != name) {
    // Not where the last poll had it (a read failed, the driver changed): find its slot by
    // name, keeping its wrap history, or make one; then move it to this position.
    auto it = std::find_if(slots.begin(), slots.end(),
                           [&](const Slot& slot) { return slot.name == name; });
    if (it == slots.end()) {
      auto& by_name = naming_[target.metric_prefix];
      auto named = by_name.find(name);
      if (named == by_name.end()) {
        const char* help = HwCounterHelp(name);
        Naming naming{GenericMetricName(target.metric_prefix, name, "_total"),
                      help != nullptr ? std::string(help)
                                      : "Driver hw counter " + name +
                                            " (not known to this exporter version; raw value)."};
        named = by_name.emplace(name, std::move(naming)).first;
      }
      slots.push_back({name, &named->second, IsMlx5QCounter(name), {}});
      it = slots.end() - 1;
    }
    size_t found = static_cast<size_t>(it - slots.begin());
    if (position < slots.size() && found != position) std::swap(slots[position], slots[found]);
    if (position >= slots.size()) position = found;
  }
  Slot& slot = slots[position];
  uint64_t counter = raw;
  if (target.q_counters_32bit && slot.q_counter && counter <= UINT32_MAX) {
    counter = slot.wrap.Extend(counter);
  }
  sink.Counter(slot.naming->metric, slot.naming->help, target.labels, static_cast<double>(counter));
}

bool ReadHwCounterDir(CollectContext& ctx, const std::string& dir, DirReadState* state,
                      const std::function<void(const std::string&, uint64_t)>& value) {
  // mlx5 refreshes its whole counter cache (and starts the `lifespan` window) only when the
  // first counter is read; any other file read first costs firmware commands of its own
  // (reference §1.6). A switchdev representor's directory has the vport_ names.
  int err = ReadAttributeDirFiles(
      ctx, dir, state, {"vport_rx_write_requests", "rx_write_requests"},
      [&](const std::string& name, const std::string& path, const std::string& content) {
        auto parsed = ParseU64(content);
        if (parsed) {
          value(name, *parsed);
        } else {
          ctx.Malformed(path, content);
        }
      });
  if (err != 0 && err != ENOENT) ctx.ReadFailed(dir, err);  // no hw_counters: driver has none
  return err == 0;
}

std::vector<std::pair<std::string, uint64_t>> ReadHwCounterDir(CollectContext& ctx,
                                                               const std::string& dir,
                                                               bool* listed) {
  std::vector<std::pair<std::string, uint64_t>> out;
  DirReadState state;
  bool ok = ReadHwCounterDir(ctx, dir, &state, [&](const std::string& name, uint64_t value) {
    out.emplace_back(name, value);
  });
  if (listed != nullptr) *listed = ok;
  return out;
}

bool HwCountersCollector::CollectDir(const std::string& dir, const Target& target,
                                     CollectContext& ctx, MetricSink& sink) {
  size_t position = 0;
  return ReadHwCounterDir(ctx, dir, &target.state->dir, [&](const std::string& name, uint64_t raw) {
    if (name == "lifespan") {
      sink.Gauge(target.metric_prefix + "counters_lifespan_seconds",
                 "How long the driver caches hw_counters file values, in seconds (sysfs "
                 "lifespan, ms; only when counters are read from sysfs).",
                 target.labels, static_cast<double>(raw) / 1000.0);
      return;
    }
    Export(position++, name, raw, target, sink);
  });
}

int HwCountersCollector::CollectNetlink(RdmaNetlinkReader& netlink, const std::string& device,
                                        unsigned port, const Target& target, MetricSink& sink) {
  std::vector<std::pair<std::string, uint64_t>> counters;
  int err = netlink.ReadHwCounters(device, port, &counters);
  if (err != 0) return err;
  for (size_t i = 0; i < counters.size(); ++i)
    Export(i, counters[i].first, counters[i].second, target, sink);
  return 0;
}

bool HwCountersCollector::Collect(const Inventory& inventory, CollectContext& ctx,
                                  MetricSink& sink) {
  RdmaNetlinkReader* netlink = nullptr;
  if (source_ != HwCounterSource::kSysfs && ctx.kernel() != nullptr) {
    netlink = ctx.kernel()->rdma_nl.get();
  }
  if (netlink == nullptr && source_ == HwCounterSource::kNetlink) {
    ctx.ReadFailed("rdma_netlink", EOPNOTSUPP);  // no RDMA netlink reader (fixture mode)
  }
  double netlink_ports = 0, sysfs_ports = 0;
  ++poll_;
  for (const auto& device : inventory.devices) {
    // Device-level counters have no netlink equivalent (STAT_GET needs a port).
    CollectDir(JoinPath(device.dir, "hw_counters"),
               {&StateOf(device.name + "/0/"), device.has_hca_type, DeviceLabels(device),
                "rdma_device_hw_"},
               ctx, sink);
    for (const auto& port : device.ports) {
      Target target{&StateOf(device.name + "/" + std::to_string(port.number) + "/"),
                    device.has_hca_type, PortLabels(device, port), "rdma_hw_"};
      if (source_ == HwCounterSource::kNetlink && netlink == nullptr) continue;
      if (netlink != nullptr) {
        int err = CollectNetlink(*netlink, device.name, port.number, target, sink);
        if (err == 0) {
          ++netlink_ports;
          continue;
        }
        // ENODEV: netlink does not know the device (another RDMA namespace, a fixture without
        // it); EINVAL/EOPNOTSUPP: the port has no counters or the kernel predates STAT_GET.
        // With source auto those are why the files exist; anything else is a real failure.
        bool expected = err == ENODEV || err == EINVAL || err == EOPNOTSUPP;
        if (source_ == HwCounterSource::kNetlink || !expected) {
          ctx.ReadFailed("rdma_netlink:" + device.name + "/" + std::to_string(port.number), err);
        }
        if (source_ == HwCounterSource::kNetlink) continue;
      }
      if (CollectDir(JoinPath(port.dir, "hw_counters"), target, ctx, sink)) ++sysfs_ports;
    }
  }
  // A target missing from a few polls (a transient failure) keeps its history; one gone for
  // longer (its device vanished) is forgotten.
  constexpr uint64_t kForgetAfterPolls = 10;
  std::erase_if(targets_, [&](const auto& entry) {
    return entry.second.last_poll + kForgetAfterPolls < poll_;
  });
  const char* help =
      "Ports whose hw counters the last poll read from each source (netlink: one RDMA netlink "
      "STAT_GET per port; sysfs: the hw_counters files).";
  sink.Gauge("rdma_exporter_hw_counters_ports", help, {{"source", "netlink"}}, netlink_ports);
  sink.Gauge("rdma_exporter_hw_counters_ports", help, {{"source", "sysfs"}}, sysfs_ports);
  return true;
}

}  // namespace rdma_exporter
