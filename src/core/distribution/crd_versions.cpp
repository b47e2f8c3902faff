#include "core/distribution/crd_versions.h"

#include <algorithm>

#include "core/yaml/node.h"
#include "core/yaml/parse.h"

namespace fluxop::distribution {

namespace {

// The API versions the CRD `name` lists in the manifests of `dir`; empty
// when no file there defines it.
std::vector<std::string> crd_versions(const Distribution& distribution, const std::string& dir,
                                      const std::string& name) {
  for (const std::string& file : distribution.files(dir)) {
    if (!file.ends_with(".yaml")) continue;
    std::string path = dir + "/" + file;
    std::string text = distribution.read(path);
    if (text.find(name) == std::string::npos) continue;
    for (const yaml::Node& document : yaml::parse_documents(text, distribution.label(path))) {
      if (document.string_at({"kind"}) != "CustomResourceDefinition" ||
          document.string_at({"metadata", "name"}) != name) {
        continue;
      }
      std::vector<std::string> versions;
      const yaml::Node* listed = document.find({"spec", "versions"});
      if (listed && listed->is_sequence()) {
        for (const yaml::Node& version : listed->items()) {
          versions.push_back(version.string_at({"name"}));
        }
      }
      return versions;
    }
  }
  return {};
}

}  // namespace

std::optional<Version> newest_serving(const Distribution& distribution, const Version& target,
                                      const std::string& name,
                                      const std::vector<std::string>& api_versions) {
  const std::vector<Version>& versions = distribution.versions();
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    if (compare(*it, target) >= 0) continue;
    std::vector<std::string> served =
        crd_versions(distribution, distribution.manifests_dir(*it), name);
    if (std::all_of(api_versions.begin(), api_versions.end(), [&served](const std::string& v) {
          return std::find(served.begin(), served.end(), v) != served.end();
        })) {
      return *it;
    }
  }
  return std::nullopt;
}

}  // namespace fluxop::distribution
