// What the API server answers, decoded within bounds: whatever it sends
// (nesting 20,000 deep, an answer of 250 MB, a list without end), fluxopctl
// stays under 512 MiB. A decoded value costs about 100 to 160 bytes, so the
// bounds count values as well as bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/peer_json.h"

namespace fluxop::kube {

// The most one answer may hold: an object (etcd stores 1.5 MiB at most), a
// discovery document, a page of a list.
inline constexpr std::size_t kMaxAnswerBytes = std::size_t{32} << 20;
// One answer decodes to at most this many values (about 60 MB): a 1.5 MiB
// object has fewer.
inline constexpr PeerJsonBounds kAnswerBounds{.max_depth = 256, .max_elements = 500'000};
// A list is read in pages of this many items (`limit` and `continue`), as
// kubectl reads them: 10,000 objects are 20 requests...
inline constexpr int kListPageItems = 500;
// ...and all its pages together hold at most this much, when the caller
// keeps the whole list (not when it reduces each page as it comes).
inline constexpr std::size_t kMaxListBytes = std::size_t{64} << 20;
inline constexpr std::size_t kMaxListValues = 1'000'000;
// A server that answers with continue tokens forever, a few bytes each, is
// stopped here (1,000,000 items of 500 to a page).
inline constexpr std::size_t kMaxListPages = 2000;

// The answer to `request` ("GET /api/v1/namespaces") decoded within
// `bounds`; throws fluxop::Error naming the request when it is not JSON or
// exceeds them: "the API server's answer to GET /version: nesting deeper
// than 256 levels".
// `values`, when given, gets the values counted (see parse_peer_json).
nlohmann::json decode_answer(std::string_view request, std::string_view body,
                             const PeerJsonBounds& bounds = kAnswerBounds,
                             std::size_t* values = nullptr);

// One page of a list.
struct ListPage {
  std::vector<nlohmann::json> items;  // objects, as the server sent them
  std::string next;                   // metadata.continue: empty on the last page
  std::string version;                // metadata.resourceVersion
  std::size_t values = 0;             // in the whole answer, as parse_peer_json counts them
};
// The page `body` answered to `request`; throws fluxop::Error naming the
// request when it is not a list of objects (or as decode_answer).
ListPage decode_list_page(std::string_view request, std::string_view body);

// metadata.resourceVersion of an object or a list; "" when it has none.
std::string resource_version(const nlohmann::json& object);

// One event of a watch: ADDED, MODIFIED, DELETED and BOOKMARK carry an
// object, ERROR a Status (its code in `code`).
struct WatchEvent {
  std::string type;
  nlohmann::json object;
  long code = 0;
};
// The event of one line of a watch of `request`; throws fluxop::Error naming
// the request when it is not one (or as decode_answer).
WatchEvent decode_watch_event(std::string_view request, std::string_view line);

}  // namespace fluxop::kube
