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

using LabelMap = std::map<std::string, std::string>;

// SampleIndex lookups by a family name constant of rdma_exporter/metric_names.h (metric::k*),
// which are string_views while SampleIndex is keyed by std::string.
const std::vector<SampleIndex::Sample>& AllSamples(const SampleIndex& index,
                                                   std::string_view family);
const SampleIndex::Sample* FindSample(const SampleIndex& index, std::string_view family,
                                      const LabelMap& labels);
std::optional<double> SampleValue(const SampleIndex& index, std::string_view family,
                                  const LabelMap& labels);

// s padded with spaces to width columns (never cut).
std::string PadRight(const std::string& s, size_t width);
std::string PadLeft(const std::string& s, size_t width);

}  // namespace rdma_exporter
