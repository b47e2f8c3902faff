#include "core/reconcile/shared_render.h"

namespace fluxop::reconcile {

SharedRender::SharedRender(ArtifactPort& artifacts, instance::FluxInstance flux,
                           RenderRequest request,
                           std::function<void(const RenderedInstance&)> rendered)
    : artifacts_(artifacts),
      flux_(std::move(flux)),
      request_(std::move(request)),
      on_rendered_(std::move(rendered)) {}

const RenderedInstance& SharedRender::get(const std::function<kube::Cluster&()>& cluster) {
  std::lock_guard lock(mutex_);
  if (rendered_) return *rendered_;
  if (failure_) std::rethrow_exception(failure_);
  bool secret_failed = false;
  RegistryCredentials from_cluster = artifact_credentials(flux_, cluster);
  RegistryCredentials credentials;
  if (from_cluster) {
    credentials = [&](std::string_view registry) {
      try {
        return from_cluster(registry);
      } catch (...) {
        secret_failed = true;
        throw;
      }
    };
  }
  try {
    rendered_ = render_instance(artifacts_, flux_, request_, credentials);
  } catch (...) {
    if (!secret_failed) failure_ = std::current_exception();
    throw;
  }
  if (on_rendered_) on_rendered_(*rendered_);
  return *rendered_;
}

}  // namespace fluxop::reconcile
