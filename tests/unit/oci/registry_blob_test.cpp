// RegistryClient::fetch_blob_bytes against a registry that answers at once:
// the work done while a request waits (the buffer's pages faulted in) never
// touches what has arrived.
#include <doctest/doctest.h>

#include <string>

#include "../net/misbehaving_server.h"
#include "core/digest.h"
#include "core/oci/reference.h"
#include "core/oci/registry.h"

namespace fluxop::oci {
namespace {

using testing::MisbehavingServer;
using testing::send_text;

TEST_CASE("registry: a blob answered at once arrives whole, every time") {
  // Bytes that differ along the blob, so that a part lost or moved shows.
  std::string blob;
  for (int i = 0; blob.size() < 256 * 1024; ++i) blob += std::to_string(i) + ",";
  MisbehavingServer server([&blob](int fd, const std::atomic<bool>&) {
    send_text(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(blob.size()) + "\r\n\r\n" +
                      blob);
  });
  RegistryOptions options;
  options.insecure_registries = {server.authority()};  // plain HTTP, no probe
  const Reference ref = Reference::parse("oci://" + server.authority() + "/flux:latest");
  Descriptor descriptor;
  descriptor.digest = sha256_digest(blob);
  descriptor.size = blob.size();
  // Whether the answer comes within the step that sends the request is the
  // scheduler's: tried often enough to meet both.
  for (int attempt = 0; attempt < 50; ++attempt) {
    CAPTURE(attempt);
    RegistryClient client(options);
    std::string bytes = client.fetch_blob_bytes(ref, descriptor, blob.size());
    REQUIRE(bytes.size() == blob.size());
    REQUIRE(bytes == blob);
  }
}

}  // namespace
}  // namespace fluxop::oci
