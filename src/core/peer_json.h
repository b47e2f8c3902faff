// The one way JSON from a peer (a registry, an API server, an exec
// credential plugin, a file a kubeconfig names) is decoded: bounded in depth
// and in elements before the parser builds anything, so that a hostile body
// can neither exhaust the stack (nesting) nor memory (a tree many times the
// body's size).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

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

// Whether a JSON text's bytes, taken in turn, are inside a string (its
// quotes included): the one state the byte scanners of parse_peer_json
// and PeerJsonArrayStream share.
struct JsonStringState {
  bool inside = false;
  bool escaped = false;
  // Takes the next byte; true when it belongs to a string.
  bool take(char c) {
    if (inside) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inside = false;
      return true;
    }
    inside = c == '"';
    return inside;
  }
};

// A JSON object that arrives in pieces and holds most of its bytes in one
// array member (an API server's list: {"kind": ..., "metadata": {...},
// "items": [{...}, ...]}): each element of that array is decoded on its own
// as soon as its last byte has arrived, and handed over, so that memory
// holds one element, not the document. What is around the array (the
// envelope) is kept, with the array left empty, and decoded at the end.
class PeerJsonArrayStream {
 public:
  struct Options {
    std::string member;  // the array, a member of the top-level object ("items")
    // Of each element; beyond them, or an element that is not an object, is
    // an error.
    PeerJsonBounds bounds;
    std::size_t max_element_bytes = std::size_t{32} << 20;
    std::size_t max_envelope_bytes = std::size_t{1} << 20;
    // Members of each element left out while it is decoded, as JSON
    // pointers two levels deep ("/metadata/managedFields"): what the caller
    // would drop is never built.
    std::vector<std::string> dropped;
  };
  using ElementVisitor = std::function<void(nlohmann::json&& element)>;

  PeerJsonArrayStream(Options options, ElementVisitor each);

  // The next bytes of the document; the elements they complete are handed
  // to `each` before it returns. Throws fluxop::Error with the reason
  // ("an element of more than 256 levels") when the bytes break a bound.
  void write(std::string_view bytes);
  // The envelope, once the document is whole; throws fluxop::Error when it
  // is not JSON (cut short, say).
  nlohmann::json finish();
  // The elements handed over so far.
  std::size_t elements() const { return handed_; }

 private:
  void scan_envelope(std::string_view bytes, std::size_t& at);
  void scan_element(std::string_view bytes, std::size_t& at);
  void hand_over();

  Options options_;
  ElementVisitor each_;
  std::vector<std::vector<std::string>> dropped_;  // options_.dropped, split
  std::string envelope_;
  std::string element_;
  std::size_t depth_ = 0;  // of the document, at the byte scanned
  JsonStringState strings_;
  std::size_t string_start_ = 0;    // in envelope_, of the last string's text
  std::size_t string_end_ = 0;      // and its end
  std::string key_;                 // the last key at depth 1
  bool after_colon_ = false;        // a member's value is next, at depth 1
  bool in_array_ = false;           // inside the member's array, between elements
  bool in_element_ = false;         // inside one of its elements
  std::size_t element_values_ = 0;  // counted as parse_peer_json counts them
  std::size_t handed_ = 0;
};

}  // namespace fluxop
