#include "core/kustomize/selector.h"

#include <doctest/doctest.h>

#include "support.h"

namespace fluxop::kustomize {
namespace {

using Operator = Requirement::Operator;
using namespace testing;

const yaml::Node kLabels = yaml::parse_document("{app: web, tier: '5', example.com/team: a}", "t");

bool selected(std::string_view selector, const yaml::Node& labels = kLabels) {
  return matches(parse_label_selector(selector), labels);
}

std::string error_of(std::string_view selector) {
  return error_message([&] { parse_label_selector(selector); });
}

TEST_CASE("label selector grammar") {
  LabelSelector s = parse_label_selector(" app = web , tier in (1, 5,), !legacy,env notin (x),k ");
  REQUIRE(s.size() == 5);
  CHECK(s[0].key == "app");
  CHECK(s[0].op == Operator::Equals);
  CHECK(s[0].values == std::vector<std::string>{"web"});
  CHECK(s[1].op == Operator::In);
  CHECK(s[1].values == std::vector<std::string>{"1", "5", ""});
  CHECK(s[2].key == "legacy");
  CHECK(s[2].op == Operator::DoesNotExist);
  CHECK(s[3].op == Operator::NotIn);
  CHECK(s[4].op == Operator::Exists);
  CHECK(parse_label_selector("a==b")[0].op == Operator::Equals);
  CHECK(parse_label_selector("a!=b")[0].op == Operator::NotEquals);
  CHECK(parse_label_selector("a>1")[0].op == Operator::GreaterThan);
  CHECK(parse_label_selector("a<1")[0].op == Operator::LessThan);
  CHECK(parse_label_selector("a=")[0].values == std::vector<std::string>{""});
  CHECK(parse_label_selector("a in ()")[0].values == std::vector<std::string>{""});
  CHECK(parse_label_selector("in=notin")[0].key == "in");
  CHECK(parse_label_selector("").empty());
  CHECK(parse_label_selector("  ").empty());
}

TEST_CASE("label selector syntax errors") {
  CHECK(error_of("app,") ==
        R"~(invalid selector "app,": found the end, expected a key after ",")~");
  CHECK(error_of("a b") ==
        R"~(invalid selector "a b": found "b", expected =, ==, !=, in, notin, > or <)~");
  CHECK(error_of("app in web") == R"~(invalid selector "app in web": found "web", expected "(")~");
  CHECK(error_of("app in (a b)") ==
        R"~(invalid selector "app in (a b)": found "b", expected "," or ")")~");
  CHECK(error_of("app in (a") ==
        R"~(invalid selector "app in (a": found the end, expected "," or ")")~");
  CHECK(error_of("=web") == R"~(invalid selector "=web": found "=", expected a key)~");
  CHECK(error_of("a=b=c") == R"~(invalid selector "a=b=c": found "=", expected "," or the end)~");
  CHECK(error_of("!a=b") == R"~(invalid selector "!a=b": found "=", expected "," or the end)~");
  CHECK(error_of("app=(") == R"~(invalid selector "app=(": found "(", expected a value)~");
  CHECK(error_of("a,,b") == R"~(invalid selector "a,,b": found ",", expected a key after ",")~");
  CHECK(error_of("tier>x") ==
        R"~(invalid selector "tier>x": the value of "tier" for > and < must be an integer)~");
  CHECK(error_of("Example.com/x").find("invalid label key \"Example.com/x\"") != std::string::npos);
  CHECK(error_of("a/b/c").find("invalid label key \"a/b/c\"") != std::string::npos);
  CHECK(error_of("-a").find("invalid label key \"-a\"") != std::string::npos);
  CHECK(error_of("a=-b").find("invalid value \"-b\" for \"a\"") != std::string::npos);
  CHECK(error_of("a=" + std::string(64, 'x')).find("invalid value") != std::string::npos);
  CHECK_NOTHROW(parse_label_selector("example.com/team=a,app.kubernetes.io/name in (x_y.z)"));
}

TEST_CASE("label selector matching") {
  CHECK(selected("app=web"));
  CHECK(selected("app==web,tier=5"));
  CHECK_FALSE(selected("app=api"));
  CHECK_FALSE(selected("nope=web"));
  CHECK(selected("app!=api"));
  CHECK(selected("nope!=api"));
  CHECK_FALSE(selected("app!=web"));
  CHECK(selected("app in (api,web)"));
  CHECK_FALSE(selected("nope in (api,web)"));
  CHECK(selected("app notin (api)"));
  CHECK(selected("nope notin (api)"));
  CHECK_FALSE(selected("app notin (web)"));
  CHECK(selected("app"));
  CHECK(selected("example.com/team"));
  CHECK_FALSE(selected("nope"));
  CHECK(selected("!nope"));
  CHECK_FALSE(selected("!app"));
  CHECK(selected("tier>3"));
  CHECK_FALSE(selected("tier<3"));
  CHECK_FALSE(selected("app>3"));  // not a number
  CHECK_FALSE(selected("nope<3"));
  CHECK_FALSE(selected("app="));
  CHECK(selected(""));
  SUBCASE("no labels at all") {
    yaml::Node none;
    CHECK(selected("", none));
    CHECK(selected("!app", none));
    CHECK(selected("app!=web", none));
    CHECK_FALSE(selected("app", none));
  }
}

}  // namespace
}  // namespace fluxop::kustomize
