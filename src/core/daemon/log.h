// The daemon's log: one line per entry, as text for people or as JSON in the
// form the Flux Operator's logger (controller-runtime's zap, production
// encoder, ISO 8601 times) prints, so that log pipelines parse both alike.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fluxop::daemon {

enum class LogFormat { text, json };

// A key and its value, a string or any JSON value; written in order.
using LogField = std::pair<std::string, nlohmann::json>;
using LogFields = std::vector<LogField>;

// Thread-safe: entries from several threads never interleave.
class Logger {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;

  Logger(std::ostream& out, LogFormat format, Clock clock = std::chrono::system_clock::now);

  // A logger writing to the same stream with `fields` first in each entry
  // (logr's WithValues: "controller", the instance, ...).
  Logger with(LogFields fields) const;

  void info(std::string_view message, const LogFields& fields = {}) const;
  // `error` is written last, under the key "error".
  void error(std::string_view message, std::string_view error, const LogFields& fields = {}) const;

 private:
  struct Sink {
    // (A constructor: clang 14 has no parenthesized aggregate initialization.)
    Sink(std::ostream& out, LogFormat format, Clock clock)
        : out(out), format(format), clock(std::move(clock)) {}
    std::ostream& out;
    LogFormat format;
    Clock clock;
    std::mutex mutex;
  };

  Logger(std::shared_ptr<Sink> sink, LogFields fields)
      : sink_(std::move(sink)), fields_(std::move(fields)) {}
  void write(std::string_view level, std::string_view message, const LogFields& fields,
             const LogField* error) const;

  std::shared_ptr<Sink> sink_;
  LogFields fields_;
};

}  // namespace fluxop::daemon
