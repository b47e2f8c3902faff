#include "core/cache_root.h"

#include <cstdlib>
#include <filesystem>

namespace fluxop {

namespace fs = std::filesystem;

std::string user_cache_root(const std::string& xdg_cache_home, const std::string& home) {
  fs::path base;
  if (fs::path(xdg_cache_home).is_absolute()) {
    base = xdg_cache_home;
  } else if (!home.empty()) {
    base = fs::path(home) / ".cache";
  } else {
    return "";
  }
  return (base / "fluxopctl").string();
}

std::string user_cache_root() {
  auto variable = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value ? value : "");
  };
  return user_cache_root(variable("XDG_CACHE_HOME"), variable("HOME"));
}

}  // namespace fluxop
