#include "core/distribution/kubernetes_range.h"

#include <algorithm>

#include "core/error.h"
#include "core/share.h"
#include "core/yaml/parse.h"

namespace fluxop::distribution {

namespace {

bool is_minor(std::string_view key) {
  std::size_t dot = key.find('.');
  auto digits = [](std::string_view part) {
    return !part.empty() &&
           std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dot != std::string_view::npos && digits(key.substr(0, dot)) && digits(key.substr(dot + 1));
}

std::string minor_key(const Version& version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor);
}

}  // namespace

std::map<std::string, KubernetesRange> read_kubernetes_ranges(std::string_view text,
                                                              const std::string& path) {
  yaml::Node doc = yaml::parse_document(text, path);
  if (doc.is_null()) return {};
  if (!doc.is_map()) throw Error(path + ": expected a map of Flux minors to version constraints");
  std::map<std::string, KubernetesRange> ranges;
  for (const auto& [key, value] : doc.entries()) {
    std::string where = path + ": " + quote(key);
    if (!is_minor(key)) throw Error(where + ": not a Flux minor (MAJOR.MINOR, e.g. \"2.9\")");
    std::optional<Constraint> constraint =
        value.is_scalar() ? Constraint::parse(value.text()) : std::nullopt;
    if (!constraint) throw Error(where + ": not a version constraint (e.g. \">=1.33.0-0\")");
    ranges.emplace(key, KubernetesRange{value.text(), std::move(*constraint), path});
  }
  return ranges;
}

std::optional<KubernetesRange> kubernetes_range(const Distribution& distribution,
                                                const Version& flux) {
  std::string key = minor_key(flux);
  std::string file(kKubernetesVersionsFile);
  if (distribution.has_file(file)) {
    std::map<std::string, KubernetesRange> ranges =
        read_kubernetes_ranges(distribution.read(file), distribution.label(file));
    if (auto found = ranges.find(key); found != ranges.end()) return std::move(found->second);
  }
  std::map<std::string, KubernetesRange> ours =
      read_kubernetes_ranges(share_manifest(file), "share/manifests/" + file);
  if (auto found = ours.find(key); found != ours.end()) return std::move(found->second);
  return std::nullopt;
}

}  // namespace fluxop::distribution
