#include "core/render/kustomization.h"

#include "core/render/patch.h"

namespace fluxop::render {

using yaml::Node;

namespace {

Node header(const std::string& ns) {
  Node kustomization = Node::map();
  kustomization.set("apiVersion", Node::string("kustomize.config.k8s.io/v1beta1"));
  kustomization.set("kind", Node::string("Kustomization"));
  kustomization.set("namespace", Node::string(ns));
  return kustomization;
}

Node strings(const std::vector<std::string>& values) {
  Node list = Node::sequence();
  for (const std::string& value : values) list.push_back(Node::string(value));
  return list;
}

Node image_entry(const distribution::ComponentImage& image) {
  Node entry = Node::map();
  entry.set("name", Node::string("fluxcd/" + image.component));
  entry.set("newName", Node::string(image.repository));
  entry.set("newTag", Node::string(image.tag));
  if (!image.digest.empty()) entry.set("digest", Node::string(image.digest));
  return entry;
}

void set_if(Node& map, const char* key, const std::string& value) {
  if (!value.empty()) map.set(key, Node::string(value));
}

}  // namespace

Node instance_kustomization(const std::string& ns, const std::vector<std::string>& components,
                            const Layout& layout,
                            const std::vector<distribution::ComponentImage>& images,
                            const std::vector<Node>& patches) {
  std::vector<std::string> resources = {"namespace.yaml"};
  if (layout.network_policy) resources.push_back("policies.yaml");
  resources.push_back("roles");
  for (const std::string& component : components) resources.push_back(component + ".yaml");
  resources.insert(resources.end(), layout.shards.begin(), layout.shards.end());
  if (layout.storage) resources.push_back("pvc.yaml");
  if (layout.sync) resources.push_back("sync.yaml");

  Node image_list = Node::sequence();
  for (const distribution::ComponentImage& image : images) image_list.push_back(image_entry(image));

  Node node_selector = Node::map();
  node_selector.set("path", Node::string("node-selector.yaml"));
  Node target = Node::map();
  target.set("kind", Node::string("Deployment"));
  node_selector.set("target", std::move(target));
  Node patch_list = Node::sequence();
  patch_list.push_back(std::move(node_selector));
  for (const Node& patch : patches) patch_list.push_back(patch);

  Node kustomization = header(ns);
  kustomization.set("transformers", strings({"annotations.yaml", "labels.yaml"}));
  kustomization.set("resources", strings(resources));
  kustomization.set("images", std::move(image_list));
  kustomization.set("patches", std::move(patch_list));
  return kustomization;
}

Node roles_kustomization(const std::string& ns, const distribution::Version& version,
                         bool drop_token_permission) {
  Node kustomization = header(ns);
  kustomization.set("resources", strings({"rbac.yaml"}));
  kustomization.set("nameSuffix", Node::string("-" + ns));
  if (drop_token_permission) {
    // The rule granting serviceaccounts/token: 11th in crd-controller up to
    // Flux 2.6, 12th after.
    const char* rule = version.major == 2 && version.minor <= 6 ? "/rules/10" : "/rules/11";
    Node patches = Node::sequence();
    patches.push_back(
        json_patch({.kind = "ClusterRole", .name = "crd-controller"}, {remove(rule)}));
    kustomization.set("patches", std::move(patches));
  }
  return kustomization;
}

std::vector<Node> user_patches(const std::vector<instance::Patch>& patches) {
  std::vector<Node> entries;
  for (const instance::Patch& patch : patches) {
    Node entry = Node::map();
    set_if(entry, "patch", patch.patch);
    if (patch.target) {
      const instance::PatchTarget& t = *patch.target;
      Node target = Node::map();
      set_if(target, "group", t.group);
      set_if(target, "version", t.version);
      set_if(target, "kind", t.kind);
      set_if(target, "name", t.name);
      set_if(target, "namespace", t.ns);
      set_if(target, "labelSelector", t.label_selector);
      set_if(target, "annotationSelector", t.annotation_selector);
      entry.set("target", std::move(target));
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace fluxop::render
