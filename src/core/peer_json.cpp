#include "core/peer_json.h"

#include <algorithm>

#include "core/error.h"

namespace fluxop {

namespace {

bool json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// "/metadata/managedFields" -> {"metadata", "managedFields"}.
std::vector<std::string> pointer_tokens(const std::string& pointer) {
  std::vector<std::string> tokens;
  for (std::size_t at = 0; at < pointer.size();) {
    std::size_t next = pointer.find('/', at + 1);
    tokens.push_back(pointer.substr(at + 1, next == std::string::npos ? next : next - at - 1));
    at = next;
  }
  return tokens;
}

// Why `text` exceeds `bounds`, empty when it does not; the values counted
// in `elements`. One pass over the bytes, strings skipped, before the
// parser allocates anything.
std::string exceeded(std::string_view text, const PeerJsonBounds& bounds, std::size_t& elements) {
  std::size_t depth = 0;
  elements = 1;
  JsonStringState strings;
  for (char c : text) {
    if (strings.take(c)) continue;
    switch (c) {
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

PeerJsonArrayStream::PeerJsonArrayStream(Options options, ElementVisitor each)
    : options_(std::move(options)), each_(std::move(each)) {
  for (const std::string& pointer : options_.dropped) dropped_.push_back(pointer_tokens(pointer));
}

void PeerJsonArrayStream::write(std::string_view bytes) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (in_element_)
      scan_element(bytes, at);
    else
      scan_envelope(bytes, at);
  }
}

void PeerJsonArrayStream::scan_envelope(std::string_view bytes, std::size_t& at) {
  for (; at < bytes.size(); ++at) {
    char c = bytes[at];
    if (in_array_) {
      // Between the elements: only the commas, which the envelope leaves
      // out with the elements, and the array's end.
      if (json_space(c) || c == ',') continue;
      if (c == '{') {
        in_element_ = true;
        element_values_ = 1;
        return;
      }
      if (c != ']') throw Error("an element of " + options_.member + " that is not an object");
      in_array_ = false;
    }
    if (envelope_.size() == options_.max_envelope_bytes)
      throw Error("more than " + std::to_string(options_.max_envelope_bytes) + " bytes beside " +
                  options_.member);
    envelope_ += c;
    bool was_inside = strings_.inside;
    if (strings_.take(c)) {
      if (!was_inside) {  // a string opens: no member's value is next
        string_start_ = envelope_.size();
        after_colon_ = false;
      } else if (!strings_.inside) {
        string_end_ = envelope_.size() - 1;
      }
      continue;
    }
    if (json_space(c)) continue;
    bool value_next = after_colon_;
    after_colon_ = false;
    switch (c) {
      case ':':
        if (depth_ == 1) {
          key_ = envelope_.substr(string_start_, string_end_ - string_start_);
          after_colon_ = true;
        }
        break;
      case '[':
      case '{':
        in_array_ = depth_ == 1 && value_next && c == '[' && key_ == options_.member;
        ++depth_;
        break;
      case ']':
      case '}':
        if (depth_ > 0) --depth_;
        break;
      default:
        break;
    }
  }
}

void PeerJsonArrayStream::scan_element(std::string_view bytes, std::size_t& at) {
  // The element's bytes are copied once it ends, or when the piece does.
  std::size_t start = at;
  for (; at < bytes.size(); ++at) {
    char c = bytes[at];
    if (strings_.take(c)) continue;
    switch (c) {
      case '[':
      case '{':
        // The document's object and the array hold the element: two levels.
        if (++depth_ - 2 > options_.bounds.max_depth)
          throw Error("an element of " + options_.member + " nested deeper than " +
                      std::to_string(options_.bounds.max_depth) + " levels");
        ++element_values_;
        break;
      case ',':
        ++element_values_;
        break;
      case ']':
      case '}':
        if (--depth_ == 2) {
          element_.append(bytes.substr(start, at + 1 - start));
          ++at;
          hand_over();
          return;
        }
        break;
      default:
        continue;
    }
    if (element_values_ > options_.bounds.max_elements)
      throw Error("an element of " + options_.member + " with more than " +
                  std::to_string(options_.bounds.max_elements) + " values");
  }
  element_.append(bytes.substr(start));
  if (element_.size() > options_.max_element_bytes)
    throw Error("an element of " + options_.member + " of more than " +
                std::to_string(options_.max_element_bytes) + " bytes");
}

void PeerJsonArrayStream::hand_over() {
  in_element_ = false;
  in_array_ = true;
  if (element_.size() > options_.max_element_bytes)
    throw Error("an element of " + options_.member + " of more than " +
                std::to_string(options_.max_element_bytes) + " bytes");
  nlohmann::json element;
  try {
    if (dropped_.empty()) {
      element = nlohmann::json::parse(element_, nullptr, false);
    } else {
      // The keys from the element's top down to the one just read.
      std::vector<std::string> keys;
      element = nlohmann::json::parse(
          element_,
          [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
            if (event != nlohmann::json::parse_event_t::key) return true;
            keys.resize(static_cast<std::size_t>(depth));
            keys.back() = parsed.get<std::string>();
            return std::find(dropped_.begin(), dropped_.end(), keys) == dropped_.end();
          },
          false);
    }
  } catch (const std::bad_alloc&) {
    throw Error("an element of " + options_.member + " too large to decode");
  }
  if (element.is_discarded()) throw Error("an element of " + options_.member + " that is not JSON");
  element_.clear();
  ++handed_;
  each_(std::move(element));
}

nlohmann::json PeerJsonArrayStream::finish() {
  if (in_element_) throw Error("cut short in an element of " + options_.member);
  std::string why;
  nlohmann::json envelope = parse_peer_json(envelope_, &why);
  if (envelope.is_discarded()) throw Error(why);
  return envelope;
}

}  // namespace fluxop
