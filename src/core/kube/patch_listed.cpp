#include "core/kube/patch_listed.h"

#include <string>

namespace fluxop::kube {

using nlohmann::json;

namespace {

// A batch is a page of the lists (kListPageItems): sent once it is read.
constexpr std::size_t kBatch = 500;
constexpr int kAttempts = 3;
// The failures an error names; the rest are counted.
constexpr std::size_t kFailuresNamed = 5;

bool moved(const ApiError& e) { return e.status() == 409 || e.status() == 422; }

using PatchFor = std::function<std::optional<ObjectPatch>(const json& object)>;

// Whether the object was patched in the end: a patch refused because it
// moved is made again from it read again; false when it is gone or needs
// nothing any more. Throws what the server refused otherwise.
bool settle(Cluster& cluster, const ObjectKey& key, const PatchFor& patch_for,
            std::exception_ptr error) {
  for (int attempt = 1; error; ++attempt) {
    try {
      std::rethrow_exception(error);
    } catch (const ApiError& e) {
      if (e.status() == 404) return false;  // gone, its kind too
      if (!moved(e) || attempt == kAttempts) throw;
    }
    std::optional<json> again = cluster.get(key);
    if (!again) return false;
    std::optional<ObjectPatch> redone = patch_for(*again);
    if (!redone) return false;
    error = cluster.patch_all({*redone}).front().error;
  }
  return true;
}

class ListPatcher {
 public:
  ListPatcher(Cluster& cluster, const ListedPatches& work)
      : cluster_(cluster), work_(work), patched_(work.queries.size()) {}

  std::vector<int> run() {
    cluster_.list_each(work_.queries, [this](std::size_t query, json&& object) {
      std::optional<ObjectPatch> patch = work_.patch_for(query, object);
      if (!patch) return;
      batch_.push_back(std::move(*patch));
      batch_queries_.push_back(query);
      if (batch_.size() == kBatch) send();
    });
    send();
    return patched_;
  }

 private:
  void send() {
    if (batch_.empty()) return;
    if (work_.before_batch) work_.before_batch();
    std::vector<WriteResult> results = cluster_.patch_all(batch_);
    std::vector<std::string> failures;
    for (std::size_t i = 0; i < results.size(); ++i) {
      try {
        std::size_t query = batch_queries_[i];
        PatchFor again = [&](const json& object) { return work_.patch_for(query, object); };
        if (settle(cluster_, batch_[i].key, again, results[i].error)) ++patched_[query];
      } catch (const Error& e) {
        failures.push_back(e.what());
      }
    }
    batch_.clear();
    batch_queries_.clear();
    if (failures.empty()) return;
    std::string message = std::to_string(failures.size()) +
                          (failures.size() == 1 ? " object" : " objects") + " not patched: ";
    for (std::size_t i = 0; i < failures.size() && i < kFailuresNamed; ++i) {
      message += (i == 0 ? "" : "; ") + failures[i];
    }
    if (failures.size() > kFailuresNamed)
      message += "; and " + std::to_string(failures.size() - kFailuresNamed) + " more";
    throw Error(message);
  }

  Cluster& cluster_;
  const ListedPatches& work_;
  std::vector<int> patched_;
  std::vector<ObjectPatch> batch_;
  std::vector<std::size_t> batch_queries_;
};

}  // namespace

std::vector<int> patch_listed(Cluster& cluster, const ListedPatches& work) {
  return ListPatcher(cluster, work).run();
}

bool patch_one(Cluster& cluster, const json& live, const PatchFor& patch_for) {
  std::optional<ObjectPatch> patch = patch_for(live);
  if (!patch) return true;
  return settle(cluster, patch->key, patch_for, cluster.patch_all({*patch}).front().error);
}

}  // namespace fluxop::kube
