#include "core/kustomize/merge_keys.h"

#include <algorithm>
#include <iterator>
#include <tuple>

namespace fluxop::kustomize {
namespace {

struct MergeList {
  std::string_view api_version;
  std::string_view kind;
  std::string_view path;
  std::string_view strategy;
  std::string_view keys;  // comma-separated

  auto id() const { return std::tie(api_version, kind, path); }
};

// Sorted by apiVersion, kind, path.
constexpr MergeList kMergeLists[] = {
#include "core/kustomize/merge_keys_table.inc"
};

std::vector<std::string> split_keys(std::string_view keys) {
  std::vector<std::string> out;
  while (!keys.empty()) {
    std::size_t comma = keys.find(',');
    out.emplace_back(keys.substr(0, comma));
    keys = comma == std::string_view::npos ? std::string_view{} : keys.substr(comma + 1);
  }
  return out;
}

const MergeList* first_at_or_after(std::string_view api_version, std::string_view kind,
                                   std::string_view path) {
  MergeList wanted{api_version, kind, path, {}, {}};
  return std::lower_bound(std::begin(kMergeLists), std::end(kMergeLists), wanted,
                          [](const MergeList& a, const MergeList& b) { return a.id() < b.id(); });
}

}  // namespace

std::optional<std::vector<std::string>> merge_keys(std::string_view api_version,
                                                   std::string_view kind, std::string_view path) {
  const MergeList* it = first_at_or_after(api_version, kind, path);
  if (it == std::end(kMergeLists) || it->api_version != api_version || it->kind != kind ||
      it->path != path) {
    return std::nullopt;
  }
  return split_keys(it->keys);
}

// Types whose schema declares no merged list at all (none in practice: every
// object has metadata.finalizers) merge exactly like types without a schema.
bool has_builtin_schema(std::string_view api_version, std::string_view kind) {
  const MergeList* it = first_at_or_after(api_version, kind, "");
  return it != std::end(kMergeLists) && it->api_version == api_version && it->kind == kind;
}

}  // namespace fluxop::kustomize
