#include "core/instance/spec.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/duration.h"
#include "core/error.h"

namespace fluxop::instance {

namespace {

using yaml::Node;

// The properties of each object in the schema.
constexpr std::array<std::string_view, 10> kSpecFields = {
    "distribution", "components", "commonMetadata", "cluster",          "sharding",
    "storage",      "kustomize",  "wait",           "migrateResources", "sync"};
constexpr std::array<std::string_view, 6> kDistributionFields = {
    "version", "registry", "variant", "imagePullSecret", "artifact", "artifactPullSecret"};
constexpr std::array<std::string_view, 10> kClusterFields = {
    "domain",
    "multitenant",
    "multitenantWorkloadIdentity",
    "networkPolicy",
    "objectLevelWorkloadIdentity",
    "size",
    "tenantDefaultDecryptionServiceAccount",
    "tenantDefaultKubeConfigServiceAccount",
    "tenantDefaultServiceAccount",
    "type"};
constexpr std::array<std::string_view, 2> kCommonMetadataFields = {"labels", "annotations"};
constexpr std::array<std::string_view, 2> kStorageFields = {"class", "size"};
constexpr std::array<std::string_view, 3> kShardingFields = {"key", "shards", "storage"};
constexpr std::array<std::string_view, 8> kSyncFields = {"interval", "kind",       "name", "path",
                                                         "provider", "pullSecret", "ref",  "url"};
constexpr std::array<std::string_view, 1> kKustomizeFields = {"patches"};
constexpr std::array<std::string_view, 2> kPatchFields = {"patch", "target"};
constexpr std::array<std::string_view, 7> kPatchTargetFields = {
    "annotationSelector", "group", "kind", "labelSelector", "name", "namespace", "version"};

// The values of each enum in the schema.
constexpr std::array<std::string_view, 4> kVariants = {
    "upstream-alpine", "enterprise-alpine", "enterprise-distroless", "enterprise-distroless-fips"};
constexpr std::array<std::string_view, 5> kClusterTypes = {"kubernetes", "openshift", "aws",
                                                           "azure", "gcp"};
constexpr std::array<std::string_view, 3> kClusterSizes = {"small", "medium", "large"};
constexpr std::array<std::string_view, 2> kShardingStorages = {"ephemeral", "persistent"};
constexpr std::array<std::string_view, 3> kSyncKinds = {"OCIRepository", "GitRepository", "Bucket"};
constexpr std::array<std::string_view, 5> kSyncProviders = {"generic", "aws", "azure", "gcp",
                                                            "github"};
constexpr std::size_t kSyncNameMaxLength = 63;

// Kubernetes counts a string's length in characters.
std::size_t character_count(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

Distribution read_distribution(MapReader& spec) {
  std::optional<MapReader> in = spec.map("distribution", kDistributionFields);
  if (!in) spec.diagnostics().fail(spec.path_of("distribution"), "required field is missing");
  Distribution out;
  out.version = in->required_string("version");
  out.registry = in->required_string("registry");
  out.variant = in->one_of("variant", kVariants).value_or("");
  out.image_pull_secret = in->string("imagePullSecret").value_or("");
  // The schema's pattern is ^oci://.*$, where "." does not match a line break.
  std::optional<std::string> artifact = in->string("artifact");
  if (artifact && (!artifact->starts_with("oci://") || artifact->find('\n') != std::string::npos)) {
    in->diagnostics().fail(in->path_of("artifact"), "must be an oci:// URL");
  }
  out.artifact = artifact.value_or("");
  out.artifact_pull_secret = in->string("artifactPullSecret").value_or("");
  return out;
}

std::vector<std::string> read_components(MapReader& spec) {
  std::vector<std::string> out = spec.strings("components");
  for (std::size_t i = 0; i < out.size(); ++i) {
    expect_one_of(out[i], kComponents, spec.path_of("components") + "[" + std::to_string(i) + "]",
                  spec.diagnostics());
  }
  return out;
}

Cluster read_cluster(MapReader& spec) {
  Cluster out;
  std::optional<MapReader> in = spec.map("cluster", kClusterFields);
  if (!in) return out;
  out.domain = in->string("domain").value_or("");
  out.multitenant = in->boolean("multitenant", false);
  out.multitenant_workload_identity = in->boolean("multitenantWorkloadIdentity", false);
  out.network_policy = in->boolean("networkPolicy", true);
  out.object_level_workload_identity = in->boolean("objectLevelWorkloadIdentity", false);
  out.size = in->one_of("size", kClusterSizes).value_or("");
  out.tenant_default_decryption_service_account =
      in->string("tenantDefaultDecryptionServiceAccount").value_or("");
  out.tenant_default_kubeconfig_service_account =
      in->string("tenantDefaultKubeConfigServiceAccount").value_or("");
  out.tenant_default_service_account = in->string("tenantDefaultServiceAccount").value_or("");
  out.type = in->one_of("type", kClusterTypes).value_or("");
  return out;
}

std::optional<CommonMetadata> read_common_metadata(MapReader& spec) {
  std::optional<MapReader> in = spec.map("commonMetadata", kCommonMetadataFields);
  if (!in) return std::nullopt;
  CommonMetadata out{in->string_map("labels"), in->string_map("annotations")};
  return out;
}

std::optional<Storage> read_storage(MapReader& spec) {
  std::optional<MapReader> in = spec.map("storage", kStorageFields);
  if (!in) return std::nullopt;
  Storage out{in->required_string("class"), in->required_string("size")};
  return out;
}

std::optional<Sharding> read_sharding(MapReader& spec) {
  std::optional<MapReader> in = spec.map("sharding", kShardingFields);
  if (!in) return std::nullopt;
  Sharding out;
  out.key = in->string("key").value_or("");
  out.shards = in->strings("shards");
  if (out.shards.empty()) in->diagnostics().fail(in->path_of("shards"), "must not be empty");
  out.storage = in->one_of("storage", kShardingStorages).value_or("");
  return out;
}

// The CRD's pattern for an interval, ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$, read
// in one pass: a list of numbers, each with its unit.
bool matches_interval_pattern(std::string_view text) {
  auto take_digits = [&text] {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    text.remove_prefix(digits);
    return digits > 0;
  };
  do {
    if (!take_digits()) return false;
    if (text.starts_with('.')) {
      text.remove_prefix(1);
      if (!take_digits()) return false;
    }
    // "ms" before "m": after a unit comes a digit, never an "s".
    if (text.starts_with("ms")) {
      text.remove_prefix(2);
    } else if (text.starts_with('s') || text.starts_with('m') || text.starts_with('h')) {
      text.remove_prefix(1);
    } else {
      return false;
    }
  } while (!text.empty());
  return true;
}

std::chrono::nanoseconds read_interval(MapReader& sync) {
  std::string text = sync.string("interval").value_or("");
  std::optional<std::chrono::nanoseconds> interval;
  if (matches_interval_pattern(text)) interval = parse_go_duration(text);
  if (!interval) {
    sync.diagnostics().fail(
        sync.path_of("interval"),
        "must be a duration such as 1m, 30s or 1h30m, in ms, s, m or h, not " + quote(text));
  }
  return *interval;
}

std::optional<Sync> read_sync(MapReader& spec) {
  std::optional<MapReader> in = spec.map("sync", kSyncFields);
  if (!in) return std::nullopt;
  Sync out;
  out.interval = read_interval(*in);
  out.kind = in->one_of("kind", kSyncKinds).value_or("");
  if (out.kind.empty()) in->diagnostics().fail(in->path_of("kind"), "required field is missing");
  out.name = in->string("name").value_or("");
  if (character_count(out.name) > kSyncNameMaxLength) {
    in->diagnostics().fail(in->path_of("name"), "must be at most 63 characters");
  }
  out.path = in->required_string("path");
  out.provider = in->one_of("provider", kSyncProviders).value_or("");
  out.pull_secret = in->string("pullSecret").value_or("");
  out.ref = in->required_string("ref");
  out.url = in->required_string("url");
  return out;
}

PatchTarget read_patch_target(MapReader& in) {
  PatchTarget out;
  out.annotation_selector = in.string("annotationSelector").value_or("");
  out.group = in.string("group").value_or("");
  out.kind = in.string("kind").value_or("");
  out.label_selector = in.string("labelSelector").value_or("");
  out.name = in.string("name").value_or("");
  out.ns = in.string("namespace").value_or("");
  out.version = in.string("version").value_or("");
  return out;
}

std::vector<Patch> read_patches(MapReader& spec) {
  std::vector<Patch> out;
  std::optional<MapReader> kustomize = spec.map("kustomize", kKustomizeFields);
  if (!kustomize) return out;
  const std::vector<Node>& items = kustomize->sequence("patches");
  for (std::size_t i = 0; i < items.size(); ++i) {
    MapReader in(items[i], kustomize->path_of("patches") + "[" + std::to_string(i) + "]",
                 spec.diagnostics(), kPatchFields);
    Patch patch;
    patch.patch = in.required_string("patch");
    if (std::optional<MapReader> target = in.map("target", kPatchTargetFields))
      patch.target = read_patch_target(*target);
    out.push_back(std::move(patch));
  }
  return out;
}

}  // namespace

void read_spec(MapReader& root, FluxInstance& instance) {
  std::optional<MapReader> spec = root.map("spec", kSpecFields);
  if (!spec) root.diagnostics().fail(".spec", "required field is missing");
  instance.distribution = read_distribution(*spec);
  instance.components = read_components(*spec);
  instance.cluster = read_cluster(*spec);
  instance.common_metadata = read_common_metadata(*spec);
  instance.storage = read_storage(*spec);
  instance.sharding = read_sharding(*spec);
  instance.sync = read_sync(*spec);
  instance.patches = read_patches(*spec);
  instance.wait = spec->boolean("wait", true);
  instance.migrate_resources = spec->boolean("migrateResources", true);
}

}  // namespace fluxop::instance
