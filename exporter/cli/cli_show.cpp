// show-gids, ibdev2netdev and show-counters: MLNX_OFED's helper scripts, from the exporter's
// readers. Layouts follow the scripts (Mellanox/mlnx-tools sbin/show_gids, OFED ibdev2netdev,
// show_counters) where operators parse them.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <thread>

#include "rdma_exporter/cli.h"

#include "rdma_exporter/counter_readers.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

// show_gids: VER is `grep -o "[Vv].*"` of the type ("IB/RoCE v1" -> v1, "RoCE v2" -> v2).
std::string GidVersion(const std::string& type) {
  size_t v = type.find_first_of("vV");
  return v == std::string::npos ? "" : type.substr(v);
}

// show_gids prints an IPv4 address for GIDs whose first group is 0000, from the last two groups
// (::ffff:0a00:0001 -> 10.0.0.1). The GID is valid (checked by the gid collector).
std::string GidIpv4(const std::string& gid) {
  if (gid.size() != 39 || gid.compare(0, 4, "0000") != 0) return "";
  auto octet = [&](size_t at) { return std::to_string(std::stoi(gid.substr(at, 2), nullptr, 16)); };
  return octet(30) + "." + octet(32) + "." + octet(35) + "." + octet(37);
}

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

std::string PadRight(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}
std::string PadLeft(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// Reads a one-line sysfs file; empty when unreadable.
std::string ReadLine(SysfsReader& sysfs, const std::string& path, int* err = nullptr) {
  std::string value;
  int rc = sysfs.ReadFile(path, &value);
  if (err != nullptr) *err = rc;
  return rc == 0 ? std::string(Trim(value)) : std::string();
}

// What ibdev2netdev -v takes from the PCI VPD: the product name (identifier string) and the part
// number. The script runs `strings` over the file and takes the 1st and 4th strings; this parses
// the resource tags (PCI Local Bus 3.0 §6.4): large resources 0x82 identifier string and 0x90
// VPD-R (keyword: 2 characters, 1-byte length, data; "PN" = part number), small tag 0x78 = end.
struct Vpd {
  std::string name, part_number;
};
std::optional<Vpd> ParseVpd(std::string_view data) {
  auto printable = [](std::string_view v) {
    std::string out;
    for (char c : Trim(v)) {
      if (c == '\0') break;
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
        return std::string();
      }
      out.push_back(c);
    }
    return out;
  };
  Vpd vpd;
  size_t i = 0;
  while (i < data.size()) {
    auto tag = static_cast<unsigned char>(data[i]);
    if (tag == 0x78) break;   // end tag
    if ((tag & 0x80) == 0) {  // other small resource: length in the low 3 bits
      i += 1 + (tag & 0x7);
      continue;
    }
    if (i + 3 > data.size()) break;
    size_t length = static_cast<unsigned char>(data[i + 1]) |
                    static_cast<size_t>(static_cast<unsigned char>(data[i + 2])) << 8;
    size_t start = i + 3;
    if (start + length > data.size()) break;
    std::string_view body = data.substr(start, length);
    if (tag == 0x82) {
      vpd.name = printable(body);
    } else if (tag == 0x90) {
      for (size_t k = 0; k + 3 <= body.size();) {
        size_t n = static_cast<unsigned char>(body[k + 2]);
        if (k + 3 + n > body.size()) break;
        if (body.substr(k, 2) == "PN") vpd.part_number = printable(body.substr(k + 3, n));
        k += 3 + n;
      }
    }
    i = start + length;
  }
  if (vpd.name.empty() && vpd.part_number.empty()) return std::nullopt;
  return vpd;
}

}  // namespace

int ShowGids(const CliOptions& options, std::ostream& out, std::ostream& err) {
  CliNode node(options);
  if (!node.Discover(err)) return 1;
  SampleIndex samples(node.Collect(node.MakeCollectors({"gid"})));
  const auto& gids = samples.All("rdma_gid_info");
  if (options.json) {
    out << "{\"gids\":[";
    for (size_t i = 0; i < gids.size(); ++i) {
      const auto& l = gids[i].labels;
      out << (i == 0 ? "" : ",") << "\n  {\"device\":" << JsonString(l.at("device"))
          << ",\"port\":" << l.at("port") << ",\"index\":" << l.at("index")
          << ",\"gid\":" << JsonString(l.at("gid"))
          << ",\"ipv4\":" << JsonString(GidIpv4(l.at("gid")))
          << ",\"type\":" << JsonString(l.at("gid_type"))
          << ",\"ver\":" << JsonString(GidVersion(l.at("gid_type")))
          << ",\"netdev\":" << JsonString(l.at("netdev")) << "}";
    }
    out << "\n],\"n_gids_found\":" << gids.size() << "}\n";
    return 0;
  }
  // Header and rows byte for byte as show_gids prints them (tabs, and two spaces after IPv4).
  out << "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n"
         "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n";
  for (const auto& sample : gids) {
    const auto& l = sample.labels;
    const std::string& gid = l.at("gid");
    std::string ipv4 = GidIpv4(gid);
    out << l.at("device") << "\t" << l.at("port") << "\t" << l.at("index") << "\t" << gid << "\t"
        << (ipv4.empty() ? "\t\t" : ipv4 + "  \t") << GidVersion(l.at("gid_type")) << "\t"
        << l.at("netdev") << "\n";
  }
  out << "n_gids_found=" << gids.size() << "\n";
  return 0;
}

int Ibdev2Netdev(const CliOptions& options, std::ostream& out, std::ostream& err) {
  CliNode node(options);
  if (!node.Discover(err)) return 1;
  SysfsReader& sysfs = node.sysfs();
  bool first = true;
  if (options.json) out << "[";
  for (const auto& device : node.inventory().devices) {
    std::string fw = ReadLine(sysfs, JoinPath(device.dir, "fw_ver"));
    std::string board = ReadLine(sysfs, JoinPath(device.dir, "board_id"));
    // The VPD (mode 0400 root: without it the board id, the PSID, stands in for the part
    // number). Read only when printed.
    std::optional<Vpd> vpd;
    if (device.has_pci_link && (options.verbose || options.json)) {
      std::string raw;
      if (sysfs.ReadFile(JoinPath(device.dir, "device/vpd"), &raw) == 0) vpd = ParseVpd(raw);
    }
    std::string part = vpd && !vpd->part_number.empty() ? vpd->part_number : board;
    std::string description = vpd ? vpd->name : "";
    // ibdev2netdev prints the PCI device ID as MT<decimal> (0x101d -> MT4125).
    std::string hca;
    if (device.has_pci_link) {
      if (auto id = ParseHex(ReadLine(sysfs, JoinPath(device.dir, "device/device")))) {
        hca = "MT" + std::to_string(*id);
      }
    }
    for (const auto& port : device.ports) {
      // As the script: ports without a netdev are not listed.
      if (port.netdev.empty()) continue;
      int carrier_err = 0;
      std::string carrier =
          ReadLine(sysfs, JoinPath(JoinPath("class/net", port.netdev), "carrier"), &carrier_err);
      // The script: Up when carrier reads 1; Down otherwise (EINVAL while admin down); NA
      // without the file.
      std::string link = carrier == "1" ? "Up" : carrier_err == ENOENT ? "NA" : "Down";
      // The parsed name is a view into the line: keep the line alive while it is used.
      std::string state = ReadLine(sysfs, JoinPath(port.dir, "state"));
      if (auto parsed = ParseNumberedName(state)) {
        state = std::string(parsed->name);
      } else {
        state.clear();
      }
      if (options.json) {
        out << (first ? "" : ",") << "\n  {\"device\":" << JsonString(device.name)
            << ",\"port\":" << port.number << ",\"netdev\":" << JsonString(port.netdev)
            << ",\"link\":" << JsonString(link) << ",\"state\":" << JsonString(state)
            << ",\"link_layer\":" << JsonString(port.link_layer)
            << ",\"pci_address\":" << JsonString(device.pci_address)
            << ",\"hca\":" << JsonString(hca) << ",\"board_id\":" << JsonString(board)
            << ",\"part_number\":" << JsonString(vpd ? vpd->part_number : "")
            << ",\"description\":" << JsonString(description) << ",\"fw_ver\":" << JsonString(fw)
            << "}";
      } else if (options.verbose) {
        auto na = [](const std::string& s) { return s.empty() ? std::string("NA") : s; };
        out << (device.pci_address.empty() ? "-" : device.pci_address) << " " << device.name << " ("
            << na(hca) << " - " << na(part) << ") "
            << (description.empty() ? "" : description + " ") << "fw " << na(fw) << " port "
            << port.number << " (" << PadRight(na(state), 6) << ") ==> " << port.netdev << " ("
            << link << ")\n";
      } else {
        out << device.name << " port " << port.number << " ==> " << port.netdev << " (" << link
            << ")\n";
      }
      first = false;
    }
  }
  if (options.json) out << (first ? "]\n" : "\n]\n");
  return 0;
}

namespace {

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
      for (const auto& [file, reading] : ReadPmaCounters(ctx, port)) {
        const PmaCounterSpec* spec = FindPmaCounter(file);
        pma.values.push_back({file, reading.value, spec != nullptr ? unsigned(spec->scale) : 1u,
                              reading.width, reading.saturated(), false, ""});
      }
      AddUnreadable(node.sysfs(), JoinPath(port.dir, "counters"), &pma);
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

}  // namespace

namespace {

// One table: the values of `blocks`, with per-second rates against `before` when an interval
// was asked for.
void PrintCounters(const CliOptions& options, const std::vector<CounterBlock>& before,
                   const std::vector<CounterBlock>& blocks, double seconds, std::ostream& out) {
  size_t name_width = 24;
  for (const auto& block : blocks) {
    for (const auto& group : block.groups) {
      for (const auto& v : group.values)
        name_width = std::max(name_width, v.name.size());
    }
  }
  bool first_block = true;
  if (options.json) {
    out << "{";
    if (options.interval_seconds) out << "\"interval_seconds\":" << Fixed(seconds, 3) << ",";
    out << "\"ports\":[";
  }
  for (const auto& block : blocks) {
    if (options.json) {
      out << (first_block ? "" : ",") << "\n  {\"device\":" << JsonString(block.device);
      if (block.port) {
        out << ",\"port\":" << *block.port << ",\"link_layer\":" << JsonString(block.link_layer)
            << ",\"netdev\":" << JsonString(block.netdev);
      } else {
        out << ",\"port\":null";
      }
    } else {
      out << (first_block ? "" : "\n") << block.device;
      if (block.port) {
        out << " port " << *block.port << " ("
            << (block.link_layer.empty() ? "?" : block.link_layer)
            << (block.netdev.empty() ? "" : ", " + block.netdev) << ")";
      } else {
        out << " device";
      }
      if (options.interval_seconds) out << ": per-second rates over " << Fixed(seconds, 2) << " s";
      out << "\n";
      if (block.groups.empty()) out << "  no counters\n";
    }
    first_block = false;
    for (const auto& group : block.groups) {
      if (options.json) {
        std::string key = group.title == "counters"      ? "counters"
                          : group.title == "hw_counters" ? "hw_counters"
                                                         : "optional_hw_counters";
        out << ",\"" << key << "\":{";
      } else {
        out << "  " << group.title << ":\n";
      }
      bool first_value = true;
      for (const auto& v : group.values) {
        if (!v.error.empty()) {
          if (options.json) {
            out << (first_value ? "" : ",") << JsonString(v.name)
                << ":{\"value\":null,\"error\":" << JsonString(v.error) << "}";
          } else {
            out << "    " << PadRight(v.name, name_width) << PadLeft("-", 21) << "  " << v.error
                << "\n";
          }
          first_value = false;
          continue;
        }
        unsigned __int128 shown = static_cast<unsigned __int128>(v.raw) * v.scale;
        std::optional<double> rate;
        const CounterValue* old = nullptr;
        if (options.interval_seconds) {
          old = FindValue(before, block, group, v.name);
          // A saturated counter stopped counting: its rate is unknown, not 0.
          if (old != nullptr && !v.saturated) rate = Rate(*old, v, seconds);
        }
        if (options.json) {
          out << (first_value ? "" : ",") << JsonString(v.name)
              << ":{\"value\":" << ToString(shown);
          if (v.scale != 1) out << ",\"raw\":" << v.raw << ",\"unit\":\"bytes\"";
          if (v.width != 0) out << ",\"width\":" << v.width;
          if (v.saturated) out << ",\"saturated\":true";
          if (options.interval_seconds) {
            out << ",\"rate\":" << (rate ? Fixed(*rate, 3) : std::string("null"));
          }
          out << "}";
        } else {
          std::string line = "    " + PadRight(v.name, name_width) + PadLeft(ToString(shown), 21);
          if (options.interval_seconds) {
            std::string r = old == nullptr ? "new"
                            : v.saturated  ? "?"
                            : rate         ? Fixed(*rate, 1)
                                           : "reset";
            line += PadLeft(r, 18) + (v.scale != 1 ? " B/s" : " /s");
            if (rate && v.scale != 1) line += " (" + Fixed(*rate * 8 / 1e9, 2) + " Gb/s)";
          } else if (v.scale != 1) {
            line += " bytes";
          }
          if (v.saturated) {
            line += "  SATURATED (" + std::to_string(v.width) +
                    "-bit all-ones: stopped counting until cleared)";
          }
          out << line << "\n";
        }
        first_value = false;
      }
      if (options.json) out << "}";
    }
    if (options.json) out << "}";
  }
  if (options.json) out << (first_block ? "]}\n" : "\n]}\n");
}

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
    PrintCounters(options, {}, ReadCounters(node), 0, out);
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
    PrintCounters(options, before, after, std::chrono::duration<double>(now - start).count(), out);
    out.flush();
    before = std::move(after);
    start = now;
  }
  return 0;
}

}  // namespace rdma_exporter
