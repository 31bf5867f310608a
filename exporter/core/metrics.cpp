#include "rdma_exporter/metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <sstream>

namespace rdma_exporter {

prometheus::MetricFamily& MetricSink::Family(std::string_view name, std::string_view help,
                                             prometheus::MetricType type) {
  std::string key(name);
  auto it = index_.find(key);
  if (it != index_.end()) return families_[it->second];
  index_.emplace(key, families_.size());
  prometheus::MetricFamily family;
  family.name = std::move(key);
  family.help = std::string(help);
  family.type = type;
  families_.push_back(std::move(family));
  return families_.back();
}

void MetricSink::Add(std::string_view name, std::string_view help, prometheus::MetricType type,
                     const Labels& labels, double value) {
  auto& family = Family(name, help, type);
  prometheus::ClientMetric metric;
  metric.label = labels;
  switch (type) {
    case prometheus::MetricType::Counter:
      metric.counter.value = value;
      break;
    case prometheus::MetricType::Gauge:
      metric.gauge.value = value;
      break;
    default:
      metric.untyped.value = value;
  }
  family.metric.push_back(std::move(metric));
  ++samples_;
}

void MetricSink::Merge(std::vector<prometheus::MetricFamily> families) {
  for (auto& incoming : families) {
    auto& family = Family(incoming.name, incoming.help, incoming.type);
    samples_ += incoming.metric.size();
    for (auto& m : incoming.metric)
      family.metric.push_back(std::move(m));
  }
}

std::vector<prometheus::MetricFamily> MetricSink::Take() {
  std::vector<prometheus::MetricFamily> out;
  out.reserve(families_.size());
  for (auto& family : families_) {
    if (!family.metric.empty()) out.push_back(std::move(family));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  families_.clear();
  index_.clear();
  samples_ = 0;
  return out;
}

std::string RenderText(const std::vector<prometheus::MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

std::string SanitizeMetricName(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    bool ok = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
    if (ok) {
      out.push_back(l);
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');
    }
  }
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(0, "x");
  return out;
}

std::string GenericMetricName(std::string_view prefix, std::string_view raw,
                              std::string_view suffix) {
  std::string name = std::string(prefix) + SanitizeMetricName(raw) + std::string(suffix);
  for (std::string_view type : {"counter", "gauge", "histogram", "summary"}) {
    std::string word = "_" + std::string(type);
    for (size_t pos = name.find(word); pos != std::string::npos; pos = name.find(word, pos + 1)) {
      size_t end = pos + word.size();
      if (end == name.size() || name[end] == '_') name.insert(end, "s");
    }
  }
  return name;
}

}  // namespace rdma_exporter
