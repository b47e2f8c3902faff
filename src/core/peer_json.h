// The one way JSON from a peer (a registry, an API server, an exec
// credential plugin, a file a kubeconfig names) is decoded: bounded in depth
// and in elements before the parser builds anything, so that a hostile body
// can neither exhaust the stack (nesting) nor memory (a tree many times the
// body's size).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fluxop {

struct PeerJsonBounds {
  // Levels of arrays and objects. Kubernetes objects (a CRD's schema, its
  // managedFields) stay well under 100.
  std::size_t max_depth = 256;
  // Values in all (a member of an object, an item of an array): the tree's
  // memory grows with them, about 100 bytes each, beyond the strings.
  std::size_t max_elements = 4'000'000;
};

// `text` decoded; a discarded value (is_discarded()) when it is not JSON or
// exceeds `bounds`, with the reason in `why` when given ("nesting deeper
// than 256 levels"), and the values counted against max_elements in
// `values` when given (an object or array opened, a comma: an empty object
// or array counts twice). Never throws.
nlohmann::json parse_peer_json(std::string_view text, std::string* why = nullptr,
                               const PeerJsonBounds& bounds = {}, std::size_t* values = nullptr);

}  // namespace fluxop
