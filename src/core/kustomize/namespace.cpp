#include "core/kustomize/namespace.h"

#include <optional>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "core/kustomize/builtin_fieldspecs.h"
#include "core/kustomize/fieldspec.h"
#include "core/kustomize/scope.h"

namespace fluxop::kustomize {

namespace {

// kustomize sets the namespace only on subjects named "default", whatever
// their kind: a placeholder it assumes the build's own namespace replaces.
void set_default_subjects(yaml::Node& object, const std::string& ns) {
  yaml::Node* subjects = object.get("subjects");
  if (!subjects || !subjects->is_sequence()) return;
  for (auto& subject : subjects->items()) {
    if (subject.is_map() && subject.string_at({"name"}) == "default") {
      subject.set("namespace", yaml::Node::string(ns));
    }
  }
}

void set_namespace_fields(Resource& resource, const std::string& ns) {
  for (const auto& spec : builtin_fieldspecs::namespaces()) {
    if (spec.path == "metadata/name") {
      // Only the core Namespace kind is named after the namespace.
      if (resource.api_version() == "v1" && selects(spec, resource.gvk())) resource.set_name(ns);
      continue;
    }
    yaml::Node& object = resource.object();
    visit_fields(object, spec, [&](yaml::Node& target) {
      if (!target.is_null() && !target.is_scalar()) {
        throw Error(field_location(object, spec) + ": expected a string, found " +
                    describe_value(target));
      }
      target = yaml::Node::string(ns);
    });
  }
}

// Names the first resource (in build order) that a later one repeats, as
// comparing each with those after it would, in one pass with an index.
void check_unique_ids(const ResourceList& resources, const Context& context) {
  std::unordered_map<std::string, std::size_t> first_with;  // by id key
  std::optional<std::size_t> conflict;
  for (std::size_t i = 0; i < resources.size(); ++i) {
    auto [first, fresh] = first_with.emplace(resources[i].id().key(), i);
    if (!fresh && (!conflict || first->second < *conflict)) conflict = first->second;
  }
  if (conflict) {
    context.fail("namespace", "namespace transformation produces ID conflict: two resources are " +
                                  resources[*conflict].id().to_string());
  }
}

}  // namespace

void set_namespace(ResourceList& resources, const std::string& ns, const Context& context) {
  if (ns.empty()) return;
  for (auto& resource : resources) {
    if (resource.object().size() == 0) continue;
    Gvk gvk = resource.gvk();
    // kustomize records every visited resource's id, renamed or not; name
    // references tell a namespace change by it.
    resource.remember_id();
    if (!is_cluster_scoped(gvk)) {
      resource.object()
          .get_or_insert("metadata", yaml::Node::map())
          .set("namespace", yaml::Node::string(ns));
    }
    if (gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding") {
      set_default_subjects(resource.object(), ns);
    }
    try {
      set_namespace_fields(resource, ns);
    } catch (const Error& error) {
      context.fail("namespace", error.what());
    }
  }
  check_unique_ids(resources, context);
}

}  // namespace fluxop::kustomize
