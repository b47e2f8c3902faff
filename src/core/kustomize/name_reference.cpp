#include "core/kustomize/name_reference.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/kustomize/fieldspec.h"
#include "core/kustomize/name_reference_specs.h"
#include "core/kustomize/scope.h"

namespace fluxop::kustomize {

namespace {

using Candidates = std::vector<const Resource*>;

// kustomize compares namespaces with "" meaning "default"; cluster-scoped
// resources have none at all ("").
std::string effective_namespace(const ResourceId& id) {
  if (is_cluster_scoped(id.gvk)) return {};
  return id.ns.empty() ? "default" : id.ns;
}

bool gvk_selected(const Gvk& selector, const Gvk& gvk) { return selects({selector, {}}, gvk); }

template <typename Keep>
Candidates sieve(const Candidates& candidates, Keep keep) {
  Candidates kept;
  std::copy_if(candidates.begin(), candidates.end(), std::back_inserter(kept), keep);
  return kept;
}

// The namespaces of a RoleBinding's ServiceAccount subjects, which it may
// refer into.
std::set<std::string> subject_namespaces(const Resource& referrer) {
  std::set<std::string> namespaces;
  const yaml::Node* subjects = referrer.object().get("subjects");
  if (referrer.kind() != "RoleBinding" || !subjects) return namespaces;
  for (std::size_t i = 0; i < subjects->items().size(); ++i) {
    const yaml::Node& subject = subjects->items()[i];
    const yaml::Node* ns = subject.get("namespace");
    if (!ns || subject.string_at({"kind"}) != "ServiceAccount") continue;
    // A date is a string to kustomize, which reads resources through JSON.
    if (!ns->is_scalar() || (ns->tag() != yaml::Tag::String && ns->tag() != yaml::Tag::Timestamp)) {
      throw Error(referrer.id().to_string() + ": subjects[" + std::to_string(i) +
                  "].namespace: expected a string");
    }
    namespaces.insert(ns->text());
  }
  return namespaces;
}

// The resources by each name they had before a rename and by their original
// namespace, in build order: a reference names an old name, and a search of
// every resource for each reference would grow with the square of the
// build. Ids do not change while references are fixed (a fix writes only
// referring fields).
class ResourceIndex {
 public:
  explicit ResourceIndex(const ResourceList& resources) {
    for (const auto& r : resources) {
      std::set<std::string> names;
      std::set<std::string> kinds{""};  // "": a reference to any kind
      for (const ResourceId& id : r.previous_ids()) {
        names.insert(id.name);
        kinds.insert(id.gvk.kind);
      }
      for (const std::string& name : names) {
        for (const std::string& kind : kinds) by_old_name_[key(name, kind)].push_back(&r);
      }
      std::string original_ns = effective_namespace(r.original_id());
      if (!original_ns.empty()) by_original_ns_[original_ns].push_back(&r);
    }
  }

  // The resources that once had `name`, and once were of `kind` unless it
  // is empty: thousands of shards' Deployments and Services once had the
  // same name, and a reference to a ServiceAccount need not sift them.
  const Candidates& once_named(const std::string& name, const std::string& kind) const {
    return find(by_old_name_, key(name, kind));
  }
  // The namespaced resources whose original namespace is `ns`.
  const Candidates& originally_in(const std::string& ns) const { return find(by_original_ns_, ns); }

 private:
  // No name or kind holds a newline (validated names).
  static std::string key(const std::string& name, const std::string& kind) {
    return name + "\n" + kind;
  }

  static const Candidates& find(const std::unordered_map<std::string, Candidates>& map,
                                const std::string& key) {
    static const Candidates none;
    auto found = map.find(key);
    return found == map.end() ? none : found->second;
  }

  std::unordered_map<std::string, Candidates> by_old_name_;  // by key(name, kind)
  std::unordered_map<std::string, Candidates> by_original_ns_;
};

// What the referrer may refer to: cluster-scoped resources, resources in its
// namespace, and those in its ServiceAccount subjects' namespaces; a
// cluster-scoped referrer may refer to anything. The subjects are read (and
// checked) at once, before a fix changes them.
class Visible {
 public:
  explicit Visible(const Resource& referrer)
      : referrer_ns_(effective_namespace(referrer.id())),
        subjects_ns_(subject_namespaces(referrer)) {}

  bool sees(const Resource& target) const {
    if (referrer_ns_.empty()) return true;
    std::string target_ns = effective_namespace(target.id());
    return target_ns.empty() || target_ns == referrer_ns_ || subjects_ns_.contains(target.ns());
  }

 private:
  std::string referrer_ns_;
  std::set<std::string> subjects_ns_;
};

// One referring field of one referrer, and the resources it may name.
class Reference {
 public:
  Reference(Resource& referrer, const FieldSpec& field, const Gvk& target, const Visible& visible,
            const ResourceIndex& index)
      : referrer_(referrer),
        field_(field),
        target_(target),
        visible_(visible),
        index_(index),
        role_(role_ref(referrer, field)) {}

  // Fixes every name the field reaches: a scalar, a {name, namespace} map or
  // a sequence of either.
  void fix() {
    visit_fields(referrer_.object(), {{}, field_.path}, [this](yaml::Node& node) {
      if (!node.is_sequence()) return fix_item(node, field_.path);
      for (std::size_t i = 0; i < node.items().size(); ++i) {
        fix_item(node.items()[i], field_.path + "[" + std::to_string(i) + "]");
      }
    });
  }

 private:
  void fix_item(yaml::Node& node, const std::string& where) {
    if (node.is_scalar()) return fix_name(node, where);
    if (node.is_map()) return fix_name_and_namespace(node, where);
    if (!node.is_null()) fail(where, "expected a name or a map with a name, found a sequence");
  }

  void fix_name(yaml::Node& name, const std::string& where) {
    const Resource* referral = select(name.text(), seen_once_named(name.text()), false, where);
    if (referral && referral->name() != name.text()) name = yaml::Node::string(referral->name());
  }

  // The map's own namespace narrows the candidates; an empty namespace on
  // the referral is not written, as it does not mean "default" there.
  void fix_name_and_namespace(yaml::Node& map, const std::string& where) {
    const yaml::Node* name = map.get("name");
    if (!name) fail(where, "no 'name' field in the reference");
    const Resource* referral =
        select(name->text(), in_namespace_of(map, seen_once_named(name->text())), true, where);
    if (!referral) return;
    if (referral->name() == name->text() && referral->ns().empty()) return;
    map.set("name", yaml::Node::string(referral->name()));
    if (!referral->ns().empty()) map.set("namespace", yaml::Node::string(referral->ns()));
  }

  // The resources the referrer sees that once had `name`.
  Candidates seen_once_named(const std::string& name) const {
    return sieve(index_.once_named(name, target_.kind),
                 [&](const Resource* r) { return visible_.sees(*r); });
  }

  // By original namespace when any resource the referrer sees started
  // there, else by current namespace; all candidates when the map names no
  // namespace.
  Candidates in_namespace_of(const yaml::Node& map, const Candidates& candidates) const {
    const yaml::Node* ns = map.get("namespace");
    if (!ns) return candidates;
    const Candidates& started_there = index_.originally_in(ns->text());
    bool by_original = std::any_of(started_there.begin(), started_there.end(),
                                   [&](const Resource* r) { return visible_.sees(*r); });
    return sieve(candidates, [&](const Resource* r) {
      std::string candidate_ns = effective_namespace(by_original ? r->original_id() : r->id());
      return !candidate_ns.empty() && candidate_ns == ns->text();
    });
  }

  // kustomize's choice among resources that once had `old_name`; nullptr
  // when there is none.
  const Resource* select(const std::string& old_name, const Candidates& candidates,
                         bool compare_namespaces, const std::string& where) const {
    Candidates found =
        sieve(candidates, [&](const Resource* r) { return was_selected_by(*r, target_); });
    if (role_) found = sieve(found, [&](const Resource* r) { return was_selected_by(*r, *role_); });
    found = sieve(found, [&](const Resource* r) { return in_reach(*r); });
    for (bool lenient : {true, false}) {
      if (found.size() > 1) {
        found = sieve(found, [&](const Resource* r) { return same_affixes(*r, lenient); });
      }
    }
    if (found.empty()) return nullptr;
    auto same = [&](const Resource* r) {
      return r->name() == found[0]->name() && (!compare_namespaces || r->ns() == found[0]->ns());
    };
    if (!std::all_of(found.begin(), found.end(), same)) ambiguous(old_name, found, where);
    return found[0];
  }

  static bool was_selected_by(const Resource& r, const Gvk& selector) {
    const auto& previous = r.previous_ids();
    return std::any_of(previous.begin(), previous.end(),
                       [&](const ResourceId& id) { return gvk_selected(selector, id.gvk); });
  }

  // A roleRef names a Role or a ClusterRole by its apiGroup and kind too;
  // none when the field is no roleRef or the roleRef lacks them.
  static std::optional<Gvk> role_ref(const Resource& referrer, const FieldSpec& field) {
    if (!field.path.ends_with("roleRef/name")) return std::nullopt;
    const yaml::Node* ref = referrer.object().get("roleRef");
    if (!ref || !ref->get("apiGroup") || !ref->get("kind")) return std::nullopt;
    return Gvk{ref->string_at({"apiGroup"}), "", ref->string_at({"kind"})};
  }

  // Namespaced referrers see cluster-scoped resources, their own namespace,
  // and ServiceAccounts anywhere (RoleBindings bind those across namespaces).
  bool in_reach(const Resource& r) const {
    std::string referrer_ns = effective_namespace(referrer_.id());
    std::string ns = effective_namespace(r.id());
    return referrer_ns.empty() || ns.empty() || r.kind() == "ServiceAccount" || ns == referrer_ns;
  }

  // Among several candidates, those renamed by the same kustomizations as
  // the referrer: of two lists of prefixes (and of suffixes), the shorter
  // must be the outermost part of the longer; leniently, an empty list
  // agrees with any.
  bool same_affixes(const Resource& r, bool lenient) const {
    auto agree = [&](const std::vector<std::string>& a, const std::vector<std::string>& b) {
      if (lenient && (a.empty() || b.empty())) return true;
      const auto& shorter = a.size() <= b.size() ? a : b;
      const auto& longer = a.size() <= b.size() ? b : a;
      if (shorter.empty()) return longer.empty();
      return std::equal(shorter.rbegin(), shorter.rend(), longer.rbegin());
    };
    return agree(referrer_.name_prefixes(), r.name_prefixes()) &&
           agree(referrer_.name_suffixes(), r.name_suffixes());
  }

  [[noreturn]] void ambiguous(const std::string& old_name, const Candidates& found,
                              const std::string& where) const {
    std::string ids;
    for (const Resource* r : found) ids += (ids.empty() ? "" : ", ") + r->id().to_string();
    fail(where, "\"" + old_name + "\" may refer to several resources: " + ids);
  }

  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw Error(referrer_.id().to_string() + ": " + where + ": " + message);
  }

  Resource& referrer_;
  const FieldSpec& field_;
  const Gvk& target_;
  const Visible& visible_;
  const ResourceIndex& index_;
  std::optional<Gvk> role_;
};

}  // namespace

void fix_name_references(ResourceList& resources) {
  ResourceIndex index(resources);
  for (auto& referrer : resources) {
    Gvk original = referrer.original_id().gvk;
    Visible visible(referrer);
    for (const auto& back_reference : default_name_references()) {
      for (const auto& field : back_reference.referrers) {
        if (selects(field, original))
          Reference(referrer, field, back_reference.target, visible, index).fix();
      }
    }
  }
}

}  // namespace fluxop::kustomize
