#include "core/report/write.h"

#include "core/duration.h"
#include "core/reason.h"
#include "core/share.h"
#include "core/ssa/engine.h"
#include "core/yaml/json.h"
#include "core/yaml/parse.h"

namespace fluxop::report {

using nlohmann::json;

namespace {

// "Reporting finished in 272ms": Go's Duration text, rounded to the
// millisecond below a second and to the second above, as the operator
// rounds it.
std::string took_text(std::chrono::nanoseconds took) {
  using std::chrono::nanoseconds;
  nanoseconds unit = took < std::chrono::seconds(1) ? nanoseconds(std::chrono::milliseconds(1))
                                                    : nanoseconds(std::chrono::seconds(1));
  return format_go_duration((took + unit / 2) / unit * unit);
}

}  // namespace

json fluxreport_crd() {
  std::vector<yaml::Node> documents = yaml::parse_documents(
      std::string(share_manifest("fluxreport-crd.yaml")), "share/manifests/fluxreport-crd.yaml");
  return yaml::to_sorted_json(documents.at(0));
}

std::vector<ssa::Change> write(kube::Cluster& cluster, const ReportSpec& spec,
                               const std::string& ns, const WriteTiming& timing) {
  std::vector<ssa::Change> changes;
  auto record = [&changes](const ssa::Change& change) { changes.push_back(change); };
  ssa::Engine engine(cluster);
  json crd = fluxreport_crd();
  kube::ObjectKey crd_key = kube::object_key(crd);
  json report = report_object(spec, ns);
  kube::ObjectKey key = kube::object_key(report);
  if (!cluster.get(crd_key)) {
    engine.apply({crd}, {std::nullopt}, record);
    // A dry run's CRD is never served: the report would be created with it.
    if (cluster.dry_run()) {
      changes.push_back({key, ssa::Action::Created});
      return changes;
    }
    engine.wait_served({crd}, "the FluxReport CRD", timing.deadline);
  }

  std::optional<json> live = cluster.get(key);
  if (live && reconcile_disabled(*live)) {
    changes.push_back({key, ssa::Action::Skipped});
    return changes;
  }
  json applied = std::move(engine.apply({report}, {live}, record).front().object);
  json condition = {
      {"type", "Ready"},
      {"status", "True"},
      {"reason", name(Reason::reconciliation_succeeded)},
      {"message", "Reporting finished in " + took_text(timing.took)},
      {"observedGeneration", applied.value("metadata", json::object()).value("generation", 0)},
      {"lastTransitionTime", timing.now}};
  cluster.apply_status(key, {{"conditions", json::array({condition})}});
  return changes;
}

}  // namespace fluxop::report
