// rdma_fabric_sim's command line: the usage text and the flag parser (one table row a flag).
#include <cctype>
#include <climits>
#include <cmath>
#include <cstddef>
#include <string>

#include "fabric_sim.h"
#include "format.h"
#include "scenarios.h"

namespace rdma_fabric_sim {

std::string SimUsage() {
  std::string u =
      "Usage: rdma_fabric_sim --root DIR [flags]\n"
      "\n"
      "Writes a fake sysfs tree of RDMA devices to DIR/sys (removed and rewritten at start-up)\n"
      "and keeps it moving, one tick per --interval, until SIGINT/SIGTERM or --ticks.\n"
      "Run the exporter with --path.sysfs=DIR/sys --path.fixtures=DIR/fixtures.\n"
      "\n"
      "Flags:\n"
      "  --root DIR            output directory (required); DIR/sys is the sysfs root\n"
      "  --devices N           physical functions / rxe devices (default 8)\n"
      "  --ports P             ports per PF (default 1)\n"
      "  --vfs V               SR-IOV VFs of the first PF, one RDMA device each (default 1)\n"
      "  --lag N               RoCE LAG NICs: mlx5_bond_N on bondN over two ConnectX-6 Dx\n"
      "                        PFs (mlx5 layout, default 1)\n"
      "  --e810 N              Intel E810 RoCE NICs: irdma device on an ice netdev (mlx5\n"
      "                        layout, default 1)\n"
      "  --layout mlx5|rxe     device type (default mlx5)\n"
      "  --link-layer mixed|roce|ib\n"
      "                        mixed: even PFs RoCE/Ethernet, odd PFs InfiniBand (default)\n"
      "  --scenario NAME       fault scenario (default healthy)\n"
      "  --fault-device NAME   device the scenario hits, port 1 (default mlx5_1; also\n"
      "                        mlx5_bond_0 (the RoCE LAG) or rocep51s0f0 (the E810))\n"
      "  --scenario-file PATH  re-read before every tick: \"SCENARIO [FAULT_DEVICE]\" switches\n"
      "                        the scenario at runtime (healthy = fault cleared)\n"
      "  --interval DURATION   simulated time per tick, e.g. 1s, 500ms (default 1s)\n"
      "  --ticks N             advance N ticks without pacing, then exit; 0 = write the\n"
      "                        initial tree only (default: run forever)\n"
      "  --seed N              random seed (default 1)\n"
      "  --kubelet-socket PATH serve a kubelet pod-resources API on PATH (gRPC, unix\n"
      "                        socket) with pods holding the fabric's devices\n"
      "  --help                show this help\n"
      "\n"
      "Scenarios:\n";
  for (const Scenario& s : Scenarios())
    u += Fmt("  %-16s %s\n", s.name, s.description);
  u += "\n"
       "  * RoCE-only: if --fault-device is an InfiniBand device (or a VF), the first RoCE PF\n"
       "    is used instead (mlx5_0 with the default --link-layer mixed). Configuration faults\n"
       "    hold from tick 0.\n"
       "\n"
       "Besides DIR/sys, the simulator writes DIR/fixtures (ethtool/<netdev>, dcb/<netdev>) for\n"
       "the exporter's --path.fixtures=DIR/fixtures.\n";
  return u;
}

namespace {

bool ParseInt(const std::string& s, long long lo, long long hi, long long* out) {
  if (s.empty()) return false;
  size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &pos, 10);
  } catch (...) {
    return false;
  }
  if (pos != s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseU64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  size_t pos = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &pos, 10);
  } catch (...) {
    return false;
  }
  if (pos != s.size()) return false;
  *out = v;
  return true;
}

// "1s", "500ms", "1.5s", "2m", "1h", "250us"; a bare number means seconds.
bool ParseDuration(const std::string& s, double* seconds) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.'))
    ++i;
  if (i == 0) return false;
  double v = 0;
  try {
    size_t pos = 0;
    v = std::stod(s.substr(0, i), &pos);
    if (pos != i) return false;
  } catch (...) {
    return false;
  }
  const std::string unit = s.substr(i);
  double mult = 0;
  if (unit.empty() || unit == "s") {
    mult = 1;
  } else if (unit == "ms") {
    mult = 1e-3;
  } else if (unit == "us") {
    mult = 1e-6;
  } else if (unit == "m") {
    mult = 60;
  } else if (unit == "h") {
    mult = 3600;
  } else {
    return false;
  }
  const double out = v * mult;
  if (!(out > 0) || !std::isfinite(out)) return false;
  *seconds = out;
  return true;
}

// What the flags set. The flag table's setters write here.
struct ParsedFlags {
  SimConfig config;
  int ticks = -1;
  bool fault_given = false;
};

// Stores `value` of one flag in `flags`; false with the reason in *why if the value is bad.
using FlagSetter = bool (*)(const std::string& value, ParsedFlags& flags, std::string* why);

struct FlagDef {
  const char* name;
  FlagSetter set;
};

bool Reject(const char* reason, std::string* why) {
  *why = reason;
  return false;
}

bool SetInt(const std::string& value, long long lo, long long hi, const char* expected, int* out,
            std::string* why) {
  long long n = 0;
  if (!ParseInt(value, lo, hi, &n)) return Reject(expected, why);
  *out = static_cast<int>(n);
  return true;
}

bool SetNonEmpty(const std::string& value, std::string* out, std::string* why) {
  if (value.empty()) return Reject("must not be empty", why);
  *out = value;
  return true;
}

// One accepted value of an enumerated flag.
template <typename T>
struct Choice {
  const char* name;
  T value;
};

template <typename T, size_t N>
bool SetChoice(const std::string& value, const Choice<T> (&choices)[N], const char* expected,
               T* out, std::string* why) {
  for (const Choice<T>& c : choices) {
    if (value == c.name) {
      *out = c.value;
      return true;
    }
  }
  return Reject(expected, why);
}

constexpr Choice<SimConfig::Layout> kLayouts[] = {{"mlx5", SimConfig::Layout::Mlx5},
                                                  {"rxe", SimConfig::Layout::Rxe}};
constexpr Choice<SimConfig::LinkLayer> kLinkLayers[] = {{"mixed", SimConfig::LinkLayer::Mixed},
                                                        {"roce", SimConfig::LinkLayer::Roce},
                                                        {"ib", SimConfig::LinkLayer::Ib}};

bool SetScenario(const std::string& value, ParsedFlags& f, std::string* why) {
  if (FindScenario(value) == nullptr) {
    std::string names;
    for (const std::string& s : ScenarioNames())
      names += (names.empty() ? "" : ", ") + s;
    *why = "expected one of " + names;
    return false;
  }
  f.config.scenario = value;
  return true;
}

constexpr FlagDef kFlags[] = {
    {"--root", [](const std::string& v, ParsedFlags& f,
                  std::string* why) { return SetNonEmpty(v, &f.config.root, why); }},
    {"--devices",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetInt(v, 1, 256, "expected an integer 1..256", &f.config.devices, why);
     }},
    {"--ports",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetInt(v, 1, 64, "expected an integer 1..64", &f.config.ports, why);
     }},
    {"--lag",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetInt(v, 0, 8, "expected an integer 0..8", &f.config.lag, why);
     }},
    {"--e810",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetInt(v, 0, 8, "expected an integer 0..8", &f.config.e810, why);
     }},
    {"--vfs",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetInt(v, 0, 64, "expected an integer 0..64", &f.config.vfs, why);
     }},
    {"--layout",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetChoice(v, kLayouts, "expected mlx5 or rxe", &f.config.layout, why);
     }},
    {"--link-layer",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetChoice(v, kLinkLayers, "expected mixed, roce or ib", &f.config.link_layer, why);
     }},
    {"--scenario", SetScenario},
    {"--fault-device",
     [](const std::string& v, ParsedFlags& f, std::string*) {
       f.config.fault_device = v;
       f.fault_given = true;
       return true;
     }},
    {"--interval",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return ParseDuration(v, &f.config.interval_seconds) ||
              Reject("expected a positive duration like 1s or 500ms", why);
     }},
    {"--ticks",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetInt(v, 0, INT_MAX, "expected an integer >= 0", &f.ticks, why);
     }},
    {"--seed",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return ParseU64(v, &f.config.seed) || Reject("expected an unsigned integer", why);
     }},
    {"--scenario-file",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetNonEmpty(v, &f.config.scenario_file, why);
     }},
    {"--kubelet-socket",
     [](const std::string& v, ParsedFlags& f, std::string* why) {
       return SetNonEmpty(v, &f.config.kubelet_socket, why);
     }},
};

const FlagDef* FindFlag(const std::string& name) {
  for (const FlagDef& def : kFlags) {
    if (name == def.name) return &def;
  }
  return nullptr;
}

// Checks the fault device against the device list and spells it for the layout ("rxe1" with
// --layout mlx5 is "mlx5_1"). Without --fault-device and fewer than 2 devices it is device 0.
bool CheckFaultDevice(ParsedFlags& f, std::string* error) {
  SimConfig& c = f.config;
  const bool mlx5 = c.layout == SimConfig::Layout::Mlx5;
  const int count = c.devices + (mlx5 ? c.vfs : 0);
  if (!f.fault_given && count < 2) c.fault_device = mlx5 ? "mlx5_0" : "rxe0";
  const std::string& name = c.fault_device;
  // The demo's extra NICs (mlx5_bond_<k>, the E810's rocep<bus>s0f0) keep their names; whether
  // they exist is checked when the fabric is built (ResolveFault).
  if (mlx5 && (name.rfind("mlx5_bond_", 0) == 0 || name.rfind("rocep", 0) == 0)) return true;
  long long idx = -1;
  bool ok = false;
  if (name.rfind("mlx5_", 0) == 0) {
    ok = ParseInt(name.substr(5), 0, count - 1, &idx);
  } else if (name.rfind("rxe", 0) == 0) {
    ok = ParseInt(name.substr(3), 0, count - 1, &idx);
  }
  if (!ok) {
    *error = "invalid value '" + name + "' for --fault-device: expected " +
             (mlx5 ? "mlx5_0.." : "rxe0..") + (mlx5 ? "mlx5_" : "rxe") + std::to_string(count - 1);
    return false;
  }
  c.fault_device = (mlx5 ? "mlx5_" : "rxe") + std::to_string(idx);
  return true;
}

}  // namespace

bool ParseSimArgs(int argc, char** argv, SimConfig* config, int* ticks, std::string* error) {
  std::string scratch;
  if (error == nullptr) error = &scratch;
  ParsedFlags flags;
  flags.config = *config;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (arg.rfind("--", 0) != 0) {
      *error = "unexpected argument '" + arg + "' (see --help)";
      return false;
    }
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    const FlagDef* def = FindFlag(arg);
    if (def == nullptr) {
      *error = "unknown flag '" + arg + "' (see --help)";
      return false;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        *error = "flag " + arg + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    std::string why;
    if (!def->set(value, flags, &why)) {
      *error = "invalid value '" + value + "' for " + arg + ": " + why;
      return false;
    }
  }
  if (flags.config.root.empty()) {
    *error = "missing required flag --root (see --help)";
    return false;
  }
  if (!CheckFaultDevice(flags, error)) return false;
  *config = flags.config;
  *ticks = flags.ticks;
  return true;
}

}  // namespace rdma_fabric_sim
