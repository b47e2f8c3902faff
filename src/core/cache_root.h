// fluxopctl's directory in the user's cache, where the artifact cache
// (oci/), the parse cache (parsed/) and the seeded distribution
// (distribution/) live.
#pragma once

#include <string>

namespace fluxop {

// $XDG_CACHE_HOME/fluxopctl, or $HOME/.cache/fluxopctl when XDG_CACHE_HOME
// is unset or relative (the XDG spec says to ignore a relative one); empty
// when HOME is unset too.
std::string user_cache_root(const std::string& xdg_cache_home, const std::string& home);

// The same from the process's environment.
std::string user_cache_root();

}  // namespace fluxop
