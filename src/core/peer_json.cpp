#include "core/peer_json.h"

namespace fluxop {

namespace {

// Why `text` exceeds `bounds`, empty when it does not; the values counted
// in `elements`. One pass over the bytes, strings skipped, before the
// parser allocates anything.
std::string exceeded(std::string_view text, const PeerJsonBounds& bounds, std::size_t& elements) {
  std::size_t depth = 0;
  elements = 1;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > bounds.max_depth)
          return "nesting deeper than " + std::to_string(bounds.max_depth) + " levels";
        ++elements;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      case ',':
        ++elements;
        break;
      default:
        continue;
    }
    if (elements > bounds.max_elements)
      return "more than " + std::to_string(bounds.max_elements) + " values";
  }
  return {};
}

}  // namespace

nlohmann::json parse_peer_json(std::string_view text, std::string* why,
                               const PeerJsonBounds& bounds, std::size_t* values) {
  std::size_t elements = 0;
  std::string problem = exceeded(text, bounds, elements);
  if (values) *values = elements;
  if (problem.empty()) {
    try {
      nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
      if (!value.is_discarded()) return value;
      problem = "not JSON";
    } catch (const std::bad_alloc&) {
      problem = "too large to decode";
    }
  }
  if (why) *why = problem;
  return nlohmann::json(nlohmann::json::value_t::discarded);
}

}  // namespace fluxop
