#include "core/adopt/infer.h"

#include <algorithm>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/instance/instance.h"
#include "core/labels.h"

namespace fluxop::adopt {

namespace {

using yaml::Node;

bool is_component(std::string_view name) {
  return std::find(instance::kComponents.begin(), instance::kComponents.end(), name) !=
         instance::kComponents.end();
}

bool is_kind(const Node& object, std::string_view kind) {
  return object.string_at({"kind"}) == kind;
}

// The first container's arguments of a Deployment.
std::vector<std::string> arguments(const Node& deployment) {
  std::vector<std::string> out;
  const Node* containers = deployment.find({"spec", "template", "spec", "containers"});
  if (!containers || !containers->is_sequence() || containers->items().empty()) return out;
  const Node* args = containers->items().front().get("args");
  if (!args || !args->is_sequence()) return out;
  for (const Node& arg : args->items()) out.push_back(arg.text());
  return out;
}

// The value of "--flag=value" among `args`; nullopt when absent.
std::optional<std::string> flag(const std::vector<std::string>& args, std::string_view name) {
  std::string prefix = std::string(name) + "=";
  for (const std::string& arg : args) {
    if (arg.starts_with(prefix)) return arg.substr(prefix.size());
  }
  return std::nullopt;
}

std::string first_image(const Node& deployment) {
  const Node* containers = deployment.find({"spec", "template", "spec", "containers"});
  if (!containers || !containers->is_sequence() || containers->items().empty()) return {};
  return containers->items().front().string_at({"image"});
}

// The cluster domain in "...svc.DOMAIN." or "...svc.DOMAIN./".
std::optional<std::string> domain_of(std::string_view address) {
  std::size_t at = address.find(".svc.");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = address.substr(at + 5);
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.ends_with('.')) rest.remove_suffix(1);
  if (rest.empty()) return std::nullopt;
  return std::string(rest);
}

// "KEY=SHARD" or "KEY in (SHARD)": the shard a controller watches.
struct ShardSelector {
  std::string key;
  std::string shard;
};
std::optional<ShardSelector> shard_selector(std::string_view selector) {
  if (selector.starts_with('!')) return std::nullopt;
  if (std::size_t in = selector.find(" in ("); in != std::string_view::npos) {
    if (!selector.ends_with(')')) return std::nullopt;
    std::string_view values = selector.substr(in + 5, selector.size() - in - 6);
    if (values.find(',') != std::string_view::npos) return std::nullopt;
    return ShardSelector{std::string(selector.substr(0, in)), std::string(values)};
  }
  if (std::size_t eq = selector.find('='); eq != std::string_view::npos) {
    std::string_view value = selector.substr(eq + 1);
    if (value.starts_with('=')) value.remove_prefix(1);
    return ShardSelector{std::string(selector.substr(0, eq)), std::string(value)};
  }
  return std::nullopt;
}

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw Error(origin + ": " + what);
}

std::string joined(const std::set<std::string>& values) {
  std::string out;
  for (const std::string& value : values) out += (out.empty() ? "" : " and ") + value;
  return out;
}

// The Git reference a GitRepository's .spec.ref names, as .spec.sync.ref
// writes it.
std::string git_reference(const Node* ref) {
  if (!ref || !ref->is_map()) return "refs/heads/master";  // the source-controller's default
  if (std::string name = ref->string_at({"name"}); !name.empty()) return name;
  if (std::string branch = ref->string_at({"branch"}); !branch.empty()) {
    return "refs/heads/" + branch;
  }
  if (std::string tag = ref->string_at({"tag"}); !tag.empty()) return "refs/tags/" + tag;
  // A semver range or a commit has no reference name: the closest is left
  // to the generated patch, which writes the installed ref.
  return "refs/heads/master";
}

Node sync_of(const Node& source, const Node& kustomization) {
  std::string kind = source.string_at({"kind"});
  Node sync = Node::map();
  sync.append("kind", Node::string(kind));
  sync.append("name", Node::string(source.string_at({"metadata", "name"})));
  if (kind == "Bucket") {
    sync.append("url", Node::string(source.string_at({"spec", "endpoint"})));
    sync.append("ref", Node::string(source.string_at({"spec", "bucketName"})));
  } else {
    sync.append("url", Node::string(source.string_at({"spec", "url"})));
    if (kind == "GitRepository") {
      sync.append("ref", Node::string(git_reference(source.find({"spec", "ref"}))));
    } else {
      std::string tag = source.string_at({"spec", "ref", "tag"});
      sync.append("ref", Node::string(tag.empty() ? "latest" : tag));
    }
  }
  sync.append("path", Node::string(kustomization.string_at({"spec", "path"})));
  if (std::string interval = source.string_at({"spec", "interval"}); !interval.empty()) {
    sync.append("interval", Node::string(interval));
  }
  if (std::string secret = source.string_at({"spec", "secretRef", "name"}); !secret.empty()) {
    sync.append("pullSecret", Node::string(secret));
  }
  if (std::string provider = source.string_at({"spec", "provider"}); !provider.empty()) {
    sync.append("provider", Node::string(provider));
  }
  return sync;
}

// The Kustomization bootstrap wrote and its source: named as the
// namespace when there is one, else the only one whose source is there.
std::optional<Node> find_sync(const std::vector<Node>& objects, const std::string& ns) {
  std::vector<std::pair<const Node*, const Node*>> found;
  for (const Node& kustomization : objects) {
    if (!is_kind(kustomization, "Kustomization") ||
        !kustomization.string_at({"apiVersion"}).starts_with("kustomize.toolkit.fluxcd.io/") ||
        kustomization.string_at({"metadata", "namespace"}) != ns) {
      continue;
    }
    std::string kind = kustomization.string_at({"spec", "sourceRef", "kind"});
    std::string name = kustomization.string_at({"spec", "sourceRef", "name"});
    std::string source_ns = kustomization.string_at({"spec", "sourceRef", "namespace"}, ns);
    if (name != kustomization.string_at({"metadata", "name"}) || source_ns != ns) continue;
    for (const Node& source : objects) {
      if (is_kind(source, kind) && source.string_at({"metadata", "name"}) == name &&
          source.string_at({"metadata", "namespace"}) == ns &&
          source.string_at({"apiVersion"}).starts_with("source.toolkit.fluxcd.io/")) {
        found.emplace_back(&source, &kustomization);
      }
    }
  }
  for (const auto& [source, kustomization] : found) {
    if (kustomization->string_at({"metadata", "name"}) == ns)
      return sync_of(*source, *kustomization);
  }
  if (found.size() == 1) return sync_of(*found.front().first, *found.front().second);
  return std::nullopt;
}

}  // namespace

Inferred infer_instance(const std::vector<Node>& objects, const std::string& origin) {
  // The controllers, by namespace: one namespace is one installation.
  std::set<std::string> namespaces;
  for (const Node& object : objects) {
    if (is_kind(object, "Deployment") && is_component(object.string_at({"metadata", "name"}))) {
      namespaces.insert(object.string_at({"metadata", "namespace"}));
    }
  }
  if (namespaces.empty()) {
    fail(origin, "no Flux controller Deployment (source-controller, kustomize-controller, ...)");
  }
  if (namespaces.size() > 1) fail(origin, "two Flux installations, in " + joined(namespaces));
  Inferred inferred;
  inferred.ns = *namespaces.begin();

  std::vector<const Node*> controllers;  // in kComponents' order
  for (std::string_view component : instance::kComponents) {
    for (const Node& object : objects) {
      if (is_kind(object, "Deployment") && object.string_at({"metadata", "name"}) == component &&
          object.string_at({"metadata", "namespace"}) == inferred.ns) {
        controllers.push_back(&object);
      }
    }
  }

  std::set<std::string> versions;
  for (const Node* controller : controllers) {
    std::string version = controller->string_at({"metadata", "labels", kVersionLabel});
    if (!version.empty()) versions.insert(version);
  }
  if (versions.empty()) {
    fail(origin, "the controllers have no " + std::string(kVersionLabel) +
                     " label: not installed by flux bootstrap or flux install");
  }
  if (versions.size() > 1) fail(origin, "two Flux versions, " + joined(versions));
  inferred.version = *versions.begin();

  Node spec = Node::map();
  Node distribution = Node::map();
  std::string version = inferred.version;
  distribution.append("version",
                      Node::string(version.starts_with('v') ? version.substr(1) : version));
  std::string image = first_image(*controllers.front());
  std::string component = controllers.front()->string_at({"metadata", "name"});
  std::size_t at = image.rfind("/" + component);
  if (at == std::string::npos || at == 0) {
    fail(origin, controllers.front()->string_at({"metadata", "name"}) + ": image " + quote(image) +
                     " is not REGISTRY/" + component);
  }
  distribution.append("registry", Node::string(image.substr(0, at)));
  const Node* pull_secrets =
      controllers.front()->find({"spec", "template", "spec", "imagePullSecrets"});
  if (pull_secrets && pull_secrets->is_sequence() && !pull_secrets->items().empty()) {
    distribution.append("imagePullSecret",
                        Node::string(pull_secrets->items().front().string_at({"name"})));
  }
  spec.append("distribution", std::move(distribution));

  Node components = Node::sequence();
  for (const Node* controller : controllers) {
    components.push_back(Node::string(controller->string_at({"metadata", "name"})));
  }
  spec.append("components", std::move(components));

  Node cluster = Node::map();
  std::string domain = "cluster.local";
  bool multitenant = false;
  std::string tenant_account;
  for (const Node* controller : controllers) {
    std::vector<std::string> args = arguments(*controller);
    for (std::string_view address : {"--storage-adv-addr", "--events-addr"}) {
      if (auto value = flag(args, address)) {
        if (auto found = domain_of(*value)) domain = *found;
      }
    }
    if (flag(args, "--no-cross-namespace-refs") == "true") multitenant = true;
    if (auto account = flag(args, "--default-service-account")) tenant_account = *account;
  }
  bool network_policy = std::any_of(objects.begin(), objects.end(), [&](const Node& object) {
    return is_kind(object, "NetworkPolicy") &&
           object.string_at({"metadata", "namespace"}) == inferred.ns;
  });
  cluster.append("type", Node::string("kubernetes"));
  cluster.append("domain", Node::string(domain));
  cluster.append("networkPolicy", Node::boolean(network_policy));
  cluster.append("multitenant", Node::boolean(multitenant));
  if (multitenant && !tenant_account.empty()) {
    cluster.append("tenantDefaultServiceAccount", Node::string(tenant_account));
  }
  spec.append("cluster", std::move(cluster));

  // Shards: copies of the controllers named <component>-<shard>, each
  // watching the objects labelled for its shard.
  std::string shard_key;
  std::vector<std::string> shards;
  for (const Node& object : objects) {
    std::string name = object.string_at({"metadata", "name"});
    if (!is_kind(object, "Deployment") ||
        object.string_at({"metadata", "namespace"}) != inferred.ns || is_component(name)) {
      continue;
    }
    auto selector = flag(arguments(object), "--watch-label-selector");
    if (!selector) continue;
    auto shard = shard_selector(*selector);
    if (!shard || !name.ends_with("-" + shard->shard) ||
        !is_component(name.substr(0, name.size() - shard->shard.size() - 1))) {
      continue;
    }
    shard_key = shard->key;
    if (std::find(shards.begin(), shards.end(), shard->shard) == shards.end()) {
      shards.push_back(shard->shard);
    }
  }
  if (!shards.empty()) {
    Node sharding = Node::map();
    sharding.append("key", Node::string(shard_key));
    Node list = Node::sequence();
    for (const std::string& shard : shards) list.push_back(Node::string(shard));
    sharding.append("shards", std::move(list));
    spec.append("sharding", std::move(sharding));
  }

  if (std::optional<Node> sync = find_sync(objects, inferred.ns)) {
    spec.append("sync", std::move(*sync));
  }

  Node metadata = Node::map();
  metadata.append("name", Node::string("flux"));
  metadata.append("namespace", Node::string(inferred.ns));
  Node document = Node::map();
  document.append("apiVersion", Node::string("fluxcd.controlplane.io/v1"));
  document.append("kind", Node::string("FluxInstance"));
  document.append("metadata", std::move(metadata));
  document.append("spec", std::move(spec));
  inferred.document = std::move(document);
  return inferred;
}

}  // namespace fluxop::adopt
