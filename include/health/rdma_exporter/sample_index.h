// Metric samples of one collection (or one snapshot), looked up by family name and label subset:
// what the doctor's checks and the node page read instead of the kernel.
#pragma once

#include <prometheus/metric_family.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_exporter {

using LabelMap = std::map<std::string, std::string>;

class SampleIndex {
 public:
  struct Sample {
    LabelMap labels;
    double value = 0;
  };
  explicit SampleIndex(const std::vector<prometheus::MetricFamily>& families);
  // Samples of a family, in collection order (empty if none).
  const std::vector<Sample>& All(const std::string& family) const;
  // The first sample of family whose labels include all of `labels`.
  const Sample* Find(const std::string& family, const LabelMap& labels) const;
  std::optional<double> Value(const std::string& family, const LabelMap& labels) const;

 private:
  std::map<std::string, std::vector<Sample>> families_;
};

// Lookups by a family name constant of rdma_exporter/metric_names.h (metric::k*), which are
// string_views while SampleIndex is keyed by std::string.
const std::vector<SampleIndex::Sample>& AllSamples(const SampleIndex& index,
                                                   std::string_view family);
const SampleIndex::Sample* FindSample(const SampleIndex& index, std::string_view family,
                                      const LabelMap& labels);
std::optional<double> SampleValue(const SampleIndex& index, std::string_view family,
                                  const LabelMap& labels);

// JSON string literal of s (quotes included).
std::string JsonString(std::string_view s);

}  // namespace rdma_exporter
