#include "cli/examples.h"

#include <array>
#include <utility>

namespace fluxop::cli {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 23> kExamples{{
    {"version",
     "  # fluxopctl's version, the cluster's Kubernetes version and its Flux version\n"
     "  fluxopctl version\n"
     "  # only fluxopctl's, as JSON\n"
     "  fluxopctl version --client -o json"},
    {"kustomize",
     "  # render a kustomization directory, as kubectl kustomize does\n"
     "  fluxopctl kustomize overlay/"},
    {"build",
     "  # render the installation an instance describes, from the cached distribution\n"
     "  fluxopctl build instance.yaml --offline\n"
     "  # from a distribution artifact, a file per object\n"
     "  fluxopctl build instance.yaml --distribution-artifact "
     "oci://ghcr.io/controlplaneio-fluxcd/flux-operator-manifests:latest --output-dir out/"},
    {"pull",
     "  # the default distribution artifact into the cache\n"
     "  fluxopctl pull\n"
     "  # what the cache holds; entries unused for 30 days removed\n"
     "  fluxopctl pull --list\n"
     "  fluxopctl pull --prune --older-than 720h"},
    {"push",
     "  # a distribution directory published as the operator's manifests artifact\n"
     "  fluxopctl push flux-distribution/ "
     "oci://registry.example.com/flux/flux-operator-manifests:v2.9.4"},
    {"images",
     "  # the images an instance installs, by digest\n"
     "  fluxopctl images instance.yaml\n"
     "  # those of a version range, as JSON\n"
     "  fluxopctl images --version 2.9.x -o json"},
    {"mirror",
     "  # the artifact and every image copied to a registry of your own\n"
     "  fluxopctl mirror oci://mirror.example.com/flux instance.yaml > mirror.yaml\n"
     "  # what would be copied\n"
     "  fluxopctl mirror oci://mirror.example.com/flux instance.yaml --dry-run"},
    {"apply",
     "  # install or upgrade, and wait until Flux is ready\n"
     "  fluxopctl apply instance.yaml --timeout 5m\n"
     "  # what the API server would do, writing nothing\n"
     "  fluxopctl apply instance.yaml --dry-run=server\n"
     "  # keep the instance in the cluster reconciled, as the operator does\n"
     "  fluxopctl apply --watch --from-cluster -n flux-system"},
    {"diff",
     "  # what apply would change (exit 1 when something would)\n"
     "  fluxopctl diff instance.yaml\n"
     "  # the summary only, or each object's action as JSON\n"
     "  fluxopctl diff instance.yaml --summary\n"
     "  fluxopctl diff instance.yaml -o json"},
    {"check",
     "  # what would stop an apply, writing nothing\n"
     "  fluxopctl check instance.yaml\n"
     "  fluxopctl check instance.yaml -o json"},
    {"delete",
     "  # what the uninstall would remove\n"
     "  fluxopctl delete -n flux-system --dry-run=server\n"
     "  # uninstall without asking, keeping the CRDs and the custom resources\n"
     "  fluxopctl delete -n flux-system --yes --keep-crds"},
    {"get",
     "  # the instance in flux-system at a glance\n"
     "  fluxopctl get\n"
     "  # every instance, with the digests\n"
     "  fluxopctl get -A -o wide"},
    {"tree",
     "  # what the sync applied, and what that applied in turn, each object's readiness\n"
     "  fluxopctl tree kustomization/flux-system -n flux-system\n"
     "  # the upstream CLI's spelling, as JSON\n"
     "  fluxopctl tree hr podinfo -n apps -o json"},
    {"wait",
     "  # until the instance is ready, or why not\n"
     "  fluxopctl wait -n flux-system --timeout 5m"},
    {"reconcile",
     "  # a reconciliation requested, and awaited\n"
     "  fluxopctl reconcile -n flux-system"},
    {"suspend",
     "  # the operator and the daemon pause this instance\n"
     "  fluxopctl suspend -n flux-system"},
    {"resume",
     "  # resumed, a reconciliation requested and awaited\n"
     "  fluxopctl resume -n flux-system"},
    {"report",
     "  # the FluxReport, as tables\n"
     "  fluxopctl report\n"
     "  # stored in the cluster as the FluxReport flux\n"
     "  fluxopctl report --write"},
    {"export",
     "  # the upstream CLI's spelling of report -o yaml\n"
     "  fluxopctl export report"},
    {"verify",
     "  # the distribution artifact and every image an instance installs\n"
     "  fluxopctl verify instance.yaml\n"
     "  # an image signed with a key\n"
     "  fluxopctl verify --key cosign.pub registry.example.com/app:v1\n"
     "  # a file against its Sigstore bundle\n"
     "  fluxopctl verify bundle --bundle file.sigstore.json --key cosign.pub file"},
    {"create",
     "  # a Git token as the basic-auth Secret a sync names\n"
     "  echo \"$GITHUB_TOKEN\" | fluxopctl create secret basic-auth git-auth --username flux "
     "--password-stdin"},
    {"adopt",
     "  # the FluxInstance of a flux bootstrap directory\n"
     "  fluxopctl adopt clusters/my-cluster/flux-system > flux-instance.yaml\n"
     "  # of the installation running in the cluster\n"
     "  fluxopctl adopt --from-cluster -n flux-system"},
    {"completion",
     "  # bash completion in every new shell\n"
     "  source <(fluxopctl completion bash)"},
}};

}  // namespace

std::string_view command_examples(std::string_view command) {
  for (const auto& [name, examples] : kExamples)
    if (name == command) return examples;
  return {};
}

}  // namespace fluxop::cli
