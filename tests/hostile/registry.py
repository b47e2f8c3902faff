#!/usr/bin/env python3
"""A small OCI registry that attacks its client, for tests/hostile.

  registry.py --port-file F --log L [--mode MODE] [--timeout S]

Two listeners on 127.0.0.1: the registry, and a second one on another port,
"elsewhere" (another HOST:PORT, so a host a credential was not issued for),
which logs every request it gets and whether it carried an Authorization.
The registry keeps blobs and manifests in memory, accepts pushes and serves
pulls, and asks for HTTP Basic credentials (user `flux`, password `secret`).

The attack is the repository's first path component (or --mode, for every
repository):
  location-elsewhere   an upload's Location is on the elsewhere listener, which
                       takes the blob
  redirect-elsewhere   blob GETs are redirected (307) to the elsewhere
                       listener, which serves the blob
  redirect-challenge   blob GETs are redirected (307) to the elsewhere
                       listener, which answers 401 with a Bearer challenge
                       whose realm is its own token service: the registry's
                       credentials asked for by a host the registry never
                       named
  slow-blob            blob GETs are sent in 20 parts, 0.25 s apart (a slow
                       download, to be stopped midway)
  deep-index           the tag `latest` is a chain of DEPTH (10) indexes over
                       the manifest of flux:v1
  huge-index           the tag `latest` is an index of 1001 manifests, each
                       the manifest of flux:v1
  huge-header          every answer carries a 10 MB header line
  many-headers         every answer carries 5,000 header lines of 100 bytes
  crlf-token           bearer tokens from a token service on the elsewhere
                       listener hold CR LF and a header of their own
                       ("X-Injected: yes")
  token-realm          bearer tokens from the elsewhere listener, sane: the
                       realm on another host still works
  gzip-manifest        manifests are sent gzipped, with Content-Encoding: gzip,
                       though the client asked for no encoding
  long-blob            blobs are sent with 16 bytes more than they have
Anything else (e.g. `flux`) is served as a plain registry.

Each request is one line in --log:
  registry|elsewhere METHOD PATH auth=yes|no [injected=yes] status=CODE
never a credential. The two ports go to --port-file (one a line) once both
listen. Exits on SIGTERM or SIGINT and after --timeout seconds.
"""

import argparse
import base64
import gzip
import hashlib
import json
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oci"))
from serving import serve  # noqa: E402

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
BASIC = "Basic " + base64.b64encode(b"flux:secret").decode()
GOOD_TOKEN = "sane-token"
CRLF_TOKEN = "evil\r\nX-Injected: yes"
DEPTH = 10
WIDE = 1001


def digest_of(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Store:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.blobs = {}      # digest -> bytes
        self.manifests = {}  # digest -> (bytes, media type)
        self.tags = {}       # (repository, tag) -> digest
        self.ports = {}      # role -> port

    def log(self, line):
        with self.lock, open(self.args.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def put_manifest(self, data, media_type):
        digest = digest_of(data)
        with self.lock:
            self.manifests[digest] = (data, media_type)
        return digest

    def leaf(self):
        """The manifest flux:v1 was pushed with, or None."""
        with self.lock:
            digest = self.tags.get(("flux", "v1"))
            return (digest, self.manifests[digest]) if digest else None

    def index_over(self, entries):
        body = json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX,
                           "manifests": entries}).encode()
        return self.put_manifest(body, OCI_INDEX)

    def synthesized(self, mode):
        """The digest the tag `latest` has in the index modes."""
        leaf = self.leaf()
        if leaf is None:
            return None
        digest, (data, media_type) = leaf
        descriptor = {"mediaType": media_type, "digest": digest, "size": len(data)}
        if mode == "huge-index":
            return self.index_over([descriptor] * WIDE)
        for _ in range(DEPTH):
            digest = self.index_over([descriptor])
            descriptor = {"mediaType": OCI_INDEX, "digest": digest,
                          "size": len(self.manifests[digest][0])}
        return digest


def mode_of(store, path):
    if store.args.mode:
        return store.args.mode
    match = re.match(r"^/v2/([^/]+)/", path)
    return match.group(1) if match else ""


def handler_for(store, role):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "fluxopctl-test-hostile-registry"

        def log_message(self, fmt, *args):
            pass

        def handle(self):
            # A client that gave up (a refused header block) is no traceback.
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):
                pass

        # -- answering

        def answer(self, status, body=b"", headers=(), head=False):
            mode = mode_of(store, self.path)
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            if mode == "huge-header":
                self.send_header("X-Filler", "a" * (10 << 20))
            if mode == "many-headers":
                for i in range(5000):
                    self.send_header(f"X-Filler-{i}", "a" * 80)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)
            injected = " injected=yes" if self.headers.get("X-Injected") else ""
            store.log(f"{role} {self.command} {self.path} "
                      f"auth={'yes' if self.headers.get('Authorization') else 'no'}"
                      f"{injected} status={status}")

        def trickle(self, body, digest):
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Docker-Content-Digest", digest)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            store.log(f"{role} {self.command} {self.path} auth=yes status=200 trickle=start")
            part = max(1, len(body) // 20)
            for start in range(0, len(body), part):
                self.wfile.write(body[start:start + part])
                self.wfile.flush()
                time.sleep(0.25)

        def error(self, status, code, head=False):
            body = json.dumps({"errors": [{"code": code, "message": code.lower()}]}).encode()
            self.answer(status, body, [("Content-Type", "application/json")], head)

        def body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        # -- authentication

        def authorized(self, mode):
            given = self.headers.get("Authorization", "")
            if mode in ("crlf-token", "token-realm"):
                if given == "Bearer " + GOOD_TOKEN:
                    return True
                realm = f"http://127.0.0.1:{store.ports['elsewhere']}/token/{mode}"
                challenge = f'Bearer realm="{realm}",service="hostile"'
            else:
                if given == BASIC:
                    return True
                challenge = 'Basic realm="hostile"'
            self.body()
            self.answer(401, b'{"errors":[{"code":"UNAUTHORIZED","message":"unauthorized"}]}',
                        [("WWW-Authenticate", challenge), ("Content-Type", "application/json")],
                        self.command == "HEAD")
            return False

        # -- the elsewhere listener

        def elsewhere(self):
            path = self.path.split("?")[0]
            if path.startswith("/token/"):
                token = CRLF_TOKEN if path.endswith("crlf-token") else GOOD_TOKEN
                if self.headers.get("Authorization") != BASIC:
                    return self.error(401, "UNAUTHORIZED")
                return self.answer(200, json.dumps({"token": token}).encode(),
                                   [("Content-Type", "application/json")])
            if self.command == "PUT" and path.startswith("/upload/"):
                data = self.body()
                with store.lock:
                    store.blobs[digest_of(data)] = data
                return self.answer(201, headers=[("Docker-Content-Digest", digest_of(data))])
            if path.startswith("/challenged-blobs/"):
                realm = f"http://127.0.0.1:{store.ports['elsewhere']}/token/third"
                return self.answer(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}',
                                   [("WWW-Authenticate", f'Bearer realm="{realm}",service="x"'),
                                    ("Content-Type", "application/json")])
            match = re.match(r"^/blobs/(sha256:[0-9a-f]{64})$", path)
            if match and match.group(1) in store.blobs:
                return self.answer(200, store.blobs[match.group(1)],
                                   [("Content-Type", "application/octet-stream")],
                                   self.command == "HEAD")
            self.error(404, "NOT_FOUND", self.command == "HEAD")

        # -- the registry

        def registry(self):
            path = self.path.split("?")[0]
            query = self.path.partition("?")[2]
            mode = mode_of(store, self.path)
            if not self.authorized(mode):
                return
            head = self.command == "HEAD"
            if path == "/v2/":
                return self.answer(200, b"{}", [("Content-Type", "application/json")], head)
            match = re.match(r"^/v2/(.+)/(manifests|blobs)/([^/]+)$", path)
            if match and self.command in ("GET", "HEAD"):
                repository, kind, reference = match.groups()
                if kind == "blobs":
                    if reference not in store.blobs:
                        return self.error(404, "BLOB_UNKNOWN", head)
                    if mode in ("redirect-elsewhere", "redirect-challenge") and not head:
                        where = "blobs" if mode == "redirect-elsewhere" else "challenged-blobs"
                        location = f"http://127.0.0.1:{store.ports['elsewhere']}/{where}/{reference}"
                        return self.answer(307, headers=[("Location", location)])
                    if mode == "slow-blob" and not head:
                        return self.trickle(store.blobs[reference], reference)
                    data = store.blobs[reference]
                    if mode == "long-blob":
                        data += b"\0" * 16
                    return self.answer(200, data,
                                       [("Content-Type", "application/octet-stream"),
                                        ("Docker-Content-Digest", reference)], head)
                digest = reference if reference.startswith("sha256:") else None
                if digest is None and mode in ("deep-index", "huge-index") and reference == "latest":
                    digest = store.synthesized(mode)
                if digest is None:
                    with store.lock:
                        digest = store.tags.get((repository, reference))
                if digest not in store.manifests:
                    return self.error(404, "MANIFEST_UNKNOWN", head)
                data, media_type = store.manifests[digest]
                headers = [("Content-Type", media_type), ("Docker-Content-Digest", digest)]
                if mode == "gzip-manifest":
                    data = gzip.compress(data)
                    headers.append(("Content-Encoding", "gzip"))
                return self.answer(200, data, headers, head)
            match = re.match(r"^/v2/(.+)/blobs/uploads/([^/]*)$", path)
            if match and self.command == "POST":
                upload = uuid.uuid4().hex
                if mode == "location-elsewhere":
                    location = f"http://127.0.0.1:{store.ports['elsewhere']}/upload/{upload}"
                else:
                    location = f"/v2/{match.group(1)}/blobs/uploads/{upload}"
                self.body()
                return self.answer(202, headers=[("Location", location)])
            if match and self.command == "PUT":
                data = self.body()
                digest = digest_of(data)
                if f"digest={digest.replace(':', '%3A')}" not in query and \
                        f"digest={digest}" not in query:
                    return self.error(400, "DIGEST_INVALID")
                with store.lock:
                    store.blobs[digest] = data
                return self.answer(201, headers=[("Docker-Content-Digest", digest)])
            match = re.match(r"^/v2/(.+)/manifests/([^/]+)$", path)
            if match and self.command == "PUT":
                data = self.body()
                digest = store.put_manifest(data, self.headers.get("Content-Type", OCI_MANIFEST))
                with store.lock:
                    store.tags[(match.group(1), match.group(2))] = digest
                return self.answer(201, headers=[("Docker-Content-Digest", digest)])
            self.error(404, "NOT_FOUND", head)

        def handle_any(self):
            try:
                self.registry() if role == "registry" else self.elsewhere()
            except (BrokenPipeError, ConnectionResetError):
                pass

        do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = handle_any

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--mode", default="", help="the attack for every repository")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    store = Store(args)
    servers = []
    for role in ("registry", "elsewhere"):
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(store, role))
        store.ports[role] = server.server_address[1]
        servers.append(server)
    serve(servers, args.port_file, args.timeout)


if __name__ == "__main__":
    main()
