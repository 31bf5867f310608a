#include "rdma_exporter/sample_index.h"

#include <cstdio>

namespace rdma_exporter {

SampleIndex::SampleIndex(const std::vector<prometheus::MetricFamily>& families) {
  for (const auto& family : families) {
    auto& samples = families_[family.name];
    for (const auto& metric : family.metric) {
      Sample sample;
      for (const auto& label : metric.label)
        sample.labels[label.name] = label.value;
      switch (family.type) {
        case prometheus::MetricType::Counter:
          sample.value = metric.counter.value;
          break;
        case prometheus::MetricType::Gauge:
          sample.value = metric.gauge.value;
          break;
        default:
          sample.value = metric.untyped.value;
      }
      samples.push_back(std::move(sample));
    }
  }
}

const std::vector<SampleIndex::Sample>& SampleIndex::All(const std::string& family) const {
  static const std::vector<Sample> kNone;
  auto it = families_.find(family);
  return it == families_.end() ? kNone : it->second;
}

const SampleIndex::Sample* SampleIndex::Find(
    const std::string& family, const std::map<std::string, std::string>& labels) const {
  for (const auto& sample : All(family)) {
    bool match = true;
    for (const auto& [name, value] : labels) {
      auto it = sample.labels.find(name);
      match = match && it != sample.labels.end() && it->second == value;
    }
    if (match) return &sample;
  }
  return nullptr;
}

std::optional<double> SampleIndex::Value(const std::string& family,
                                         const std::map<std::string, std::string>& labels) const {
  const Sample* sample = Find(family, labels);
  if (sample == nullptr) return std::nullopt;
  return sample->value;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

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

}  // namespace rdma_exporter
