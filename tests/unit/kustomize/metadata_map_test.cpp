#include "core/kustomize/metadata_map.h"

#include <doctest/doctest.h>

#include "support.h"

// Expected outputs are kubectl kustomize's (v5.5.0) for the same field and
// resources.

namespace fluxop::kustomize {
namespace {

using namespace testing;

const char* config_map = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: config
)";

// A Deployment, whose pod template and selector kustomize knows, and a
// custom resource with a selector it does not know.
const std::string deployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx
)";
const std::string widget = R"(apiVersion: example.com/v1
kind: Widget
metadata:
  name: gadget
spec:
  selector:
    app: web
)";
const std::string deployment_and_widget = deployment + "---\n" + widget;

// A StatefulSet outside the apps group, which kustomize treats by kind alone.
const char* foreign_stateful_set = R"(apiVersion: other.io/v1
kind: StatefulSet
metadata:
  name: foreign
spec:
  template: {}
)";

}  // namespace

TEST_CASE("commonLabels go to metadata, templates and the selectors kustomize knows") {
  check_transform(transform_common_labels, R"(team: platform
tier: "1"
)",
                  R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: config
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  template:
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels:
                app: web
            topologyKey: kubernetes.io/hostname
      containers:
      - name: web
        image: nginx
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  selector:
    matchLabels:
      app: db
  volumeClaimTemplates:
  - metadata:
      name: data
  - spec: {}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  jobTemplate:
    spec:
      template:
        spec: {}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  template:
    metadata:
      labels:
        app: once
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: deny
spec:
  podSelector: {}
  ingress:
  - from:
    - podSelector:
        matchLabels:
          role: frontend
    - namespaceSelector: {}
)",
                  R"(apiVersion: v1
kind: ConfigMap
metadata:
  labels:
    team: platform
    tier: "1"
  name: config
---
apiVersion: v1
kind: Service
metadata:
  labels:
    team: platform
    tier: "1"
  name: web
spec:
  ports:
  - port: 80
  selector:
    team: platform
    tier: "1"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: web
    team: platform
    tier: "1"
  name: web
spec:
  selector:
    matchLabels:
      team: platform
      tier: "1"
  template:
    metadata:
      labels:
        team: platform
        tier: "1"
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels:
                app: web
                team: platform
                tier: "1"
            topologyKey: kubernetes.io/hostname
      containers:
      - image: nginx
        name: web
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  labels:
    team: platform
    tier: "1"
  name: db
spec:
  selector:
    matchLabels:
      app: db
      team: platform
      tier: "1"
  template:
    metadata:
      labels:
        team: platform
        tier: "1"
  volumeClaimTemplates:
  - metadata:
      labels:
        team: platform
        tier: "1"
      name: data
  - metadata:
      labels:
        team: platform
        tier: "1"
    spec: {}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  labels:
    team: platform
    tier: "1"
  name: nightly
spec:
  jobTemplate:
    metadata:
      labels:
        team: platform
        tier: "1"
    spec:
      template:
        metadata:
          labels:
            team: platform
            tier: "1"
        spec: {}
---
apiVersion: batch/v1
kind: Job
metadata:
  labels:
    team: platform
    tier: "1"
  name: once
spec:
  template:
    metadata:
      labels:
        app: once
        team: platform
        tier: "1"
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  labels:
    team: platform
    tier: "1"
  name: deny
spec:
  ingress:
  - from:
    - podSelector:
        matchLabels:
          role: frontend
          team: platform
          tier: "1"
    - namespaceSelector: {}
  podSelector: {}
)");
}

TEST_CASE("labels without options go to metadata only") {
  check_transform(transform_labels, R"(- pairs:
    team: platform
)",
                  deployment_and_widget,
                  R"(apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    team: platform
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - image: nginx
        name: web
---
apiVersion: example.com/v1
kind: Widget
metadata:
  labels:
    team: platform
  name: gadget
spec:
  selector:
    app: web
)");
}

TEST_CASE("labels with includeTemplates also go to pod templates") {
  check_transform(transform_labels, R"(- pairs:
    team: platform
  includeTemplates: true
)",
                  deployment_and_widget,
                  R"(apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    team: platform
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
        team: platform
    spec:
      containers:
      - image: nginx
        name: web
---
apiVersion: example.com/v1
kind: Widget
metadata:
  labels:
    team: platform
  name: gadget
spec:
  selector:
    app: web
)");
}

TEST_CASE("labels with includeSelectors go where commonLabels go") {
  check_transform(transform_labels, R"(- pairs:
    team: platform
  includeSelectors: true
  includeTemplates: false
)",
                  deployment_and_widget,
                  R"(apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    team: platform
  name: web
spec:
  selector:
    matchLabels:
      app: web
      team: platform
  template:
    metadata:
      labels:
        app: web
        team: platform
    spec:
      containers:
      - image: nginx
        name: web
---
apiVersion: example.com/v1
kind: Widget
metadata:
  labels:
    team: platform
  name: gadget
spec:
  selector:
    app: web
)");
}

TEST_CASE("labels with own fields, one entry after the other") {
  check_transform(transform_labels, R"(- pairs:
    team: platform
  fields:
  - kind: Widget
    path: spec/selector
  - group: example.com
    path: spec/extra/labels
    create: true
- pairs:
    owner: me
)",
                  deployment_and_widget,
                  R"(apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    owner: me
    team: platform
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - image: nginx
        name: web
---
apiVersion: example.com/v1
kind: Widget
metadata:
  labels:
    owner: me
    team: platform
  name: gadget
spec:
  extra:
    labels:
      team: platform
  selector:
    app: web
    team: platform
)");
}

TEST_CASE("commonAnnotations go to metadata and templates") {
  check_transform(transform_common_annotations, R"(note: "true"
owner: platform
)",
                  deployment + "---\n" + foreign_stateful_set + "---\n" + widget,
                  R"(apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    note: "true"
    owner: platform
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      annotations:
        note: "true"
        owner: platform
      labels:
        app: web
    spec:
      containers:
      - image: nginx
        name: web
---
apiVersion: other.io/v1
kind: StatefulSet
metadata:
  annotations:
    note: "true"
    owner: platform
  name: foreign
spec:
  template:
    metadata:
      annotations:
        note: "true"
        owner: platform
---
apiVersion: example.com/v1
kind: Widget
metadata:
  annotations:
    note: "true"
    owner: platform
  name: gadget
spec:
  selector:
    app: web
)");
}

TEST_CASE("null and empty fields change nothing") {
  check_transform(transform_common_labels, "", config_map, config_map);
  check_transform(transform_common_labels, "{}", config_map, config_map);
  check_transform(transform_labels, "- pairs: {}\n  includeSelectors: true", config_map,
                  config_map);
  check_transform(transform_common_annotations, "~", config_map, config_map);
}

TEST_CASE("label and annotation values must be strings") {
  check_error(transform_common_labels, "enabled: true", config_map,
              "kustomization.yaml: commonLabels.enabled: expected a string, found true");
  check_error(transform_common_annotations, "replicas: 3", config_map,
              "kustomization.yaml: commonAnnotations.replicas: expected a string, found 3");
  check_error(transform_labels, "- pairs:\n    a: [b]", config_map,
              "kustomization.yaml: labels[0].pairs.a: expected a string, found a sequence");
  check_error(transform_common_annotations, "\"\": x", config_map,
              "kustomization.yaml: commonAnnotations: keys must not be empty");
  check_error(transform_common_labels, "[a]", config_map,
              "kustomization.yaml: commonLabels: expected a map, found a sequence");
}

TEST_CASE("labels entries are validated") {
  check_error(transform_labels, "a: b", config_map,
              "kustomization.yaml: labels: expected a sequence, found a map");
  check_error(transform_labels, "- pairs: {a: b}\n  selectors: true", config_map,
              "kustomization.yaml: labels[0]: unknown field \"selectors\"");
  check_error(transform_labels, "- pairs: {a: b}\n  includeSelectors: \"yes\"", config_map,
              "kustomization.yaml: labels[0].includeSelectors: expected true or false, found "
              "\"yes\"");
  check_error(transform_labels, "- pairs: {a: b}\n  fields:\n  - path: x\n    create: 1",
              config_map,
              "kustomization.yaml: labels[0].fields[0].create: expected true or false, found 1");
  // kustomize refuses a field spec that contradicts one of its defaults.
  check_error(transform_labels, "- pairs: {a: b}\n  fields:\n  - path: metadata/labels", config_map,
              "kustomization.yaml: labels[0].fields: the field spec for metadata/labels conflicts "
              "with kustomize's default (create: true)");
}

TEST_CASE("labels must land in maps") {
  check_error(transform_common_labels, "a: b",
              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: x\n",
              "kustomization.yaml: commonLabels: ConfigMap/c: metadata/labels: expected a map, "
              "found \"x\"");
  check_error(transform_common_labels, "a: b",
              "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template: "
              "foo\n",
              "kustomization.yaml: commonLabels: Deployment/d: "
              "spec/template/spec/affinity/podAffinity/"
              "preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/"
              "matchLabels: expected a map or sequence before 'spec', found a scalar");
}

}  // namespace fluxop::kustomize
