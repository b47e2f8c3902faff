#!/usr/bin/env python3
"""An HTTP CONNECT proxy that sends every tunnel to one address, for tests.

  connect_proxy.py --target 127.0.0.1:5000 --port-file F --log L

A client told to use it (https_proxy=http://127.0.0.1:PORT) reaches the
registry at --target whatever host it asks for: ghcr.io:443 becomes a local
registry serving a certificate for ghcr.io. Each CONNECT is one line in --log,
`CONNECT HOST:PORT` (then ` with credentials` when it carried an
Authorization or Proxy-Authorization header); other methods are answered 405. The port goes to
--port-file once it listens. Exits on SIGTERM or SIGINT and after --timeout
seconds.
"""

import argparse
import select
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from serving import serve


def handler_for(args):
    target_host, target_port = args.target.rsplit(":", 1)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_CONNECT(self):
            # A credential sent to the proxy is marked: the client's are
            # for the server at the tunnel's end only.
            credentials = "Authorization" in self.headers or "Proxy-Authorization" in self.headers
            with open(args.log, "a") as log:
                log.write(f"CONNECT {self.path}{' with credentials' if credentials else ''}\n")
            try:
                upstream = socket.create_connection((target_host, int(target_port)), timeout=10)
            except OSError as e:
                self.send_error(502, str(e))
                return
            self.send_response(200, "Connection established")
            self.end_headers()
            self.wfile.flush()
            sockets = [self.connection, upstream]
            try:
                while True:
                    readable, _, _ = select.select(sockets, [], [], args.idle)
                    if not readable:
                        return
                    for sock in readable:
                        data = sock.recv(64 * 1024)
                        if not data:
                            return
                        (upstream if sock is self.connection else self.connection).sendall(data)
            except OSError:
                return
            finally:
                upstream.close()

        def refuse(self):
            self.send_error(405, "only CONNECT")

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = refuse

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="where every tunnel goes, HOST:PORT")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--idle", type=float, default=60, help="close a tunnel idle this long")
    parser.add_argument("--timeout", type=float, default=300, help="exit after this many seconds")
    args = parser.parse_args()
    open(args.log, "a").close()
    serve([ThreadingHTTPServer(("127.0.0.1", 0), handler_for(args))], args.port_file, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
