#include "core/reconcile/cluster.h"

#include "core/error.h"

namespace fluxop::reconcile {

using nlohmann::json;

Cluster::Cluster(kube::KubeClient& client, std::string field_manager, bool dry_run)
    : client_(client), field_manager_(std::move(field_manager)), dry_run_(dry_run) {}

kube::WriteOptions Cluster::writes() const { return {dry_run_, field_manager_}; }

std::optional<json> Cluster::get(const ObjectRef& ref) {
  if (!has_kind(ref)) return std::nullopt;
  return client_.get(ref);
}

std::vector<json> Cluster::list(const ObjectRef& kind) {
  if (!has_kind(kind)) return {};
  return client_.list(kind);
}

json Cluster::apply(const json& object) { return client_.apply(object, writes()); }

json Cluster::apply_status(const ObjectRef& ref, const json& status) {
  json object = {{"apiVersion", ref.group.empty() ? ref.version : ref.group + "/" + ref.version},
                 {"kind", ref.kind},
                 {"metadata", {{"name", ref.name}, {"namespace", ref.ns}}},
                 {"status", status}};
  return client_.apply_status(object, writes());
}

std::optional<json> Cluster::create(const json& object) {
  try {
    return client_.create(object, writes());
  } catch (const kube::ApiError& e) {
    if (e.reason() == "AlreadyExists") return std::nullopt;
    throw;
  }
}

std::optional<json> Cluster::replace(const json& object) {
  try {
    return client_.update(object, writes());
  } catch (const kube::ApiError& e) {
    if (e.reason() == "Conflict") return std::nullopt;
    throw;
  }
}

json Cluster::merge_patch_status(const ObjectRef& ref, const json& status) {
  return client_.merge_patch(ref, {{"status", status}}, writes(), "status");
}

json Cluster::json_patch(const ObjectRef& ref, const json& patch) {
  return client_.json_patch(ref, patch, writes());
}

bool Cluster::remove(const ObjectRef& ref) { return client_.remove(ref, "Background", writes()); }

bool Cluster::has_kind(const ObjectRef& ref) {
  return client_.mapper().find(ref.group, ref.version, ref.kind).has_value();
}

void Cluster::refresh_kinds() { client_.mapper().refresh(); }

int Cluster::requests() const { return client_.requests_sent(); }

}  // namespace fluxop::reconcile
