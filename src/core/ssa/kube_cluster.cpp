#include "core/ssa/kube_cluster.h"

#include "core/error.h"

namespace fluxop::ssa {

using nlohmann::json;

KubeCluster::KubeCluster(kube::KubeClient& client, std::string field_manager, bool dry_run)
    : client_(client), field_manager_(std::move(field_manager)), dry_run_(dry_run) {}

kube::WriteOptions KubeCluster::writes() const { return {dry_run_, field_manager_}; }

std::optional<json> KubeCluster::get(const ObjectKey& ref) {
  if (!has_kind(ref)) return std::nullopt;
  return client_.get(ref);
}

std::vector<json> KubeCluster::list(const ObjectKey& kind) {
  if (!has_kind(kind)) return {};
  return client_.list(kind);
}

json KubeCluster::apply(const json& object) { return client_.apply(object, writes()); }

json KubeCluster::apply_dry_run(const json& object) {
  return client_.apply(object, {true, field_manager_});
}

json KubeCluster::apply_status(const ObjectKey& ref, const json& status) {
  json object = {{"apiVersion", ref.group.empty() ? ref.version : ref.group + "/" + ref.version},
                 {"kind", ref.kind},
                 {"metadata", {{"name", ref.name}, {"namespace", ref.ns}}},
                 {"status", status}};
  return client_.apply_status(object, writes());
}

std::optional<json> KubeCluster::create(const json& object) {
  try {
    return client_.create(object, writes());
  } catch (const kube::ApiError& e) {
    if (e.reason() == "AlreadyExists") return std::nullopt;
    throw;
  }
}

std::optional<json> KubeCluster::replace(const json& object) {
  try {
    return client_.update(object, writes());
  } catch (const kube::ApiError& e) {
    if (e.reason() == "Conflict") return std::nullopt;
    throw;
  }
}

json KubeCluster::merge_patch_status(const ObjectKey& ref, const json& status) {
  return client_.merge_patch(ref, {{"status", status}}, writes(), "status");
}

json KubeCluster::json_patch(const ObjectKey& ref, const json& patch) {
  return client_.json_patch(ref, patch, writes());
}

bool KubeCluster::remove(const ObjectKey& ref) {
  return client_.remove(ref, "Background", writes());
}

bool KubeCluster::has_kind(const ObjectKey& ref) {
  return client_.mapper().find(ref.group, ref.version, ref.kind).has_value();
}

void KubeCluster::refresh_kinds() { client_.mapper().refresh(); }

int KubeCluster::requests() const { return client_.requests_sent(); }

}  // namespace fluxop::ssa
