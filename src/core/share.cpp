#include "core/share.h"

#include <string>
#include <utility>

#include "core/error.h"

namespace fluxop {

namespace {

constexpr std::pair<std::string_view, std::string_view> kManifests[] = {
#include "share_manifests.inc"
};

}  // namespace

std::string_view share_manifest(std::string_view name) {
  for (const auto& [file, text] : kManifests) {
    if (file == name) return text;
  }
  throw Error("share/manifests/" + std::string(name) + ": not compiled in");
}

}  // namespace fluxop
