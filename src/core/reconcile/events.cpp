#include "core/reconcile/events.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <utility>

#include "core/file.h"
#include "core/reconcile/instance_object.h"
#include "core/redact.h"
#include "core/rfc3339.h"

namespace fluxop::reconcile {

using nlohmann::json;

namespace {

// client-go's correlator: at most this many events remembered, and this many
// distinct messages of one reason within the window before they are combined.
constexpr std::size_t kRemembered = 4096;
constexpr std::size_t kSimilarMax = 10;
constexpr std::chrono::minutes kSimilarWindow{10};

// The component of the operator's recorder; it sets no host, so the Events
// have no reportingInstance.
constexpr std::string_view kComponent = "flux-operator";
constexpr std::string_view kRevisionAnnotation = "fluxcd.controlplane.io/revision";

std::string seconds_timestamp(std::chrono::system_clock::time_point time) {
  auto seconds = std::chrono::floor<std::chrono::seconds>(time).time_since_epoch().count();
  return utc_rfc3339(static_cast<std::time_t>(seconds));
}

// client-go's name: the object's and the time in nanoseconds, in hex, which
// makes it unique. ("flux" and a hex number always make a valid name.)
std::string event_name(const std::string& object_name, std::chrono::system_clock::time_point time) {
  auto nanoseconds =
      std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(nanoseconds));
  return object_name + "." + hex;
}

json involved_object(const InvolvedObject& object, const std::string& ns) {
  json reference = {{"apiVersion", "fluxcd.controlplane.io/v1"},
                    {"kind", "FluxInstance"},
                    {"name", object.name},
                    {"namespace", ns}};
  // Empty fields are omitted, as Go's ObjectReference writes them.
  if (!object.uid.empty()) reference["uid"] = object.uid;
  if (!object.resource_version.empty()) reference["resourceVersion"] = object.resource_version;
  return reference;
}

kube::ObjectKey event_key(const json& event) {
  return {.group = "",
          .version = "v1",
          .kind = "Event",
          .ns = event["metadata"]["namespace"],
          .name = event["metadata"]["name"]};
}

}  // namespace

EventRecorder::EventRecorder(kube::Cluster& cluster, ErrorHandler on_error, Clock clock)
    : cluster_(cluster), on_error_(std::move(on_error)), clock_(std::move(clock)) {
  if (!on_error_) on_error_ = [](const std::string&) {};
}

void EventRecorder::record(const kube::ObjectKey& ref, std::string uid,
                           const InstanceEvent& event) {
  if (uid.empty()) {
    try {
      if (std::optional<json> live = get_live_instance(cluster_, ref))
        uid = live->value("metadata", json::object()).value("uid", "");
    } catch (const Error& e) {
      on_error_(std::string("reading the FluxInstance's uid: ") + e.what());
    }
  }
  record({ref.name, ref.ns, uid, ""}, event);
}

void EventRecorder::record(const InvolvedObject& object, const InstanceEvent& event) {
  if (event_type(event.reason) == EventType::none) {
    on_error_("event " + std::string(name(event.reason)) + ": a condition's reason only");
    return;
  }
  std::chrono::system_clock::time_point now = clock_();
  std::string timestamp = seconds_timestamp(now);
  std::string ns = object.ns.empty() ? "default" : object.ns;
  std::string type(name(event_type(event.reason)));
  json written = {{"apiVersion", "v1"},
                  {"kind", "Event"},
                  {"metadata", {{"name", event_name(object.name, now)}, {"namespace", ns}}},
                  {"involvedObject", involved_object(object, ns)},
                  {"reason", name(event.reason)},
                  {"message", redact_secrets(event.message)},
                  {"type", type},
                  {"source", {{"component", kComponent}}},
                  {"reportingComponent", kComponent},
                  {"firstTimestamp", timestamp},
                  {"lastTimestamp", timestamp},
                  {"count", 1}};
  if (!event.revision.empty()) {
    written["metadata"]["annotations"] = {{kRevisionAnnotation, event.revision}};
  }

  // Events alike but for their message are "similar"; the same message too
  // makes them the same event. The resourceVersion, which every status
  // write changes, is in neither.
  std::string similar_key = ns + "\n" + object.name + "\n" + object.uid + "\n" + type + "\n" +
                            std::string(name(event.reason)) + "\n";
  Similar& similar = similar_[similar_key];
  if (now - similar.last > kSimilarWindow) similar = {};
  similar.messages.insert(event.message);
  similar.last = now;
  if (similar.messages.size() < kSimilarMax) {
    write(similar_key + event.message, std::move(written));
    return;
  }
  // One more distinct message within the window: counted on one combined
  // event instead, which client-go writes without the annotations and the
  // reporting component.
  similar.messages.erase(similar.messages.begin());
  written["message"] = "(combined from similar events): " + redact_secrets(event.message);
  written["metadata"].erase("annotations");
  written.erase("reportingComponent");
  write(similar_key, std::move(written));
}

void EventRecorder::write(const std::string& key, json event) {
  std::string what = "event " + event["reason"].get<std::string>();
  try {
    if (auto found = written_.find(key); found != written_.end()) {
      event["metadata"]["name"] = found->second.name;
      event["metadata"]["namespace"] = found->second.ns;
      event["firstTimestamp"] = found->second.first_timestamp;
      event["count"] = found->second.count + 1;
      json patch = json::array();
      for (const char* field : {"count", "lastTimestamp", "message"}) {
        patch.push_back(
            {{"op", "add"}, {"path", std::string("/") + field}, {"value", event[field]}});
      }
      try {
        remember(key, cluster_.json_patch(event_key(event), patch));
        return;
      } catch (const kube::ApiError& e) {
        // Gone (Events expire): written anew under its name, with its count.
        if (e.status() != 404) throw;
      }
    }
    std::optional<json> created = cluster_.create(event);
    if (!created) {
      on_error_(what + ": " + event["metadata"]["name"].get<std::string>() + " already exists");
      return;
    }
    remember(key, *created);
  } catch (const std::exception& e) {
    on_error_(what + ": " + e.what());
  }
}

void EventRecorder::remember(const std::string& key, const json& written) {
  written_[key] = {.name = written["metadata"]["name"],
                   .ns = written["metadata"]["namespace"],
                   .count = written.value("count", 1),
                   .first_timestamp = written.value("firstTimestamp", ""),
                   .last_use = ++uses_};
  if (written_.size() <= kRemembered) return;
  auto oldest = std::min_element(
      written_.begin(), written_.end(),
      [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; });
  written_.erase(oldest);
}

}  // namespace fluxop::reconcile
