// How the cluster's objects are named and asked for, whatever talks to the
// API server (the HTTP client, or a fake in unit tests): an object's key, a
// list's query, a write's result and the error the server answered.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace fluxop::kube {

// One object: its kind, and namespace (empty for cluster-scoped objects, or
// for the context's namespace) and name.
struct ObjectKey {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;
  std::string ns;
  std::string name;

  friend bool operator==(const ObjectKey&, const ObjectKey&) = default;
};

// The key of an object (apiVersion, kind, metadata.namespace and .name).
ObjectKey object_key(const nlohmann::json& object);

// "Deployment/flux-system/source-controller", "Namespace/flux-system".
std::string display_name(const ObjectKey& key);

// Its apiVersion: "apps/v1", "v1" for the core group.
std::string api_version(const ObjectKey& key);

// Whether an API group is one of Flux's: *.toolkit.fluxcd.io, and
// *.extensions.fluxcd.io (source-watcher's ArtifactGenerator).
bool is_flux_group(std::string_view group);

using Labels = std::map<std::string, std::string>;

// Which objects of a kind (group, version, kind of `kind`) a list asks for:
// those in kind.ns (every namespace when empty) that carry every label of
// `selector`, and only the one so named when `name` is set (a GET; the
// context's namespace for a namespaced kind without one). `fields` is a
// field selector ("involvedObject.uid=..."), for the kinds whose fields the
// server selects by (the events of one object).
struct ListQuery {
  ObjectKey kind;
  Labels selector;
  std::string name;
  std::string fields{};
};

// Called with each object of a list, and the index of its query.
using ListVisitor = std::function<void(std::size_t query, nlohmann::json&& object)>;

// One of several writes sent together: the object as the server has it
// after, or what went wrong (an ApiError when the server refused).
struct WriteResult {
  nlohmann::json object;
  std::exception_ptr error;
};

// A patch of one object, sent with others (Cluster::patch_all): a JSON merge
// patch, or a JSON patch (RFC 6902) whose `test` operations make it refused
// when the object moved.
struct ObjectPatch {
  enum class Type { Merge, Json };
  ObjectKey key;
  Type type = Type::Merge;
  nlohmann::json patch;
};

// One of the causes a Status object details (.details.causes[]).
struct StatusCause {
  std::string type;  // "FieldValueInvalid", "NamespaceTerminating", ...
  std::string message;
  std::string field;
};

// An error the API server answered: a fluxop::Error whose message names the
// object, with the HTTP status and the Status object's reason
// ("NotFound", "AlreadyExists", "Conflict", "Forbidden", "Invalid", ...) and
// causes.
class ApiError : public Error {
 public:
  ApiError(const std::string& message, long status, std::string reason,
           std::vector<StatusCause> causes = {})
      : Error(message), status_(status), reason_(std::move(reason)), causes_(std::move(causes)) {}
  long status() const { return status_; }
  const std::string& reason() const { return reason_; }
  const std::vector<StatusCause>& causes() const { return causes_; }

 private:
  long status_;
  std::string reason_;
  std::vector<StatusCause> causes_;
};

}  // namespace fluxop::kube
