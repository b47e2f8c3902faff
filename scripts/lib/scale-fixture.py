#!/usr/bin/env python3
"""The scale fixture: N Flux custom resources on a cluster whose Flux CRDs are
installed (a FluxInstance applied), for the cluster half of the scale bench.

    scale-fixture.py KUBECONFIG N [--prefix P]

Creates N objects spread over 100 namespaces (scale-000..scale-099):
Kustomizations (40%), HelmReleases (30%), GitRepositories (15%) and
OCIRepositories (15%), each with the controllers' finalizer, and a status
written through the status subresource: every fifth one failing (Ready=False),
the others Ready=True, sources with an artifact. Server-side applies sent
16 at a time over keep-alive connections: 10,000 objects took 3 minutes on a
loaded 2-core machine (the API server and etcd are the bound).

Applied again with a larger N, the objects already there are unchanged and
the rest are added.

Only the standard library: the kubeconfig's embedded client certificate (what
scripts/cluster writes) is the credential.
"""

import argparse
import base64
import concurrent.futures
import http.client
import json
import os
import ssl
import sys
import tempfile
import threading
import time

NAMESPACES = 100
FIELD_MANAGER = "scale-fixture"
FINALIZER = "finalizers.fluxcd.io"

# kind: (group/version, plural, share of N)
KINDS = [
    ("Kustomization", "kustomize.toolkit.fluxcd.io/v1", "kustomizations", 40),
    ("HelmRelease", "helm.toolkit.fluxcd.io/v2", "helmreleases", 30),
    ("GitRepository", "source.toolkit.fluxcd.io/v1", "gitrepositories", 15),
    ("OCIRepository", "source.toolkit.fluxcd.io/v1", "ocirepositories", 15),
]


def kubeconfig_access(path):
    """Server, and an SSL context with the client certificate, of the current
    context. The kubeconfig is YAML; scripts/cluster writes one whose values
    sit one per line, which is all this reads."""
    fields = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.strip().partition(": ")
            if key in ("server", "certificate-authority-data", "client-certificate-data",
                       "client-key-data"):
                fields[key] = value.strip()
    missing = [k for k in ("server", "client-certificate-data", "client-key-data") if k not in fields]
    if missing:
        sys.exit(f"error: {path}: {missing[0]}: not found (a kubeconfig of scripts/cluster)")
    pem = tempfile.NamedTemporaryFile("wb", delete=False)
    pem.write(base64.b64decode(fields["client-certificate-data"]))
    pem.write(base64.b64decode(fields["client-key-data"]))
    pem.close()
    context = ssl.create_default_context()
    if "certificate-authority-data" in fields:
        context.load_verify_locations(
            cadata=base64.b64decode(fields["certificate-authority-data"]).decode())
    context.check_hostname = False
    context.load_cert_chain(pem.name)
    os.unlink(pem.name)
    return fields["server"].removeprefix("https://"), context


class Api:
    """One keep-alive connection per thread."""

    def __init__(self, host, context):
        self.host, self.context = host, context
        self.local = threading.local()
        self.requests = 0
        self.lock = threading.Lock()

    def request(self, method, path, body=None, content_type="application/json"):
        for attempt in range(5):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = http.client.HTTPSConnection(self.host, context=self.context, timeout=60)
                self.local.conn = conn
            try:
                conn.request(method, path, body=None if body is None else json.dumps(body),
                             headers={"Content-Type": content_type, "Accept": "application/json"})
                response = conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                time.sleep(0.2 * (attempt + 1))
                continue
            with self.lock:
                self.requests += 1
            if response.status == 429 or response.status >= 500:
                time.sleep(0.2 * (attempt + 1))
                continue
            if response.status >= 300:
                raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
            return json.loads(data) if data else None
        raise RuntimeError(f"{method} {path}: no answer after 5 attempts")

    def apply(self, path, body):
        query = f"?fieldManager={FIELD_MANAGER}&force=true"
        return self.request("PATCH", path + query, body, "application/apply-patch+yaml")


def spec_of(kind, name, i):
    if kind == "Kustomization":
        return {"interval": "10m", "path": f"./apps/{name}", "prune": True,
                "sourceRef": {"kind": "GitRepository", "name": name}}
    if kind == "HelmRelease":
        return {"interval": "10m", "chartRef": {"kind": "OCIRepository", "name": name}}
    if kind == "GitRepository":
        return {"interval": "10m", "url": f"https://git.example.com/team-{i % 37}/{name}.git",
                "ref": {"branch": "main"}}
    return {"interval": "10m", "url": f"oci://registry.example.com/charts/{name}",
            "ref": {"tag": "1.0.0"}}


def status_of(kind, name, i, failing):
    now = "2026-01-01T00:00:00Z"
    ready = {"type": "Ready", "status": "False" if failing else "True",
             "reason": "BuildFailed" if failing else "ReconciliationSucceeded",
             "message": f"{name}: the build failed" if failing else "Applied revision: main@sha1:0",
             "lastTransitionTime": now, "observedGeneration": 1}
    status = {"observedGeneration": 1, "conditions": [ready]}
    if kind in ("GitRepository", "OCIRepository") and not failing:
        status["artifact"] = {"path": f"{kind.lower()}/{name}.tar.gz", "url": "http://source/x",
                              "revision": "main@sha1:0", "digest": "sha256:" + "0" * 64,
                              "lastUpdateTime": now, "size": 4096 + i}
    if kind == "Kustomization":
        status["lastAppliedRevision"] = "main@sha1:0"
        status["lastAttemptedRevision"] = "main@sha1:0"
    return status


def objects(n, prefix):
    total = sum(share for *_, share in KINDS)
    made = 0
    for k, (kind, api_version, plural, share) in enumerate(KINDS):
        count = n * share // total if k < len(KINDS) - 1 else n - made
        for i in range(count):
            # The namespace follows from the kind and the name alone: a larger N
            # keeps the objects a smaller one made.
            yield kind, api_version, plural, f"{prefix}-{i:05d}", f"scale-{(i + 7 * k) % NAMESPACES:03d}", i
        made += count


def create(api, kind, api_version, plural, name, ns, i):
    path = f"/apis/{api_version}/namespaces/{ns}/{plural}/{name}"
    body = {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": ns, "finalizers": [FINALIZER],
                         "labels": {"scale.fluxopctl.test/fixture": "true"}},
            "spec": spec_of(kind, name, i)}
    api.apply(path, body)
    api.apply(path + "/status", {"apiVersion": api_version, "kind": kind,
                                 "metadata": {"name": name, "namespace": ns},
                                 "status": status_of(kind, name, i, i % 5 == 4)})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kubeconfig")
    parser.add_argument("n", type=int)
    parser.add_argument("--prefix", default="app")
    args = parser.parse_args()
    if args.n < 0:
        sys.exit(f"error: N: {args.n}: not a count")
    api = Api(*kubeconfig_access(args.kubeconfig))
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda i: api.apply(f"/api/v1/namespaces/scale-{i:03d}",
                                          {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": f"scale-{i:03d}"}}),
                      range(NAMESPACES)))
        for future in [pool.submit(create, api, *o) for o in objects(args.n, args.prefix)]:
            future.result()
    print(f"scale fixture: {args.n} objects in {NAMESPACES} namespaces, {api.requests} requests, "
          f"{time.monotonic() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
