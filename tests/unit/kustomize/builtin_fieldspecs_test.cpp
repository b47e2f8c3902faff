#include "core/kustomize/builtin_fieldspecs.h"

#include <doctest/doctest.h>

#include <algorithm>

namespace fluxop::kustomize {
namespace {

bool has(const FieldSpecs& specs, const FieldSpec& wanted) {
  return std::any_of(specs.begin(), specs.end(), [&](const FieldSpec& spec) {
    return spec.gvk == wanted.gvk && spec.path == wanted.path && spec.create == wanted.create;
  });
}

}  // namespace

TEST_CASE("commonLabels reach selectors, which template labels leave alone") {
  using namespace builtin_fieldspecs;
  FieldSpec service_selector{{"", "v1", "Service"}, "spec/selector", true};
  FieldSpec job_selector{{"batch", "", "Job"}, "spec/selector/matchLabels", false};
  FieldSpec claim_labels{
      {"apps", "", "StatefulSet"}, "spec/volumeClaimTemplates[]/metadata/labels", true};
  CHECK(has(common_labels(), service_selector));
  CHECK(has(common_labels(), job_selector));
  CHECK(has(common_labels(), claim_labels));
  CHECK_FALSE(has(template_labels(), service_selector));
  CHECK(has(template_labels(), claim_labels));
  CHECK(has(template_labels(), {{}, "metadata/labels", true}));
  CHECK(common_labels().size() == template_labels().size() + 22);
}

TEST_CASE("annotations, namespaces and images lists") {
  using namespace builtin_fieldspecs;
  CHECK(has(common_annotations(),
            {{"", "", "StatefulSet"}, "spec/template/metadata/annotations", true}));
  CHECK(common_annotations().size() == 9);
  CHECK(has(namespaces(),
            {{"apiregistration.k8s.io", "", "APIService"}, "spec/service/namespace", true}));
  CHECK(images().size() == 4);
}

}  // namespace fluxop::kustomize
