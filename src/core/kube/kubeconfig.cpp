#include "core/kube/kubeconfig.h"

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>

#include "core/base64.h"
#include "core/error.h"
#include "core/file.h"
#include "core/net/http.h"
#include "core/net/proxy.h"
#include "core/yaml/parse.h"

namespace fluxop::kube {

namespace {

namespace fs = std::filesystem;

// One named entry (a cluster, user or context) of one kubeconfig file.
struct Entry {
  const yaml::Node* body = nullptr;  // its "cluster"/"user"/"context" map; null when absent
  std::string where;                 // "FILE: clusters[2].cluster"
  fs::path dir;                      // the file's directory, for relative paths
  std::string file;
};

// The files' entries merged: the first file to name an entry keeps it.
struct Merged {
  std::deque<yaml::Node> documents;  // the entries point into them
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
  std::string current_context_origin;  // the file that set it
  std::vector<std::string> files;      // those read, in order
};

std::string getenv_string(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// A path of the kubeconfig, relative to its directory unless absolute.
std::string resolve_path(const fs::path& dir, const std::string& path) {
  return (dir / path).lexically_normal().string();
}

std::string field_path(const Entry& entry, std::string_view key) {
  return entry.where + "." + std::string(key);
}

const yaml::Node* field(const Entry& entry, std::string_view key) {
  const yaml::Node* value = entry.body ? entry.body->get(key) : nullptr;
  return value && !value->is_null() ? value : nullptr;
}

std::string string_field(const Entry& entry, std::string_view key) {
  const yaml::Node* value = field(entry, key);
  if (!value) return "";
  if (!value->is_scalar()) throw Error(field_path(entry, key) + ": not a string");
  return value->text();
}

bool bool_field(const Entry& entry, std::string_view key) {
  const yaml::Node* value = field(entry, key);
  if (!value) return false;
  if (!value->is_scalar() || value->tag() != yaml::Tag::Bool)
    throw Error(field_path(entry, key) + ": not true or false");
  return value->text() == "true" || value->text() == "True" || value->text() == "TRUE";
}

// PEM data from KEY-data (base64) or from the file KEY, relative to the
// kubeconfig's directory; the data wins, as in kubectl.
std::string data_or_file(const Entry& entry, const std::string& key) {
  std::string data = string_field(entry, key + "-data");
  if (!data.empty()) {
    std::erase_if(data, [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
    std::optional<std::string> decoded = base64_decode(data);
    if (!decoded) throw Error(field_path(entry, key + "-data") + ": not base64");
    return *decoded;
  }
  std::string file = string_field(entry, key);
  if (file.empty()) return "";
  try {
    return read_input_file(resolve_path(entry.dir, file), false, kMaxCredentialFileBytes);
  } catch (const Error& e) {
    throw Error(field_path(entry, key) + ": " + e.what());
  }
}

// Adds the entries of one list (clusters, users or contexts) to `into`.
void merge_list(const yaml::Node& root, std::string_view list, std::string_view body_key,
                const std::string& file, std::map<std::string, Entry>& into) {
  const yaml::Node* items = root.get(list);
  if (!items || items->is_null()) return;
  std::string where = file + ": " + std::string(list);
  if (!items->is_sequence()) throw Error(where + ": not a list");
  for (std::size_t i = 0; i < items->items().size(); ++i) {
    const yaml::Node& item = items->items()[i];
    std::string item_where = where + "[" + std::to_string(i) + "]";
    const yaml::Node* name = item.is_map() ? item.get("name") : nullptr;
    if (!name || !name->is_scalar() || name->text().empty())
      throw Error(item_where + ".name: missing");
    const yaml::Node* body = item.get(body_key);
    if (body && !body->is_null() && !body->is_map())
      throw Error(item_where + "." + std::string(body_key) + ": not a map");
    into.try_emplace(name->text(), Entry{body && body->is_map() ? body : nullptr,
                                         item_where + "." + std::string(body_key),
                                         fs::absolute(file).parent_path(), file});
  }
}

void merge_file(const std::string& file, const std::string& text, Merged& merged) {
  const yaml::Node& root = merged.documents.emplace_back(yaml::parse_document(text, file));
  merged.files.push_back(file);
  if (root.is_null()) return;  // an empty file is an empty config
  if (!root.is_map()) throw Error(file + ": not a kubeconfig (a map)");
  merge_list(root, "clusters", "cluster", file, merged.clusters);
  merge_list(root, "users", "user", file, merged.users);
  merge_list(root, "contexts", "context", file, merged.contexts);
  const yaml::Node* current = root.get("current-context");
  if (current && current->is_scalar() && !current->text().empty() &&
      merged.current_context.empty()) {
    merged.current_context = current->text();
    merged.current_context_origin = file;
  }
}

// The kubeconfig files to read, in order; whether they must exist.
std::vector<std::string> kubeconfig_files(const KubeconfigFlags& flags, const Environment& env,
                                          bool& required) {
  required = !flags.kubeconfig.empty();
  if (required) return {flags.kubeconfig};
  if (env.kubeconfig && !env.kubeconfig->empty()) {
    std::vector<std::string> files;
    std::string_view list = *env.kubeconfig;
    while (!list.empty()) {
      std::size_t colon = list.find(':');
      std::string_view file = list.substr(0, colon);
      if (!file.empty()) files.emplace_back(file);
      list = colon == std::string_view::npos ? std::string_view{} : list.substr(colon + 1);
    }
    return files;
  }
  if (env.home.empty()) return {};
  return {(fs::path(env.home) / ".kube" / "config").string()};
}

ExecPlugin read_exec(const Entry& user) {
  Entry exec{field(user, "exec"), field_path(user, "exec"), user.dir, user.file};
  if (!exec.body->is_map()) throw Error(exec.where + ": not a map");
  ExecPlugin plugin;
  plugin.origin = exec.where;
  plugin.api_version = string_field(exec, "apiVersion");
  if (plugin.api_version != "client.authentication.k8s.io/v1" &&
      plugin.api_version != "client.authentication.k8s.io/v1beta1") {
    throw Error(field_path(exec, "apiVersion") + ": " +
                (plugin.api_version.empty() ? "missing"
                                            : "\"" + plugin.api_version +
                                                  "\" is not client.authentication.k8s.io/v1 "
                                                  "or v1beta1"));
  }
  plugin.command = string_field(exec, "command");
  if (plugin.command.empty()) throw Error(field_path(exec, "command") + ": missing");
  // A relative command with a slash is relative to the kubeconfig, as in kubectl.
  if (plugin.command.find('/') != std::string::npos && fs::path(plugin.command).is_relative())
    plugin.command = resolve_path(exec.dir, plugin.command);
  if (const yaml::Node* args = field(exec, "args")) {
    if (!args->is_sequence()) throw Error(field_path(exec, "args") + ": not a list");
    for (const yaml::Node& arg : args->items()) plugin.args.push_back(arg.text());
  }
  if (const yaml::Node* env = field(exec, "env")) {
    if (!env->is_sequence()) throw Error(field_path(exec, "env") + ": not a list");
    for (std::size_t i = 0; i < env->items().size(); ++i) {
      Entry var{
          &env->items()[i], field_path(exec, "env") + "[" + std::to_string(i) + "]", {}, exec.file};
      if (!var.body->is_map() || string_field(var, "name").empty())
        throw Error(var.where + ".name: missing");
      plugin.env.push_back(string_field(var, "name") + "=" + string_field(var, "value"));
    }
  }
  plugin.provide_cluster_info = bool_field(exec, "provideClusterInfo");
  plugin.install_hint = string_field(exec, "installHint");
  // Without a terminal to hand over, a plugin that insists on one cannot run.
  if (string_field(exec, "interactiveMode") == "Always")
    throw Error(field_path(exec, "interactiveMode") + ": Always needs a terminal; fluxopctl " +
                "runs plugins without one (Never or IfAvailable)");
  return plugin;
}

// A list of strings (as-groups, an as-user-extra entry).
std::vector<std::string> string_list(const yaml::Node& list, const std::string& where) {
  if (!list.is_sequence()) throw Error(where + ": not a list");
  std::vector<std::string> values;
  for (std::size_t i = 0; i < list.items().size(); ++i) {
    if (!list.items()[i].is_scalar())
      throw Error(where + "[" + std::to_string(i) + "]: not a string");
    values.push_back(list.items()[i].text());
  }
  return values;
}

Impersonation read_impersonation(const Entry& user) {
  Impersonation who;
  who.user = string_field(user, "as");
  who.uid = string_field(user, "as-uid");
  if (const yaml::Node* groups = field(user, "as-groups"))
    who.groups = string_list(*groups, field_path(user, "as-groups"));
  if (const yaml::Node* extra = field(user, "as-user-extra")) {
    if (!extra->is_map()) throw Error(field_path(user, "as-user-extra") + ": not a map");
    for (const auto& [key, values] : extra->entries()) {
      if (!values.is_null())
        who.extra.emplace_back(key,
                               string_list(values, field_path(user, "as-user-extra") + "." + key));
    }
  }
  impersonation_headers(who, user.where);  // refused at load, naming the field
  return who;
}

void read_user(const Entry& user, ClusterAccess& access) {
  if (field(user, "auth-provider"))
    throw Error(field_path(user, "auth-provider") +
                ": not supported by fluxopctl (use an exec plugin)");
  access.impersonate = read_impersonation(user);
  access.impersonate_origin = user.where;
  access.client_cert_pem = data_or_file(user, "client-certificate");
  access.client_key_pem = data_or_file(user, "client-key");
  if (access.client_cert_pem.empty() != access.client_key_pem.empty()) {
    throw Error(user.where + ": " +
                (access.client_cert_pem.empty() ? "client-key without client-certificate"
                                                : "client-certificate without client-key"));
  }
  access.token = string_field(user, "token");
  if (std::string problem = token_problem(access.token); !problem.empty())
    throw Error(field_path(user, "token") + ": " + problem);
  if (std::string file = string_field(user, "tokenFile"); !file.empty() && access.token.empty())
    access.token_file = resolve_path(user.dir, file);
  access.username = string_field(user, "username");
  access.password = string_field(user, "password");
  if (field(user, "exec")) access.exec = read_exec(user);
}

void read_cluster(const Entry& cluster, ClusterAccess& access) {
  access.server = string_field(cluster, "server");
  if (access.server.empty()) throw Error(field_path(cluster, "server") + ": missing");
  if (!access.server.starts_with("https://") && !access.server.starts_with("http://"))
    throw Error(field_path(cluster, "server") + ": \"" + access.server + "\" is not an https URL");
  while (access.server.ends_with('/')) access.server.pop_back();
  access.insecure_skip_tls_verify = bool_field(cluster, "insecure-skip-tls-verify");
  access.ca_pem = data_or_file(cluster, "certificate-authority");
  if (!string_field(cluster, "tls-server-name").empty()) {
    throw Error(field_path(cluster, "tls-server-name") +
                ": not supported by fluxopctl (libcurl cannot verify another name than the "
                "server URL's host)");
  }
  access.proxy_url = string_field(cluster, "proxy-url");
  if (std::string problem = net::proxy_url_problem(access.proxy_url); !problem.empty())
    throw Error(field_path(cluster, "proxy-url") + ": " + problem);
}

ClusterAccess resolve(const Merged& merged, const KubeconfigFlags& flags) {
  std::string files;
  for (const std::string& file : merged.files) files += (files.empty() ? "" : ":") + file;
  if (files.empty()) files = "(no kubeconfig file found)";
  std::string name = flags.context.empty() ? merged.current_context : flags.context;
  if (name.empty()) throw Error(files + ": no current-context (choose one with --context)");
  auto context = merged.contexts.find(name);
  if (context == merged.contexts.end()) {
    throw Error((flags.context.empty() ? merged.current_context_origin + ": current-context"
                                       : std::string("--context")) +
                ": no context named \"" + name + "\" in " + files);
  }
  const Entry& ctx = context->second;
  ClusterAccess access;
  access.origin = ctx.file;
  access.context = name;

  std::string cluster_name = string_field(ctx, "cluster");
  if (cluster_name.empty()) throw Error(field_path(ctx, "cluster") + ": missing");
  auto cluster = merged.clusters.find(cluster_name);
  if (cluster == merged.clusters.end())
    throw Error(field_path(ctx, "cluster") + ": no cluster named \"" + cluster_name + "\"");
  read_cluster(cluster->second, access);

  if (std::string user_name = string_field(ctx, "user"); !user_name.empty()) {
    auto user = merged.users.find(user_name);
    if (user == merged.users.end())
      throw Error(field_path(ctx, "user") + ": no user named \"" + user_name + "\"");
    read_user(user->second, access);
  }
  if (std::string ns = string_field(ctx, "namespace"); !ns.empty()) access.default_namespace = ns;
  return access;
}

}  // namespace

std::string token_problem(std::string_view token) {
  for (char c : token) {
    if (c == '\r' || c == '\n') return "holds a line break";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "holds a control character";
  }
  return "";
}

std::vector<std::string> impersonation_headers(const Impersonation& who, std::string_view origin) {
  if (who.user.empty() && !who.empty()) {
    throw Error(std::string(origin) + ": " +
                (!who.groups.empty() ? "groups"
                 : !who.uid.empty()  ? "a uid"
                                     : "extras") +
                " to impersonate without a user to impersonate");
  }
  std::vector<std::string> headers;
  auto add = [&](const std::string& name, const std::string& value) {
    if (std::string problem = token_problem(value); !problem.empty())
      throw Error(std::string(origin) + ": " + name + ": " + problem);
    headers.push_back(name + ": " + value);
  };
  if (!who.user.empty()) add("Impersonate-User", who.user);
  for (const std::string& group : who.groups) add("Impersonate-Group", group);
  if (!who.uid.empty()) add("Impersonate-Uid", who.uid);
  // A key travels in the header's name: escaped, so that any key is a
  // valid name, as the API server unescapes it.
  for (const auto& [key, values] : who.extra) {
    for (const std::string& value : values) add("Impersonate-Extra-" + net::url_escape(key), value);
  }
  return headers;
}

Environment Environment::current() {
  Environment env;
  if (const char* kubeconfig = std::getenv("KUBECONFIG")) env.kubeconfig = kubeconfig;
  env.home = getenv_string("HOME");
  env.service_host = getenv_string("KUBERNETES_SERVICE_HOST");
  env.service_port = getenv_string("KUBERNETES_SERVICE_PORT");
  return env;
}

std::optional<ClusterAccess> in_cluster_access(const Environment& env) {
  fs::path dir = env.service_account_dir;
  if (env.service_host.empty() || env.service_port.empty() || !fs::exists(dir / "token"))
    return std::nullopt;
  ClusterAccess access;
  access.origin = "in-cluster";
  bool ipv6 = env.service_host.find(':') != std::string::npos;
  access.server = "https://" + (ipv6 ? "[" + env.service_host + "]" : env.service_host) + ":" +
                  env.service_port;
  // The token rotates: it is read again whenever the file changes.
  access.token_file = (dir / "token").string();
  try {
    access.ca_pem = read_input_file((dir / "ca.crt").string(), false, kMaxCredentialFileBytes);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (in-cluster service account)");
  }
  std::optional<std::string> ns;
  if (fs::exists(dir / "namespace"))
    ns = read_input_file((dir / "namespace").string(), false, kMaxCredentialFileBytes);
  if (ns) {
    while (!ns->empty() && (ns->back() == '\n' || ns->back() == ' ')) ns->pop_back();
    if (!ns->empty()) access.default_namespace = *ns;
  }
  return access;
}

namespace {

// The kubeconfig files the flags and the environment name, read and merged.
Merged read_merged(const KubeconfigFlags& flags, const Environment& env, bool& required) {
  std::vector<std::string> files = kubeconfig_files(flags, env, required);
  Merged merged;
  for (const std::string& file : files) {
    std::error_code missing;
    // As kubectl, files in $KUBECONFIG and ~/.kube/config may be missing.
    if (!required && !fs::exists(file, missing)) continue;
    std::string text;
    try {
      text = read_input_file(file, false, kMaxKubeconfigBytes);
    } catch (const Error& e) {
      throw Error(std::string(required ? "--kubeconfig: " : "") + e.what());
    }
    merge_file(file, text, merged);
  }
  return merged;
}

}  // namespace

std::vector<std::string> context_names(const KubeconfigFlags& flags, const Environment& env) {
  bool required = false;
  Merged merged = read_merged(flags, env, required);
  std::vector<std::string> names;
  for (const auto& [name, context] : merged.contexts) names.push_back(name);
  return names;
}

ClusterAccess load_cluster_access(const KubeconfigFlags& flags, const Environment& env) {
  bool required = false;
  Merged merged = read_merged(flags, env, required);
  bool empty = merged.contexts.empty() && merged.current_context.empty();
  if (empty && !required && flags.context.empty()) {
    if (std::optional<ClusterAccess> access = in_cluster_access(env)) return *access;
    throw NoClusterConfigured(
        "no cluster to talk to: no --kubeconfig, no kubeconfig file in $KUBECONFIG or "
        "~/.kube/config, and not in a cluster (KUBERNETES_SERVICE_HOST unset)");
  }
  return resolve(merged, flags);
}

}  // namespace fluxop::kube
