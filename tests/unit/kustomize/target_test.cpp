#include "core/kustomize/target.h"

#include <doctest/doctest.h>
#include <malloc.h>

#include "support.h"

namespace fluxop::kustomize {
namespace {

using namespace testing;

Target target_of(std::string_view text) {
  return parse_target(yaml_of(text), kContext, "patches[0].target");
}

std::string error_of(std::string_view text) {
  return error_message([&] { target_of(text); });
}

Resource resource(std::string_view text) { return Resource(yaml_of(text), "test.yaml"); }

const Resource kDeployment = resource(R"(
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: prod
  labels: {app: web}
  annotations: {team: a}
)");

bool selects(std::string_view target, const Resource& r = kDeployment) {
  return selects(target_of(target), r);
}

TEST_CASE("target fields are anchored regular expressions") {
  CHECK(selects("{}"));
  CHECK(selects("{kind: Deployment, name: app}"));
  CHECK_FALSE(selects("{kind: Deploy}"));
  CHECK_FALSE(selects("{name: ap}"));
  CHECK_FALSE(selects("{name: pp}"));
  CHECK(selects("{name: 'a.*'}"));
  CHECK(selects("{name: 'api|app'}"));
  CHECK_FALSE(selects("{name: 'x|ap'}"));  // the alternation is anchored as a whole
  CHECK(selects("{group: apps, version: v1}"));
  CHECK(selects("{group: 'app.*', version: 'v.*'}"));
  CHECK(selects("{group: ''}"));  // empty matches anything
  CHECK_FALSE(selects("{version: v1beta1}"));
  CHECK(selects("{namespace: prod}"));
  CHECK_FALSE(selects("{namespace: default}"));
}

TEST_CASE("target label and annotation selectors") {
  CHECK(selects("{labelSelector: app=web}"));
  CHECK(selects("{labelSelector: 'app in (web, api)', annotationSelector: team}"));
  CHECK_FALSE(selects("{labelSelector: app=api}"));
  CHECK_FALSE(selects("{annotationSelector: team=b}"));
  CHECK_FALSE(selects("{annotationSelector: app=web}"));
}

TEST_CASE("target namespaces: default stands for none, cluster-scoped kinds have none") {
  Resource unset = resource("{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}");
  CHECK(selects("{namespace: default}", unset));
  CHECK_FALSE(selects("{namespace: prod}", unset));
  Resource cluster_role = resource(
      "{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: r}}");
  CHECK_FALSE(selects("{namespace: default}", cluster_role));
  CHECK(selects("{namespace: '.*'}", cluster_role));
  CHECK(effective_namespace(unset.id()) == "default");
  CHECK(effective_namespace(cluster_role.id()) == "~X");
  CHECK(effective_namespace(kDeployment.id()) == "prod");
}

TEST_CASE("target name and namespace match the original or the current ones") {
  Resource renamed = kDeployment;
  renamed.set_name("p-app");
  renamed.set_namespace("other");
  renamed.set_name("p-app-s");
  CHECK(selects("{name: app}", renamed));
  CHECK(selects("{name: p-app-s}", renamed));
  CHECK_FALSE(selects("{name: p-app}", renamed));  // an intermediate name
  CHECK(selects("{namespace: prod}", renamed));
  CHECK(selects("{namespace: other}", renamed));
}

TEST_CASE("target parse errors name the field") {
  const std::string prefix = "kustomization.yaml: patches[0].target.";
  CHECK(error_of("{name: '('}") ==
        prefix + "name: invalid regular expression \"(\": unbalanced parentheses");
  CHECK(error_of("{kind: '[a'}") == prefix + "kind: invalid regular expression \"[a\": missing ]");
  CHECK(error_of("{kind: '*'}").rfind(prefix + "kind: invalid regular expression \"*\": ", 0) == 0);
  CHECK(error_of("{labelSelector: 'a in b'}") ==
        prefix + "labelSelector: invalid selector \"a in b\": found \"b\", expected \"(\"");
  CHECK(error_of("{bogus: x}") == prefix +
                                      "bogus: unknown field (expected group, version, kind, name, "
                                      "namespace, labelSelector or annotationSelector)");
  CHECK(error_of("{name: 5}") == prefix + "name: must be a string");
  CHECK(error_of("[a]") == "kustomization.yaml: patches[0].target: must be a map, not a sequence");
  CHECK(target_of("{name: null}").name.text.empty());
}

TEST_CASE("target patterns are Go's dialect, refused by RE2 with the field") {
  const std::string prefix = "kustomization.yaml: patches[0].target.";
  CHECK(error_of("{name: '(?=a)'}") ==
        prefix + "name: invalid regular expression \"(?=a)\": invalid perl operator: (?=");
  CHECK(error_of("{namespace: '(a)\\1'}") ==
        prefix +
            "namespace: invalid regular expression \"(a)\\\\1\": invalid escape sequence: \\1");
  CHECK(error_of("{kind: 'a\\Cb'}") ==
        prefix + "kind: invalid regular expression \"a\\\\Cb\": invalid escape sequence: \\C");
  CHECK(selects("{kind: '\\QDeploy\\Cment\\E|Deployment'}"));  // \C quoted is no escape
  CHECK(error_of("{group: 'a**'}") ==
        prefix + "group: invalid regular expression \"a**\": bad repetition operator: **");
  CHECK(error_of("{version: '(a{100}){100}'}").starts_with(prefix + "version: invalid regular"));
  // Go names groups (?<name>...) too, RE2 only (?P<name>...); not in a
  // class or quoted text.
  CHECK(selects("{name: '(?<first>a)(?P<rest>pp)'}"));
  Resource p = resource("{apiVersion: v1, kind: ConfigMap, metadata: {name: P}}");
  CHECK_FALSE(selects("{name: '[(?<x>]'}", p));
  CHECK_FALSE(selects("{name: '[](?<x>]'}", p));
  CHECK_FALSE(selects("{name: '[[:digit:](?<x>]'}", p));
  CHECK(selects("{name: '\\Q(?<x>\\E'}",
                resource("{apiVersion: v1, kind: ConfigMap, metadata: {name: '(?<x>'}}")));
  CHECK(error_of("{name: '(?<=a)'}").ends_with("invalid perl operator: (?<"));
  // kustomize pastes the text between ^(?: and )$, unbalanced or not.
  CHECK(selects("{name: 'x)|(pp'}"));
  std::string longest(kMaxRegexBytes, 'a');
  CHECK_FALSE(selects("{name: " + longest + "}"));
  CHECK(error_of("{name: a" + longest + "}") == prefix + "name: invalid regular expression " +
                                                    quote("a" + longest) +
                                                    ": longer than 4096 bytes");
  std::string long_name(100, 'n');
  // RE2 names the part at fault: a long one is quoted by its start too.
  std::string bad_name = error_of("{name: '(?P<" + long_name + "-)'}");
  CHECK(bad_name.starts_with(prefix + "name: invalid regular expression " +
                             quote("(?P<" + long_name + "-)") +
                             ": invalid named capture group: \"(?P<nnn"));
  CHECK(bad_name.ends_with("\"..."));
  CHECK(bad_name.size() < 200);
}

TEST_CASE("target patterns: more than stay compiled are compiled again when used") {
  std::vector<Target> targets;
  for (int i = 0; i < 100; ++i)
    targets.push_back(target_of("{name: 'x" + std::to_string(i) + "|app'}"));
  for (int round = 0; round < 2; ++round) {
    for (const Target& target : targets) CHECK(kustomize::selects(target, kDeployment));
  }
  CHECK_FALSE(kustomize::selects(target_of("{name: 'x1|ap'}"), kDeployment));
}

TEST_CASE("target patterns: memory stays bounded whatever their number") {
  // An expression's DFA cache grows with the text it scans, to about 0.4 MB
  // for these on 20 kB: 100 of them kept compiled held 36 MB.
  std::string name;
  unsigned random = 1;
  for (int i = 0; i < 20000; ++i) {
    random = random * 1103515245u + 12345u;
    name += "ab"[(random >> 16) & 1];
  }
  Resource long_name =
      resource("{apiVersion: v1, kind: ConfigMap, metadata: {name: " + name + "}}");
  auto heap_in_use = [] { return static_cast<long long>(mallinfo2().uordblks); };
  long long before = heap_in_use();
  std::vector<Target> targets;
  for (int i = 0; i < 100; ++i) {
    targets.push_back(target_of("{name: '(a|b)*a(a|b){" + std::to_string(12 + i % 8) + "}" +
                                std::string(i / 8, 'b') + "'}"));
    kustomize::selects(targets.back(), long_name);
  }
  CHECK(heap_in_use() - before < 24 << 20);
}

TEST_CASE("target patterns take linear time and no stack on long values") {
  // A backtracking engine takes exponential time on these; RE2 takes
  // milliseconds.
  Resource long_name = resource(
      "{apiVersion: v1, kind: ConfigMap, metadata: {name: " + std::string(100, 'a') + "!}}");
  CHECK_FALSE(selects("{name: '(a+)+$'}", long_name));
  CHECK(selects("{name: '(a+)+!'}", long_name));
  Resource xs = resource(
      "{apiVersion: v1, kind: ConfigMap, metadata: {name: " + std::string(5000, 'x') + "}}");
  CHECK_FALSE(selects("{name: '(x+x+)+y'}", xs));
  // std::regex recursed once per character here and overflowed the stack.
  Resource huge_name = resource(
      "{apiVersion: v1, kind: ConfigMap, metadata: {name: " + std::string(1 << 20, 'n') + "}}");
  CHECK(selects("{name: '.*'}", huge_name));
  CHECK(selects("{name: 'n(n|m)*'}", huge_name));
  CHECK_FALSE(selects("{name: '.*m'}", huge_name));
}

}  // namespace
}  // namespace fluxop::kustomize
