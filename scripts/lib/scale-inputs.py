#!/usr/bin/env python3
"""Generated inputs whose size is a parameter, for the scale benchmark
(scripts/lib/bench-scale-render.sh) and the render's time-bound tests
(tests/cli/scale_test.sh): doubling N shows the order of a stage's cost.

  scale-inputs.py objects N DIR    a kustomization of about N objects
  scale-inputs.py shards N FILE    a FluxInstance with N shards
  scale-inputs.py diamond D DIR    a diamond of bases D levels deep
  scale-inputs.py labels N FILE    a FluxInstance whose commonMetadata has N labels
  scale-inputs.py labeled-shards N FILE
                                   a FluxInstance with N shards and 3,000 labels
                                   in its commonMetadata, each copied onto every object

The kustomization gives every stage work: a namespace, labels, annotations,
a name prefix and suffix, images, patches with targets (by kind, name
pattern and label), and references that name fixing follows (ConfigMaps,
Secrets and ServiceAccounts named by Deployments, RoleBindings naming
ServiceAccounts and Roles). The diamond's level i holds two kustomizations
(prefixes l- and r-) that both include level i+1's two: every base is
reached by 2^i paths, and the output holds 2^D copies of the bottom's
three objects.
"""
import os
import sys

# Objects per group: ConfigMap, Secret, ServiceAccount, Deployment, Service,
# Role, RoleBinding.
GROUP = 7


def group(i):
    name = f"app{i}"
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}-config
data:
  key: value-{i}
---
apiVersion: v1
kind: Secret
metadata:
  name: {name}-secret
stringData:
  token: t{i}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {name}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels:
    tier: {"web" if i % 2 else "worker"}
spec:
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      serviceAccountName: {name}
      containers:
      - name: main
        image: example.com/app:v1
        envFrom:
        - configMapRef:
            name: {name}-config
        env:
        - name: TOKEN
          valueFrom:
            secretKeyRef:
              name: {name}-secret
              key: token
      volumes:
      - name: config
        configMap:
          name: {name}-config
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
spec:
  selector:
    app: {name}
  ports:
  - port: 80
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {name}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {name}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {name}
subjects:
- kind: ServiceAccount
  name: {name}
"""


KUSTOMIZATION = """apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: scale
namePrefix: big-
nameSuffix: -x
labels:
- pairs:
    app.kubernetes.io/part-of: scale
commonAnnotations:
  owner: bench
images:
- name: example.com/app
  newName: registry.example.com/app
  newTag: v2
patches:
- target:
    kind: Deployment
  patch: |
    - op: add
      path: /spec/template/spec/containers/0/args
      value: [--log-level=info]
- target:
    kind: Deployment
    labelSelector: tier=web
  patch: |
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: any
    spec:
      replicas: 2
- target:
    kind: (ConfigMap|Secret)
    name: app1.*
  patch: |
    - op: add
      path: /metadata/annotations/patched
      value: "yes"
resources:
"""


# Small, so that deep diamonds stay within a build's nodes; the binding's
# subject is a reference to fix in each copy.
DIAMOND_BOTTOM = """apiVersion: v1
kind: ConfigMap
metadata:
  name: config
data:
  key: value
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: reader
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: view
subjects:
- kind: ServiceAccount
  name: reader
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def objects(n, out):
    os.makedirs(out, exist_ok=True)
    groups = max(1, n // GROUP)
    # Files of 100 groups: a kustomization lists files, not objects.
    files = []
    for start in range(0, groups, 100):
        name = f"apps-{start // 100}.yaml"
        write(os.path.join(out, name),
              "---\n".join(group(i) for i in range(start, min(groups, start + 100))))
        files.append(name)
    write(os.path.join(out, "kustomization.yaml"),
          KUSTOMIZATION + "".join(f"- {f}\n" for f in files))


def instance(out, shard_count=0, label_count=0):
    names = "".join(f"\n    - shard{i}" for i in range(shard_count))
    sharding = f"\n  sharding:\n    shards:{names}" if shard_count else ""
    labels = "".join(f"\n      label-{i}: value-{i}" for i in range(label_count))
    metadata = f"\n  commonMetadata:\n    labels:{labels}" if label_count else ""
    write(out, f"""apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: "2.x"
    registry: ghcr.io/fluxcd
  components:
    - source-controller
    - kustomize-controller
    - helm-controller
    - notification-controller
  cluster:
    networkPolicy: true{sharding}{metadata}
""")


def shards(n, out):
    instance(out, shard_count=n)


def labels(n, out):
    instance(out, label_count=n)


def labeled_shards(n, out):
    instance(out, shard_count=n, label_count=3000)


def diamond(depth, out):
    bottom = os.path.join(out, f"level{depth}")
    os.makedirs(bottom, exist_ok=True)
    write(os.path.join(bottom, "objects.yaml"), DIAMOND_BOTTOM)
    write(os.path.join(bottom, "kustomization.yaml"), "resources:\n- objects.yaml\n")
    for level in range(depth - 1, -1, -1):
        for side in ("l", "r"):
            d = os.path.join(out, f"level{level}", side)
            os.makedirs(d, exist_ok=True)
            if level + 1 < depth:
                bases = f"- ../../level{level + 1}/l\n- ../../level{level + 1}/r\n"
            else:
                bases = f"- ../../level{depth}\n"
            write(os.path.join(d, "kustomization.yaml"),
                  f"namePrefix: {side}-\nresources:\n{bases}")
    write(os.path.join(out, "kustomization.yaml"), "resources:\n- level0/l\n- level0/r\n")


def main():
    kinds = {"objects": objects, "shards": shards, "diamond": diamond, "labels": labels,
             "labeled-shards": labeled_shards}
    if len(sys.argv) != 4 or sys.argv[1] not in kinds:
        sys.exit(__doc__.strip().splitlines()[0] + "\nusage: scale-inputs.py " + "|".join(kinds) +
                 " N OUT")
    kinds[sys.argv[1]](int(sys.argv[2]), sys.argv[3])


if __name__ == "__main__":
    main()
