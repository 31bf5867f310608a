#include "cli_internal.h"

namespace rdma_exporter {

const std::vector<SampleIndex::Sample>& AllSamples(const SampleIndex& index,
                                                   std::string_view family) {
  return index.All(std::string(family));
}

const SampleIndex::Sample* FindSample(const SampleIndex& index, std::string_view family,
                                      const LabelMap& labels) {
  return index.Find(std::string(family), labels);
}

std::optional<double> SampleValue(const SampleIndex& index, std::string_view family,
                                  const LabelMap& labels) {
  return index.Value(std::string(family), labels);
}

std::string PadRight(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string PadLeft(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace rdma_exporter
