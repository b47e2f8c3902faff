#!/usr/bin/env python3
"""A reverse proxy in front of a registry that injects faults, for tests.

  http_faults.py --upstream http://127.0.0.1:5000 --port-file F --log L [fault options]

Faults:
  --fail-first N      answer the first N requests (N < 0: every request) with
                      --fail-status (503 by default, or 429) and forward the
                      rest; only requests whose path matches --fail-match (a
                      regular expression, searched) count.
  --retry-after S     send Retry-After: S with the injected answers (default:
                      0 for 429, none for 503).
  --hold-match RE     answer no request whose path matches RE (searched): it is
                      held, unanswered, until the proxy exits; for a client
                      stopped by a signal in the middle of a request.
  --redirect-host H   answer blob GETs (/v2/.../blobs/sha256:...) with a 307
                      to a second listener on host H (e.g. 127.0.0.2 or
                      localhost: a host other than the proxy's), which serves
                      the blob from the upstream registry. It authenticates to
                      the registry with $FAULTS_UPSTREAM_AUTH (USER:PASSWORD)
                      when set, never with what the client sent.

--listen ADDRESS (127.0.0.1 by default, ::1 for IPv6) is where the proxy
listens. Everything else is forwarded as is, Authorization included; responses are
streamed back. Each request is one line in --log:
  proxy|blobhost METHOD PATH status=CODE auth=yes|no [injected]
or, when a held request arrives, `proxy METHOD PATH status=none auth=yes|no held`.
The proxy's port goes to --port-file (and the second listener's, as a second
line) once both listen. Exits on SIGTERM or SIGINT and after --timeout seconds.
"""

import argparse
import base64
import http.client
import os
import re
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from serving import serve

HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
              "trailers", "transfer-encoding", "upgrade"}
BLOB_GET = re.compile(r"^/v2/.+/blobs/sha256:[0-9a-f]{64}$")
CHUNK = 64 * 1024


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.failures_left = args.fail_first
        self.fail_match = re.compile(args.fail_match)
        self.upstream = urllib.parse.urlsplit(args.upstream)
        self.redirect_base = None
        auth = os.environ.get("FAULTS_UPSTREAM_AUTH")
        self.upstream_auth = "Basic " + base64.b64encode(auth.encode()).decode() if auth else None

    def take_failure(self, path):
        with self.lock:
            if self.failures_left == 0 or not self.fail_match.search(path):
                return False
            if self.failures_left > 0:
                self.failures_left -= 1
            return True

    def log(self, line):
        with self.lock, open(self.args.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def handler_for(state, role):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "fluxopctl-test-http-faults"

        def log_message(self, fmt, *args):
            pass

        def record(self, status, note=""):
            line = (f"{role} {self.command} {self.path} status={status} "
                    f"auth={'yes' if self.headers.get('Authorization') else 'no'}")
            state.log(line + (" " + note if note else ""))

        def simple(self, status, body, headers=()):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def request_body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                return None
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def forward(self, headers):
            body = self.request_body()
            if body is None:
                self.simple(411, '{"errors":[{"code":"UNSUPPORTED","message":"chunked request"}]}')
                self.record(411)
                return
            up = state.upstream
            conn = http.client.HTTPConnection(up.hostname, up.port or 80, timeout=30)
            try:
                conn.request(self.command, self.path, body=body or None, headers=headers)
                response = conn.getresponse()
                self.send_response(response.status, response.reason)
                length = response.getheader("Content-Length")
                for name, value in response.getheaders():
                    if name.lower() not in HOP_BY_HOP:
                        self.send_header(name, value)
                if length is None and self.command != "HEAD" and response.status not in (204, 304):
                    # Unknown length: close the connection after the body.
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                if self.command != "HEAD":
                    while True:
                        chunk = response.read(CHUNK)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                self.record(response.status)
            except (OSError, http.client.HTTPException) as e:
                self.close_connection = True
                try:
                    self.simple(502, '{"errors":[{"code":"UNAVAILABLE","message":"upstream: %s"}]}'
                                % str(e).replace('"', "'"))
                except OSError:
                    pass
                self.record(502)
            finally:
                conn.close()

        def client_headers(self):
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            return headers

        def handle_proxy(self):
            path = urllib.parse.urlsplit(self.path).path
            if state.args.hold_match and re.search(state.args.hold_match, self.path):
                self.record("none", "held")
                time.sleep(state.args.timeout)  # the daemon thread ends with the proxy
                return
            if state.take_failure(self.path):
                self.request_body()
                status = state.args.fail_status
                code = "TOOMANYREQUESTS" if status == 429 else "UNAVAILABLE"
                headers = []
                retry_after = state.args.retry_after
                if retry_after is None and status == 429:
                    retry_after = "0"
                if retry_after is not None:
                    headers.append(("Retry-After", retry_after))
                self.simple(status, '{"errors":[{"code":"%s","message":"injected fault"}]}' % code,
                            headers)
                self.record(status, "injected")
                return
            if state.redirect_base and self.command == "GET" and BLOB_GET.match(path):
                self.request_body()
                self.send_response(307)
                self.send_header("Location", state.redirect_base + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()
                self.record(307)
                return
            self.forward(self.client_headers())

        def handle_blobhost(self):
            path = urllib.parse.urlsplit(self.path).path
            if self.command not in ("GET", "HEAD") or not BLOB_GET.match(path):
                self.simple(404, '{"errors":[{"code":"NOT_FOUND","message":"blobs only"}]}')
                self.record(404)
                return
            headers = {k: v for k, v in self.client_headers().items()
                       if k.lower() not in ("authorization", "host")}
            if state.upstream_auth:
                headers["Authorization"] = state.upstream_auth
            self.forward(headers)

        def dispatch(self):
            if role == "proxy":
                self.handle_proxy()
            else:
                self.handle_blobhost()

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = dispatch

    return Handler


def server_for(address):
    """The server class that listens on `address`, IPv4 or IPv6 (--listen ::1)."""
    if ":" not in address:
        return ThreadingHTTPServer

    class ThreadingHTTPServer6(ThreadingHTTPServer):
        address_family = socket.AF_INET6

    return ThreadingHTTPServer6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="the registry, http://HOST:PORT")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--listen", default="127.0.0.1")
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--fail-status", type=int, default=503, choices=(429, 500, 502, 503, 504))
    parser.add_argument("--fail-match", default="")
    parser.add_argument("--retry-after")
    parser.add_argument("--hold-match", default="")
    parser.add_argument("--redirect-host")
    parser.add_argument("--timeout", type=float, default=300, help="exit after this many seconds")
    args = parser.parse_args()

    state = State(args)
    open(args.log, "a").close()
    servers = [server_for(args.listen)((args.listen, 0), handler_for(state, "proxy"))]
    if args.redirect_host:
        address = socket.gethostbyname(args.redirect_host)
        servers.append(ThreadingHTTPServer((address, 0), handler_for(state, "blobhost")))
        host = args.redirect_host if ":" not in args.redirect_host else f"[{args.redirect_host}]"
        state.redirect_base = f"http://{host}:{servers[1].server_address[1]}"
    serve(servers, args.port_file, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
