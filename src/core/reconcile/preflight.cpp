#include "core/reconcile/preflight.h"

#include <map>
#include <optional>
#include <set>

#include "core/distribution/kubernetes_range.h"
#include "core/enum_table.h"
#include "core/error.h"
#include "core/kube/meta.h"
#include "core/plural.h"
#include "core/reconcile/apply.h"
#include "core/reconcile/instance_object.h"
#include "core/reconcile/inventory.h"
#include "core/reconcile/secrets.h"
#include "core/ssa/engine.h"
#include "core/ssa/takeover.h"

namespace fluxop::reconcile {

using kube::string_member;
using nlohmann::json;

namespace {

// A member of an object the API server sent, whatever its shape.
const json* member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto found = object.find(key);
  return found == object.end() ? nullptr : &*found;
}

CheckResult result(std::string name, CheckStatus status, std::string message) {
  return {std::move(name), status, std::move(message)};
}

// The check's result, or failed with what went wrong when it could not ask.
CheckResult guarded(std::string name, const std::function<CheckResult()>& check) {
  try {
    return check();
  } catch (const Error& e) {
    return {std::move(name), CheckStatus::failed, e.what(), false};
  }
}

// The field manager of the Flux Operator: what it wrote, fluxopctl's
// apply under another --field-manager takes over.
constexpr std::string_view kOperatorManager = "flux-operator";

bool managed_by(const json& live, std::string_view manager) {
  const json* metadata = member(live, "metadata");
  const json* entries = metadata ? member(*metadata, "managedFields") : nullptr;
  if (!entries || !entries->is_array()) return false;
  for (const json& entry : *entries) {
    if (string_member(entry, "manager") == manager) return true;
  }
  return false;
}

// Who installed `live`, when apply would take it over from them; "" when
// nobody but the apply's own field manager did.
std::string installed_by(const json& live, const std::string& field_manager) {
  std::string tool = ssa::foreign_tool(live);
  if (!tool.empty()) return tool;
  if (field_manager != kOperatorManager && managed_by(live, kOperatorManager))
    return "the Flux Operator";
  return "";
}

// The plural of each kind a CRD of `objects` defines, by "group/Kind".
std::map<std::string, std::string> defined_resources(const std::vector<json>& objects) {
  std::map<std::string, std::string> plurals;
  for (const json& object : objects) {
    if (string_member(object, "kind") != "CustomResourceDefinition") continue;
    const json* spec = member(object, "spec");
    const json* names = spec ? member(*spec, "names") : nullptr;
    if (!names) continue;
    plurals[string_member(*spec, "group") + "/" + string_member(*names, "kind")] =
        string_member(*names, "plural");
  }
  return plurals;
}

// "create Deployment in flux-system", "patch FluxInstance/status in
// flux-system", "create Namespace".
std::string access_name(const kube::AccessQuery& query) {
  return query.verb + " " + query.kind.kind +
         (query.subresource.empty() ? "" : "/" + query.subresource) +
         (query.kind.ns.empty() ? "" : " in " + query.kind.ns);
}

// What the apply does to the cluster (as deploy/rbac.yaml grants it): every
// kind it renders, where it renders it, read, written and pruned; the
// instance (read in every namespace) and its status; the Lease it holds
// while it applies.
std::vector<kube::AccessQuery> apply_access(const RenderedInstance& instance) {
  std::vector<json> objects = rendered_json(instance.rendered);
  objects.push_back(fluxinstance_crd());
  std::map<std::string, std::string> plurals = defined_resources(objects);
  std::vector<kube::AccessQuery> queries;
  std::set<std::string> asked;
  auto ask = [&](kube::ObjectKey kind, std::string verb, std::string subresource = "") {
    kind.name.clear();
    kube::AccessQuery query{kind, std::move(verb), std::move(subresource), ""};
    if (auto plural = plurals.find(kind.group + "/" + kind.kind); plural != plurals.end())
      query.resource = plural->second;
    if (asked.insert(access_name(query)).second) queries.push_back(std::move(query));
  };
  for (const json& object : objects) {
    kube::ObjectKey key = kube::object_key(object);
    for (const char* verb : {"get", "create", "patch"}) ask(key, verb);
    // Pruned when no longer rendered, unless it says it never is (the
    // namespace).
    if (ssa::prune_action(object, {}) == ssa::PruneAction::Delete) ask(key, "delete");
  }
  kube::ObjectKey flux = instance_ref(instance.flux.ns, instance.flux.name);
  for (const char* verb : {"get", "create", "patch"}) ask(flux, verb);
  ask(flux, "patch", "status");
  ask(instance_ref("", ""), "list");
  kube::ObjectKey lease{"coordination.k8s.io", "v1", "Lease", instance.flux.ns, ""};
  for (const char* verb : {"get", "create", "update"}) ask(lease, verb);
  return queries;
}

constexpr EnumName<CheckStatus> kCheckStatuses[] = {
    {CheckStatus::ok, "ok"}, {CheckStatus::warning, "warning"}, {CheckStatus::failed, "failed"}};
static_assert(covers_enum(kCheckStatuses));

}  // namespace

std::string_view status_name(CheckStatus status) { return enum_row(kCheckStatuses, status).name; }

CheckResult check_kubernetes_version(kube::Cluster& cluster, const RenderedInstance& instance) {
  const std::string name = "kubernetes-version";
  std::string server = cluster.server_version().git_version;
  std::optional<distribution::Version> kubernetes = distribution::parse_version(server);
  if (!kubernetes)
    return result(name, CheckStatus::warning,
                  "the API server's version " + quote(server) + " is not a semantic version");
  std::string flux = "Flux " + instance.rendered.version.original;
  std::optional<distribution::KubernetesRange> range =
      distribution::kubernetes_range(instance.distribution, instance.rendered.version);
  if (!range)
    return result(name, CheckStatus::warning,
                  "Kubernetes " + server + ": no supported range is known for " + flux + " (add " +
                      std::string(distribution::kKubernetesVersionsFile) + " to the distribution)");
  std::string range_text = flux + " supports: " + range->text + " (" + range->source + ")";
  if (!range->constraint.matches(*kubernetes))
    return result(name, CheckStatus::failed,
                  "Kubernetes " + server + " is outside the range " + range_text);
  return result(name, CheckStatus::ok,
                "Kubernetes " + server + " is within the range " + range_text);
}

CheckResult check_namespace(kube::Cluster& cluster, const instance::FluxInstance& flux) {
  return namespace_check(flux, cluster.get({"", "v1", "Namespace", "", flux.ns}));
}

bool namespace_terminating(const json& live) {
  const json* metadata = member(live, "metadata");
  const json* status = member(live, "status");
  return (metadata && member(*metadata, "deletionTimestamp")) ||
         (status && string_member(*status, "phase") == "Terminating");
}

CheckResult namespace_check(const instance::FluxInstance& flux, const std::optional<json>& live) {
  const std::string name = "namespace";
  std::string ns = "Namespace/" + flux.ns;
  if (!live) return result(name, CheckStatus::ok, ns + " does not exist yet; apply creates it");
  if (namespace_terminating(*live))
    return result(name, CheckStatus::failed,
                  ns + " is being deleted (Terminating): nothing can be created in it until it "
                       "is gone");
  return result(name, CheckStatus::ok, ns + " exists");
}

CheckResult check_storage_class(kube::Cluster& cluster, const instance::FluxInstance& flux) {
  const std::string name = "storage-class";
  if (!flux.storage || flux.storage->storage_class.empty())
    return result(name, CheckStatus::ok, "the instance names no StorageClass");
  std::string storage_class = "StorageClass " + quote(flux.storage->storage_class);
  if (!cluster.get({"storage.k8s.io", "v1", "StorageClass", "", flux.storage->storage_class}))
    return result(name, CheckStatus::failed,
                  storage_class +
                      " (.spec.storage.class) does not exist: source-controller's "
                      "PersistentVolumeClaim would never be bound");
  return result(name, CheckStatus::ok, storage_class + " exists");
}

CheckResult check_secrets(kube::Cluster& cluster, const instance::FluxInstance& flux) {
  const std::string name = "secrets";
  std::vector<NamedSecret> secrets = named_secrets(flux);
  if (secrets.empty()) return result(name, CheckStatus::ok, "the instance names no Secret");
  std::vector<std::string> problems, fine;
  for (const NamedSecret& secret : secrets) {
    std::string secret_name = "Secret " + flux.ns + "/" + secret.name + " (" + secret.field + ")";
    if (std::optional<std::string> problem =
            secret_problem(secret, cluster.get({"", "v1", "Secret", flux.ns, secret.name})))
      problems.push_back(secret_name + " " + *problem);
    else
      fine.push_back(secret_name);
  }
  if (!problems.empty()) {
    std::string message;
    for (const std::string& problem : problems) message += (message.empty() ? "" : "; ") + problem;
    return result(name, CheckStatus::failed,
                  message + " (fluxopctl create secret makes one; see its --help)");
  }
  std::string message;
  for (const std::string& secret : fine) message += (message.empty() ? "" : ", ") + secret;
  return result(name, CheckStatus::ok,
                message + (fine.size() == 1 ? " exists" : " exist") + " with the keys " +
                    (fine.size() == 1 ? "its reader needs" : "their readers need"));
}

std::optional<std::string> another_instance(const std::vector<json>& instances,
                                            const kube::ObjectKey& ref) {
  for (const json& other : instances) {
    kube::ObjectKey key = kube::object_key(other);
    if (key.ns == ref.ns && key.name == ref.name) continue;
    return "FluxInstance " + key.ns + "/" + key.name +
           " already manages Flux on this cluster; there can be only one (delete it first, or "
           "apply it instead)";
  }
  return std::nullopt;
}

CheckResult check_instances(kube::Cluster& cluster, const instance::FluxInstance& flux) {
  const std::string name = "flux-instances";
  std::vector<json> instances = cluster.list(instance_ref("", ""), {});
  if (std::optional<std::string> refused =
          another_instance(instances, instance_ref(flux.ns, flux.name)))
    return result(name, CheckStatus::failed, *refused);
  bool exists = !instances.empty();
  if (exists)
    return result(name, CheckStatus::ok,
                  "FluxInstance " + flux.ns + "/" + flux.name + " exists; apply updates it");
  return result(name, CheckStatus::ok, "no FluxInstance in the cluster");
}

CheckResult check_installation(kube::Cluster& cluster, const RenderedInstance& instance) {
  const std::string name = "installation";
  std::vector<json> objects = rendered_json(instance.rendered);
  // One LIST per kind and namespace, not a GET per object (81 for the
  // default instance); of each list, only who installed the objects the
  // installation names is kept.
  std::map<std::string, std::string> installed;  // display name: the tool, or ""
  std::set<std::string> collections;
  std::vector<kube::ListQuery> queries;
  for (const json& object : objects) {
    kube::ObjectKey kind = kube::object_key(object);
    installed.emplace(display_name(kind), std::string());
    kind.name.clear();
    if (collections.insert(kind.group + "/" + kind.version + "/" + kind.kind + "/" + kind.ns)
            .second)
      queries.push_back({std::move(kind), {}, ""});
  }
  std::set<std::string> present_names;
  cluster.list_each(queries, [&](std::size_t, json&& live) {
    auto found = installed.find(display_name(kube::object_key(live)));
    if (found == installed.end()) return;
    present_names.insert(found->first);
    found->second = installed_by(live, cluster.field_manager());
  });
  std::map<std::string, std::vector<std::string>> by_tool;
  std::size_t present = 0;
  for (const json& object : objects) {
    std::string object_name = display_name(kube::object_key(object));
    if (!present_names.contains(object_name)) continue;
    ++present;
    const std::string& tool = installed[object_name];
    if (!tool.empty()) by_tool[tool].push_back(object_name);
  }
  if (present == 0)
    return result(name, CheckStatus::ok,
                  "none of its " + count_of(objects.size(), "object") + " exists yet");
  if (by_tool.empty())
    return result(name, CheckStatus::ok,
                  std::to_string(present) +
                      " of its objects exist, none that apply would take over from another tool");
  std::string message = "apply takes over objects installed by another tool:";
  for (const auto& [tool, names] : by_tool)
    message += (message.back() == ':' ? " " : "; ") + tool + ": " + std::to_string(names.size()) +
               " (" + some_of(names) + ")";
  return result(name, CheckStatus::warning, message);
}

CheckResult check_permissions(kube::Cluster& cluster, const RenderedInstance& instance) {
  const std::string name = "permissions";
  std::vector<kube::AccessQuery> queries = apply_access(instance);
  std::vector<kube::AccessAnswer> answers = cluster.review_access(queries);
  std::vector<std::string> denied;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    if (!answers[i].allowed) denied.push_back(access_name(queries[i]));
  }
  if (!denied.empty())
    return result(name, CheckStatus::failed,
                  "the caller may not " + some_of(denied) + " (" + std::to_string(denied.size()) +
                      " of the " + std::to_string(queries.size()) + " accesses the apply needs)");
  return result(name, CheckStatus::ok,
                "the caller may do all " + std::to_string(queries.size()) +
                    " accesses the apply needs (get, create, patch, delete of each kind)");
}

CheckResult version_change_check(const std::optional<json>& live,
                                 const RenderedInstance& instance) {
  const std::string name = "version";
  std::string to = "Flux " + instance.rendered.version.original;
  if (!live) return result(name, CheckStatus::ok, to + " is a first install");
  const json* status = member(*live, "status");
  if (std::optional<std::string> refused =
          downgrade_refusal(status ? *status : json::object(), instance.rendered.version))
    return result(name, CheckStatus::failed, *refused);
  std::string applied = status ? string_member(*status, "lastAppliedRevision") : "";
  if (applied.empty()) return result(name, CheckStatus::ok, to + ": none applied yet");
  return result(name, CheckStatus::ok,
                to + " after " + applied.substr(0, applied.find('@')) + ", applied last");
}

CheckResult check_prunes(kube::Cluster& cluster, const RenderedInstance& instance,
                         const std::optional<json>& live, const PruneOptions& options) {
  const std::string name = "prune";
  if (!live) return result(name, CheckStatus::ok, "nothing to prune: no instance yet");
  const json* status = member(*live, "status");
  std::vector<kube::ObjectKey> inventory = read_inventory(
      status && member(*status, "inventory") ? *member(*status, "inventory") : json());
  std::vector<kube::ObjectKey> current;
  for (const json& object : rendered_json(instance.rendered))
    current.push_back(kube::object_key(object));
  kube::ObjectKey ref = instance_ref(instance.flux.ns, instance.flux.name);
  ssa::Engine engine(cluster, {}, owner_labels(ref));
  std::vector<PrunePlan> plans =
      plan_prunes(cluster, engine, stale_objects(inventory, current), owner_labels(ref), options);
  std::string said;
  CheckStatus status_of = CheckStatus::ok;
  for (const PrunePlan& plan : plans) {
    std::string text = prune_text(plan);
    if (text.empty()) continue;
    text.pop_back();  // its newline
    said += (said.empty() ? "" : "; ") + text;
    if (plan.way == PruneWay::held || plan.way == PruneWay::with_resources)
      status_of = CheckStatus::warning;
  }
  if (said.empty()) return result(name, CheckStatus::ok, "nothing to prune");
  return result(name, status_of, said);
}

CheckResult check_terminating(kube::Cluster& cluster, const RenderedInstance& instance) {
  const std::string name = "terminating";
  std::vector<kube::ObjectKey> kinds{
      {"apiextensions.k8s.io", "v1", "CustomResourceDefinition", "", ""}};
  for (const json& object : rendered_json(instance.rendered))
    kinds.push_back(kube::object_key(object));
  std::vector<std::string> going =
      terminating_objects(cluster, instance_ref(instance.flux.ns, instance.flux.name), kinds);
  if (going.empty()) return result(name, CheckStatus::ok, "none of its objects is being deleted");
  std::string names;
  for (const std::string& one : going) names += (names.empty() ? "" : ", ") + one;
  return result(name, CheckStatus::failed,
                "being deleted, so not healthy: apply waits until they are gone, then applies "
                "them again: " +
                    names);
}

namespace {

// The cheap checks that need no render.
std::vector<CheckResult> instance_checks(kube::Cluster& cluster,
                                         const instance::FluxInstance& flux) {
  return {guarded("namespace", [&] { return check_namespace(cluster, flux); }),
          guarded("storage-class", [&] { return check_storage_class(cluster, flux); }),
          guarded("secrets", [&] { return check_secrets(cluster, flux); })};
}

CheckResult guarded_version_check(kube::Cluster& cluster, const RenderedInstance& instance) {
  return guarded("kubernetes-version", [&] { return check_kubernetes_version(cluster, instance); });
}

}  // namespace

std::vector<CheckResult> cheap_checks(kube::Cluster& cluster, const RenderedInstance& instance) {
  std::vector<CheckResult> checks{guarded_version_check(cluster, instance)};
  for (CheckResult& check : instance_checks(cluster, instance.flux))
    checks.push_back(std::move(check));
  return checks;
}

void require_cheap_checks(kube::Cluster& cluster, const RenderedInstance& instance,
                          const std::function<void(const std::string&)>& notice) {
  // Not the namespace's: apply reads the namespace first anyway, and
  // refuses one being deleted with namespace_check before its first write.
  std::vector<CheckResult> checks{
      guarded_version_check(cluster, instance),
      guarded("storage-class", [&] { return check_storage_class(cluster, instance.flux); }),
      guarded("secrets", [&] { return check_secrets(cluster, instance.flux); })};
  for (const CheckResult& check : checks) {
    if (check.status == CheckStatus::ok) continue;
    if (check.status == CheckStatus::failed && check.decided)
      throw Error(instance.flux.file + ": " + check.name + ": " + check.message);
    if (notice)
      notice("check " + check.name + (check.decided ? ": " : " could not tell: ") + check.message);
  }
}

std::vector<CheckResult> run_checks(kube::Cluster& cluster, ArtifactPort& artifacts,
                                    instance::FluxInstance flux, const RenderRequest& request,
                                    const PruneOptions& prune) {
  std::optional<RenderedInstance> rendered;
  return run_checks(
      cluster, flux,
      [&]() -> const RenderedInstance& {
        RegistryCredentials credentials =
            artifact_credentials(flux, [&cluster]() -> kube::Cluster& { return cluster; });
        return rendered.emplace(render_instance(artifacts, flux, request, credentials));
      },
      prune);
}

std::vector<CheckResult> run_checks(kube::Cluster& cluster, const instance::FluxInstance& flux,
                                    const std::function<const RenderedInstance&()>& render,
                                    const PruneOptions& prune) {
  std::vector<CheckResult> checks;
  const RenderedInstance* instance = nullptr;
  try {
    instance = &render();
    checks.push_back(result(
        "distribution", CheckStatus::ok,
        instance->distribution.root() + " (Flux " + instance->rendered.version.original + ")"));
  } catch (const Error& e) {
    checks.push_back(result("distribution", CheckStatus::failed, e.what()));
  }
  std::vector<CheckResult> cheap =
      instance ? cheap_checks(cluster, *instance) : instance_checks(cluster, flux);
  checks.insert(checks.end(), cheap.begin(), cheap.end());
  checks.push_back(guarded("flux-instances", [&] { return check_instances(cluster, flux); }));
  if (instance) {
    checks.push_back(
        guarded("installation", [&] { return check_installation(cluster, *instance); }));
    checks.push_back(guarded("permissions", [&] { return check_permissions(cluster, *instance); }));
    std::optional<json> live;
    CheckResult read = guarded("version", [&] {
      live = get_live_instance(cluster, instance_ref(flux.ns, flux.name));
      return version_change_check(live, *instance);
    });
    checks.push_back(read);
    if (read.decided) {
      checks.push_back(
          guarded("prune", [&] { return check_prunes(cluster, *instance, live, prune); }));
    }
    checks.push_back(guarded("terminating", [&] { return check_terminating(cluster, *instance); }));
  }
  return checks;
}

}  // namespace fluxop::reconcile
