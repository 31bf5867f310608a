#include "rdma_exporter/pci_topology.h"

#include <algorithm>
#include <cerrno>

#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

bool IsHex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// "dddd:bb:dd.f" in lower case (the domain may be longer than 4 digits: VMD domains).
bool IsPciAddress(std::string_view s) {
  size_t c1 = s.find(':');
  size_t c2 = s.find(':', c1 == std::string_view::npos ? c1 : c1 + 1);
  size_t dot = s.rfind('.');
  if (c1 == std::string_view::npos || c2 == std::string_view::npos ||
      dot == std::string_view::npos || dot < c2) {
    return false;
  }
  return c1 >= 4 && IsHex(s.substr(0, c1)) && c2 - c1 - 1 == 2 && IsHex(s.substr(c1 + 1, 2)) &&
         dot - c2 - 1 == 2 && IsHex(s.substr(c2 + 1, 2)) && s.size() - dot - 1 == 1 &&
         s[dot + 1] >= '0' && s[dot + 1] <= '7';
}

}  // namespace

std::optional<NvidiaGpu> ParseNvidiaGpuInformation(std::string_view text) {
  NvidiaGpu gpu;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, colon));
    std::string_view value = Trim(line.substr(colon + 1));
    if (key == "GPU UUID") {
      gpu.uuid = value;
    } else if (key == "Bus Location") {
      gpu.pci_address = value;
      std::transform(gpu.pci_address.begin(), gpu.pci_address.end(), gpu.pci_address.begin(),
                     [](char c) { return c >= 'A' && c <= 'F' ? static_cast<char>(c + 32) : c; });
    } else if (key == "Model") {
      gpu.model = value;
    }
  }
  // "GPU-" + 36 characters; MIG instances have their own "MIG-" UUIDs, never here.
  if (gpu.uuid.size() < 5 || gpu.uuid.compare(0, 4, "GPU-") != 0 ||
      !IsPciAddress(gpu.pci_address)) {
    return std::nullopt;
  }
  return gpu;
}

std::string_view PciDistanceName(PciDistance distance) {
  switch (distance) {
    case PciDistance::kPix:
      return "PIX";
    case PciDistance::kPxb:
      return "PXB";
    case PciDistance::kPhb:
      return "PHB";
    case PciDistance::kNode:
      return "NODE";
    case PciDistance::kSys:
      return "SYS";
  }
  return "SYS";
}

int ResolvePciLocation(SysfsReader& sysfs, const std::string& link, PciLocation* out) {
  std::string resolved;
  if (int err = sysfs.RealPath(link, &resolved); err != 0) return err;
  out->path.clear();
  std::string_view rest(resolved);
  if (rest.substr(0, 8) != "devices/") return EINVAL;
  rest.remove_prefix(8);
  while (!rest.empty()) {
    size_t slash = rest.find('/');
    out->path.emplace_back(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  }
  // A host bridge (pci<domain>:<bus>), then PCI functions only: anything else (a netdev or a
  // platform device) is not a PCI function.
  if (out->path.size() < 2 || out->path.front().compare(0, 3, "pci") != 0 ||
      !std::all_of(out->path.begin() + 1, out->path.end(), IsPciAddress)) {
    return EINVAL;
  }
  out->numa_node = -1;
  std::string numa;
  if (sysfs.ReadFile(JoinPath(resolved, "numa_node"), &numa) == 0) {
    auto node = ParseI64(numa);
    if (node && *node >= 0 && *node < 1 << 16) out->numa_node = static_cast<int>(*node);
  }
  return 0;
}

PciDistance ClassifyPciDistance(const PciLocation& a, const PciLocation& b) {
  if (a.path.empty() || b.path.empty() || a.path.front() != b.path.front()) {
    return a.numa_node == b.numa_node ? PciDistance::kNode : PciDistance::kSys;
  }
  // Bridges both paths share below the host bridge; the last shared one is where they meet.
  size_t shared = 0;
  while (1 + shared < a.path.size() && 1 + shared < b.path.size() &&
         a.path[1 + shared] == b.path[1 + shared]) {
    ++shared;
  }
  if (1 + shared == a.path.size() || 1 + shared == b.path.size()) return PciDistance::kPix;
  if (shared == 0) return PciDistance::kPhb;  // different root ports: through the root complex
  // Below the meeting point, each side passes through its downstream ports and any further
  // switches. One switch = its upstream port (the meeting point) and one downstream port on
  // each side; more components on either side = more switches.
  size_t below_a = a.path.size() - 1 - shared - 1;  // between the meeting point and the function
  size_t below_b = b.path.size() - 1 - shared - 1;
  return std::max(below_a, below_b) <= 1 ? PciDistance::kPix : PciDistance::kPxb;
}

}  // namespace rdma_exporter
