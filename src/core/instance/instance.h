// The FluxInstance resource (fluxcd.controlplane.io/v1) as fluxopctl renders
// it: read from YAML, checked against the CRD schema the way the API server
// checks it (types, required fields, enums, patterns, limits, CEL rules), with
// the API server's defaults and then the operator's render-time defaults
// applied (see defaults.h), so every field below holds the value to render.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/yaml/node.h"

namespace fluxop::instance {

using StringMap = std::map<std::string, std::string>;

// The values of .spec.components the schema allows, in the order Flux lists them.
inline constexpr std::array<std::string_view, 7> kComponents = {
    "source-controller",       "kustomize-controller",       "helm-controller",
    "notification-controller", "image-reflector-controller", "image-automation-controller",
    "source-watcher"};

struct Distribution {
  std::string version;  // an exact version or a semver range ("2.x", "~2.7.0")
  std::string registry;
  std::string variant;  // empty, or one of upstream-alpine, enterprise-alpine, ...
  std::string image_pull_secret;
  std::string artifact;  // empty, or an oci:// URL
  std::string artifact_pull_secret;
};

struct Cluster {
  std::string type;  // kubernetes, openshift, aws, azure or gcp
  std::string size;  // empty (no size profile), small, medium or large
  bool multitenant = false;
  bool multitenant_workload_identity = false;
  bool object_level_workload_identity = false;
  std::string tenant_default_service_account;
  std::string tenant_default_decryption_service_account;
  std::string tenant_default_kubeconfig_service_account;
  bool network_policy = true;
  std::string domain;
};

struct CommonMetadata {
  StringMap labels;
  StringMap annotations;
};

struct Storage {
  std::string storage_class;  // .class
  std::string size;
};

struct Sharding {
  std::string key;
  std::vector<std::string> shards;  // at least one, unique
  std::string storage;              // ephemeral or persistent
};

struct Sync {
  std::string name;  // of the generated source and Kustomization
  std::string kind;  // GitRepository, OCIRepository or Bucket
  std::string url;
  std::string ref;
  std::string path;
  std::string pull_secret;
  std::string provider;  // empty, generic, aws, azure, gcp or github
  // As written it is a Go duration in the CRD's pattern ("1m", "1h30m");
  // format_go_duration() gives the form upstream renders ("1m0s").
  std::chrono::nanoseconds interval{};
};

// A .spec.kustomize.patches item. Empty selector fields are unset, as upstream
// drops them when it passes the patches on to kustomize.
struct PatchTarget {
  std::string group;
  std::string version;
  std::string kind;
  std::string name;
  std::string ns;  // .namespace
  std::string annotation_selector;
  std::string label_selector;
};

struct Patch {
  std::string patch;  // a strategic merge patch or a JSON 6902 patch, as YAML text
  std::optional<PatchTarget> target;
};

struct FluxInstance {
  std::string name;  // always "flux" (a CEL rule of the CRD)
  std::string ns;    // .metadata.namespace
  StringMap labels;
  StringMap annotations;

  Distribution distribution;
  std::vector<std::string> components;
  Cluster cluster;
  std::optional<CommonMetadata> common_metadata;
  std::optional<Storage> storage;
  std::optional<Sharding> sharding;
  std::optional<Sync> sync;
  std::vector<Patch> patches;  // .spec.kustomize.patches
  bool wait = true;
  bool migrate_resources = true;

  std::string file;   // where it was read from, for error messages
  yaml::Node source;  // the document as read
};

struct LoadOptions {
  // Unknown fields are errors (upstream drops them silently, so a typo such as
  // .spec.sharding.shard would go unnoticed); with this they are warnings.
  bool allow_unknown_fields = false;
};

// Reads one FluxInstance document. Errors throw fluxop::Error as
// "<source>: <field path>: <message>"; warnings are appended to `warnings` in
// the same form.
FluxInstance load_instance(const yaml::Node& document, std::string_view source,
                           const LoadOptions& options, std::vector<std::string>& warnings);

// Reads a file ("-" for stdin) that holds exactly one FluxInstance.
FluxInstance load_instance_file(const std::string& path, const LoadOptions& options,
                                std::vector<std::string>& warnings);

}  // namespace fluxop::instance
