#include "rdma_exporter/logging.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace rdma_exporter {
namespace {

std::atomic<LogFormat> g_format{LogFormat::kLogfmt};

std::shared_ptr<spdlog::logger> Logger() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stderr_logger_mt("rdma_exporter");
    // The line is fully formatted by FormatLogLine (timestamp included), so the pattern is bare.
    l->set_pattern("%v");
    l->set_level(spdlog::level::info);
    return l;
  }();
  return logger;
}

void AppendLogfmtValue(std::string* out, std::string_view v) {
  bool quote = v.empty() || v.find_first_of(" =\"\\\n\t") != std::string_view::npos;
  if (!quote) {
    out->append(v);
    return;
  }
  out->push_back('"');
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '\t') {
      out->append("\\t");
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

void AppendJsonString(std::string* out, std::string_view v) {
  out->push_back('"');
  for (unsigned char c : v) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out->append(buf);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

std::string Timestamp() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms.count()));
  return buf;
}

void Emit(spdlog::level::level_enum level, std::string_view name, std::string_view msg,
          std::initializer_list<LogField> fields) {
  auto logger = Logger();
  if (!logger->should_log(level)) return;
  std::string line = FormatLogLine(g_format.load(), name, msg, fields);
  std::string ts = Timestamp();
  if (g_format.load() == LogFormat::kJson) {
    line.insert(1, "\"ts\":\"" + ts + "\",");
  } else {
    line.insert(0, "ts=" + ts + " ");
  }
  logger->log(level, "{}", line);
}

}  // namespace

std::string FormatLogLine(LogFormat format, std::string_view level, std::string_view msg,
                          std::initializer_list<LogField> fields) {
  std::string out;
  if (format == LogFormat::kJson) {
    out.append("{\"level\":");
    AppendJsonString(&out, level);
    out.append(",\"msg\":");
    AppendJsonString(&out, msg);
    for (const auto& [k, v] : fields) {
      out.push_back(',');
      AppendJsonString(&out, k);
      out.push_back(':');
      AppendJsonString(&out, v);
    }
    out.push_back('}');
  } else {
    out.append("level=");
    out.append(level);
    out.append(" msg=");
    AppendLogfmtValue(&out, msg);
    for (const auto& [k, v] : fields) {
      out.push_back(' ');
      out.append(k);
      out.push_back('=');
      AppendLogfmtValue(&out, v);
    }
  }
  return out;
}

bool ConfigureLogging(std::string_view level, LogFormat format) {
  spdlog::level::level_enum l;
  if (level == "debug") {
    l = spdlog::level::debug;
  } else if (level == "info") {
    l = spdlog::level::info;
  } else if (level == "warn") {
    l = spdlog::level::warn;
  } else if (level == "error") {
    l = spdlog::level::err;
  } else {
    return false;
  }
  g_format.store(format);
  Logger()->set_level(l);
  return true;
}

void LogDebug(std::string_view msg, std::initializer_list<LogField> fields) {
  Emit(spdlog::level::debug, "debug", msg, fields);
}
void LogInfo(std::string_view msg, std::initializer_list<LogField> fields) {
  Emit(spdlog::level::info, "info", msg, fields);
}
void LogWarn(std::string_view msg, std::initializer_list<LogField> fields) {
  Emit(spdlog::level::warn, "warn", msg, fields);
}
void LogError(std::string_view msg, std::initializer_list<LogField> fields) {
  Emit(spdlog::level::err, "error", msg, fields);
}

}  // namespace rdma_exporter
