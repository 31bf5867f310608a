// show-counters: MLNX_OFED's show_counters, from the exporter's counter readers: every PMA and
// hw counter of each port (and device), raw values or per-second rates over --interval.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <thread>

#include "cli_internal.h"
#include "rdma_exporter/counter_readers.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

// Decimal text of a 128-bit value (no printf conversion takes one).
std::string ToString(unsigned __int128 v) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return s;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

struct CounterValue {
  std::string name;
  uint64_t raw = 0;
  unsigned scale = 1;  // 4 for PMA data counters (4-byte words)
  unsigned width = 0;  // PMA IBTA width; 0 unknown
  bool saturated = false;
  bool wraps32 = false;  // mlx5 q-counter: 32-bit firmware value
  std::string error;     // non-empty: the file could not be read or parsed (no value)
};

struct CounterGroup {
  std::string title;  // "counters", "hw_counters", "hw_counters (RDMA netlink, optional)"
  std::vector<CounterValue> values;
};

// The files of dir that `group` has no value for: shown with why ("N/A (no PMA)" from a port
// without a PMA, an I/O error) instead of silently missing.
void AddUnreadable(SysfsReader& sysfs, const std::string& dir, CounterGroup* group) {
  std::vector<std::string> names;
  // Listed (and read) by the collectors' readers just before: served from the reader's cache.
  if (sysfs.ListAttributeDir(dir, &names) != 0) return;
  for (const auto& name : names) {
    if (name == "lifespan") continue;
    bool have = std::any_of(group->values.begin(), group->values.end(),
                            [&](const CounterValue& v) { return v.name == name; });
    if (have) continue;
    std::string text;
    int err = sysfs.ReadFile(JoinPath(dir, name), &text);
    CounterValue v;
    v.name = name;
    if (err != 0) {
      v.error = std::string("unreadable: ") + std::strerror(err);
    } else {
      std::string value(Trim(text));
      bool printable = std::all_of(value.begin(), value.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
      });
      if (!printable || value.size() > 40) value = "...";
      v.error = value.empty() ? "empty file" : "not a number: \"" + value + "\"";
    }
    group->values.push_back(std::move(v));
  }
  std::sort(group->values.begin(), group->values.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
}

struct CounterBlock {
  std::string device;
  std::optional<unsigned> port;  // nullopt: device-level hw_counters
  std::string link_layer, netdev;
  std::vector<CounterGroup> groups;
  // An older kernel's port without PMA (every counters/ file reads "N/A (no PMA)"): one line
  // saying so instead of 17 "not a number" lines that look like read failures.
  bool no_pma = false;
};

std::vector<CounterBlock> ReadCounters(CliNode& node) {
  std::vector<CounterBlock> blocks;
  CollectContext ctx = node.Context("show-counters");
  KernelReaders& kernel = node.kernel();
  kernel.BeginPoll();
  for (const auto& device : node.inventory().devices) {
    auto hw_group = [&](const std::string& dir, const std::string& title) {
      CounterGroup group{title, {}};
      for (const auto& [name, value] : ReadHwCounterDir(ctx, dir)) {
        if (name == "lifespan") continue;  // the driver's cache time, not a counter
        group.values.push_back(
            {name, value, 1, 0, false, device.has_hca_type && IsMlx5QCounter(name), ""});
      }
      // Read in the driver's cheapest order, shown by name.
      std::sort(group.values.begin(), group.values.end(),
                [](const auto& a, const auto& b) { return a.name < b.name; });
      AddUnreadable(node.sysfs(), dir, &group);
      return group;
    };
    for (const auto& port : device.ports) {
      CounterBlock block{device.name, port.number, port.link_layer, port.netdev, {}};
      CounterGroup pma{"counters", {}};
      PmaPortStatus status;
      for (const auto& [file, reading] : ReadPmaCounters(ctx, port, &status)) {
        const PmaCounterSpec* spec = reading.spec;
        pma.values.push_back({file, reading.value, spec != nullptr ? unsigned(spec->scale) : 1u,
                              reading.width, reading.saturated(), false, ""});
      }
      std::string pma_dir = JoinPath(port.dir, "counters");
      std::vector<std::string> pma_files;
      // Current kernels create no counters/ for such a port: nothing to explain then.
      block.no_pma = status.supported == false &&
                     node.sysfs().ListAttributeDir(pma_dir, &pma_files) == 0 && !pma_files.empty();
      if (!block.no_pma) AddUnreadable(node.sysfs(), pma_dir, &pma);
      if (!pma.values.empty()) block.groups.push_back(std::move(pma));
      CounterGroup hw = hw_group(JoinPath(port.dir, "hw_counters"), "hw_counters");
      // Optional counters only RDMA netlink reports (as the rdma_netlink collector: never the
      // ones hw_counters/ already has).
      std::vector<std::pair<std::string, uint64_t>> optional;
      if (kernel.rdma_nl != nullptr && !hw.values.empty() &&
          kernel.rdma_nl->ReadHwCounters(device.name, port.number, &optional) == 0) {
        CounterGroup nl{"hw_counters (optional, RDMA netlink)", {}};
        for (const auto& [name, value] : optional) {
          bool in_sysfs = false;
          for (const auto& v : hw.values)
            in_sysfs = in_sysfs || v.name == name;
          if (!in_sysfs) nl.values.push_back({name, value, 1, 0, false, false, ""});
        }
        if (!hw.values.empty()) block.groups.push_back(std::move(hw));
        if (!nl.values.empty()) block.groups.push_back(std::move(nl));
      } else if (!hw.values.empty()) {
        block.groups.push_back(std::move(hw));
      }
      blocks.push_back(std::move(block));
    }
    CounterGroup device_hw = hw_group(JoinPath(device.dir, "hw_counters"), "hw_counters");
    if (!device_hw.values.empty()) {
      blocks.push_back({device.name, std::nullopt, "", "", {std::move(device_hw)}});
    }
  }
  node.sysfs().SweepUnused();
  return blocks;
}

// Per-second rate of a counter between two reads; nullopt when it went down (cleared or reset).
std::optional<double> Rate(const CounterValue& before, const CounterValue& after, double seconds) {
  unsigned __int128 delta;
  if (after.raw >= before.raw) {
    delta = after.raw - before.raw;
  } else if (after.wraps32 && before.raw <= UINT32_MAX) {
    delta = (uint64_t{1} << 32) + after.raw - before.raw;  // 32-bit firmware counter wrapped
  } else {
    return std::nullopt;
  }
  return static_cast<double>(delta * before.scale) / seconds;
}

const CounterValue* FindValue(const std::vector<CounterBlock>& blocks, const CounterBlock& block,
                              const CounterGroup& group, const std::string& name) {
  for (const auto& b : blocks) {
    if (b.device != block.device || b.port != block.port) continue;
    for (const auto& g : b.groups) {
      if (g.title != group.title) continue;
      for (const auto& v : g.values) {
        if (v.name == name) return v.error.empty() ? &v : nullptr;
      }
    }
  }
  return nullptr;
}

// One table: the values of `blocks`, with per-second rates against `before` when an interval
// was asked for.
class CounterTable {
 public:
  CounterTable(const CliOptions& options, const std::vector<CounterBlock>& before, double seconds,
               std::ostream& out)
      : options_(options), before_(before), seconds_(seconds), out_(out) {}

  void Print(const std::vector<CounterBlock>& blocks) {
    for (const auto& block : blocks) {
      for (const auto& group : block.groups) {
        for (const auto& v : group.values)
          name_width_ = std::max(name_width_, v.name.size());
      }
    }
    bool first_block = true;
    if (json()) {
      out_ << "{";
      if (interval()) out_ << "\"interval_seconds\":" << Fixed(seconds_, 3) << ",";
      out_ << "\"ports\":[";
    }
    for (const auto& block : blocks) {
      BlockHeader(block, first_block);
      first_block = false;
      for (const auto& group : block.groups)
        Group(block, group);
      if (json()) out_ << "}";
    }
    if (json()) out_ << (first_block ? "]}\n" : "\n]}\n");
  }

 private:
  bool json() const { return options_.json; }
  bool interval() const { return options_.interval_seconds.has_value(); }

  // "mlx5_0 port 1 (Ethernet, ens1f0np0)" or the JSON object's opening fields.
  void BlockHeader(const CounterBlock& block, bool first) {
    if (json()) {
      out_ << (first ? "" : ",") << "\n  {\"device\":" << JsonString(block.device);
      if (block.port) {
        out_ << ",\"port\":" << *block.port << ",\"link_layer\":" << JsonString(block.link_layer)
             << ",\"netdev\":" << JsonString(block.netdev);
        if (block.no_pma) out_ << ",\"pma_supported\":false";
      } else {
        out_ << ",\"port\":null";
      }
      return;
    }
    out_ << (first ? "" : "\n") << block.device;
    if (block.port) {
      out_ << " port " << *block.port << " (" << (block.link_layer.empty() ? "?" : block.link_layer)
           << (block.netdev.empty() ? "" : ", " + block.netdev) << ")";
    } else {
      out_ << " device";
    }
    if (interval()) out_ << ": per-second rates over " << Fixed(seconds_, 2) << " s";
    out_ << "\n";
    if (block.no_pma) {
      out_ << "  counters: none, the port has no PMA (every counters/ file reads \"N/A (no PMA)\", "
              "as older kernels show a device without PMA)\n";
    } else if (block.groups.empty()) {
      out_ << "  no counters\n";
    }
  }

  void Group(const CounterBlock& block, const CounterGroup& group) {
    if (json()) {
      std::string key = group.title == "counters"      ? "counters"
                        : group.title == "hw_counters" ? "hw_counters"
                                                       : "optional_hw_counters";
      out_ << ",\"" << key << "\":{";
    } else {
      out_ << "  " << group.title << ":\n";
    }
    bool first_value = true;
    for (const auto& v : group.values) {
      if (!v.error.empty()) {
        Unreadable(v, first_value);
      } else {
        Value(block, group, v, first_value);
      }
      first_value = false;
    }
    if (json()) out_ << "}";
  }

  // A file with no value, and why.
  void Unreadable(const CounterValue& v, bool first) {
    if (json()) {
      out_ << (first ? "" : ",") << JsonString(v.name)
           << ":{\"value\":null,\"error\":" << JsonString(v.error) << "}";
    } else {
      out_ << "    " << PadRight(v.name, name_width_) << PadLeft("-", 21) << "  " << v.error
           << "\n";
    }
  }

  void Value(const CounterBlock& block, const CounterGroup& group, const CounterValue& v,
             bool first) {
    unsigned __int128 shown = static_cast<unsigned __int128>(v.raw) * v.scale;
    std::optional<double> rate;
    const CounterValue* old = nullptr;
    if (interval()) {
      old = FindValue(before_, block, group, v.name);
      // A saturated counter stopped counting: its rate is unknown, not 0.
      if (old != nullptr && !v.saturated) rate = Rate(*old, v, seconds_);
    }
    if (json()) {
      out_ << (first ? "" : ",") << JsonString(v.name) << ":{\"value\":" << ToString(shown);
      if (v.scale != 1) out_ << ",\"raw\":" << v.raw << ",\"unit\":\"bytes\"";
      if (v.width != 0) out_ << ",\"width\":" << v.width;
      if (v.saturated) out_ << ",\"saturated\":true";
      if (interval()) out_ << ",\"rate\":" << (rate ? Fixed(*rate, 3) : std::string("null"));
      out_ << "}";
      return;
    }
    std::string line = "    " + PadRight(v.name, name_width_) + PadLeft(ToString(shown), 21);
    if (interval()) {
      std::string r = old == nullptr ? "new" : v.saturated ? "?" : rate ? Fixed(*rate, 1) : "reset";
      line += PadLeft(r, 18) + (v.scale != 1 ? " B/s" : " /s");
      if (rate && v.scale != 1) line += " (" + Fixed(*rate * 8 / 1e9, 2) + " Gb/s)";
    } else if (v.scale != 1) {
      line += " bytes";
    }
    if (v.saturated) {
      line += "  SATURATED (" + std::to_string(v.width) +
              "-bit all-ones: stopped counting until cleared)";
    }
    out_ << line << "\n";
  }

  const CliOptions& options_;
  const std::vector<CounterBlock>& before_;
  double seconds_;
  std::ostream& out_;
  size_t name_width_ = 24;
};

std::function<void(double)>& IntervalWait() {
  static std::function<void(double)> wait;
  return wait;
}

}  // namespace

void SetIntervalWaitForTesting(std::function<void(double)> wait) {
  IntervalWait() = std::move(wait);
}

int ShowCounters(const CliOptions& options, std::ostream& out, std::ostream& err) {
  CliNode node(options);
  if (!node.Discover(err)) return 1;
  if (!options.interval_seconds) {
    CounterTable(options, {}, 0, out).Print(ReadCounters(node));
    return 0;
  }
  // Like watch: --count tables (0 = until interrupted), each the rates over one interval.
  std::vector<CounterBlock> before = ReadCounters(node);
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0; options.count == 0 || i < options.count; ++i) {
    if (IntervalWait()) {
      IntervalWait()(*options.interval_seconds);
    } else {
      std::this_thread::sleep_for(std::chrono::duration<double>(*options.interval_seconds));
    }
    auto now = std::chrono::steady_clock::now();
    std::vector<CounterBlock> after = ReadCounters(node);
    if (i > 0 && !options.json) out << "\n";
    CounterTable(options, before, std::chrono::duration<double>(now - start).count(), out)
        .Print(after);
    out.flush();
    before = std::move(after);
    start = now;
  }
  return 0;
}

}  // namespace rdma_exporter
