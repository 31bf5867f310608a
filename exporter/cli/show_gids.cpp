// show-gids: MLNX_OFED's show_gids (Mellanox/mlnx-tools sbin/show_gids) from the gid collector's
// samples, in the script's layout where operators parse it.
#include <ostream>

#include "cli_internal.h"
#include "rdma_exporter/metric_names.h"

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

void PrintGidsJson(const std::vector<SampleIndex::Sample>& gids, std::ostream& out) {
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
}

}  // namespace

int ShowGids(const CliOptions& options, std::ostream& out, std::ostream& err) {
  CliNode node(options);
  if (!node.Discover(err)) return 1;
  SampleIndex samples(node.Collect(node.MakeCollectors({"gid"})));
  const auto& gids = AllSamples(samples, metric::kGidInfo);
  if (options.json) {
    PrintGidsJson(gids, out);
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

}  // namespace rdma_exporter
