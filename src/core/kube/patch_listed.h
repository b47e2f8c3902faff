// Thousands of objects patched as their lists are read: the storage-version
// migration and delete's finalizer removal. Each page's patches go together
// (Cluster::patch_all, several in flight), so that the time is the server's
// write rate, not one round trip per object; memory holds a batch, not the
// lists.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/kube/cluster.h"

namespace fluxop::kube {

struct ListedPatches {
  std::vector<ListQuery> queries;
  // The patch of an object of queries[query]; nullopt when it needs none.
  // Asked again with the object read again when its patch was refused
  // because the object moved meanwhile (409 Conflict, or 422 for a `test`
  // that failed).
  std::function<std::optional<ObjectPatch>(std::size_t query, const nlohmann::json& object)>
      patch_for;
  // Before each batch is sent (an interruption seen, a lock renewed).
  std::function<void()> before_batch;
};

// Patches the listed objects; returns how many were patched for each query
// (an object gone meanwhile, or needing nothing once read again, is not
// counted). A patch refused because the object moved is made again from the
// object read again, at most three times in all. The failures of a batch
// are thrown together once every other patch of it is done, naming each
// object (a few, then how many more): none is silent, and no later batch is
// written.
std::vector<int> patch_listed(Cluster& cluster, const ListedPatches& work);

// One object patched as patch_listed patches each, from `live` as read:
// true when it needs nothing or was patched, false when it is gone; throws
// what the server refused.
bool patch_one(Cluster& cluster, const nlohmann::json& live,
               const std::function<std::optional<ObjectPatch>(const nlohmann::json&)>& patch_for);

}  // namespace fluxop::kube
