// ibdev2netdev: OFED's ibdev2netdev (RDMA device, port, netdev and link; -v adds the PCI
// address, HCA, part number, firmware and port state), from the exporter's sysfs reader and
// inventory, in the script's layout where operators parse it.
#include <cerrno>
#include <ostream>

#include "cli_internal.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

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

}  // namespace rdma_exporter
