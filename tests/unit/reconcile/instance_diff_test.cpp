// diff's summary of what apply would change.
#include "core/reconcile/instance_diff.h"

#include <doctest/doctest.h>

TEST_CASE("diff_summary: the objects per action, each image change once, escaped") {
  using fluxop::reconcile::diff_summary;
  using fluxop::reconcile::InstanceDiff;
  using fluxop::reconcile::ObjectDiff;
  using nlohmann::json;
  InstanceDiff nothing;
  nothing.objects.push_back(
      {{"apps", "v1", "Deployment", "flux-system", "a"}, fluxop::ssa::Action::Unchanged, {}});
  CHECK(diff_summary(nothing) == "");
  InstanceDiff diff;
  fluxop::ssa::FieldChange image{"/spec/template/spec/containers/0/image", json("old:1"),
                                 json("new:2")};
  diff.objects.push_back({{"apps", "v1", "Deployment", "flux-system", "a"},
                          fluxop::ssa::Action::Configured,
                          {image, {"/spec/replicas", json(1), json(2)}}});
  diff.objects.push_back(
      {{"apps", "v1", "Deployment", "flux-system", "b"}, fluxop::ssa::Action::Configured, {image}});
  diff.objects.push_back(
      {{"", "v1", "Service", "flux-system", "c"}, fluxop::ssa::Action::Created, {}});
  diff.objects.push_back(
      {{"", "v1", "ConfigMap", "flux-system", "d"},
       fluxop::ssa::Action::Configured,
       {{"/spec/template/spec/containers/0/image", json("x\x1b[2J"), json("y")}}});
  diff.objects.push_back(
      {{"", "v1", "Service", "flux-system", "e"}, fluxop::ssa::Action::Unchanged, {}});
  diff.changed = 4;
  CHECK(diff_summary(diff) ==
        "Summary: 1 to create, 3 to update, 1 unchanged\n"
        "Image: old:1 -> new:2\n"
        "Image: x\\x1b[2J -> y\n");
}
