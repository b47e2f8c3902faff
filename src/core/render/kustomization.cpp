#include "core/render/kustomization.h"

#include <algorithm>

#include "core/kustomize/fieldspec.h"
#include "core/labels.h"

namespace fluxop::render {

using yaml::Node;

namespace {

// Every Deployment runs on Linux nodes, with the image pull secret if any.
Patch node_selector_patch(const std::string& image_pull_secret) {
  Node node_selector = Node::map();
  node_selector.set("kubernetes.io/os", Node::string("linux"));
  Node pod = Node::map();
  pod.set("nodeSelector", std::move(node_selector));
  if (!image_pull_secret.empty()) {
    Node secret = Node::map();
    secret.set("name", Node::string(image_pull_secret));
    Node secrets = Node::sequence();
    secrets.push_back(std::move(secret));
    pod.set("imagePullSecrets", std::move(secrets));
  }
  Node pod_template = Node::map();
  pod_template.set("spec", std::move(pod));
  Node metadata = Node::map();
  metadata.set("name", Node::string("all"));
  return deployment_template_patch(std::move(metadata), std::move(pod_template));
}

kustomize::ImageChange image_change(const distribution::ComponentImage& image,
                                    const kustomize::Context& context, std::size_t index) {
  return kustomize::compile_image_change({.name = "fluxcd/" + image.component,
                                          .new_name = image.repository,
                                          .new_tag = image.tag,
                                          .digest = image.digest},
                                         context, "images[" + std::to_string(index) + "]");
}

// The metadata maps of every object, created where missing.
kustomize::FieldSpecs metadata_field(const char* map) {
  return {{{}, std::string("metadata/") + map, true}};
}

}  // namespace

kustomize::Transforms instance_transforms(const instance::FluxInstance& flux,
                                          const distribution::Version& version,
                                          const std::vector<distribution::ComponentImage>& images,
                                          std::vector<Patch> patches,
                                          const kustomize::Context& context) {
  kustomize::Transforms transforms;
  transforms.patches.push_back(node_selector_patch(flux.distribution.image_pull_secret));
  for (Patch& patch : patches) transforms.patches.push_back(std::move(patch));
  for (std::size_t i = 0; i < transforms.patches.size(); ++i) {
    if (transforms.patches[i].field.empty()) {
      transforms.patches[i].field = "patches[" + std::to_string(i) + "]";
    }
  }
  transforms.ns = flux.ns;
  for (const distribution::ComponentImage& image : images) {
    transforms.images.push_back(image_change(image, context, transforms.images.size()));
  }
  // As upstream's transformer configs list them: annotations first.
  transforms.transformers.push_back({"transformers[0]",
                                     {{"kustomize.toolkit.fluxcd.io/ssa", "Ignore"},
                                      {"kustomize.toolkit.fluxcd.io/prune", "Disabled"}},
                                     metadata_field("annotations")});
  transforms.transformers.push_back({"transformers[1]",
                                     {{"app.kubernetes.io/managed-by", "flux-operator"},
                                      {"app.kubernetes.io/instance", flux.ns},
                                      {std::string(kVersionLabel), version.original},
                                      {"app.kubernetes.io/part-of", "flux"}},
                                     metadata_field("labels")});
  return transforms;
}

kustomize::Transforms roles_transforms(const std::string& ns, const distribution::Version& version,
                                       bool drop_token_permission) {
  kustomize::Transforms transforms{.ns = ns, .name_suffix = "-" + ns};
  if (drop_token_permission) {
    // The rule granting serviceaccounts/token: 11th in crd-controller up to
    // Flux 2.6, 12th after.
    const char* rule = version.major == 2 && version.minor <= 6 ? "/rules/10" : "/rules/11";
    transforms.patches.push_back(
        json_patch({.kind = "ClusterRole", .name = "crd-controller"}, {remove(rule)}));
    transforms.patches.back().field = "roles patches[0]";
  }
  return transforms;
}

std::vector<Patch> user_patches(const std::vector<instance::Patch>& patches,
                                const kustomize::Context& context) {
  std::vector<Patch> compiled;
  for (const instance::Patch& patch : patches) {
    std::string field = ".spec.kustomize.patches[" + std::to_string(compiled.size()) + "]";
    std::optional<kustomize::Target> target;
    if (patch.target) {
      const instance::PatchTarget& t = *patch.target;
      target = kustomize::make_target({.group = t.group,
                                       .version = t.version,
                                       .kind = t.kind,
                                       .name = t.name,
                                       .ns = t.ns,
                                       .label_selector = t.label_selector,
                                       .annotation_selector = t.annotation_selector},
                                      context, field + ".target");
    }
    std::string_view text = patch.patch;
    text.remove_prefix(std::min(text.size(), text.find_first_not_of(" \t\r\n")));
    if (text.empty()) context.fail(field + ".patch", "must not be empty");
    compiled.push_back(
        kustomize::read_patch(field, text, field + ".patch", std::move(target), context));
  }
  return compiled;
}

}  // namespace fluxop::render
