#include "core/kustomize/kustomization.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/yaml/parse.h"
#include "core/yaml/scalar.h"

namespace fluxop::kustomize {

namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 3> kFileNames = {"kustomization.yaml", "kustomization.yml",
                                                        "Kustomization"};

// The fields besides the transformers' own.
constexpr std::array<std::string_view, 6> kFrameFields = {"apiVersion", "kind",  "metadata",
                                                          "resources",  "bases", "sortOptions"};

// Kustomize features outside fluxopctl's subset, with what they are.
constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kRefusedFields = {{
    {"configMapGenerator", "generators"},
    {"secretGenerator", "generators"},
    {"generatorOptions", "generators"},
    {"generators", "generators"},
    {"helmCharts", "Helm charts"},
    {"helmGlobals", "Helm charts"},
    {"helmChartInflationGenerator", "Helm charts"},
    {"components", "components"},
    {"replacements", "replacements"},
    {"replicas", "replica overrides"},
    {"vars", "vars"},
    {"crds", "CRD configurations"},
    {"configurations", "transformer configurations"},
    {"validators", "validators"},
    {"buildMetadata", "build metadata"},
    {"openapi", "custom OpenAPI schemas"},
}};

constexpr std::string_view kApiVersion = "kustomize.config.k8s.io/v1beta1";

void check_header(const Kustomization& k) {
  const Context& ctx = k.context;
  if (const yaml::Node* kind = k.spec.get("kind")) {
    if (!kind->is_scalar()) ctx.fail("kind", "must be a string");
    if (kind->text() == "Component") ctx.fail("kind", "components are not supported by fluxopctl");
    if (kind->text() != "Kustomization") {
      ctx.fail("kind", "must be Kustomization, not " + kind->text());
    }
  }
  if (const yaml::Node* api = k.spec.get("apiVersion")) {
    if (!api->is_scalar() || api->text() != kApiVersion) {
      ctx.fail("apiVersion", "must be " + std::string(kApiVersion));
    }
  }
}

// sortOptions is accepted only in the form that changes nothing.
void check_sort_options(const Kustomization& k) {
  const Context& ctx = k.context;
  if (const yaml::Node* sort = k.spec.get("sortOptions")) {
    if (!sort->is_map() || sort->string_at({"order"}) != "legacy" ||
        std::any_of(sort->entries().begin(), sort->entries().end(),
                    [](const auto& e) { return e.first != "order"; })) {
      ctx.fail("sortOptions", "only order: legacy is supported by fluxopctl");
    }
  }
}

void check_fields(const Kustomization& k,
                  const std::function<bool(std::string_view)>& is_transformer_field) {
  if (!k.spec.is_map()) k.context.fail("", "must be a map of kustomization fields");
  for (const auto& entry : k.spec.entries()) {
    const std::string& field = entry.first;
    auto refused = std::find_if(kRefusedFields.begin(), kRefusedFields.end(),
                                [&](const auto& r) { return r.first == field; });
    if (refused != kRefusedFields.end()) {
      k.context.fail(field, std::string(refused->second) + " are not supported by fluxopctl");
    }
    bool frame = std::find(kFrameFields.begin(), kFrameFields.end(), field) != kFrameFields.end();
    if (!frame && !is_transformer_field(field)) k.context.fail(field, "unknown field");
  }
  check_header(k);
  check_sort_options(k);
}

std::vector<std::string> kustomization_files_in(const FileSystem& files, const std::string& dir) {
  std::vector<std::string> found;
  for (std::string_view name : kFileNames) {
    std::string path = (fs::path(dir) / std::string(name)).string();
    if (files.kind(path) == FileSystem::Kind::File) found.push_back(path);
  }
  return found;
}

}  // namespace

Kustomization load_kustomization(
    const FileSystem& file_system, const std::string& dir,
    const std::function<bool(std::string_view)>& is_transformer_field) {
  if (file_system.kind(dir) != FileSystem::Kind::Directory) {
    throw Error(dir + ": not a directory");
  }
  auto files = kustomization_files_in(file_system, dir);
  if (files.empty()) {
    throw Error(dir + ": no kustomization.yaml, kustomization.yml or Kustomization in directory");
  }
  if (files.size() > 1) throw Error(dir + ": more than one kustomization file in directory");
  Kustomization k;
  k.context = {dir, files.front(), &file_system};
  k.spec = yaml::parse_document(file_system.read(files.front()), files.front());
  if (k.spec.is_null()) k.spec = yaml::Node::map();
  yaml::read_yaml11_booleans(k.spec);
  check_fields(k, is_transformer_field);
  return k;
}

}  // namespace fluxop::kustomize
