"""A throwaway RFC 3161 timestamp authority for tests/signatures: answers a
POSTed timestamp query (application/timestamp-query) with `openssl ts
-reply`, signed by the TSA certificate it is given, on 127.0.0.1.

    tsa_server.py CONFIG PORT_FILE

CONFIG is an openssl configuration whose [tsa] section names the signer, its
key, its chain and the serial file; PORT_FILE receives the port once it
listens. Stops when its parent does (the caller runs it with a parent-death
signal) or when it is killed."""

import http.server
import os
import subprocess
import sys
import tempfile

config, port_file = sys.argv[1:3]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        if not 0 < length <= 65536:
            self.send_error(400, "a timestamp query of 1 to 65536 bytes")
            return
        query = self.rfile.read(length)
        with tempfile.TemporaryDirectory() as scratch:
            query_file = os.path.join(scratch, "query.tsq")
            reply_file = os.path.join(scratch, "reply.tsr")
            with open(query_file, "wb") as out:
                out.write(query)
            signed = subprocess.run(
                ["openssl", "ts", "-reply", "-config", config, "-queryfile", query_file,
                 "-out", reply_file],
                capture_output=True, timeout=60)
            if signed.returncode != 0:
                self.send_error(400, signed.stderr.decode(errors="replace")[-200:])
                return
            with open(reply_file, "rb") as reply:
                body = reply.read()
        self.send_response(200)
        self.send_header("Content-Type", "application/timestamp-reply")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as out:
    out.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
