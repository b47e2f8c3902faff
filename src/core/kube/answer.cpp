#include "core/kube/answer.h"

#include <string>
#include <utility>

#include "core/error.h"
#include "core/kube/meta.h"

namespace fluxop::kube {

nlohmann::json decode_answer(std::string_view request, std::string_view body,
                             const PeerJsonBounds& bounds, std::size_t* values) {
  std::string why;
  nlohmann::json answer = parse_peer_json(body, &why, bounds, values);
  if (answer.is_discarded())
    throw Error("the API server's answer to " + std::string(request) + ": " + why);
  return answer;
}

namespace {

using nlohmann::json;

[[noreturn]] void refuse(std::string_view request, const std::string& why) {
  throw Error("the API server's answer to " + std::string(request) + ": " + why);
}

}  // namespace

ListPage decode_list_page(std::string_view request, std::string_view body) {
  ListPage page;
  json list = decode_answer(request, body, kAnswerBounds, &page.values);
  auto items = list.is_object() ? list.find("items") : list.end();
  if (items == list.end() || !items->is_array()) refuse(request, "not a list");
  for (json& item : *items) {
    if (!item.is_object()) refuse(request, "a list item that is not an object");
    page.items.push_back(std::move(item));
  }
  auto metadata = list.find("metadata");
  if (metadata != list.end()) page.next = string_member(*metadata, "continue");
  page.version = resource_version(list);
  return page;
}

std::string resource_version(const json& object) {
  auto metadata = object.is_object() ? object.find("metadata") : object.end();
  return metadata != object.end() ? string_member(*metadata, "resourceVersion") : "";
}

WatchEvent decode_watch_event(std::string_view request, std::string_view line) {
  json event = decode_answer(request, line);
  WatchEvent decoded;
  decoded.type = string_member(event, "type");
  auto object = event.is_object() ? event.find("object") : event.end();
  if (object == event.end() || !object->is_object())
    refuse(request, "a watch event without an object");
  decoded.object = std::move(*object);
  auto code = decoded.object.find("code");
  if (code != decoded.object.end() && code->is_number_integer()) decoded.code = code->get<long>();
  return decoded;
}

}  // namespace fluxop::kube
