// One render of a FluxInstance shared by the clusters of a fleet: the
// distribution is pulled and the instance rendered once, whatever the number
// of clusters, by the first cluster's thread to ask; the others wait for it.
#pragma once

#include <exception>
#include <functional>
#include <mutex>
#include <optional>

#include "core/reconcile/pipeline.h"

namespace fluxop::reconcile {

class SharedRender {
 public:
  // `rendered` hears of the one render when it succeeds (say, which
  // distribution it used).
  SharedRender(ArtifactPort& artifacts, instance::FluxInstance flux, RenderRequest request,
               std::function<void(const RenderedInstance&)> rendered = {});

  // The render, or its error thrown again. `cluster` is the asking
  // cluster's, for the instance's pull secret: when reading it fails, that
  // is the cluster's failure, not the render's, and the next cluster to ask
  // tries again with its own.
  const RenderedInstance& get(const std::function<kube::Cluster&()>& cluster);

 private:
  std::mutex mutex_;
  ArtifactPort& artifacts_;
  instance::FluxInstance flux_;
  RenderRequest request_;
  std::function<void(const RenderedInstance&)> on_rendered_;
  std::optional<RenderedInstance> rendered_;
  std::exception_ptr failure_;
};

}  // namespace fluxop::reconcile
