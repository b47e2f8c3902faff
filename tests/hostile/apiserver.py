#!/usr/bin/env python3
"""A hostile Kubernetes API server, in Python's standard library, for
tests/hostile/apiserver_test.sh.

    apiserver.py MODE PORTFILE

Listens on a free loopback port (plain HTTP), writes it to PORTFILE, and
serves until killed. Discovery (/api, /apis and their group-versions) and
/version are answered as a real server would, so that fluxopctl gets past
them; every other request is answered as MODE says:

  deep      JSON nested 20,000 levels deep (a watch: one such event)
  huge      an object of 250 MB, under the 256 MiB fluxopctl once accepted
  hugelist  a list of 200 MB of small items, ignoring `limit`
  crlf      a FluxInstance whose status holds CR, LF and terminal escapes
  endless   a watch event line that never ends; lists and objects as crlf
  trickle   a valid answer, a byte every half second
  shapes    a FluxInstance whose status has the wrong shapes: a string for
            the conditions, a number for a condition, objects for strings
  nested    a FluxInstance whose status holds a value 150 levels deep:
            within the bound of an answer, past the printers'
"""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
PORTFILE = sys.argv[2]

GROUPS = {
    "v1": [("namespaces", "Namespace", False), ("configmaps", "ConfigMap", True),
           ("secrets", "Secret", True), ("serviceaccounts", "ServiceAccount", True),
           ("services", "Service", True), ("resourcequotas", "ResourceQuota", True),
           ("events", "Event", True)],
    "apps/v1": [("deployments", "Deployment", True)],
    "coordination.k8s.io/v1": [("leases", "Lease", True)],
    "events.k8s.io/v1": [("events", "Event", True)],
    "apiextensions.k8s.io/v1": [("customresourcedefinitions", "CustomResourceDefinition", False)],
    "rbac.authorization.k8s.io/v1": [("clusterroles", "ClusterRole", False),
                                     ("clusterrolebindings", "ClusterRoleBinding", False),
                                     ("roles", "Role", True), ("rolebindings", "RoleBinding", True)],
    "networking.k8s.io/v1": [("networkpolicies", "NetworkPolicy", True)],
    "fluxcd.controlplane.io/v1": [("fluxinstances", "FluxInstance", True),
                                  ("fluxreports", "FluxReport", True)],
}

# What a terminal would obey: a title, a screen clear, a line of our own.
HOSTILE_TEXT = "\x1b]0;pwned\x07\x1b[2J\r\nerror: a line the server wrote\x1b[0m\x7f\u009b31m"


def discovery(path):
    if path == "/version":
        return {"major": "1", "minor": "34", "gitVersion": "v1.34.0", "platform": "linux/amd64"}
    if path == "/api":
        return {"kind": "APIVersions", "versions": ["v1"]}
    if path == "/apis":
        groups = []
        for gv in GROUPS:
            if "/" in gv:
                group, version = gv.split("/")
                groups.append({"name": group, "versions": [{"groupVersion": gv, "version": version}],
                               "preferredVersion": {"groupVersion": gv, "version": version}})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
    gv = path[len("/api/"):] if path.startswith("/api/") else path[len("/apis/"):]
    if gv in GROUPS:
        return {"kind": "APIResourceList", "groupVersion": gv,
                "resources": [{"name": name, "kind": kind, "namespaced": namespaced, "verbs": ["get"]}
                              for name, kind, namespaced in GROUPS[gv]]}
    return None


def flux_instance(message):
    return {
        "apiVersion": "fluxcd.controlplane.io/v1", "kind": "FluxInstance",
        "metadata": {"name": "flux", "namespace": "flux-system", "resourceVersion": "7",
                     "generation": 1},
        "spec": {"distribution": {"version": "2.x", "registry": "ghcr.io/fluxcd"}},
        "status": {
            "observedGeneration": 1,
            "lastAppliedRevision": message,
            "conditions": [{"type": "Ready", "status": "False", "reason": message,
                            "message": message, "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        },
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_body(self, body, content_length=None):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(content_length if content_length is not None else len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if body:
            self.wfile.write(body)

    def stream(self, chunks, total):
        """Sends `total` bytes made of `chunks` (an iterator), never all in memory."""
        self.send_body(b"", total)
        for chunk in chunks:
            self.wfile.write(chunk)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        path, _, query = self.path.partition("?")
        known = discovery(path)
        if known is not None:
            return self.send_body(json.dumps(known).encode())
        watch = "watch=1" in query or "watch=true" in query
        try:
            getattr(self, "attack_" + MODE)(path, watch)
        except (BrokenPipeError, ConnectionResetError):
            pass  # fluxopctl gave up: what it should do

    def attack_deep(self, path, watch):
        nested = "[" * 20000 + "]" * 20000
        if watch:
            return self.send_body(('{"type":"ADDED","object":' + nested + "}\n").encode())
        self.send_body(('{"kind":"FluxInstance","metadata":{"name":"flux"},"items":' + nested + "}").encode())

    def attack_huge(self, path, watch):
        head = b'{"apiVersion":"fluxcd.controlplane.io/v1","kind":"FluxInstance","metadata":{"name":"flux"},"x":"'
        tail = b'"}'
        filler = 250 * 1000 * 1000
        chunk = b"x" * (1 << 20)
        def chunks():
            yield head
            left = filler
            while left > 0:
                yield chunk[: min(left, len(chunk))]
                left -= len(chunk)
            yield tail
        self.stream(chunks(), len(head) + filler + len(tail))

    def attack_hugelist(self, path, watch):
        head = b'{"kind":"List","metadata":{},"items":['
        item = b'{"metadata":{"name":"cm"}},'
        items = 200 * 1000 * 1000 // len(item)
        block = item * 10000
        def chunks():
            yield head
            for _ in range(items // 10000):
                yield block
            yield item[:-1] + b"]}"
        self.stream(chunks(), len(head) + (items // 10000) * len(block) + len(item) + 1)

    def serve_instance(self, instance, path, watch):
        """`instance` as a watch event, the object, or a list of it."""
        if watch:
            return self.send_body((json.dumps({"type": "ADDED", "object": instance}) + "\n").encode())
        if path.endswith("/fluxinstances/flux") or self.command != "GET":
            return self.send_body(json.dumps(instance).encode())
        self.send_body(json.dumps({"kind": "List", "metadata": {}, "items": [instance]}).encode())

    def attack_crlf(self, path, watch):
        instance = flux_instance(HOSTILE_TEXT)
        self.serve_instance(instance, path, watch)

    def attack_endless(self, path, watch):
        if not watch:
            return self.attack_crlf(path, watch)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b'{"type":"ADDED","object":{"metadata":{"name":"flux"},"x":"')
        chunk = b"y" * (1 << 20)
        while True:
            self.wfile.write(chunk)

    def attack_trickle(self, path, watch):
        body = (json.dumps({"type": "ADDED", "object": flux_instance("ok")}) + "\n" if watch
                else json.dumps(flux_instance("ok"))).encode()
        self.send_body(b"", len(body))
        for byte in body:
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(0.5)

    def attack_shapes(self, path, watch):
        instance = flux_instance("ok")
        instance["metadata"]["annotations"] = ["not", "a", "map"]
        instance["status"] = {"conditions": [7, {"type": {"a": 1}, "status": ["x"]}],
                              "lastAppliedRevision": {"x": 1}, "history": "none",
                              "components": [{"name": 1, "tag": None}], "inventory": 3}
        self.serve_instance(instance, path, watch)

    def attack_nested(self, path, watch):
        instance = flux_instance("ok")
        value = "deep"
        for _ in range(150):
            value = [value]
        instance["status"]["nested"] = value
        self.send_body(json.dumps(instance).encode())

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True


server = Server(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
