// Structured logging on spdlog: logfmt (default) or JSON lines on stderr, as Prometheus
// exporters do. The message and key/value pairs are escaped here; spdlog provides level
// filtering and a thread-safe sink.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace rdma_exporter {

enum class LogFormat { kLogfmt, kJson };
using LogField = std::pair<std::string_view, std::string_view>;

// level: debug, info, warn, error. Returns false for an unknown level.
bool ConfigureLogging(std::string_view level, LogFormat format);

void LogDebug(std::string_view msg, std::initializer_list<LogField> fields = {});
void LogInfo(std::string_view msg, std::initializer_list<LogField> fields = {});
void LogWarn(std::string_view msg, std::initializer_list<LogField> fields = {});
void LogError(std::string_view msg, std::initializer_list<LogField> fields = {});

// One formatted line without timestamp (exposed for tests).
std::string FormatLogLine(LogFormat format, std::string_view level, std::string_view msg,
                          std::initializer_list<LogField> fields);

}  // namespace rdma_exporter
