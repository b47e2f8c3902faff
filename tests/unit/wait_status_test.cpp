#include "core/wait_status.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/display.h"

namespace fluxop {
namespace {

using std::chrono::seconds;
using std::chrono::steady_clock;

// What the reporter wrote, as a terminal or a log would hold it.
struct FakeSink : StatusSink {
  bool is_terminal = false;
  std::size_t width = 200;
  std::vector<std::string> shown;  // each show()
  int cleared = 0;

  bool terminal() const override { return is_terminal; }
  std::size_t columns() const override { return width; }
  void show(std::string_view line) override { shown.emplace_back(line); }
  void clear() override { ++cleared; }
};

struct FakeClock {
  steady_clock::time_point now{};
  WaitReporter::Clock clock() {
    return [this] { return now; };
  }
};

TEST_CASE("wait status: the elapsed time as it is said") {
  CHECK(elapsed_text(seconds(0)) == "0s");
  CHECK(elapsed_text(seconds(59)) == "59s");
  CHECK(elapsed_text(seconds(65)) == "1m05s");
  CHECK(elapsed_text(seconds(3723)) == "1h02m03s");
  CHECK(elapsed_text(seconds(-3)) == "0s");
}

TEST_CASE("wait status: in a log, a line when the cause changes and at least every 30 s") {
  FakeSink sink;
  FakeClock time;
  WaitReporter reporter(sink, time.clock());
  // A poll `after` seconds more, with the cause then.
  auto poll = [&](int after, std::string_view cause) {
    time.now += seconds(after);
    reporter.waiting("the components to roll out", "Deployment/ns/a pending", cause);
  };

  // No cause yet, well within 30 s: nothing.
  poll(0, "");
  poll(10, "");
  CHECK(sink.shown.empty());

  // A cause: at once, with the elapsed time.
  poll(2, "exceeded quota");
  REQUIRE(sink.shown.size() == 1);
  CHECK(sink.shown[0] ==
        "[12s] waiting for the components to roll out: Deployment/ns/a pending: exceeded quota");

  // The same cause on each poll: not again within 30 s of that line, then
  // once, and 30 s later again.
  for (int i = 0; i < 29; ++i) poll(1, "exceeded quota");
  CHECK(sink.shown.size() == 1);
  poll(1, "exceeded quota");
  REQUIRE(sink.shown.size() == 2);
  CHECK(sink.shown[1].starts_with("[42s] waiting for the components to roll out: "));
  poll(29, "exceeded quota");
  CHECK(sink.shown.size() == 2);
  poll(1, "exceeded quota");
  REQUIRE(sink.shown.size() == 3);
  CHECK(sink.shown[2].starts_with("[1m12s] "));

  // Another cause: at once.
  poll(1, "unbound claims");
  REQUIRE(sink.shown.size() == 4);
  CHECK(sink.shown[3].ends_with(": unbound claims"));

  // A wait without any cause still says it is alive every 30 s.
  reporter.done();
  CHECK(sink.cleared == 0);  // nothing to clear in a log
  reporter.waiting("the FluxInstance to be gone", "", "");
  time.now += seconds(30);
  reporter.waiting("the FluxInstance to be gone", "", "");
  REQUIRE(sink.shown.size() == 5);
  CHECK(sink.shown[4] == "[30s] waiting for the FluxInstance to be gone");
}

TEST_CASE("wait status: on a terminal, one line redrawn at each poll, cleared at the end") {
  FakeSink sink;
  sink.is_terminal = true;
  FakeClock time;
  WaitReporter reporter(sink, time.clock());
  reporter.waiting("x to be ready", "", "Reconciliation in progress");
  time.now += seconds(1);
  reporter.waiting("x to be ready", "", "Reconciliation in progress");
  REQUIRE(sink.shown.size() == 2);
  CHECK(sink.shown[0] == "[0s] waiting for x to be ready: Reconciliation in progress");
  CHECK(sink.shown[1] == "[1s] waiting for x to be ready: Reconciliation in progress");
  CHECK(sink.cleared == 0);
  reporter.done();
  CHECK(sink.cleared == 1);
  reporter.done();  // nothing up any more
  CHECK(sink.cleared == 1);

  // Another wait starts its own clock; the line fits the terminal's width.
  sink.width = 40;
  time.now += seconds(100);
  reporter.waiting("the components to roll out", "3 of 15 objects",
                   "a long cause that does not fit");
  REQUIRE(sink.shown.size() == 3);
  CHECK(sink.shown[2].size() == 39);
  CHECK(sink.shown[2] == "[0s] waiting for the components to r...");
  // Waiting for something else ends the first wait.
  reporter.waiting("the FluxInstance to be gone", "", "");
  CHECK(sink.cleared == 2);
}

TEST_CASE("wait status: on a terminal, the cut falls after the redaction and within the columns") {
  FakeSink sink;
  sink.is_terminal = true;
  FakeClock time;
  WaitReporter reporter(sink, time.clock());
  const std::string cause =
      "GitRepository/flux-system/flux-system: \x01\x01 "
      "https://flux:ghp_Zq9Xw7Vu5Ts3@github.com/o/r";
  for (std::size_t width = 10; width < 140; ++width) {
    sink.width = width;
    reporter.waiting("the sync to be ready", "", cause);
    CAPTURE(width);
    CAPTURE(sink.shown.back());
    CHECK(sink.shown.back().find("ghp_") == std::string::npos);
    CHECK(sink.shown.back().find("Zq9X") == std::string::npos);
    CHECK(sink.shown.back().find('\x01') == std::string::npos);
    CHECK(display_columns(sink.shown.back()) < width);
  }
}

}  // namespace
}  // namespace fluxop
