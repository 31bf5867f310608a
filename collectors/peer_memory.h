// The last known link peer of each port (lldp and ib_peer collectors). A port whose link is down
// hears no LLDP and answers no SMP, yet its cable still ends on the same switch port: that is
// when "which switch" matters (RdmaSwitchPortsDegraded counts down ports per switch), so the
// last answer is exported until the link is up again and says otherwise, or the device goes.
#pragma once

#include <map>
#include <set>
#include <string>

#include "rdma_exporter/inventory.h"
#include "rdma_exporter/metrics.h"

namespace rdma_exporter {

class PeerMemory {
 public:
  // Remembers the labels of a peer just heard on key (device/port/netdev).
  void Heard(const std::string& key, const Labels& labels) { last_[key] = labels; }
  // The remembered labels of key, or nullptr.
  const Labels* Last(const std::string& key) const {
    auto it = last_.find(key);
    return it == last_.end() ? nullptr : &it->second;
  }
  // A peer heard on a link that is up replaces the memory; a link up with no peer forgets it.
  void Forget(const std::string& key) { last_.erase(key); }
  // Drops the peers of devices no longer in the inventory (keys start with "<device>/").
  void Keep(const Inventory& inventory) {
    std::set<std::string> devices;
    for (const auto& d : inventory.devices)
      devices.insert(d.name);
    for (auto it = last_.begin(); it != last_.end();) {
      it =
          devices.count(it->first.substr(0, it->first.find('/'))) ? std::next(it) : last_.erase(it);
    }
  }

 private:
  std::map<std::string, Labels> last_;
};

}  // namespace rdma_exporter
