// The metric model: collectors add samples to a MetricSink, which groups them into
// prometheus-cpp MetricFamily values. The text serializer of prometheus-cpp renders them; it
// knows nothing about where values came from.
#pragma once

#include <prometheus/metric_family.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rdma_exporter {

using Label = prometheus::ClientMetric::Label;
using Labels = std::vector<Label>;

class MetricSink {
 public:
  // Adds one sample. The first call for a name fixes its help text and type.
  void Gauge(std::string_view name, std::string_view help, const Labels& labels, double value) {
    Add(name, help, prometheus::MetricType::Gauge, labels, value);
  }
  void Counter(std::string_view name, std::string_view help, const Labels& labels, double value) {
    Add(name, help, prometheus::MetricType::Counter, labels, value);
  }
  // For values whose type is not known (generic ethtool stats).
  void Untyped(std::string_view name, std::string_view help, const Labels& labels, double value) {
    Add(name, help, prometheus::MetricType::Untyped, labels, value);
  }

  // Families sorted by name, empty ones dropped; the sink is left empty.
  std::vector<prometheus::MetricFamily> Take();
  // Appends families taken from another sink (used to merge collectors' output).
  void Merge(std::vector<prometheus::MetricFamily> families);
  size_t sample_count() const { return samples_; }

 private:
  void Add(std::string_view name, std::string_view help, prometheus::MetricType type,
           const Labels& labels, double value);
  prometheus::MetricFamily& Family(std::string_view name, std::string_view help,
                                   prometheus::MetricType type);
  std::vector<prometheus::MetricFamily> families_;
  std::unordered_map<std::string, size_t> index_;
  size_t samples_ = 0;
};

// Renders families in the Prometheus text exposition format 0.0.4.
std::string RenderText(const std::vector<prometheus::MetricFamily>& families);

// Turns an arbitrary counter or file name into a valid lower-case metric-name fragment:
// [a-z0-9_], no leading digit, no repeated or trailing underscores.
std::string SanitizeMetricName(std::string_view raw);

// prefix + sanitized raw name + suffix, such that promtool's lint accepts it: a metric type word
// as a name component ("_counter_", "_gauge" at the end, ...) is made plural
// ("new_fancy_counter" -> rdma_hw_new_fancy_counters_total).
std::string GenericMetricName(std::string_view prefix, std::string_view raw,
                              std::string_view suffix);

}  // namespace rdma_exporter
