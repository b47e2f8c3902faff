#include "core/render/generated.h"

#include "core/duration.h"

namespace fluxop::render {

namespace {

// The source API version a Flux release serves OCIRepository and Bucket at.
std::string source_api_version(const distribution::Version& version) {
  bool v1 = version.major > 2 || (version.major == 2 && version.minor >= 6);
  return v1 ? "source.toolkit.fluxcd.io/v1" : "source.toolkit.fluxcd.io/v1beta2";
}

std::string sync_source(const instance::FluxInstance& flux, const distribution::Version& version) {
  const instance::Sync& sync = *flux.sync;
  std::string api_version =
      sync.kind == "GitRepository" ? "source.toolkit.fluxcd.io/v1" : source_api_version(version);
  std::string text = "apiVersion: " + api_version + "\nkind: " + sync.kind +
                     "\nmetadata:\n  name: " + sync.name + "\n  namespace: " + flux.ns +
                     "\nspec:\n  interval: " + format_go_duration(sync.interval) + "\n";
  if (sync.kind == "GitRepository") text += "  ref:\n    name: " + sync.ref + "\n";
  if (sync.kind == "OCIRepository") text += "  ref:\n    tag: " + sync.ref + "\n";
  if (sync.kind == "Bucket") text += "  bucketName: " + sync.ref + "\n";
  if (!sync.pull_secret.empty()) text += "  secretRef:\n    name: " + sync.pull_secret + "\n";
  if (!sync.provider.empty()) text += "  provider: " + sync.provider + "\n";
  text += (sync.kind == "Bucket" ? "  endpoint: " : "  url: ") + sync.url + "\n";
  return text;
}

}  // namespace

std::string namespace_manifest(const std::string& ns) {
  return "apiVersion: v1\n"
         "kind: Namespace\n"
         "metadata:\n"
         "  name: " +
         ns +
         "\n"
         "  annotations:\n"
         "    fluxcd.controlplane.io/prune: disabled\n"
         "  labels:\n"
         "    pod-security.kubernetes.io/warn: restricted\n"
         "    pod-security.kubernetes.io/warn-version: latest\n";
}

std::string storage_claim(const instance::Storage& storage) {
  return "apiVersion: v1\n"
         "kind: PersistentVolumeClaim\n"
         "metadata:\n"
         "  name: source-controller\n"
         "spec:\n"
         "  accessModes: [ReadWriteOnce]\n"
         "  storageClassName: " +
         storage.storage_class + "\n  resources:\n    requests:\n      storage: " + storage.size +
         "\n";
}

std::string sync_manifests(const instance::FluxInstance& flux,
                           const distribution::Version& version) {
  const instance::Sync& sync = *flux.sync;
  return sync_source(flux, version) +
         "---\n"
         "apiVersion: kustomize.toolkit.fluxcd.io/v1\n"
         "kind: Kustomization\n"
         "metadata:\n"
         "  name: " +
         sync.name + "\n  namespace: " + flux.ns +
         "\nspec:\n"
         "  interval: 10m0s\n"
         "  path: " +
         sync.path +
         "\n"
         "  prune: true\n"
         "  sourceRef:\n"
         "    kind: " +
         sync.kind + "\n    name: " + sync.name + "\n";
}

}  // namespace fluxop::render
