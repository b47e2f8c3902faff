// The floor of a cold `fluxopctl build` from a registry (scripts/bench
// build): what any client must do, in one process whose start-up is not
// counted. Each run creates an HTTP client (fluxopctl's own), fetches the
// artifact's manifest and its layer blob to memory, and inflates the blob
// once with zlib, its output discarded. Prints one JSON object: each run's
// time in seconds, in all and by step.
//
//   bench_floor MANIFEST_URL BLOB_URL RUNS
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/net/http.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string fetch(fluxop::net::HttpClient& client, const std::string& url, const char* accept) {
  fluxop::net::HttpRequest request;
  request.url = url;
  if (accept) request.headers.push_back(std::string("Accept: ") + accept);
  request.max_body = 64 << 20;
  fluxop::net::HttpResponse response = client.send(request);
  if (response.status != 200) {
    std::fprintf(stderr, "bench_floor: %s: HTTP %ld\n", url.c_str(), response.status);
    std::exit(1);
  }
  return std::move(response.body);
}

// The gzip member's header is 10 bytes when, as `gzip -n` writes it, it
// names no file; the deflate stream after it is inflated raw. Returns the
// bytes it inflated to.
std::size_t inflate_once(const std::string& blob) {
  z_stream stream{};
  if (blob.size() < 18 || inflateInit2(&stream, -15) != Z_OK) std::exit(1);
  std::vector<unsigned char> out(64 * 1024);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(blob.data() + 10));
  stream.avail_in = static_cast<uInt>(blob.size() - 10);
  std::size_t total = 0;
  int status = Z_OK;
  while (status == Z_OK) {
    stream.next_out = out.data();
    stream.avail_out = static_cast<uInt>(out.size());
    status = inflate(&stream, Z_NO_FLUSH);
    total += out.size() - stream.avail_out;
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END) {
    std::fprintf(stderr, "bench_floor: the blob does not inflate\n");
    std::exit(1);
  }
  return total;
}

void print_list(const char* name, const std::vector<double>& values, bool last) {
  std::printf("\"%s\": [", name);
  for (std::size_t i = 0; i < values.size(); ++i) std::printf("%s%.6f", i ? ", " : "", values[i]);
  std::printf("]%s", last ? "" : ", ");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bench_floor MANIFEST_URL BLOB_URL RUNS\n");
    return 2;
  }
  const std::string manifest_url = argv[1], blob_url = argv[2];
  int runs = std::atoi(argv[3]);
  std::vector<double> total, fetching, inflating;
  std::size_t inflated = 0;
  for (int run = 0; run < runs; ++run) {
    Clock::time_point start = Clock::now();
    fluxop::net::HttpOptions options;
    options.plain_http_allowed = [](std::string_view) { return true; };
    fluxop::net::HttpClient client(std::move(options));
    fetch(client, manifest_url, "application/vnd.oci.image.manifest.v1+json");
    std::string blob = fetch(client, blob_url, nullptr);
    Clock::time_point fetched = Clock::now();
    inflated = inflate_once(blob);
    Clock::time_point end = Clock::now();
    total.push_back(seconds(end - start));
    fetching.push_back(seconds(fetched - start));
    inflating.push_back(seconds(end - fetched));
  }
  std::printf("{");
  print_list("total", total, false);
  print_list("fetch", fetching, false);
  print_list("inflate", inflating, false);
  std::printf("\"inflated_bytes\": %zu}\n", inflated);
  return 0;
}
