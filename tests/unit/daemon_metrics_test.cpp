#include "core/daemon/metrics.h"

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using fluxop::Reason;
using fluxop::daemon::InstanceInfo;
using fluxop::daemon::Metrics;

namespace {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;  // values unescaped
  std::string value;
};

// A rendering parsed back, strictly: every line a HELP, a TYPE (one each per
// family, HELP first, before its samples) or a sample of the family typed last.
struct Exposition {
  std::map<std::string, std::string> types;
  std::vector<Sample> samples;

  std::vector<Sample> named(const std::string& name) const {
    std::vector<Sample> found;
    for (const Sample& sample : samples) {
      if (sample.name == name) found.push_back(sample);
    }
    return found;
  }
  // The value of the one sample with this name and these labels.
  std::string value(const std::string& name,
                    const std::map<std::string, std::string>& labels) const {
    std::string value;
    int matches = 0;
    for (const Sample& sample : samples) {
      if (sample.name == name && sample.labels == labels) {
        value = sample.value;
        ++matches;
      }
    }
    if (matches != 1) throw std::runtime_error(name + ": " + std::to_string(matches) + " matches");
    return value;
  }
};

// The label values between the braces of `line` from `at`; `at` ends after the '}'.
std::map<std::string, std::string> parse_labels(const std::string& line, std::size_t& at) {
  std::map<std::string, std::string> labels;
  ++at;  // '{'
  while (line.at(at) != '}') {
    std::size_t equals = line.find("=\"", at);
    if (equals == std::string::npos) throw std::runtime_error("no label value: " + line);
    std::string name = line.substr(at, equals - at);
    std::string value;
    at = equals + 2;
    while (line.at(at) != '"') {
      if (line[at] == '\\') {
        char escaped = line.at(++at);
        if (escaped == 'n') {
          value += '\n';
        } else if (escaped == '\\' || escaped == '"') {
          value += escaped;
        } else {
          throw std::runtime_error("bad escape: " + line);
        }
      } else {
        value += line[at];
      }
      ++at;
    }
    ++at;  // '"'
    if (line.at(at) == ',') ++at;
    if (!labels.emplace(name, value).second) throw std::runtime_error("label twice: " + line);
  }
  ++at;  // '}'
  return labels;
}

Exposition parse(const std::string& text) {
  REQUIRE(!text.empty());
  REQUIRE(text.back() == '\n');
  Exposition parsed;
  std::set<std::string> helped;
  std::string family;  // typed last
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      if (!helped.insert(name).second) throw std::runtime_error("HELP twice: " + line);
      if (line.size() <= 8 + name.size()) throw std::runtime_error("no help text: " + line);
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::size_t space = line.find(' ', 7);
      family = line.substr(7, space - 7);
      if (!helped.count(family)) throw std::runtime_error("TYPE before HELP: " + line);
      if (!parsed.types.emplace(family, line.substr(space + 1)).second) {
        throw std::runtime_error("TYPE twice: " + line);
      }
      continue;
    }
    Sample sample;
    std::size_t at = line.find_first_of("{ ");
    sample.name = line.substr(0, at);
    if (line.at(at) == '{') sample.labels = parse_labels(line, at);
    if (line.at(at) != ' ') throw std::runtime_error("no value: " + line);
    sample.value = line.substr(at + 1);
    bool histogram = parsed.types[family] == "histogram";
    bool in_family = sample.name == family || (histogram && (sample.name == family + "_bucket" ||
                                                             sample.name == family + "_sum" ||
                                                             sample.name == family + "_count"));
    if (!in_family) throw std::runtime_error("sample outside its family: " + line);
    parsed.samples.push_back(sample);
  }
  return parsed;
}

InstanceInfo flux_instance() {
  InstanceInfo info;
  info.uid = "16ca7202-9319-445b-99d0-617c25bda182";
  info.name = "flux";
  info.ns = "flux-system";
  info.ready = "True";
  info.reason = Reason::reconciliation_succeeded;
  info.registry = "ghcr.io/fluxcd";
  info.revision = "v2.3.0@sha256:75aa209c6a2e25b97114ccf092246d02ab4363bc136edefc239d2a88da882b63";
  return info;
}

const std::map<std::string, std::string> kController{{"controller", "fluxinstance"}};

}  // namespace

TEST_CASE("daemon metrics: families, types and the reconcile counters before any reconcile") {
  Metrics metrics;
  Exposition parsed = parse(metrics.render());
  CHECK(parsed.types == std::map<std::string, std::string>{
                            {"controller_runtime_reconcile_errors_total", "counter"},
                            {"controller_runtime_reconcile_total", "counter"},
                            {"process_cpu_seconds_total", "counter"},
                            {"process_max_fds", "gauge"},
                            {"process_open_fds", "gauge"},
                            {"process_resident_memory_bytes", "gauge"},
                            {"process_start_time_seconds", "gauge"},
                            {"process_virtual_memory_bytes", "gauge"},
                            {"process_virtual_memory_max_bytes", "gauge"},
                        });
  CHECK(parsed.value("controller_runtime_reconcile_errors_total", kController) == "0");
  for (const char* result : {"error", "requeue", "requeue_after", "success"}) {
    CAPTURE(result);
    CHECK(parsed.value("controller_runtime_reconcile_total",
                       {{"controller", "fluxinstance"}, {"result", result}}) == "0");
  }
  CHECK(parsed.named("controller_runtime_reconcile_total").size() == 4);
  // No histogram until the first reconcile, as controller-runtime.
  CHECK(parsed.named("controller_runtime_reconcile_time_seconds_count").empty());
}

TEST_CASE("daemon metrics: flux_instance_info with upstream's labels, replaced and cleared") {
  Metrics metrics;
  metrics.set_instance(flux_instance());
  std::string text = metrics.render();
  // Labels in name order, as Prometheus' Go client writes them.
  CHECK(text.find("flux_instance_info{exported_namespace=\"flux-system\",kind=\"FluxInstance\","
                  "name=\"flux\",ready=\"True\",reason=\"ReconciliationSucceeded\","
                  "registry=\"ghcr.io/fluxcd\",revision=\"v2.3.0@sha256:75aa209c6a2e25b97114ccf0"
                  "92246d02ab4363bc136edefc239d2a88da882b63\",suspended=\"False\","
                  "uid=\"16ca7202-9319-445b-99d0-617c25bda182\"} 1\n") != std::string::npos);
  Exposition parsed = parse(text);
  CHECK(parsed.types["flux_instance_info"] == "gauge");
  REQUIRE(parsed.named("flux_instance_info").size() == 1);

  InstanceInfo failing = flux_instance();
  failing.ready = "False";
  failing.reason = Reason::build_failed;
  failing.suspended = true;
  failing.registry = "registry.example.com/\"mirror\"\\flux\nnext";
  metrics.set_instance(failing);
  text = metrics.render();
  CHECK(text.find("registry=\"registry.example.com/\\\"mirror\\\"\\\\flux\\nnext\"") !=
        std::string::npos);
  parsed = parse(text);
  std::vector<Sample> info = parsed.named("flux_instance_info");
  REQUIRE(info.size() == 1);
  CHECK(info[0].value == "1");
  CHECK(info[0].labels == std::map<std::string, std::string>{
                              {"exported_namespace", "flux-system"},
                              {"kind", "FluxInstance"},
                              {"name", "flux"},
                              {"ready", "False"},
                              {"reason", "BuildFailed"},
                              {"registry", failing.registry},
                              {"revision", failing.revision},
                              {"suspended", "True"},
                              {"uid", failing.uid},
                          });

  metrics.clear_instance();
  text = metrics.render();
  CHECK(text.find("flux_instance_info") == std::string::npos);
  CHECK(parse(text).types.count("flux_instance_info") == 0);
}

TEST_CASE("daemon metrics: flux_resource_info for each resource of the report, replaced") {
  Metrics metrics;
  CHECK(metrics.render().find("flux_resource_info") == std::string::npos);
  auto resource = [](std::string kind, std::string name, std::string ready) {
    fluxop::report::FluxResource resource;
    resource.uid = "uid-" + name;
    resource.kind = std::move(kind);
    resource.name = std::move(name);
    resource.ns = "apps";
    resource.ready = std::move(ready);
    return resource;
  };
  metrics.set_resources({resource("Kustomization", "b", "True"),
                         resource("GitRepository", "a", "False"),
                         resource("GitRepository", "c", "True")});
  std::string text = metrics.render();
  Exposition parsed = parse(text);
  CHECK(parsed.types["flux_resource_info"] == "gauge");
  std::vector<Sample> info = parsed.named("flux_resource_info");
  REQUIRE(info.size() == 3);
  // Sorted by the values of the labels in name order (exported_namespace,
  // kind, name, ...), as the Go client sorts them.
  CHECK(info[0].labels == fluxop::report::resource_labels(resource("GitRepository", "a", "False")));
  CHECK(info[1].labels.at("name") == "c");
  CHECK(info[2].labels.at("kind") == "Kustomization");
  CHECK(text.find("flux_resource_info{exported_namespace=\"apps\",kind=\"GitRepository\","
                  "name=\"a\",path=\"\",ready=\"False\",reason=\"\",ref=\"\",revision=\"\","
                  "source_name=\"\",suspended=\"False\",uid=\"uid-a\",url=\"\"} 1\n") !=
        std::string::npos);

  metrics.set_resources({resource("Bucket", "d", "True")});
  REQUIRE(parse(metrics.render()).named("flux_resource_info").size() == 1);
  metrics.set_resources({});
  CHECK(metrics.render().find("flux_resource_info") == std::string::npos);
}

TEST_CASE("daemon metrics: reconciles counted by result, their durations in cumulative buckets") {
  Metrics metrics;
  using seconds = std::chrono::duration<double>;
  metrics.observe_reconcile("success", seconds(0.003));
  metrics.observe_reconcile("error", seconds(0.2));  // on a bound: counted in it
  metrics.observe_reconcile("success", std::chrono::milliseconds(200));
  metrics.observe_reconcile("error", seconds(100));  // above every bound
  metrics.observe_reconcile("requeue_after", seconds(1.5));
  CHECK_THROWS_AS(metrics.observe_reconcile("ok", seconds(1)), std::invalid_argument);

  Exposition parsed = parse(metrics.render());
  CHECK(parsed.types["controller_runtime_reconcile_time_seconds"] == "histogram");
  auto total = [&](const char* result) {
    return parsed.value("controller_runtime_reconcile_total",
                        {{"controller", "fluxinstance"}, {"result", result}});
  };
  CHECK(total("success") == "2");
  CHECK(total("error") == "2");
  CHECK(total("requeue_after") == "1");
  CHECK(total("requeue") == "0");
  CHECK(parsed.value("controller_runtime_reconcile_errors_total", kController) == "2");

  // controller-runtime's buckets, in order, written as the Go client writes them.
  std::vector<std::string> bounds;
  std::map<std::string, std::string> counts;
  for (const Sample& bucket : parsed.named("controller_runtime_reconcile_time_seconds_bucket")) {
    CHECK(bucket.labels.size() == 2);
    CHECK(bucket.labels.at("controller") == "fluxinstance");
    bounds.push_back(bucket.labels.at("le"));
    counts[bucket.labels.at("le")] = bucket.value;
  }
  CHECK(bounds == std::vector<std::string>{"0.005", "0.01", "0.025", "0.05", "0.1",  "0.15", "0.2",
                                           "0.25",  "0.3",  "0.35",  "0.4",  "0.45", "0.5",  "0.6",
                                           "0.7",   "0.8",  "0.9",   "1",    "1.25", "1.5",  "1.75",
                                           "2",     "2.5",  "3",     "3.5",  "4",    "4.5",  "5",
                                           "6",     "7",    "8",     "9",    "10",   "15",   "20",
                                           "25",    "30",   "40",    "50",   "60",   "+Inf"});
  CHECK(counts["0.005"] == "1");
  CHECK(counts["0.15"] == "1");
  CHECK(counts["0.2"] == "3");
  CHECK(counts["1.25"] == "3");
  CHECK(counts["1.5"] == "4");
  CHECK(counts["60"] == "4");
  CHECK(counts["+Inf"] == "5");
  double previous = 0;
  for (const std::string& bound : bounds) {
    double count = std::stod(counts[bound]);
    CHECK(count >= previous);
    previous = count;
  }
  CHECK(parsed.value("controller_runtime_reconcile_time_seconds_count", kController) == "5");
  CHECK(parsed.value("controller_runtime_reconcile_time_seconds_sum", kController) == "101.903");
}

TEST_CASE("daemon metrics: values written as Prometheus' Go client writes them") {
  // strconv.FormatFloat(value, 'g', -1, 64): exponents below -4 and from 6 on
  // in scientific notation.
  for (const auto& example : std::vector<std::pair<double, std::string>>{{1234567, "1.234567e+06"},
                                                                         {1e6, "1e+06"},
                                                                         {123456.5, "123456.5"},
                                                                         {0.0001, "0.0001"},
                                                                         {0.00001, "1e-05"},
                                                                         {12, "12"}}) {
    CAPTURE(example.second);
    Metrics metrics;
    metrics.observe_reconcile("success", std::chrono::duration<double>(example.first));
    CHECK(parse(metrics.render())
              .value("controller_runtime_reconcile_time_seconds_sum", kController) ==
          example.second);
  }
}

TEST_CASE("daemon metrics: the process collector's metrics describe this process") {
  Metrics metrics;
  Exposition parsed = parse(metrics.render());
  auto number = [&](const char* name) { return std::stod(parsed.value(name, {})); };
  CHECK(number("process_cpu_seconds_total") >= 0);
  CHECK(number("process_open_fds") >= 3);  // stdin, stdout, stderr
  CHECK(number("process_max_fds") >= number("process_open_fds"));
  CHECK(number("process_resident_memory_bytes") > 0);
  CHECK(number("process_virtual_memory_bytes") >= number("process_resident_memory_bytes"));
  CHECK(number("process_virtual_memory_max_bytes") > 0);
  double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  double started = number("process_start_time_seconds");
  CHECK(started <= now + 1);
  CHECK(started > now - 24 * 3600);
}

TEST_CASE("daemon metrics: written by one thread while another renders") {
  Metrics metrics;
  constexpr int kReconciles = 2000;
  std::thread writer([&] {
    for (int i = 0; i < kReconciles; ++i) {
      metrics.observe_reconcile(i % 2 ? "error" : "success", std::chrono::milliseconds(i % 100));
      InstanceInfo info = flux_instance();
      info.revision = "v2.3." + std::to_string(i);
      metrics.set_instance(info);
    }
  });
  for (int i = 0; i < 50; ++i) parse(metrics.render());
  writer.join();
  Exposition parsed = parse(metrics.render());
  CHECK(parsed.value("controller_runtime_reconcile_time_seconds_count", kController) == "2000");
  REQUIRE(parsed.named("flux_instance_info").size() == 1);
  CHECK(parsed.named("flux_instance_info")[0].labels.at("revision") == "v2.3.1999");
}
