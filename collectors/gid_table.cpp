#include "gid_table.h"

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "common.h"
#include "rdma_exporter/metric_names.h"
#include "rdma_exporter/parse.h"

namespace rdma_exporter {
namespace {

std::vector<unsigned> NumericNames(const std::vector<std::string>& names) {
  std::vector<unsigned> out;
  for (const auto& n : names) {
    unsigned v = 0;
    auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
    if (ec == std::errc() && ptr == n.data() + n.size()) out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// gid_attrs files of an empty entry (or an entry without netdev) fail with EINVAL; older
// kernels or fixtures simply lack them. Both mean "no value"; other errors are recorded.
std::string ReadGidAttr(CollectContext& ctx, const std::string& path, std::string* buf) {
  int err = ctx.sysfs().ReadFile(path, buf);
  if (err == 0) return std::string(Trim(*buf));
  if (err != EINVAL && err != ENOENT) ctx.ReadFailed(path, err);
  return "";
}

}  // namespace

bool GidTableCollector::Collect(const Inventory& inventory, CollectContext& ctx, MetricSink& sink) {
  std::vector<std::string> names;
  std::string value;
  for (const auto& device : inventory.devices) {
    for (const auto& port : device.ports) {
      std::string dir = JoinPath(port.dir, "gids");
      int err = ctx.sysfs().ListAttributeDir(dir, &names);
      if (err != 0) {
        if (err != ENOENT) ctx.ReadFailed(dir, err);
        continue;
      }
      for (unsigned index : NumericNames(names)) {
        std::string idx = std::to_string(index);
        std::string path = JoinPath(dir, idx);
        if (!ctx.Read(path, &value)) continue;
        if (!IsValidGid(value)) {
          ctx.Malformed(path, value);
          continue;
        }
        if (IsEmptyGid(value)) continue;
        std::string gid(Trim(value));
        std::string type = ReadGidAttr(ctx, JoinPath(port.dir, "gid_attrs/types/" + idx), &value);
        std::string netdev = ReadGidAttr(ctx, JoinPath(port.dir, "gid_attrs/ndevs/" + idx), &value);
        sink.Gauge(metric::kGidInfo,
                   "A non-empty GID table entry; value is always 1. gid_type is the kernel's "
                   "string (\"RoCE v2\", \"IB/RoCE v1\"), netdev the entry's network interface.",
                   {{"device", device.name},
                    {"port", std::to_string(port.number)},
                    {"index", idx},
                    {"gid", gid},
                    {"gid_type", type},
                    {"netdev", netdev}},
                   1);
      }
    }
  }
  return true;
}

}  // namespace rdma_exporter
