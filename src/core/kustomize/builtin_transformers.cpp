#include "core/kustomize/builtin_transformers.h"

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/kustomize/fieldspec.h"
#include "core/kustomize/metadata_map.h"
#include "core/yaml/parse.h"

namespace fluxop::kustomize {

namespace {

struct Config {
  yaml::Node node;
  std::string field;  // names the config in errors
};

// The documents of an inline entry; empty when the entry is a path
// (kustomize tries it as YAML resources first).
std::vector<yaml::Node> inline_documents(const std::string& entry) {
  std::vector<yaml::Node> documents;
  try {
    documents = yaml::parse_documents(entry, "inline");
  } catch (const Error&) {
    return {};
  }
  for (const auto& document : documents) {
    if (!document.is_null() && !document.is_map()) return {};
  }
  return documents;
}

std::vector<yaml::Node> file_documents(const std::string& path, const Context& context,
                                       const std::string& field) {
  std::string file = (std::filesystem::path(context.dir) / path).string();
  FileSystem::Kind kind = context.files->kind(file);
  if (kind == FileSystem::Kind::Directory) {
    context.fail(field, path +
                            " is a directory: only files of builtin transformer configs are "
                            "supported");
  }
  if (kind == FileSystem::Kind::Missing) context.fail(field, path + ": no such file");
  std::string text = context.read(path, field);
  try {
    return yaml::parse_documents(text, path);
  } catch (const Error& error) {
    context.fail(field, error.what());
  }
}

// Inline configs first, then files, each in listed order.
std::vector<Config> configs(const yaml::Node& field, const Context& context) {
  if (!field.is_sequence()) {
    context.fail("transformers", "expected a sequence, found " + describe_value(field));
  }
  std::vector<Config> inline_configs;
  std::vector<Config> file_configs;
  for (std::size_t i = 0; i < field.items().size(); ++i) {
    std::string entry_field = "transformers[" + std::to_string(i) + "]";
    std::string entry = config_string(field.items()[i], context, entry_field);
    std::vector<yaml::Node> documents = inline_documents(entry);
    bool is_inline = !documents.empty();
    if (!is_inline) documents = file_documents(entry, context, entry_field);
    for (auto& document : documents) {
      if (document.is_null()) continue;
      auto& list = is_inline ? inline_configs : file_configs;
      list.push_back({std::move(document), is_inline ? entry_field : entry_field + ": " + entry});
    }
  }
  for (auto& config : file_configs) inline_configs.push_back(std::move(config));
  return inline_configs;
}

MetadataPairs read_config(const Config& config, const Context& context) {
  const yaml::Node& node = config.node;
  if (!node.is_map()) context.fail(config.field, "expected a map, found " + describe_value(node));
  std::string api_version = node.string_at({"apiVersion"});
  std::string kind = node.string_at({"kind"});
  if (api_version != "builtin") {
    context.fail(config.field,
                 "apiVersion " + api_version + " is not supported: only builtin transformers are");
  }
  bool labels = kind == "LabelTransformer";
  if (!labels && kind != "AnnotationsTransformer") {
    context.fail(config.field, "kind " + kind + " is not supported");
  }
  if (node.string_at({"metadata", "name"}).empty()) {
    context.fail(config.field, "missing metadata.name");
  }
  const char* pairs_key = labels ? "labels" : "annotations";
  const yaml::Node* pairs = node.get(pairs_key);
  const yaml::Node* fieldspecs = node.get("fieldSpecs");
  return {
      config.field,
      parse_string_pairs(pairs ? *pairs : yaml::Node(), context, config.field + ": " + pairs_key),
      parse_fieldspecs(fieldspecs ? *fieldspecs : yaml::Node(), context,
                       config.field + ": fieldSpecs", UnknownKeys::Ignore)};
}

}  // namespace

std::vector<MetadataPairs> read_transformers(const yaml::Node& field, const Context& context) {
  std::vector<MetadataPairs> transformers;
  if (field.is_null()) return transformers;
  for (const auto& config : configs(field, context)) {
    transformers.push_back(read_config(config, context));
  }
  return transformers;
}

}  // namespace fluxop::kustomize
