// The metric model: collectors add samples to a MetricSink; the sink writes the Prometheus text
// exposition itself and gives prometheus-cpp MetricFamily values to whoever needs the model
// (tests, the CLI, the landing page).
//
// A sink is meant to live as long as its poller: it remembers every series it has seen, with the
// series' rendered `name{labels} ` prefix, so a poll whose series are those of the last one (the
// usual case: labels change only with the inventory) finds each prefix with a few string
// comparisons and writes only the value. Building a prometheus::ClientMetric per sample and
// serialising it through an ostream was most of a poll's user-space CPU (issue 17).
#pragma once

#include <prometheus/metric_family.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rdma_exporter {

using Label = prometheus::ClientMetric::Label;
using Labels = std::vector<Label>;

class MetricSink {
 public:
  MetricSink();
  ~MetricSink();
  MetricSink(MetricSink&&) noexcept;
  MetricSink& operator=(MetricSink&&) noexcept;

  // Adds one sample to the current poll. The first call for a name fixes its help text and type.
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

  // The current poll's families, sorted by name, empty ones dropped; then starts a new poll.
  std::vector<prometheus::MetricFamily> Take();
  // Adds every sample of families (prometheus-cpp's model) to the current poll.
  void Merge(const std::vector<prometheus::MetricFamily>& families);
  // Starts a new poll: the samples are dropped, and so are the remembered series that the poll
  // just ended did not add (a vanished port's series cost no memory afterwards).
  void Clear();
  size_t sample_count() const { return samples_; }

  // The current polls of sinks in the text exposition format 0.0.4: families sorted by name; a
  // family that several sinks hold is written once, its samples in sink order, then in the order
  // they were added. Values in the shortest form that reads back to the same double.
  friend std::string RenderText(std::span<const MetricSink* const> sinks);

 private:
  struct Family;
  void Add(std::string_view name, std::string_view help, prometheus::MetricType type,
           const Labels& labels, double value);
  Family& FindFamily(std::string_view name, std::string_view help, prometheus::MetricType type);

  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::vector<std::unique_ptr<Family>> families_;  // in order of first use
  std::unordered_map<std::string, size_t, NameHash, std::equal_to<>> index_;
  size_t samples_ = 0;
  uint64_t poll_ = 0;  // counts Clear() calls: series not added since the last one are dropped
};

std::string RenderText(std::span<const MetricSink* const> sinks);
inline std::string RenderText(const MetricSink& sink) {
  const MetricSink* one[] = {&sink};
  return RenderText(one);
}
// Renders prometheus-cpp families in the same format (for callers holding the model).
std::string RenderText(const std::vector<prometheus::MetricFamily>& families);

// Reads text written by RenderText back into prometheus-cpp's model (HELP, TYPE, counter, gauge
// and untyped samples; the only lines the exporter writes). Lines it cannot read are skipped.
std::vector<prometheus::MetricFamily> ParseText(std::string_view text);

// Appends value as the exposition writes it: integers (the common case: counters) as integers,
// others in the shortest form that reads back to the same double; NaN and infinities as
// prometheus-cpp writes them ("Nan", "+Inf", "-Inf").
void AppendValue(std::string* out, double value);

// Turns an arbitrary counter or file name into a valid lower-case metric-name fragment:
// [a-z0-9_], no leading digit, no repeated or trailing underscores.
std::string SanitizeMetricName(std::string_view raw);

// prefix + sanitized raw name + suffix, such that promtool's lint accepts it: a metric type word
// as a name component ("_counter_", "_gauge" at the end, ...) is made plural
// ("new_fancy_counter" -> rdma_hw_new_fancy_counters_total).
std::string GenericMetricName(std::string_view prefix, std::string_view raw,
                              std::string_view suffix);

}  // namespace rdma_exporter
