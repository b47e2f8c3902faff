// libFuzzer target for what fluxopctl decodes from an API server: an object,
// a page of a list, a watch event, discovery documents, a Status error, and
// an exec credential plugin's output. Any input must decode or throw
// fluxop::Error, within the bounds of kube/answer.h: never crash, never throw
// anything else.
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "core/kube/answer.h"
#include "core/kube/auth.h"
#include "core/kube/client.h"
#include "core/kube/discovery.h"

namespace {

template <typename Decode>
void decoded_or_refused(Decode decode) {
  try {
    decode();
  } catch (const fluxop::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  decoded_or_refused([&] { (void)fluxop::kube::decode_answer("GET /x", text); });
  decoded_or_refused([&] { (void)fluxop::kube::decode_list_page("GET /x", text); });
  decoded_or_refused([&] { (void)fluxop::kube::decode_watch_event("GET /x", text); });
  decoded_or_refused([&] { (void)fluxop::kube::parse_aggregated_discovery("GET /apis", text); });
  decoded_or_refused([&] { (void)fluxop::kube::parse_resource_list("GET /api/v1", text); });
  (void)fluxop::kube::api_error("ConfigMap/ns/x", 422, text);
  fluxop::kube::ExecPlugin plugin;
  plugin.api_version = "client.authentication.k8s.io/v1";
  plugin.command = "plugin";
  decoded_or_refused([&] { (void)fluxop::kube::parse_exec_credential(text, plugin); });
  return 0;
}
