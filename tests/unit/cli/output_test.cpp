// The CLI's output shapes: kubectl's tables, -o yaml|json documents, and the
// duration flags' parse-time check.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/duration_check.h"
#include "cli/output.h"
#include "cli/table.h"

namespace fluxop::cli {
namespace {

TEST_CASE("cli table: columns padded to the widest cell plus three spaces, the last not") {
  CHECK(render_table({{"NAME", "READY", "MESSAGE"},
                      {"flux", "True", "Reconciliation finished"},
                      {"a-longer-name", "False", "x"}}) ==
        "NAME            READY   MESSAGE\n"
        "flux            True    Reconciliation finished\n"
        "a-longer-name   False   x\n");
  // Aligned in the columns a terminal draws: a wide name, an escaped one.
  CHECK(render_table({{"NAME", "READY"}, {"\xe6\xbc\xa2\xe5\xad\x97", "True"}, {"a\x01", "x"}}) ==
        "NAME    READY\n"
        "\xe6\xbc\xa2\xe5\xad\x97    True\n"
        "a\\x01   x\n");
}

TEST_CASE("cli output: a document as kubectl prints it: JSON by four spaces, YAML keys sorted") {
  nlohmann::ordered_json document = {{"name", "flux"}, {"ready", true}, {"count", 2}};
  CHECK(render_document(document, OutputFormat::Json) ==
        "{\n    \"name\": \"flux\",\n    \"ready\": true,\n    \"count\": 2\n}\n");
  CHECK(render_document(document, OutputFormat::Yaml) == "count: 2\nname: flux\nready: true\n");
}

TEST_CASE("cli flags: a duration flag takes Go durations, and says what it expects") {
  CLI::Validator check = duration_check("5m");
  std::string value = "90s";
  CHECK(check(value).empty());
  value = "1h30m";
  CHECK(check(value).empty());
  CHECK(duration_flag("1h30m") == std::chrono::seconds(5400));
  value = "soon";
  CHECK(check(value) == "'soon' is not a duration such as 5m");
  value = "-1s";
  CHECK(check(value) == "'-1s' is not a duration such as 5m");
}

}  // namespace
}  // namespace fluxop::cli
