#include "core/kustomize/images.h"

#include <doctest/doctest.h>

#include "support.h"

// Expected outputs are kubectl kustomize's (v5.5.0) for the same field and
// resources.

namespace fluxop::kustomize {
namespace {

using namespace testing;

const char* pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
  - image: nginx
    name: app
)";

// One Pod with each form of image reference, and a few that must not change.
const char* containers_pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  initContainers:
  - name: init
    image: busybox
  containers:
  - name: tagged
    image: nginx:1.25
  - name: digested
    image: nginx@sha256:1111
  - name: both
    image: nginx:1.25@sha256:1111
  - name: port
    image: localhost:5000/team/app:1
  - name: port-untagged
    image: localhost:5000/team/app
  - name: other-registry
    image: docker.io/nginx:1.25
  - name: prefix-only
    image: nginx-exporter:1
  - name: no-image
  - name: null-image
    image: null
)";

// A custom resource with a containers list.
const char* runner = R"(apiVersion: example.com/v1
kind: Runner
metadata:
  name: runner
spec:
  pool:
    containers:
    - image: nginx:1
)";

}  // namespace

TEST_CASE("split_image separates name, tag and digest") {
  auto check = [](const char* reference, const char* name, const char* tag, const char* digest) {
    ImageRef ref = split_image(reference);
    CHECK(ref.name == name);
    CHECK(ref.tag == tag);
    CHECK(ref.digest == digest);
  };
  check("nginx", "nginx", "", "");
  check("nginx:1.25", "nginx", "1.25", "");
  check("nginx@sha256:abc", "nginx", "", "sha256:abc");
  check("nginx:1.25@sha256:abc", "nginx", "1.25", "sha256:abc");
  check("localhost:5000/team/app", "localhost:5000/team/app", "", "");
  check("localhost:5000/team/app:2", "localhost:5000/team/app", "2", "");
  check("localhost:5000/app@sha256:abc", "localhost:5000/app", "", "sha256:abc");
}

TEST_CASE("images: newTag replaces tag and digest, matching whole names only") {
  check_transform(transform_images, R"(- name: nginx
  newTag: "1.27"
- name: localhost:5000/team/app
  newTag: "2.0"
)",
                  containers_pod,
                  R"(apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
  - image: nginx:1.27
    name: tagged
  - image: nginx:1.27
    name: digested
  - image: nginx:1.27
    name: both
  - image: localhost:5000/team/app:2.0
    name: port
  - image: localhost:5000/team/app:2.0
    name: port-untagged
  - image: docker.io/nginx:1.25
    name: other-registry
  - image: nginx-exporter:1
    name: prefix-only
  - name: no-image
  - image: null
    name: null-image
  initContainers:
  - image: busybox
    name: init
)");
}

TEST_CASE("images: digest replaces tag and digest, newName keeps them") {
  check_transform(transform_images, R"(- name: nginx
  digest: sha256:2222
- name: localhost:5000/team/app
  newName: registry.example.com:8443/app
- name: busybox
  newName: cgr.dev/busybox
  newTag: latest
  digest: sha256:3333
)",
                  containers_pod,
                  R"(apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
  - image: nginx@sha256:2222
    name: tagged
  - image: nginx@sha256:2222
    name: digested
  - image: nginx@sha256:2222
    name: both
  - image: registry.example.com:8443/app:1
    name: port
  - image: registry.example.com:8443/app
    name: port-untagged
  - image: docker.io/nginx:1.25
    name: other-registry
  - image: nginx-exporter:1
    name: prefix-only
  - name: no-image
  - image: null
    name: null-image
  initContainers:
  - image: cgr.dev/busybox:latest@sha256:3333
    name: init
)");
}

TEST_CASE("images: tagSuffix applies twice where kustomize's two passes overlap") {
  check_transform(transform_images, R"(- name: nginx
  tagSuffix: -debug
)",
                  std::string(runner) + "---\n" + containers_pod,
                  R"(apiVersion: example.com/v1
kind: Runner
metadata:
  name: runner
spec:
  pool:
    containers:
    - image: nginx:1-debug
---
apiVersion: v1
kind: Pod
metadata:
  name: app
spec:
  containers:
  - image: nginx:1.25-debug-debug
    name: tagged
  - image: nginx:-debug-debug
    name: digested
  - image: nginx:1.25-debug-debug
    name: both
  - image: localhost:5000/team/app:1
    name: port
  - image: localhost:5000/team/app
    name: port-untagged
  - image: docker.io/nginx:1.25
    name: other-registry
  - image: nginx-exporter:1
    name: prefix-only
  - name: no-image
  - image: null
    name: null-image
  initContainers:
  - image: busybox
    name: init
)");
}

TEST_CASE("images: every containers list outside CRDs, in every kind") {
  check_transform(transform_images, R"(- name: nginx
  newName: mirror.local/nginx
  newTag: "1.27"
)",
                  R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crd
spec:
  containers:
  - image: nginx
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
      initContainers: null
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: job
            image: nginx:old
---
apiVersion: example.com/v1
kind: Runner
metadata:
  name: runner
spec:
  image: nginx
  pool:
    containers:
    - image: nginx
)",
                  R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crd
spec:
  containers:
  - image: nginx
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - image: mirror.local/nginx:1.27
        name: web
      initContainers: []
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - image: mirror.local/nginx:1.27
            name: job
---
apiVersion: example.com/v1
kind: Runner
metadata:
  name: runner
spec:
  image: nginx
  pool:
    containers:
    - image: mirror.local/nginx:1.27
)");
}

TEST_CASE("images entries are validated") {
  check_error(transform_images, "name: nginx", pod,
              "kustomization.yaml: images: expected a sequence, found a map");
  check_error(transform_images, "- name: nginx\n  newTag: 1.10", pod,
              "kustomization.yaml: images[0].newTag: expected a string, found 1.10");
  check_error(transform_images, "- name: nginx\n  tag: x", pod,
              "kustomization.yaml: images[0]: unknown field \"tag\"");
  check_error(transform_images, "- name: \"nginx(\"\n  newTag: x", pod,
              "kustomization.yaml: images[0].name: invalid image name \"nginx(\": unbalanced "
              "parentheses");
  check_error(transform_images, "- name: nginx\n  newTag: x",
              "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - image: "
              "{name: nginx}\n",
              "kustomization.yaml: images[0]: Pod/p: containers[].image: expected a string, found "
              "a map");
  check_transform(transform_images, "", pod, pod);
}

TEST_CASE("images: names are Go regular expressions, matched in linear time") {
  check_error(transform_images, "- name: \"nginx(?=x)\"\n  newTag: x", pod,
              "kustomization.yaml: images[0].name: invalid image name \"nginx(?=x)\": invalid "
              "perl operator: (?=");
  auto pod_with = [](const std::string& image) {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  containers:\n  - image: " +
           image + "\n    name: app\n";
  };
  // Exponential for a backtracking engine.
  std::string long_image = std::string(100, 'a') + "!";
  check_transform(transform_images, "- name: (a+)+\n  newTag: x", pod_with(long_image),
                  pod_with(long_image));
  // A 1 MiB reference, searched unanchored ("*") and anchored.
  std::string huge_image(1 << 20, 'n');
  check_transform(transform_images, "- name: '*'\n  newTag: x", pod_with(huge_image),
                  pod_with(huge_image + ":x"));
  check_transform(transform_images, "- name: n.*\n  newTag: x", pod_with(huge_image),
                  pod_with(huge_image + ":x"));
}

}  // namespace fluxop::kustomize
