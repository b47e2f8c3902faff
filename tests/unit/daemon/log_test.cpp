#include "core/daemon/log.h"

#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using fluxop::daemon::LogFields;
using fluxop::daemon::LogFormat;
using fluxop::daemon::Logger;
using namespace std::chrono_literals;

namespace {

// 2026-11-23T17:35:31.123456Z
const std::chrono::system_clock::time_point t0 =
    std::chrono::system_clock::time_point{} + 1795455331s + 123456us;

Logger logger(std::ostream& out, LogFormat format) {
  return Logger(out, format, [] { return t0; });
}

const LogFields kInstance{{"controller", "fluxinstance"},
                          {"FluxInstance", {{"name", "flux"}, {"namespace", "flux-system"}}}};

}  // namespace

TEST_CASE("daemon log: JSON entries as the operator's zap logger prints them") {
  std::ostringstream out;
  Logger log = logger(out, LogFormat::json);
  log.info("Reconciliation finished in 2s", {{"revision", "v2.7.0@sha256:abc"}});
  log.with(kInstance).error("Reconciler error", "health check failed", {{"attempt", 3}});
  CHECK(
      out.str() ==
      R"({"level":"info","ts":"2026-11-23T17:35:31.123Z","msg":"Reconciliation finished in 2s","revision":"v2.7.0@sha256:abc"})"
      "\n"
      R"({"level":"error","ts":"2026-11-23T17:35:31.123Z","msg":"Reconciler error","controller":"fluxinstance","FluxInstance":{"name":"flux","namespace":"flux-system"},"attempt":3,"error":"health check failed"})"
      "\n");
}

TEST_CASE("daemon log: text entries, values quoted when they are not one word") {
  std::ostringstream out;
  Logger log = logger(out, LogFormat::text);
  log.info("Reconciliation finished in 2s",
           {{"revision", "v2.7.0@sha256:abc"}, {"reason", "took a while"}, {"empty", ""}});
  log.with(kInstance).error("Reconciler error", "timeout waiting for: [Deployment/x]",
                            {{"quote", R"(say "hi")"}, {"equals", "a=b"}, {"count", 3}});
  CHECK(out.str() ==
        "2026-11-23T17:35:31.123Z INFO Reconciliation finished in 2s revision=v2.7.0@sha256:abc "
        "reason=\"took a while\" empty=\"\"\n"
        "2026-11-23T17:35:31.123Z ERROR Reconciler error controller=fluxinstance "
        "FluxInstance={\"name\":\"flux\",\"namespace\":\"flux-system\"} quote=\"say \\\"hi\\\"\" "
        "equals=\"a=b\" count=3 error=\"timeout waiting for: [Deployment/x]\"\n");
}

TEST_CASE("daemon log: messages and values with newlines stay on one line") {
  std::ostringstream text;
  logger(text, LogFormat::text)
      .error("apply failed:\n\tline two\r", "first\nsecond", {{"bell", "a\x07"}});
  CHECK(text.str() ==
        "2026-11-23T17:35:31.123Z ERROR apply failed:\\n\\tline two\\r bell=\"a\\x07\" "
        "error=\"first\\nsecond\"\n");

  std::ostringstream json;
  logger(json, LogFormat::json).info("two\nlines", {{"value", "x\ny"}});
  CHECK(json.str() ==
        R"({"level":"info","ts":"2026-11-23T17:35:31.123Z","msg":"two\nlines","value":"x\ny"})"
        "\n");
}

TEST_CASE("daemon log: invalid UTF-8 is replaced, not thrown on") {
  std::ostringstream out;
  CHECK_NOTHROW(logger(out, LogFormat::json).info("bad \xff byte", {{"value", "\xfe"}}));
  auto entry = nlohmann::json::parse(out.str());
  CHECK(entry["msg"] == "bad \xef\xbf\xbd byte");
  CHECK(entry["value"] == "\xef\xbf\xbd");
}

TEST_CASE("daemon log: fields in order, those of with() first, repeated keys kept") {
  std::ostringstream out;
  Logger base = logger(out, LogFormat::text);
  Logger instance = base.with({{"b", "1"}}).with({{"a", "2"}});
  instance.info("m", {{"c", "3"}, {"a", "4"}});
  base.info("m");
  CHECK(out.str() ==
        "2026-11-23T17:35:31.123Z INFO m b=1 a=2 c=3 a=4\n"
        "2026-11-23T17:35:31.123Z INFO m\n");
}

TEST_CASE("daemon log: times in UTC with milliseconds, from the clock") {
  std::ostringstream out;
  auto now = std::chrono::system_clock::time_point{} + 1795455331s;
  Logger log(out, LogFormat::text, [&] { return now; });
  log.info("a");
  now += 7ms;
  log.info("b");
  now += 999ms;
  log.info("c");
  CHECK(out.str() ==
        "2026-11-23T17:35:31.000Z INFO a\n"
        "2026-11-23T17:35:31.007Z INFO b\n"
        "2026-11-23T17:35:32.006Z INFO c\n");
}

TEST_CASE("daemon log: entries from several threads never interleave") {
  std::ostringstream out;
  Logger log = logger(out, LogFormat::json);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([log, t] {
      for (int i = 0; i < 500; ++i) {
        log.with({{"thread", t}}).info("entry", {{"i", i}, {"padding", std::string(200, 'x')}});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::istringstream lines(out.str());
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    auto entry = nlohmann::json::parse(line);
    CHECK(entry["msg"] == "entry");
  }
  CHECK(count == 2000);
}
