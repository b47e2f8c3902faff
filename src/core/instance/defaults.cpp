#include "core/instance/defaults.h"

#include <string>

namespace fluxop::instance {

namespace {

using yaml::Node;

void set_missing(Node& object, std::string_view key, const Node& value) {
  const Node* current = object.get(key);
  if (current == nullptr || current->is_null()) object.set(key, value);
}

// The map at `key` of `parent`, when there is one to default into.
Node* present_map(Node& parent, std::string_view key) {
  Node* child = parent.is_map() ? parent.get(key) : nullptr;
  return child != nullptr && child->is_map() ? child : nullptr;
}

}  // namespace

void apply_schema_defaults(Node& document) {
  Node* spec = present_map(document, "spec");
  if (spec == nullptr) return;
  set_missing(*spec, "wait", Node::boolean(true));
  set_missing(*spec, "migrateResources", Node::boolean(true));
  if (Node* cluster = present_map(*spec, "cluster")) {
    set_missing(*cluster, "domain", Node::string("cluster.local"));
    set_missing(*cluster, "multitenant", Node::boolean(false));
    set_missing(*cluster, "multitenantWorkloadIdentity", Node::boolean(false));
    set_missing(*cluster, "networkPolicy", Node::boolean(true));
    set_missing(*cluster, "type", Node::string("kubernetes"));
  }
  if (Node* sharding = present_map(*spec, "sharding")) {
    set_missing(*sharding, "key", Node::string(std::string(kDefaultShardingKey)));
  }
  if (Node* sync = present_map(*spec, "sync")) {
    set_missing(*sync, "interval", Node::string("1m"));
  }
}

void apply_operator_defaults(FluxInstance& instance) {
  auto fill = [](std::string& field, std::string_view value) {
    if (field.empty()) field = value;
  };
  fill(instance.ns, kDefaultNamespace);
  if (instance.components.empty()) {
    instance.components = {"source-controller", "kustomize-controller", "helm-controller",
                           "notification-controller"};
  }
  Cluster& cluster = instance.cluster;
  fill(cluster.type, "kubernetes");
  fill(cluster.domain, "cluster.local");
  fill(cluster.tenant_default_service_account, kDefaultServiceAccount);
  fill(cluster.tenant_default_decryption_service_account, kDefaultServiceAccount);
  fill(cluster.tenant_default_kubeconfig_service_account, kDefaultServiceAccount);
  if (instance.sharding) {
    fill(instance.sharding->key, kDefaultShardingKey);
    fill(instance.sharding->storage, "ephemeral");
  }
  if (instance.sync) fill(instance.sync->name, instance.ns);
}

}  // namespace fluxop::instance
