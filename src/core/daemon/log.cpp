#include "core/daemon/log.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>

#include "core/error.h"
#include "core/file.h"
#include "core/rfc3339.h"

namespace fluxop::daemon {

namespace {

// zap's ISO 8601 encoding, in UTC: "2026-11-23T17:35:31.123Z".
std::string timestamp(std::chrono::system_clock::time_point time) {
  auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  auto milliseconds = std::chrono::duration_cast<std::chrono::milliseconds>(time - seconds);
  std::string text = utc_rfc3339(static_cast<std::time_t>(seconds.time_since_epoch().count()));
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03d", static_cast<int>(milliseconds.count()));
  text.insert(text.size() - 1, fraction);
  return text;
}

// Never throws: invalid UTF-8 (from a server's message, say) is replaced.
std::string dump(const nlohmann::json& value) {
  return printable_json(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// A value as logfmt writes it: a string bare unless it would not read back
// as one word, then quoted; other values as JSON.
std::string text_value(const nlohmann::json& value) {
  if (!value.is_string()) return dump(value);
  const std::string& text = value.get_ref<const std::string&>();
  bool bare =
      !text.empty() && text.find_first_of(" \"=\\") == std::string::npos && printable(text) == text;
  return bare ? text : quote(text, std::string::npos);
}

}  // namespace

Logger::Logger(std::ostream& out, LogFormat format, Clock clock)
    : sink_(std::make_shared<Sink>(out, format, std::move(clock))) {}

Logger Logger::with(LogFields fields) const {
  LogFields all = fields_;
  all.insert(all.end(), std::make_move_iterator(fields.begin()),
             std::make_move_iterator(fields.end()));
  return Logger(sink_, std::move(all));
}

void Logger::info(std::string_view message, const LogFields& fields) const {
  write("info", message, fields, nullptr);
}

void Logger::error(std::string_view message, std::string_view error,
                   const LogFields& fields) const {
  LogField error_field{"error", std::string(error)};
  write("error", message, fields, &error_field);
}

void Logger::write(std::string_view level, std::string_view message, const LogFields& fields,
                   const LogField* error) const {
  std::string line;
  std::string time = timestamp(sink_->clock());
  auto each_field = [&](auto&& add) {
    for (const LogField& field : fields_) add(field);
    for (const LogField& field : fields) add(field);
    if (error) add(*error);
  };
  if (sink_->format == LogFormat::json) {
    line = "{\"level\":" + dump(std::string(level)) + ",\"ts\":" + dump(time) +
           ",\"msg\":" + dump(std::string(message));
    each_field(
        [&](const LogField& field) { line += "," + dump(field.first) + ":" + dump(field.second); });
    line += "}";
  } else {
    std::string upper(level);
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    line = time + " " + upper + " " + printable(message);
    each_field(
        [&](const LogField& field) { line += " " + field.first + "=" + text_value(field.second); });
  }
  line += '\n';
  std::lock_guard lock(sink_->mutex);
  sink_->out << line;
  sink_->out.flush();
}

}  // namespace fluxop::daemon
