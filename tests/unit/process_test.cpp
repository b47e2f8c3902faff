#include "core/process.h"

#include <doctest/doctest.h>

#include "core/error.h"

using fluxop::ProcessResult;
using fluxop::ProcessSpec;
using fluxop::run_process;

namespace {

ProcessSpec shell(const std::string& script) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.label = "test script";
  return spec;
}

}  // namespace

TEST_CASE("process: input, output, exit status and environment") {
  ProcessSpec spec = shell("read line; echo \"got $line $EXTRA\"; echo oops >&2; exit 3");
  spec.input = "hello\n";
  spec.env = {"EXTRA=yes"};
  std::optional<ProcessResult> result = run_process(spec);
  REQUIRE(result);
  CHECK(result->exit_status == 3);
  CHECK(result->output == "got hello yes\noops\n");
}

TEST_CASE("process: stderr left out of the output when asked, environment replaced") {
  ProcessSpec spec = shell("echo \"$HOME\"; echo noise >&2");
  spec.capture_stderr = false;
  spec.env = {"HOME=/elsewhere"};
  std::optional<ProcessResult> result = run_process(spec);
  REQUIRE(result);
  CHECK(result->output == "/elsewhere\n");
}

TEST_CASE("process: a program that is not there, one that ignores its input, a timeout") {
  ProcessSpec missing;
  missing.argv = {"fluxopctl-test-no-such-program"};
  CHECK_FALSE(run_process(missing));

  ProcessSpec deaf = shell("exit 0");
  deaf.input = std::string(1000, 'x');
  std::optional<ProcessResult> result = run_process(deaf);  // no SIGPIPE for us
  REQUIRE(result);
  CHECK(result->exit_status == 0);

  ProcessSpec slow = shell("sleep 10");
  slow.timeout = std::chrono::milliseconds(200);
  CHECK_THROWS_WITH_AS(run_process(slow), "test script: no answer within 200ms", fluxop::Error);
}

TEST_CASE("process: one that prints without end, one that closes its output and lingers") {
  ProcessSpec endless = shell("yes");
  endless.max_output = 1 << 20;
  CHECK_THROWS_WITH_AS(run_process(endless), "test script: printed more than 1 MiB", fluxop::Error);

  // Its output closed, the program is waited for no longer than the timeout.
  ProcessSpec lingering = shell("exec >&- 2>&-; sleep 10");
  lingering.timeout = std::chrono::milliseconds(500);
  CHECK_THROWS_WITH_AS(run_process(lingering), "test script: no answer within 500ms",
                       fluxop::Error);
}
