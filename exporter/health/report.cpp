// The doctor's report: checks built from their items, and printed as one line each or as JSON.
#include <algorithm>
#include <cstdio>

#include "rdma_exporter/health_checks.h"

namespace rdma_exporter::doctor {

const char* StatusName(Status s) {
  switch (s) {
    case Status::kPass:
      return "PASS";
    case Status::kSkip:
      return "SKIP";
    case Status::kWarn:
      return "WARN";
    case Status::kFail:
      break;
  }
  return "FAIL";
}

std::string Sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    }
  }
  return out;
}

namespace {

constexpr int kStatusCount = 4;

void PrintText(const std::vector<Check>& checks, std::ostream& out) {
  int counts[kStatusCount] = {0, 0, 0, 0};
  for (const auto& c : checks) {
    ++counts[static_cast<int>(c.status)];
    std::string name = c.name;
    if (name.size() < 18) name.resize(18, ' ');
    out << StatusName(c.status) << "  " << name << " " << Sanitize(c.reason) << "\n";
  }
  out << "doctor: " << checks.size() << " checks, " << counts[0] << " PASS, " << counts[1]
      << " SKIP, " << counts[2] << " WARN, " << counts[3] << " FAIL\n";
}

void PrintJson(const std::vector<Check>& checks, std::ostream& out) {
  int counts[kStatusCount] = {0, 0, 0, 0};
  out << "{\"checks\":[";
  for (size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i];
    ++counts[static_cast<int>(c.status)];
    out << (i == 0 ? "" : ",") << "\n  {\"check\":" << JsonString(c.name)
        << ",\"status\":" << JsonString(StatusName(c.status))
        << ",\"reason\":" << JsonString(Sanitize(c.reason)) << ",\"items\":[";
    for (size_t j = 0; j < c.items.size(); ++j) {
      const auto& item = c.items[j];
      out << (j == 0 ? "" : ",") << "{\"subject\":" << JsonString(Sanitize(item.subject))
          << ",\"status\":" << JsonString(StatusName(item.status))
          << ",\"reason\":" << JsonString(Sanitize(item.reason)) << "}";
    }
    out << "]}";
  }
  out << "\n],\"pass\":" << counts[0] << ",\"skip\":" << counts[1] << ",\"warn\":" << counts[2]
      << ",\"fail\":" << counts[3] << "}\n";
}

}  // namespace

Check Finish(std::string name, std::vector<Item> items, const std::string& summary,
             bool keep_summary) {
  Check check{std::move(name), Status::kPass, "", std::move(items)};
  for (Status level : {Status::kFail, Status::kWarn, Status::kSkip}) {
    std::vector<std::pair<std::string, std::string>> groups;  // reason -> subjects
    for (const auto& item : check.items) {
      if (item.status != level) continue;
      check.status = std::max(check.status, level);
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const auto& g) { return g.first == item.reason; });
      if (it == groups.end()) {
        groups.emplace_back(item.reason, item.subject);
      } else {
        it->second += ", " + item.subject;
      }
    }
    for (const auto& [reason, subjects] : groups) {
      check.reason += (check.reason.empty() ? "" : "; ") + subjects + ": " + reason;
    }
  }
  if (check.reason.empty()) {
    check.reason = summary;
  } else if (keep_summary && !summary.empty()) {
    check.reason += "; " + summary;
  }
  return check;
}

void PrintReport(const std::vector<Check>& checks, bool json, std::ostream& out) {
  if (json) {
    PrintJson(checks, out);
  } else {
    PrintText(checks, out);
  }
}

std::string NotChecked(const std::string& why) {
  return "not checked: " + why;
}

std::string Count(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts)
    out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string Bytes(uint64_t b) {
  if (b >= (uint64_t{1} << 20)) return Number(static_cast<double>(b) / (1 << 20)) + " MiB";
  return Number(static_cast<double>(b) / 1024) + " KiB";
}

}  // namespace rdma_exporter::doctor
