#include "core/kube/kube_cluster.h"

#include "core/error.h"
#include "core/kube/answer.h"
#include "core/kube/kubeconfig.h"
#include "core/kube/watch.h"

namespace fluxop::kube {

using nlohmann::json;

KubeCluster::KubeCluster(KubeClient& client, std::string field_manager, bool dry_run)
    : client_(client), field_manager_(std::move(field_manager)), dry_run_(dry_run) {}

KubeCluster::KubeCluster(std::unique_ptr<KubeClient> client, std::string field_manager,
                         bool dry_run)
    : owned_(std::move(client)),
      client_(*owned_),
      field_manager_(std::move(field_manager)),
      dry_run_(dry_run) {}

WriteOptions KubeCluster::writes() const { return {dry_run_, field_manager_}; }

std::optional<json> KubeCluster::get(const ObjectKey& ref) {
  if (!has_kind(ref)) return std::nullopt;
  return client_.get(ref);
}

std::vector<std::vector<json>> KubeCluster::list_all(const std::vector<ListQuery>& queries) {
  std::vector<std::size_t> served;
  std::vector<std::vector<json>> answers = client_.list_all(served_queries(queries, served));
  std::vector<std::vector<json>> lists(queries.size());
  for (std::size_t i = 0; i < served.size(); ++i) lists[served[i]] = std::move(answers[i]);
  return lists;
}

void KubeCluster::list_each(const std::vector<ListQuery>& queries, const ListVisitor& each) {
  std::vector<std::size_t> served;
  client_.list_each(served_queries(queries, served), [&](std::size_t query, json&& object) {
    each(served[query], std::move(object));
  });
}

void KubeCluster::list_streamed(const std::vector<ListQuery>& queries, const ListVisitor& each) {
  std::vector<std::size_t> served;
  client_.list_streamed(served_queries(queries, served), [&](std::size_t query, json&& object) {
    each(served[query], std::move(object));
  });
}

std::vector<ListQuery> KubeCluster::served_queries(const std::vector<ListQuery>& queries,
                                                   std::vector<std::size_t>& served) {
  std::vector<ListQuery> asked;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    if (!has_kind(queries[i].kind)) continue;
    asked.push_back(queries[i]);
    served.push_back(i);
  }
  return asked;
}

std::vector<WriteResult> KubeCluster::apply_all(const std::vector<json>& objects, bool dry_run) {
  return client_.apply_all(objects, {dry_run || dry_run_, field_manager_});
}

json KubeCluster::apply_status(const ObjectKey& ref, const json& status,
                               const std::string& resource_version) {
  json object = {{"apiVersion", kube::api_version(ref)},
                 {"kind", ref.kind},
                 {"metadata", {{"name", ref.name}, {"namespace", ref.ns}}},
                 {"status", status}};
  // The API server takes an applied resourceVersion as a precondition.
  if (!resource_version.empty()) object["metadata"]["resourceVersion"] = resource_version;
  return client_.apply_status(object, writes());
}

std::optional<json> KubeCluster::create(const json& object) {
  try {
    return client_.create(object, writes());
  } catch (const ApiError& e) {
    if (e.reason() == "AlreadyExists") return std::nullopt;
    throw;
  }
}

std::optional<json> KubeCluster::replace(const json& object) {
  try {
    return client_.update(object, writes());
  } catch (const ApiError& e) {
    if (e.reason() == "Conflict") return std::nullopt;
    throw;
  }
}

std::vector<WriteResult> KubeCluster::patch_all(const std::vector<ObjectPatch>& patches) {
  return client_.patch_all(patches, writes());
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

std::vector<ObjectKey> KubeCluster::served_kinds(
    const std::function<bool(std::string_view group)>& in_group) {
  std::vector<ObjectKey> kinds;
  for (const ResourceMapping& mapping : client_.mapper().preferred_kinds(in_group)) {
    kinds.push_back({mapping.group, mapping.version, mapping.kind, "", ""});
  }
  return kinds;
}

namespace {

// The kubeconfig's access as the settings select it.
ClusterAccess cluster_access(const ClusterSettings& settings) {
  ClusterAccess access = load_cluster_access({settings.kubeconfig, settings.context});
  if (settings.insecure_skip_tls_verify) access.insecure_skip_tls_verify = true;
  const Impersonation& flags = settings.impersonate;
  if (!flags.empty()) {
    if (!flags.user.empty()) access.impersonate.user = flags.user;
    if (!flags.groups.empty()) access.impersonate.groups = flags.groups;
    access.impersonate_origin = flags.user.empty() ? "--as-group" : "--as";
    impersonation_headers(access.impersonate,
                          access.impersonate_origin);  // refused before a request
  }
  return access;
}

}  // namespace

ServerVersion KubeCluster::server_version() {
  Response response = client_.request("GET", "/version");
  if (!response.ok()) throw api_error("GET /version", response.status, response.body);
  json version = decode_answer("GET /version", response.body);
  ServerVersion server;
  for (auto [field, value] :
       {std::pair{"gitVersion", &server.git_version}, std::pair{"platform", &server.platform}}) {
    if (!version.is_object() || !version.contains(field) || !version[field].is_string())
      throw Error(std::string("GET /version: no ") + field + " in the answer");
    *value = version[field].get<std::string>();
  }
  return server;
}

std::vector<AccessAnswer> KubeCluster::review_access(const std::vector<AccessQuery>& queries) {
  const std::string path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
  std::vector<KubeClient::Request> requests;
  for (const AccessQuery& query : queries) {
    std::optional<ResourceMapping> mapping =
        client_.mapper().find(query.kind.group, query.kind.version, query.kind.kind);
    std::string resource = mapping ? mapping->resource : query.resource;
    if (resource.empty())
      throw Error(display_name(query.kind) + ": the API server does not serve this kind");
    json attributes = {{"group", query.kind.group}, {"resource", resource}, {"verb", query.verb}};
    if (!query.kind.ns.empty()) attributes["namespace"] = query.kind.ns;
    if (!query.subresource.empty()) attributes["subresource"] = query.subresource;
    json review = {{"apiVersion", "authorization.k8s.io/v1"},
                   {"kind", "SelfSubjectAccessReview"},
                   {"spec", {{"resourceAttributes", attributes}}}};
    requests.push_back({"POST", path, "", review.dump(), "application/json", "application/json"});
  }
  std::vector<Response> responses = client_.request_all(requests);
  std::vector<AccessAnswer> answers;
  for (const Response& response : responses) {
    if (!response.ok()) throw api_error("SelfSubjectAccessReview", response.status, response.body);
    json review = decode_answer("POST " + path, response.body);
    const json* status =
        review.is_object() && review.contains("status") ? &review["status"] : nullptr;
    if (!status || !status->is_object() || !status->contains("allowed") ||
        !(*status)["allowed"].is_boolean())
      throw Error("POST " + path + ": no status.allowed in the answer");
    AccessAnswer answer{(*status)["allowed"].get<bool>(), ""};
    if (auto reason = status->find("reason"); reason != status->end() && reason->is_string())
      answer.reason = reason->get<std::string>();
    answers.push_back(std::move(answer));
  }
  return answers;
}

std::unique_ptr<ObjectView> KubeCluster::watch(const ObjectKey& key,
                                               std::function<void()> on_change,
                                               std::function<void(const std::string&)> on_error) {
  return std::make_unique<ObjectWatch>(client_.access(), key, std::move(on_change),
                                       std::move(on_error));
}

std::unique_ptr<Cluster> KubeCluster::for_thread(std::chrono::milliseconds request_timeout) {
  ClientOptions options;
  options.attempts = 1;
  options.request_timeout = request_timeout;
  return std::make_unique<KubeCluster>(std::make_unique<KubeClient>(client_.access(), options),
                                       field_manager_, dry_run_);
}

int KubeCluster::requests() const { return client_.requests_sent(); }

Connection connect(const ClusterSettings& settings, bool dry_run,
                   std::optional<std::chrono::steady_clock::time_point> retry_until,
                   std::function<bool()> cancelled) {
  ClientOptions options;
  options.request_timeout = settings.request_timeout;
  options.retry_until = retry_until;
  options.cancelled = std::move(cancelled);
  Connection connected;
  connected.client = std::make_unique<KubeClient>(cluster_access(settings), options);
  connected.cluster =
      std::make_unique<KubeCluster>(*connected.client, settings.field_manager, dry_run);
  return connected;
}

}  // namespace fluxop::kube
