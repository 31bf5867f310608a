// Helpers shared by the subcommands' files (show-gids, show-counters, ibdev2netdev, doctor);
// private to the cli library.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_exporter/cli.h"

namespace rdma_exporter {

// s padded with spaces to width columns (never cut).
std::string PadRight(const std::string& s, size_t width);
std::string PadLeft(const std::string& s, size_t width);

}  // namespace rdma_exporter
