#include "core/adopt/differences.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>

#include "core/duration.h"
#include "core/kube/object.h"
#include "core/kustomize/resource.h"
#include "core/labels.h"
#include "core/ssa/diff.h"
#include "core/ssa/field_ownership.h"
#include "core/yaml/json.h"

namespace fluxop::adopt {

namespace {

using nlohmann::json;

constexpr std::string_view kEventsAddress = "--events-addr=";
constexpr std::string_view kOperatorGroup = "fluxcd.controlplane.io";
constexpr std::string_view kRuntimeNamespace = "$(RUNTIME_NAMESPACE)";

struct Keyed {
  std::string name;  // "Kind/namespace/name"
  json object;
  kustomize::ResourceId id;
  std::string api_version;
};

// By group, kind, namespace and name; an object's name for messages.
std::map<std::string, Keyed> by_key(const std::vector<yaml::Node>& objects) {
  std::map<std::string, Keyed> out;
  for (const yaml::Node& object : objects) {
    kustomize::Resource resource(object, "");
    kustomize::ResourceId id = resource.id();
    // Not by version: the sync's source may be written in another one.
    out[id.gvk.group + "|" + id.gvk.kind + "|" + id.ns + "|" + id.name] = {
        id.to_string(), ssa::comparable(yaml::to_sorted_json(object)), id, resource.api_version()};
  }
  return out;
}

// The key a JSON Pointer's last token names ("a~1b" is "a/b").
std::string pointer_key(std::string_view token) {
  std::string out;
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size()) {
      out += token[++i] == '1' ? '/' : '~';
    } else {
      out += token[i];
    }
  }
  return out;
}

// Whether one pointer is the other or inside it.
bool overlaps(std::string_view a, std::string_view b) {
  auto within = [](std::string_view inner, std::string_view outer) {
    return inner.starts_with(outer) && (inner.size() == outer.size() || inner[outer.size()] == '/');
  };
  return within(a, b) || within(b, a);
}

// The labels the operator sets on every object it installs.
bool operator_label(std::string_view key) {
  return key.starts_with("fluxcd.controlplane.io/") || key == "app.kubernetes.io/managed-by" ||
         key == "app.kubernetes.io/instance" || key == kVersionLabel ||
         key == "app.kubernetes.io/part-of";
}
// The annotations the operator sets: the namespace's prune: disabled, and
// on every object what keeps the bootstrap Kustomization from pruning or
// applying it while the migration is under way.
bool operator_annotation(std::string_view key) {
  return key.starts_with("fluxcd.controlplane.io/") || key == "kustomize.toolkit.fluxcd.io/prune" ||
         key == "kustomize.toolkit.fluxcd.io/ssa";
}
// The labels flux bootstrap also gives the controllers' pods.
bool template_label(std::string_view key) {
  return key == "app.kubernetes.io/instance" || key == kVersionLabel;
}
// The annotation the operator gives the controllers' pods.
bool template_annotation(std::string_view key) {
  return key == "cluster-autoscaler.kubernetes.io/safe-to-evict";
}
// The labels kustomize-controller sets on what it applies.
bool bootstrap_label(std::string_view key) {
  return key.starts_with("kustomize.toolkit.fluxcd.io/");
}

// Keys of a map (labels or annotations at `map`, a JSON Pointer) only one
// side has, each of which `is_kind` accepts: one key's path, or the whole
// map when the other side has none.
bool keys_only(const FieldDifference& change, std::string_view map,
               bool (*is_kind)(std::string_view), bool on_rendered) {
  const std::optional<json>& present = on_rendered ? change.rendered : change.installed;
  const std::optional<json>& absent = on_rendered ? change.installed : change.rendered;
  if (absent || !present) return false;
  if (change.path.starts_with(std::string(map) + "/")) {
    return is_kind(pointer_key(std::string_view(change.path).substr(map.size() + 1)));
  }
  if (change.path != map || !present->is_object()) return false;
  for (const auto& [key, value] : present->items()) {
    if (!is_kind(key)) return false;
  }
  return true;
}

// A container's image, installed and rendered, the render's pinned by
// digest ("REPOSITORY:TAG@sha256:..."); the position of its digest.
struct PinnedImage {
  std::string installed, rendered;
  std::size_t digest = std::string::npos;
};
std::optional<PinnedImage> pinned_image(const FieldDifference& change) {
  if (!change.path.ends_with("/image") || !change.installed || !change.rendered ||
      !change.installed->is_string() || !change.rendered->is_string()) {
    return std::nullopt;
  }
  PinnedImage image{change.installed->get<std::string>(), change.rendered->get<std::string>()};
  image.digest = image.rendered.find("@sha256:");
  if (image.digest == std::string::npos) return std::nullopt;
  return image;
}

// The installed image, pinned.
bool digest_pinned(const FieldDifference& change) {
  std::optional<PinnedImage> image = pinned_image(change);
  return image && image->rendered.substr(0, image->digest) == image->installed;
}

// A list the render extends: every installed item kept, in order, and
// each added one accepted by `added`.
bool extended(const FieldDifference& change, const std::function<bool(const json&)>& added) {
  if (!change.installed || !change.rendered || !change.installed->is_array() ||
      !change.rendered->is_array() || change.rendered->size() <= change.installed->size()) {
    return false;
  }
  std::size_t next = 0;
  for (const json& item : *change.rendered) {
    if (next < change.installed->size() && item == (*change.installed)[next]) {
      ++next;
    } else if (!added(item)) {
      return false;
    }
  }
  return next == change.installed->size();
}

// An image of the same repository as the catalog of the operator's
// distribution pins it, with another tag.
bool catalog_image(const FieldDifference& change) {
  std::optional<PinnedImage> image = pinned_image(change);
  if (!image || image->installed.find('@') != std::string::npos) return false;
  std::size_t ours = image->rendered.rfind(':', image->digest);
  std::size_t theirs = image->installed.rfind(':');
  return ours != std::string::npos && theirs != std::string::npos &&
         image->rendered.substr(0, ours) == image->installed.substr(0, theirs);
}

// An argument as the operator writes it: --events-addr with the namespace.
json operator_argument(const json& argument, const std::string& ns) {
  if (!argument.is_string()) return argument;
  std::string text = argument.get<std::string>();
  std::size_t at = text.find(kRuntimeNamespace);
  if (!text.starts_with(kEventsAddress) || at == std::string::npos) return argument;
  return text.replace(at, kRuntimeNamespace.size(), ns);
}

// The arguments the operator adds to the controllers': the feature gates of
// its workload identity and of source-watcher's artifacts, the shards'
// selector.
bool added_argument(const json& argument) {
  if (!argument.is_string()) return false;
  std::string text = argument.get<std::string>();
  return text.starts_with("--feature-gates=ObjectLevelWorkloadIdentity=") ||
         text == "--feature-gates=ExternalArtifact=true" ||
         text.starts_with("--watch-label-selector=!");
}

// A controller's arguments (or one of them) as the operator writes them.
bool controller_arguments(const FieldDifference& change, const std::string& ns) {
  if (!change.installed || !change.rendered) return false;
  if (change.installed->is_string()) {
    return *change.installed != *change.rendered &&
           operator_argument(*change.installed, ns) == *change.rendered;
  }
  if (!change.path.ends_with("/args") || !change.installed->is_array() ||
      !change.rendered->is_array()) {
    return false;
  }
  // Both sides as the operator writes them: a generated patch may have
  // written bootstrap's form.
  FieldDifference written = change;
  for (json& argument : *written.installed) argument = operator_argument(argument, ns);
  for (json& argument : *written.rendered) argument = operator_argument(argument, ns);
  return *written.installed == *written.rendered || extended(written, added_argument);
}

// The reference a GitRepository's .spec.ref names, in full.
std::string full_reference(const json& ref) {
  if (!ref.is_object()) return {};
  if (ref.contains("name") && ref.size() == 1) return ref["name"].get<std::string>();
  if (ref.size() != 1) return {};
  if (ref.contains("branch")) return "refs/heads/" + ref["branch"].get<std::string>();
  if (ref.contains("tag")) return "refs/tags/" + ref["tag"].get<std::string>();
  return {};
}

bool same_git_reference(const FieldDifference& change, const json& installed,
                        const json& rendered) {
  if (installed.value("kind", "") != "GitRepository" || !change.path.starts_with("/spec/ref")) {
    return false;
  }
  json none;
  const json& ours = rendered.contains("spec") ? rendered["spec"].value("ref", none) : none;
  const json& theirs = installed.contains("spec") ? installed["spec"].value("ref", none) : none;
  std::string name = full_reference(ours);
  return !name.empty() && name == full_reference(theirs) && ours.size() == 1 &&
         ours.contains("name");
}

// The kinds notification-controller's Alerts and Receivers may name: the
// operator adds its own.
bool notification_kinds(const FieldDifference& change, const json& installed) {
  return installed.value("kind", "") == "CustomResourceDefinition" &&
         change.path.ends_with("/enum") &&
         installed.value("metadata", json::object())
             .value("name", "")
             .ends_with(".notification.toolkit.fluxcd.io") &&
         extended(change, [](const json& item) { return item.is_string(); });
}

// A rule of crd-controller's role the operator adds (its own group), or
// drops (serviceaccounts/token, which only workload identity needs).
bool operator_granted(const json& rule) {
  const json groups = rule.is_object() ? rule.value("apiGroups", json::array()) : json();
  return groups.is_array() &&
         std::find(groups.begin(), groups.end(), json(kOperatorGroup)) != groups.end();
}
bool token_granted(const json& rule) {
  const json resources = rule.is_object() ? rule.value("resources", json::array()) : json();
  return resources.is_array() && std::find(resources.begin(), resources.end(),
                                           json("serviceaccounts/token")) != resources.end();
}

// Whether the two roles' rules differ only so.
bool operator_rules(const FieldDifference& change, const json& installed, const json& rendered) {
  if (installed.value("kind", "") != "ClusterRole" || !change.path.starts_with("/rules")) {
    return false;
  }
  auto without = [](const json& object, bool (*drop)(const json&)) {
    json kept = json::array();
    for (const json& rule : object.value("rules", json::array())) {
      if (!drop(rule)) kept.push_back(rule);
    }
    return kept;
  };
  return without(installed, token_granted) == without(rendered, operator_granted);
}

std::optional<Expected> expected(const FieldDifference& change, const json& installed,
                                 const json& rendered) {
  std::string ns =
      installed.contains("metadata") ? installed["metadata"].value("namespace", "") : std::string();
  if (keys_only(change, "/metadata/labels", operator_label, true) ||
      keys_only(change, "/metadata/annotations", operator_annotation, true)) {
    return Expected::operator_metadata;
  }
  if (keys_only(change, "/metadata/labels", bootstrap_label, false)) {
    return Expected::bootstrap_labels;
  }
  if (keys_only(change, "/spec/template/metadata/labels", template_label, false) ||
      keys_only(change, "/spec/template/metadata/annotations", template_annotation, true)) {
    return Expected::pod_metadata;
  }
  if (digest_pinned(change)) return Expected::image_digests;
  if (catalog_image(change)) return Expected::catalog_images;
  if (controller_arguments(change, ns)) return Expected::controller_arguments;
  if (same_git_reference(change, installed, rendered)) return Expected::git_reference;
  if (change.path == "/apiVersion") return Expected::api_version;
  if (notification_kinds(change, installed)) return Expected::notification_kinds;
  if (operator_rules(change, installed, rendered)) return Expected::operator_rules;
  return std::nullopt;
}

// The changes with those of the items of a list of scalars (arguments,
// an enum) as one change of the whole list: an argument inserted moves the
// others, and what matters is the list.
std::vector<ssa::FieldChange> whole_scalar_lists(std::vector<ssa::FieldChange> changes,
                                                 const json& installed, const json& rendered) {
  std::vector<ssa::FieldChange> out;
  for (ssa::FieldChange& change : changes) {
    std::size_t slash = change.path.rfind('/');
    std::string list = change.path.substr(0, slash);
    std::string index = change.path.substr(slash + 1);
    bool item =
        slash != std::string::npos && !index.empty() &&
        std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; });
    json::json_pointer pointer(item ? list : "");
    const json* theirs = item && installed.contains(pointer) ? &installed[pointer] : nullptr;
    const json* ours = item && rendered.contains(pointer) ? &rendered[pointer] : nullptr;
    auto scalars = [](const json* values) {
      return values && values->is_array() &&
             std::all_of(values->begin(), values->end(),
                         [](const json& value) { return value.is_primitive(); });
    };
    if (!scalars(theirs) || !scalars(ours)) {
      out.push_back(std::move(change));
    } else if (out.empty() || out.back().path != list) {
      out.push_back({list, *theirs, *ours});
    }
  }
  return out;
}

// `installed` with each duration that means what the render's does written
// as the render writes it ("10m" is "10m0s"): the Flux APIs read both alike.
void as_rendered_durations(json& installed, const json& rendered) {
  if (installed.is_string() && rendered.is_string() && installed != rendered) {
    std::optional<std::chrono::nanoseconds> theirs =
        parse_go_duration(installed.get<std::string>());
    if (theirs && theirs == parse_go_duration(rendered.get<std::string>())) installed = rendered;
  } else if (installed.is_object() && rendered.is_object()) {
    for (auto& [key, value] : installed.items()) {
      if (auto ours = rendered.find(key); ours != rendered.end()) {
        as_rendered_durations(value, *ours);
      }
    }
  }
}

}  // namespace

bool sync_setting(const FieldDifference& difference) {
  std::size_t slash = difference.api_version.find('/');
  return slash != std::string::npos &&
         kube::is_flux_group(std::string_view(difference.api_version).substr(0, slash));
}

json reproducing_value(const FieldDifference& difference) {
  json value = difference.installed.value_or(json());
  if (!difference.path.ends_with("/args") || !value.is_array() || !difference.rendered ||
      !difference.rendered->is_array()) {
    return value;
  }
  for (const json& argument : *difference.rendered) {
    if (added_argument(argument) &&
        std::find(value.begin(), value.end(), argument) == value.end()) {
      value.push_back(argument);
    }
  }
  return value;
}

Comparison compare(const std::vector<yaml::Node>& installed,
                   const std::vector<yaml::Node>& unpatched,
                   const std::vector<yaml::Node>& rendered) {
  std::map<std::string, Keyed> ours = by_key(rendered);
  std::map<std::string, Keyed> theirs = by_key(installed);
  std::map<std::string, Keyed> before_patches = by_key(unpatched);
  Comparison out;
  for (const auto& [key, installed_object] : theirs) {
    auto rendered_object = ours.find(key);
    if (rendered_object == ours.end()) {
      out.installed_only.push_back(installed_object.name);
      continue;
    }
    ++out.compared;
    std::vector<std::string> configured;
    if (auto original = before_patches.find(key); original != before_patches.end()) {
      for (const ssa::FieldChange& change :
           ssa::field_changes(original->second.object, installed_object.object)) {
        configured.push_back(change.path);
      }
    }
    // A live object holds what the server made of its manifest: its
    // defaults, its quantities' canonical form. Where it only did that, or
    // where a Flux object's duration is written another way, the
    // installation is what the render writes.
    json as_written = ssa::in_applied_form(installed_object.object, rendered_object->second.object);
    if (kube::is_flux_group(installed_object.id.gvk.group)) {
      as_rendered_durations(as_written, rendered_object->second.object);
    }
    std::vector<ssa::FieldChange> changes =
        whole_scalar_lists(ssa::field_changes(as_written, rendered_object->second.object),
                           as_written, rendered_object->second.object);
    if (changes.empty()) ++out.equal;
    for (ssa::FieldChange& change : changes) {
      FieldDifference difference{installed_object.name,
                                 installed_object.api_version,
                                 installed_object.id.gvk.kind,
                                 installed_object.id.ns,
                                 installed_object.id.name,
                                 std::move(change.path),
                                 std::move(change.before),
                                 std::move(change.after),
                                 std::nullopt,
                                 false};
      difference.expected = expected(difference, as_written, rendered_object->second.object);
      for (const std::string& path : configured) {
        if (overlaps(path, difference.path)) difference.configuration = true;
      }
      out.fields.push_back(std::move(difference));
    }
  }
  for (const auto& [key, rendered_object] : ours) {
    if (!theirs.contains(key)) out.rendered_only.push_back(rendered_object.name);
  }
  return out;
}

}  // namespace fluxop::adopt
