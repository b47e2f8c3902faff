#include "core/kustomize/name_reference.h"

#include <algorithm>
#include <iterator>
#include <memory>
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
std::string namespace_or_default(const ResourceId& id) {
  if (is_cluster_scoped(id.gvk)) return {};
  return id.ns.empty() ? "default" : id.ns;
}

bool gvk_selected(const Gvk& selector, const Gvk& gvk) { return selects({selector, {}}, gvk); }

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

// The positions of candidates in their build-order list.
using Positions = std::vector<std::size_t>;

// The value at `key`, or an empty one.
template <typename Map>
const typename Map::mapped_type& at_or_none(const Map& map, const std::string& key) {
  static const typename Map::mapped_type none;
  auto found = map.find(key);
  return found == map.end() ? none : found->second;
}

// One of the affix lists (prefixes or suffixes) of a set of candidates,
// indexed so that those agreeing with a referrer's list are found by a few
// lookups: thousands of copies of a base's object once had the same name,
// and comparing each referrer's list with every copy's grows with the square
// of the copies. Lists are innermost first; two agree when the shorter is
// the outermost part (the ending) of the longer, an empty list agreeing only
// with an empty one, or, leniently, with any.
class AffixLists {
 public:
  template <typename ListOf>
  AffixLists(const Candidates& candidates, ListOf list_of) {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const std::vector<std::string>& list = list_of(*candidates[i]);
      std::string ending;
      for (auto affix = list.rbegin(); affix != list.rend(); ++affix) {
        ending += encoded(*affix);
        endings_[ending].push_back(i);
      }
      whole_[ending].push_back(i);
      all_.push_back(i);
    }
  }

  // The groups of candidates whose list agrees with `list`: disjoint, as
  // each list has one length. Whole lists shorter than `list` agree when
  // they are its endings, longer ones when `list` is theirs.
  std::vector<const Positions*> agreeing(const std::vector<std::string>& list, bool lenient) const {
    if (list.empty()) return {lenient ? &all_ : &at_or_none(whole_, "")};
    std::vector<const Positions*> groups;
    if (lenient) groups.push_back(&at_or_none(whole_, ""));
    std::string ending;
    for (auto affix = list.rbegin(); affix != list.rend(); ++affix) {
      ending += encoded(*affix);
      groups.push_back(&at_or_none(std::next(affix) == list.rend() ? endings_ : whole_, ending));
    }
    return groups;
  }

 private:
  // Length-prefixed, so that no two lists have the same key.
  static std::string encoded(const std::string& affix) {
    return std::to_string(affix.size()) + ":" + affix;
  }

  std::unordered_map<std::string, Positions> whole_;    // by the whole list
  std::unordered_map<std::string, Positions> endings_;  // by each non-empty ending
  Positions all_;
};

// The resources that once had one name (and kind), in build order, with
// their affix lists indexed when a reference first needs them.
class Named {
 public:
  void add(const Resource* r) { resources_.push_back(r); }
  const Candidates& resources() const { return resources_; }

  const AffixLists& prefixes() const { return indexed().prefixes; }
  const AffixLists& suffixes() const { return indexed().suffixes; }

 private:
  struct Affixes {
    AffixLists prefixes;
    AffixLists suffixes;
  };

  // Built once, after every resource was added: most names are never
  // ambiguous and need no index.
  const Affixes& indexed() const {
    if (!affixes_) {
      affixes_ = std::make_unique<Affixes>(
          Affixes{AffixLists(
                      resources_, [](const Resource& r) -> auto& { return r.name_prefixes(); }),
                  AffixLists(
                      resources_, [](const Resource& r) -> auto& { return r.name_suffixes(); })});
    }
    return *affixes_;
  }

  Candidates resources_;
  mutable std::unique_ptr<Affixes> affixes_;
};

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
        for (const std::string& kind : kinds) by_old_name_[key(name, kind)].add(&r);
      }
      std::string original_ns = namespace_or_default(r.original_id());
      if (!original_ns.empty()) by_original_ns_[original_ns].push_back(&r);
    }
  }

  // The resources that once had `name`, and once were of `kind` unless it
  // is empty: thousands of shards' Deployments and Services once had the
  // same name, and a reference to a ServiceAccount need not sift them.
  const Named& once_named(const std::string& name, const std::string& kind) const {
    return at_or_none(by_old_name_, key(name, kind));
  }
  // The namespaced resources whose original namespace is `ns`.
  const Candidates& originally_in(const std::string& ns) const {
    return at_or_none(by_original_ns_, ns);
  }

 private:
  // No name or kind holds a newline (validated names).
  static std::string key(const std::string& name, const std::string& kind) {
    return name + "\n" + kind;
  }

  std::unordered_map<std::string, Named> by_old_name_;  // by key(name, kind)
  std::unordered_map<std::string, Candidates> by_original_ns_;
};

// What the referrer may refer to: cluster-scoped resources, resources in its
// namespace, and those in its ServiceAccount subjects' namespaces; a
// cluster-scoped referrer may refer to anything. The subjects are read (and
// checked) at once, before a fix changes them.
class Visible {
 public:
  explicit Visible(const Resource& referrer)
      : referrer_ns_(namespace_or_default(referrer.id())),
        subjects_ns_(subject_namespaces(referrer)) {}

  bool sees(const Resource& target) const {
    if (referrer_ns_.empty()) return true;
    std::string target_ns = namespace_or_default(target.id());
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
    const Resource* referral = select(name.text(), nullptr, false, where);
    if (referral && referral->name() != name.text()) name = yaml::Node::string(referral->name());
  }

  // The map's own namespace narrows the candidates; an empty namespace on
  // the referral is not written, as it does not mean "default" there.
  void fix_name_and_namespace(yaml::Node& map, const std::string& where) {
    const yaml::Node* name = map.get("name");
    if (!name) fail(where, "no 'name' field in the reference");
    const Resource* referral = select(name->text(), map.get("namespace"), true, where);
    if (!referral) return;
    if (referral->name() == name->text() && referral->ns().empty()) return;
    map.set("name", yaml::Node::string(referral->name()));
    if (!referral->ns().empty()) map.set("namespace", yaml::Node::string(referral->ns()));
  }

  // Whether a resource that once had the referenced name may be the
  // referral, before affixes tell candidates apart: the referrer sees it, it
  // is of the kinds the field and a roleRef name, within reach, and in the
  // namespace a {name, namespace} map names (`ns`, none for all). The map's
  // namespace is matched against original namespaces when any resource the
  // referrer sees started there, else against current ones.
  auto qualifies(const yaml::Node* ns) const {
    bool by_original = false;
    if (ns) {
      const Candidates& started_there = index_.originally_in(ns->text());
      by_original = std::any_of(started_there.begin(), started_there.end(),
                                [&](const Resource* r) { return visible_.sees(*r); });
    }
    return [this, ns, by_original](const Resource* r) {
      if (!visible_.sees(*r)) return false;
      if (ns) {
        std::string candidate_ns = namespace_or_default(by_original ? r->original_id() : r->id());
        if (candidate_ns.empty() || candidate_ns != ns->text()) return false;
      }
      return was_selected_by(*r, target_) && (!role_ || was_selected_by(*r, *role_)) &&
             in_reach(*r);
    };
  }

  // kustomize's choice among resources that once had `old_name`; nullptr
  // when there is none. Of those that qualify, when several do, those whose
  // affixes agree leniently with the referrer's, and when several still do,
  // strictly (strict agreement implies lenient). Only the final set is
  // listed whole; the sets before it are counted up to two.
  const Resource* select(const std::string& old_name, const yaml::Node* ns, bool compare_namespaces,
                         const std::string& where) const {
    const Named& named = index_.once_named(old_name, target_.kind);
    auto keep = qualifies(ns);
    Candidates found;
    for (const Resource* r : named.resources()) {
      if (keep(r)) found.push_back(r);
      if (found.size() > 1) break;
    }
    if (found.size() > 1) found = agreeing(named, keep, true, 2);
    if (found.size() > 1) found = agreeing(named, keep, false, named.resources().size());
    if (found.empty()) return nullptr;
    auto same = [&](const Resource* r) {
      return r->name() == found[0]->name() && (!compare_namespaces || r->ns() == found[0]->ns());
    };
    if (!std::all_of(found.begin(), found.end(), same)) ambiguous(old_name, found, where);
    return found[0];
  }

  // Up to `limit` of the candidates that `keep` keeps and whose affixes
  // agree with the referrer's, in build order. The groups of the more
  // selective list (prefixes or suffixes) are searched, each candidate
  // checked on both.
  template <typename Keep>
  Candidates agreeing(const Named& named, const Keep& keep, bool lenient, std::size_t limit) const {
    auto by_prefix = named.prefixes().agreeing(referrer_.name_prefixes(), lenient);
    auto by_suffix = named.suffixes().agreeing(referrer_.name_suffixes(), lenient);
    auto total = [](const std::vector<const Positions*>& groups) {
      std::size_t sum = 0;
      for (const Positions* group : groups) sum += group->size();
      return sum;
    };
    Positions kept;
    for (const Positions* group : total(by_prefix) <= total(by_suffix) ? by_prefix : by_suffix) {
      for (std::size_t i : *group) {
        if (kept.size() == limit) break;
        const Resource* r = named.resources()[i];
        if (same_affixes(*r, lenient) && keep(r)) kept.push_back(i);
      }
    }
    std::sort(kept.begin(), kept.end());
    Candidates found;
    for (std::size_t i : kept) found.push_back(named.resources()[i]);
    return found;
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
    std::string referrer_ns = namespace_or_default(referrer_.id());
    std::string ns = namespace_or_default(r.id());
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
