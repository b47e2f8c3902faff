#include "core/instance/instance.h"

#include <array>
#include <iostream>
#include <string_view>

#include "core/error.h"
#include "core/file.h"
#include "core/instance/defaults.h"
#include "core/instance/reader.h"
#include "core/instance/rules.h"
#include "core/instance/spec.h"
#include "core/names.h"
#include "core/yaml/parse.h"
#include "core/yaml/scalar.h"

namespace fluxop::instance {

namespace {

using yaml::Node;

constexpr std::string_view kApiVersion = "fluxcd.controlplane.io/v1";
constexpr std::string_view kKind = "FluxInstance";

constexpr std::array<std::string_view, 5> kRootFields = {"apiVersion", "kind", "metadata", "spec",
                                                         "status"};
// ObjectMeta: fluxopctl reads name, namespace, labels and annotations; the
// others a stored object may carry are accepted and not read.
constexpr std::array<std::string_view, 15> kMetadataFields = {"name",
                                                              "namespace",
                                                              "labels",
                                                              "annotations",
                                                              "generateName",
                                                              "selfLink",
                                                              "uid",
                                                              "resourceVersion",
                                                              "generation",
                                                              "creationTimestamp",
                                                              "deletionTimestamp",
                                                              "deletionGracePeriodSeconds",
                                                              "ownerReferences",
                                                              "finalizers",
                                                              "managedFields"};

void check_type(MapReader& root) {
  std::optional<std::string> api_version = root.string("apiVersion");
  if (!api_version) root.diagnostics().fail(".apiVersion", "required field is missing");
  if (*api_version != kApiVersion) {
    root.diagnostics().fail(".apiVersion", "must be " + std::string(kApiVersion));
  }
  std::optional<std::string> kind = root.string("kind");
  if (!kind) root.diagnostics().fail(".kind", "required field is missing");
  if (*kind != kKind) root.diagnostics().fail(".kind", "must be " + std::string(kKind));
}

void read_metadata(MapReader& root, FluxInstance& instance) {
  std::optional<MapReader> metadata = root.map("metadata", kMetadataFields);
  if (!metadata) root.diagnostics().fail(".metadata", "required field is missing");
  std::optional<std::string> name = metadata->string("name");
  if (!name) metadata->diagnostics().fail(".metadata.name", "required field is missing");
  instance.name = *name;
  std::optional<std::string> ns = metadata->string("namespace");
  instance.ns = ns.value_or("");
  if (ns && !kDnsLabel.valid(*ns))
    metadata->diagnostics().fail(".metadata.namespace", kDnsLabel.requirement);
  instance.labels = metadata->string_map("labels");
  instance.annotations = metadata->string_map("annotations");
}

// A FluxInstance is a Kubernetes object: the API server takes none larger
// than 3 MiB (etcd stores none past 1.5 MiB), and a larger file is no
// instance anyone could apply, only text that the render would copy into
// each object it patches, several times over.
constexpr std::size_t kMaxInstanceBytes = std::size_t{3} << 20;

std::string read_input(const std::string& path) {
  // A pipe is fine for the instance (`build <(...)`), bounded as stdin is.
  if (path != "-") return read_input_file(path, /*pipes=*/true, kMaxInstanceBytes);
  return read_input_stream(std::cin, "-", kMaxInstanceBytes);
}

}  // namespace

FluxInstance load_instance(const Node& document, std::string_view source,
                           const LoadOptions& options, std::vector<std::string>& warnings) {
  Diagnostics diagnostics(source, options.allow_unknown_fields, warnings);
  // Upstream reads the file as YAML 1.1 (sigs.k8s.io/yaml), where yes/no/on/off are booleans.
  Node defaulted = document;
  yaml::read_yaml11_booleans(defaulted);
  apply_schema_defaults(defaulted);

  FluxInstance instance;
  MapReader root(defaulted, "", diagnostics, kRootFields);
  check_type(root);
  read_metadata(root, instance);
  read_spec(root, instance);  // .status, written by the operator, is not read

  check_rules(instance, diagnostics);
  apply_operator_defaults(instance);
  instance.file = source;
  instance.source = document;
  return instance;
}

FluxInstance load_instance_file(const std::string& path, const LoadOptions& options,
                                std::vector<std::string>& warnings) {
  std::string source = path == "-" ? "<stdin>" : path;
  std::vector<Node> documents;
  for (Node& document : yaml::parse_documents(read_input(path), source)) {
    if (!document.is_null()) documents.push_back(std::move(document));
  }
  if (documents.size() != 1) {
    throw Error(source + ": expected one FluxInstance document, found " +
                std::to_string(documents.size()));
  }
  return load_instance(documents.front(), source, options, warnings);
}

}  // namespace fluxop::instance
