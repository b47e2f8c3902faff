#include "core/reason.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace fluxop {
namespace {

TEST_CASE("reason: every reason has a name of its own and an event type in the table") {
  std::set<std::string> names;
  for (int i = 0; i < static_cast<int>(Reason::count); ++i) {
    auto reason = static_cast<Reason>(i);
    std::string spelled(name(reason));
    CHECK_FALSE(spelled.empty());
    CHECK(names.insert(spelled).second);
    EventType type = event_type(reason);
    CHECK((type == EventType::none || type == EventType::normal || type == EventType::warning));
  }
  CHECK(names.size() == static_cast<std::size_t>(Reason::count));
  CHECK(name(Reason::reconciliation_succeeded) == "ReconciliationSucceeded");
  CHECK(name(Reason::outdated_version) == "OutdatedVersion");
  CHECK(name(EventType::normal) == "Normal");
  CHECK(name(EventType::warning) == "Warning");
  CHECK(event_type(Reason::artifact_failed) == EventType::warning);
  CHECK(event_type(Reason::progressing) == EventType::normal);
}

TEST_CASE("reason: a message template takes its values in order, one without takes none") {
  CHECK(message(Reason::outdated_version, {"v2.8.1", "v2.9.4"}) ==
        "Flux v2.8.1 is outdated, the latest stable version is v2.9.4");
  CHECK(message(Reason::reconciliation_succeeded, {"2s"}) == "Reconciliation finished in 2s");
  CHECK(message(Reason::reconciliation_disabled) == "Reconciliation is disabled");
  CHECK(message(Reason::build_failed) == "");
  // A value holding "{}" is not filled again.
  CHECK(message(Reason::outdated_version, {"{}", "v2"}) ==
        "Flux {} is outdated, the latest stable version is v2");
}

}  // namespace
}  // namespace fluxop
