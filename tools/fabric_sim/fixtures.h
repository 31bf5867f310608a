// The fixtures renderer: writes root/fixtures/ethtool/<netdev> (`ethtool -S` text) and
// root/fixtures/dcb/<netdev> (`dcb` PFC and APP lines) for the exporter's --path.fixtures, the
// files its ethtool and DCB readers take instead of the kernel. See README.md "Fixtures".
#pragma once

#include <string>

#include "model.h"

namespace rdma_fabric_sim {

// Removes root/fixtures if an earlier run created it (marker file; a directory the simulator
// did not create is only written into), then creates ethtool/, dcb/ and the marker.
bool PrepareFixturesRoot(SimState& s, std::string* error);

// The fixture files of port `p` of `d`: mlx5 RoCE PFs get ethtool + DCB, rxe netdevs get the
// virtio ethtool stats and "unsupported" DCB. VFs and IPoIB netdevs get nothing.
bool RenderPortFixtures(SimState& s, const Device& d, const Port& p, std::string* error);

}  // namespace rdma_fabric_sim
