#include "core/names.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace fluxop {
namespace {

struct Example {
  std::string name;
  bool valid;
};

void check_examples(const NameRule& rule, const std::vector<Example>& examples) {
  for (const Example& example : examples) {
    CAPTURE(example.name);
    CHECK(rule.valid(example.name) == example.valid);
  }
}

const std::string k63(63, 'a');
const std::string k64(64, 'a');

TEST_CASE("names: a DNS-1123 label") {
  check_examples(kDnsLabel, {{"a", true},       {"0", true},      {"shard-1", true}, {"1-a", true},
                             {"a--b", true},    {k63, true},      {k64, false},      {"", false},
                             {"-a", false},     {"a-", false},    {"-", false},      {"A", false},
                             {"shardA", false}, {"a.b", false},   {"a_b", false},    {"a/b", false},
                             {"../x", false},   {"..", false},    {"/tmp/x", false}, {"a b", false},
                             {"a\nb", false},   {"\u00e9", false}});
}

TEST_CASE("names: a DNS-1123 subdomain") {
  std::string parts_253 = k63 + "." + k63 + "." + k63 + "." + std::string(61, 'a');
  check_examples(kDnsSubdomain, {{"a", true},
                                 {"flux-system", true},
                                 {"cluster.local", true},
                                 {"a.b-c.d1", true},
                                 {k64, true},  // no limit on a part
                                 {parts_253, true},
                                 {parts_253 + "a", false},
                                 {"", false},
                                 {"-a", false},
                                 {"a-", false},
                                 {"a.-b", false},
                                 {"a-.b", false},
                                 {".a", false},
                                 {"a.", false},
                                 {"a..b", false},
                                 {"..", false},
                                 {"../x", false},
                                 {"/tmp/x", false},
                                 {"a/b", false},
                                 {"Flux", false},
                                 {"a_b", false}});
}

TEST_CASE("names: a label key") {
  std::string prefix_253 = std::string(253, 'a');
  check_examples(kLabelKey, {{"a", true},
                             {"A", true},
                             {"app", true},
                             {"a_b.c-D", true},
                             {"sharding.fluxcd.io/key", true},
                             {"example.com/Key_1", true},
                             {k63, true},
                             {"example.com/" + k63, true},
                             {prefix_253 + "/a", true},
                             {k64, false},
                             {"example.com/" + k64, false},
                             {prefix_253 + "a/a", false},
                             {"", false},
                             {"-a", false},
                             {"a-", false},
                             {"_a", false},
                             {"a.", false},
                             {"/a", false},
                             {"a/", false},
                             {"a/b/c", false},
                             {"Example.com/a", false},
                             {"a..b/c", false},
                             {"../x", false},
                             {"a b", false}});
}

TEST_CASE("names: a label value") {
  check_examples(kLabelValue, {{"", true},
                               {"a", true},
                               {"A", true},
                               {"shard-1", true},
                               {"a_b.C-d", true},
                               {"1.0", true},
                               {k63, true},
                               {k64, false},
                               {"-a", false},
                               {"a-", false},
                               {"_a", false},
                               {".a", false},
                               {"a.", false},
                               {"a/b", false},
                               {"a b", false},
                               {"a\nb", false},
                               {"\u00e9", false},
                               {"a:b", false}});
}

TEST_CASE("names: an annotation key is a label key") {
  for (const std::string& key :
       std::vector<std::string>{"a", "example.com/Key_1", "", "a b", "a/b/c", k64}) {
    CAPTURE(key);
    CHECK(kAnnotationKey.valid(key) == kLabelKey.valid(key));
  }
}

}  // namespace
}  // namespace fluxop
