#include "rdma_exporter/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace rdma_exporter {

struct MetricSink::Family {
  struct Series {
    Labels labels;
    std::string prefix;  // `name{label="value",...} `
    uint64_t used_in_poll = 0;
  };
  std::string name;
  std::string help;
  prometheus::MetricType type = prometheus::MetricType::Untyped;
  std::string header;  // # HELP and # TYPE lines
  std::vector<Series> series;
  std::unordered_multimap<size_t, uint32_t> by_labels;  // label hash -> index in series
  // The series expected next: polls add a family's series in the same order each time, so the
  // one after the last match is almost always the right one and no hash is computed.
  size_t hint = 0;
  std::vector<std::pair<uint32_t, double>> samples;  // this poll: series index, value
};

namespace {

std::string_view TypeName(prometheus::MetricType type) {
  switch (type) {
    case prometheus::MetricType::Counter:
      return "counter";
    case prometheus::MetricType::Gauge:
      return "gauge";
    case prometheus::MetricType::Summary:
      return "summary";
    case prometheus::MetricType::Histogram:
      return "histogram";
    default:
      return "untyped";
  }
}

// Label values escape backslash, double quote and newline; HELP text backslash and newline.
void AppendEscaped(std::string* out, std::string_view s, bool quote) {
  for (char c : s) {
    if (c == '\\' || (quote && c == '"')) {
      out->push_back('\\');
      out->push_back(c);
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

std::string SeriesPrefix(std::string_view name, const Labels& labels) {
  std::string out(name);
  if (!labels.empty()) {
    out.push_back('{');
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out.push_back(',');
      out.append(labels[i].name);
      out.append("=\"");
      AppendEscaped(&out, labels[i].value, true);
      out.push_back('"');
    }
    out.push_back('}');
  }
  out.push_back(' ');
  return out;
}

size_t HashLabels(const Labels& labels) {
  std::hash<std::string_view> hash;
  size_t h = labels.size();
  for (const auto& l : labels) {
    h = h * 1099511628211u ^ hash(l.name);
    h = h * 1099511628211u ^ hash(l.value);
  }
  return h;
}

bool SameLabels(const Labels& a, const Labels& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  }
  return true;
}

double ValueOf(const prometheus::ClientMetric& m, prometheus::MetricType type) {
  switch (type) {
    case prometheus::MetricType::Counter:
      return m.counter.value;
    case prometheus::MetricType::Gauge:
      return m.gauge.value;
    default:
      return m.untyped.value;
  }
}

void SetValue(prometheus::ClientMetric* m, prometheus::MetricType type, double value) {
  switch (type) {
    case prometheus::MetricType::Counter:
      m->counter.value = value;
      break;
    case prometheus::MetricType::Gauge:
      m->gauge.value = value;
      break;
    default:
      m->untyped.value = value;
  }
}

}  // namespace

MetricSink::MetricSink() = default;
MetricSink::~MetricSink() = default;
MetricSink::MetricSink(MetricSink&&) noexcept = default;
MetricSink& MetricSink::operator=(MetricSink&&) noexcept = default;

MetricSink::Family& MetricSink::FindFamily(std::string_view name, std::string_view help,
                                           prometheus::MetricType type) {
  auto it = index_.find(name);
  if (it != index_.end()) return *families_[it->second];
  auto family = std::make_unique<Family>();
  family->name = std::string(name);
  family->help = std::string(help);
  family->type = type;
  if (!help.empty()) {
    family->header.append("# HELP ").append(name).append(" ");
    AppendEscaped(&family->header, help, false);
    family->header.push_back('\n');
  }
  family->header.append("# TYPE ").append(name).append(" ").append(TypeName(type)).append("\n");
  index_.emplace(family->name, families_.size());
  families_.push_back(std::move(family));
  return *families_.back();
}

void MetricSink::Add(std::string_view name, std::string_view help, prometheus::MetricType type,
                     const Labels& labels, double value) {
  Family& f = FindFamily(name, help, type);
  size_t index = f.series.size();
  if (f.hint < f.series.size() && SameLabels(f.series[f.hint].labels, labels)) {
    index = f.hint;
  } else {
    size_t hash = HashLabels(labels);
    auto [match, end] = f.by_labels.equal_range(hash);
    for (; match != end; ++match) {
      if (SameLabels(f.series[match->second].labels, labels)) {
        index = match->second;
        break;
      }
    }
    if (index == f.series.size()) {
      f.series.push_back({labels, SeriesPrefix(f.name, labels), 0});
      f.by_labels.emplace(hash, static_cast<uint32_t>(index));
    }
  }
  f.series[index].used_in_poll = poll_;
  f.hint = index + 1;
  f.samples.emplace_back(static_cast<uint32_t>(index), value);
  ++samples_;
}

void MetricSink::Clear() {
  bool family_gone = false;
  for (auto& family : families_) {
    Family& f = *family;
    f.samples.clear();
    f.hint = 0;
    bool unused = std::any_of(f.series.begin(), f.series.end(),
                              [&](const Family::Series& s) { return s.used_in_poll != poll_; });
    if (!unused) continue;
    std::erase_if(f.series, [&](const Family::Series& s) { return s.used_in_poll != poll_; });
    f.by_labels.clear();
    for (size_t i = 0; i < f.series.size(); ++i) {
      f.by_labels.emplace(HashLabels(f.series[i].labels), static_cast<uint32_t>(i));
    }
    family_gone |= f.series.empty();
  }
  if (family_gone) {
    std::erase_if(families_, [](const auto& f) { return f->series.empty(); });
    index_.clear();
    for (size_t i = 0; i < families_.size(); ++i)
      index_.emplace(families_[i]->name, i);
  }
  ++poll_;
  samples_ = 0;
}

void MetricSink::Merge(const std::vector<prometheus::MetricFamily>& families) {
  for (const auto& family : families) {
    for (const auto& m : family.metric)
      Add(family.name, family.help, family.type, m.label, ValueOf(m, family.type));
  }
}

std::vector<prometheus::MetricFamily> MetricSink::Take() {
  std::vector<prometheus::MetricFamily> out;
  for (const auto& family : families_) {
    const Family& f = *family;
    if (f.samples.empty()) continue;
    prometheus::MetricFamily mf;
    mf.name = f.name;
    mf.help = f.help;
    mf.type = f.type;
    mf.metric.reserve(f.samples.size());
    for (const auto& [index, value] : f.samples) {
      prometheus::ClientMetric m;
      m.label = f.series[index].labels;
      SetValue(&m, f.type, value);
      mf.metric.push_back(std::move(m));
    }
    out.push_back(std::move(mf));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  Clear();
  return out;
}

void AppendValue(std::string* out, double value) {
  if (std::isnan(value)) {
    out->append("Nan");
    return;
  }
  if (std::isinf(value)) {
    out->append(value < 0 ? "-Inf" : "+Inf");
    return;
  }
  char buf[32];
  std::to_chars_result result{};
  // Every integer below 2^63 converts exactly; written without an exponent ("1000000", not the
  // shortest "1e+06"), as the exposition has always shown counters.
  if (value == std::trunc(value) && std::fabs(value) < 9.2e18) {
    result = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(value));
  } else {
    result = std::to_chars(buf, buf + sizeof(buf), value);
  }
  out->append(buf, result.ptr);
}

std::string RenderText(std::span<const MetricSink* const> sinks) {
  using Family = MetricSink::Family;
  std::vector<const Family*> families;
  size_t bytes = 0;
  for (const MetricSink* sink : sinks) {
    for (const auto& family : sink->families_) {
      if (family->samples.empty()) continue;
      families.push_back(family.get());
      bytes += family->header.size();
      for (const auto& sample : family->samples)
        bytes += family->series[sample.first].prefix.size() + 24;
    }
  }
  // Stable: a family several sinks hold keeps its samples in sink order.
  std::stable_sort(families.begin(), families.end(),
                   [](const Family* a, const Family* b) { return a->name < b->name; });
  std::string out;
  out.reserve(bytes);
  for (size_t i = 0; i < families.size(); ++i) {
    const Family& f = *families[i];
    if (i == 0 || families[i - 1]->name != f.name) out.append(f.header);
    for (const auto& [index, value] : f.samples) {
      out.append(f.series[index].prefix);
      AppendValue(&out, value);
      out.push_back('\n');
    }
  }
  return out;
}

std::string RenderText(const std::vector<prometheus::MetricFamily>& families) {
  MetricSink sink;
  sink.Merge(families);
  return RenderText(sink);
}

namespace {

// Reads a label value or HELP text up to an unescaped `end` character (0: the end of s).
std::string Unescape(std::string_view s, char end, size_t* pos) {
  std::string out;
  while (*pos < s.size() && (end == 0 || s[*pos] != end)) {
    char c = s[(*pos)++];
    if (c == '\\' && *pos < s.size()) {
      char e = s[(*pos)++];
      out.push_back(e == 'n' ? '\n' : e);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool ParseValue(std::string_view s, double* value) {
  if (s == "Nan" || s == "NaN") {
    *value = std::nan("");
    return true;
  }
  if (s == "+Inf" || s == "-Inf") {
    *value = s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  auto result = std::from_chars(s.data(), s.data() + s.size(), *value);
  return result.ec == std::errc() && result.ptr == s.data() + s.size();
}

prometheus::MetricType TypeFromName(std::string_view name) {
  if (name == "counter") return prometheus::MetricType::Counter;
  if (name == "gauge") return prometheus::MetricType::Gauge;
  return prometheus::MetricType::Untyped;
}

// One sample line: name, optional {labels}, a space, the value (a timestamp after it is ignored).
bool ParseSample(std::string_view line, std::string* name, prometheus::ClientMetric* m,
                 double* value) {
  size_t pos = line.find_first_of("{ ");
  if (pos == std::string_view::npos || pos == 0) return false;
  *name = std::string(line.substr(0, pos));
  if (line[pos] == '{') {
    ++pos;
    while (pos < line.size() && line[pos] != '}') {
      size_t eq = line.find("=\"", pos);
      if (eq == std::string_view::npos) return false;
      Label label;
      label.name = std::string(line.substr(pos, eq - pos));
      pos = eq + 2;
      label.value = Unescape(line, '"', &pos);
      if (pos >= line.size()) return false;
      ++pos;  // the closing quote
      m->label.push_back(std::move(label));
      if (pos < line.size() && line[pos] == ',') ++pos;
    }
    if (pos >= line.size()) return false;
    ++pos;  // '}'
  }
  if (pos >= line.size() || line[pos] != ' ') return false;
  std::string_view rest = line.substr(pos + 1);
  return ParseValue(rest.substr(0, rest.find(' ')), value);
}

}  // namespace

std::vector<prometheus::MetricFamily> ParseText(std::string_view text) {
  std::vector<prometheus::MetricFamily> out;
  std::unordered_map<std::string, size_t> index;
  auto family = [&](const std::string& name) -> prometheus::MetricFamily& {
    auto [it, added] = index.emplace(name, out.size());
    if (added) {
      out.emplace_back();
      out.back().name = name;
      out.back().type = prometheus::MetricType::Untyped;
    }
    return out[it->second];
  };
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    for (std::string_view kind : {std::string_view("# HELP "), std::string_view("# TYPE ")}) {
      if (!line.starts_with(kind)) continue;
      std::string_view rest = line.substr(kind.size());
      size_t space = rest.find(' ');
      if (space == std::string_view::npos) break;
      auto& f = family(std::string(rest.substr(0, space)));
      size_t pos = space + 1;
      if (kind == "# HELP ") {
        f.help = Unescape(rest, 0, &pos);
      } else {
        f.type = TypeFromName(rest.substr(pos));
      }
    }
    if (line.empty() || line[0] == '#') continue;
    std::string name;
    prometheus::ClientMetric m;
    double value = 0;
    if (!ParseSample(line, &name, &m, &value)) continue;
    auto& f = family(name);
    SetValue(&m, f.type, value);
    f.metric.push_back(std::move(m));
  }
  return out;
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
