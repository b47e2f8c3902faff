// The installation and the render of its FluxInstance compared object by
// object and field by field, and what the operator always installs
// differently from `flux bootstrap`: one enum, one table of how each is
// recognised and said.
#pragma once

#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::adopt {

// What the operator installs differently from flux bootstrap, whatever the
// user configured: not the user's, listed once as a summary.
enum class Expected {
  operator_metadata,     // its labels on every object, its annotations
  bootstrap_labels,      // kustomize-controller's labels on what it applied
  pod_metadata,          // the pods: bootstrap's labels off, safe to evict
  image_digests,         // images pinned by the digests of the distribution's catalog
  catalog_images,        // the catalog's tag where the manifests name another
  controller_arguments,  // --events-addr with the namespace, its feature gates
  git_reference,         // the sync's Git reference as a full name (refs/heads/main)
  api_version,           // the sync's source in the version the Flux version serves
  notification_kinds,    // its kinds among those Alerts and Receivers may name
  operator_rules,        // crd-controller's role: its own group, no token rule
  count,
};

struct ExpectedInfo {
  Expected id;
  std::string_view summary;  // what the operator does, for the summary line
  bool listed = false;       // each field is shown too: it changes what runs
};

inline constexpr std::array<ExpectedInfo, static_cast<std::size_t>(Expected::count)> kExpected = {{
    {Expected::operator_metadata,
     "labels every object as its own (fluxcd.controlplane.io/name and /namespace, "
     "app.kubernetes.io/managed-by) and annotates it kustomize.toolkit.fluxcd.io/prune: Disabled "
     "and ssa: Ignore, so that the bootstrap Kustomization neither prunes nor applies it during "
     "the migration"},
    {Expected::bootstrap_labels,
     "drops kustomize-controller's labels (kustomize.toolkit.fluxcd.io/*) as it takes the "
     "objects over"},
    {Expected::pod_metadata,
     "leaves bootstrap's app.kubernetes.io/instance and version labels off the controllers' "
     "pods, and marks them safe to evict (cluster-autoscaler.kubernetes.io/safe-to-evict)"},
    {Expected::image_digests, "pins the controllers' images by digest"},
    {Expected::catalog_images,
     "installs the image its catalog pins for this Flux version where the bootstrap manifests "
     "name another tag",
     true},
    {Expected::controller_arguments,
     "writes --events-addr with the namespace instead of $(RUNTIME_NAMESPACE) and adds its "
     "feature gates (ObjectLevelWorkloadIdentity, ExternalArtifact)"},
    {Expected::git_reference, "writes the sync's Git reference as a full reference name"},
    {Expected::api_version,
     "writes the sync's source in the API version its Flux version serves best"},
    {Expected::notification_kinds,
     "adds its own kinds (FluxInstance, ...) to those notification-controller's Alerts and "
     "Receivers may name"},
    {Expected::operator_rules,
     "grants crd-controller its own group (fluxcd.controlplane.io), and not "
     "serviceaccounts/token, which only workload identity needs"},
}};

constexpr const ExpectedInfo& info(Expected id) { return kExpected[static_cast<std::size_t>(id)]; }

// Each entry of the table where its enum says.
constexpr bool table_in_order() {
  for (std::size_t i = 0; i < kExpected.size(); ++i) {
    if (static_cast<std::size_t>(kExpected[i].id) != i) return false;
  }
  return true;
}
static_assert(table_in_order(), "kExpected must list Expected in order");

// A field that differs: where (a JSON Pointer), the installed value and the
// rendered one, each absent on the side without the field.
struct FieldDifference {
  std::string object;  // "Deployment/flux-system/source-controller"
  // The object's identity, for the patch that reproduces the difference.
  std::string api_version, kind, ns, name;
  std::string path;
  std::optional<nlohmann::json> installed, rendered;
  std::optional<Expected> expected;  // set when the operator always differs so
  bool configuration = false;        // the bootstrap kustomization's patches set the field
};

// Whether the difference is on the sync's source or Kustomization (the
// installation's only Flux objects): a setting .spec.sync has no field for
// (its decryption, wait, ignore rules...).
bool sync_setting(const FieldDifference& difference);

struct Comparison {
  std::size_t compared = 0;  // objects on both sides
  std::vector<FieldDifference> fields;
  std::vector<std::string> installed_only, rendered_only;  // objects, by name
  std::size_t equal = 0;                                   // objects with no difference at all
};

// The value a patch writes to reproduce the installed field: the installed
// value, with the arguments the operator adds to a controller's kept.
nlohmann::json reproducing_value(const FieldDifference& difference);

// Compares `installed` with `rendered`; a field that differs between
// `unpatched` and `installed` is marked `configuration`.
Comparison compare(const std::vector<yaml::Node>& installed,
                   const std::vector<yaml::Node>& unpatched,
                   const std::vector<yaml::Node>& rendered);

}  // namespace fluxop::adopt
