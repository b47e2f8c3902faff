// The FluxInstance as an object in the cluster: its key, the object applied
// from the file, the CRD fluxopctl installs when there is none, the labels
// of what it installed, and the rendered objects as the engine takes them.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/instance/instance.h"
#include "core/kube/cluster.h"
#include "core/kube/object.h"
#include "core/render/render.h"
#include "core/ssa/engine.h"

namespace fluxop::reconcile {

// The FluxInstance object so named.
inline kube::ObjectKey instance_ref(std::string ns, std::string name) {
  return {"fluxcd.controlplane.io", "v1", "FluxInstance", std::move(ns), std::move(name)};
}

// The labels of the objects the instance installed: only those are pruned.
ssa::Owner owner_labels(const kube::ObjectKey& instance);

// The instance as the upstream CLI's `export resource` exports it, to apply
// elsewhere: no status; of the metadata only the name, namespace, labels and
// annotations, without the owner labels and the request annotation.
nlohmann::ordered_json exported_instance(const nlohmann::json& live);

// The Flux version installed in namespace `ns`: the FluxInstance flux's last
// applied revision, else the namespace's version label (what `flux install`
// and bootstrap set); empty when neither says.
std::string installed_flux_version(kube::Cluster& cluster, const std::string& ns);

// The rendered objects as JSON, in apply order.
std::vector<nlohmann::json> rendered_json(const render::Rendered& rendered);

// The FluxInstance CRD fluxopctl installs when the cluster has none.
nlohmann::json fluxinstance_crd();

// A FluxInstance as read from the cluster, with every value whose type is
// not the one the CRD's schema (and the object metadata's) gives removed: a
// real API server keeps to the schema, a hostile one need not, and every
// reader of the live instance (status tables, waits, the inventory, the
// history) may then take the types for granted. nullopt when `live` is not
// an object.
std::optional<nlohmann::json> conform_instance(nlohmann::json live);

// The FluxInstance `ref` in the cluster, conformed; nullopt when there is none.
std::optional<nlohmann::json> get_live_instance(kube::Cluster& cluster, const kube::ObjectKey& ref);

// The FluxInstance object applied: the file's apiVersion, kind, name,
// namespace, labels, annotations and spec.
nlohmann::json instance_object(const instance::FluxInstance& flux);

// The same of any FluxInstance document (a file's, a live object's): its
// apiVersion, kind, labels, annotations and spec, named `name` in `ns`; not
// its status, nor the server's metadata.
nlohmann::json instance_object(const nlohmann::json& document, const std::string& name,
                               const std::string& ns);

// Whether applying the instance object would change no value of the live
// one: every value of `object` is there, `manager` owns no field `object`
// lacks (its apply would remove it), and no field is to be taken over. The
// operator never applies its FluxInstance (its users and their GitOps do); a
// write that would only make `manager` a co-owner of the spec again is
// skipped, so that a cluster the operator ran passes to fluxopctl without a
// write.
bool instance_in_place(const nlohmann::json& object, const nlohmann::json& live,
                       std::string_view manager);

}  // namespace fluxop::reconcile
