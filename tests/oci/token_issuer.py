#!/usr/bin/env python3
"""A test token service for a docker-registry configured with `auth.token`.

Implements the Docker registry token flow (distribution's docs/spec/auth):

  GET  /token?service=S&scope=repository:NAME:ACTIONS[&scope=...]
       With Basic credentials (--user/--password): every requested action.
       Anonymous: `pull` on repositories under public/ only (like ghcr.io).
       Wrong credentials: 401.
  POST /token (application/x-www-form-urlencoded, the OAuth2 flow)
       grant_type=refresh_token&refresh_token=T (T == --identity-token)
       grant_type=password&username=U&password=P
       Anything else, or a wrong token or password: 401 / 400.

Tokens are RS256 JWTs whose header carries the issuer's self-signed
certificate in `x5c`; that certificate (written to --cert) is the registry's
`auth.token.rootcertbundle`. Claims: iss, sub, aud, exp, nbf, iat, jti,
access.

Every request is logged to --log as one line:
  METHOD PATH auth=yes|no [grant=TYPE] sub=NAME status=CODE
never a password, identity token or issued token. The port (chosen at
start) is written to --port-file once the socket listens. Exits on SIGTERM or
SIGINT, and after --timeout seconds.
"""

import argparse
import base64
import datetime
import hmac
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from serving import serve


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def make_identity(issuer):
    """A fresh RSA key and a self-signed certificate for it."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=False, encipher_only=False, decipher_only=False),
            critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def parse_scopes(values):
    """`repository:NAME:ACTIONS` scopes, several per value (space separated)."""
    scopes = []
    for value in values:
        for scope in value.split():
            kind, _, rest = scope.partition(":")
            name, _, actions = rest.rpartition(":")
            if not kind or not name:
                continue
            scopes.append((kind, name, [a for a in actions.split(",") if a]))
    return scopes


class Issuer:
    def __init__(self, args):
        self.args = args
        self.key, self.cert = make_identity(args.issuer)
        self.x5c = base64.b64encode(self.cert.public_bytes(serialization.Encoding.DER)).decode()
        self.log_lock = threading.Lock()

    def grant(self, subject, scopes):
        """The access entries a subject (None: anonymous) gets for scopes."""
        access = []
        for kind, name, actions in scopes:
            if subject is not None:
                granted = actions
            elif kind == "repository" and name.startswith("public/"):
                granted = [a for a in actions if a == "pull"]
            else:
                granted = []
            if granted:
                access.append({"type": kind, "name": name, "actions": granted})
        return access

    def token(self, subject, service, access):
        now = int(time.time())
        header = {"typ": "JWT", "alg": "RS256", "x5c": [self.x5c]}
        claims = {
            "iss": self.args.issuer,
            "sub": subject or "",
            "aud": service,
            "exp": now + self.args.lifetime,
            "nbf": now - 10,
            "iat": now,
            "jti": secrets.token_hex(16),
            "access": access,
        }
        signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "." +
                         b64url(json.dumps(claims, separators=(",", ":")).encode()))
        signature = self.key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64url(signature), now

    def log(self, line):
        with self.log_lock, open(self.args.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def check_basic(self, header):
        """(ok, subject): ok is False for malformed or wrong credentials."""
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic":
            return False, None
        try:
            user, _, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return False, None
        ok = (hmac.compare_digest(user, self.args.user) and
              hmac.compare_digest(password, self.args.password))
        return ok, user if ok else None


def handler_for(issuer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "fluxopctl-test-token-issuer"

        def log_message(self, fmt, *args):  # the request log is ours
            pass

        def reply(self, status, body, extra_headers=(), grant=None, subject=None):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra_headers:
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            line = f"{self.command} {self.path} auth={'yes' if self.headers.get('Authorization') else 'no'}"
            if grant:
                line += f" grant={grant}"
            line += f" sub={subject or '-'} status={status}"
            issuer.log(line)

        def unauthorized(self, grant=None, message="invalid credentials"):
            self.reply(401, {"errors": [{"code": "UNAUTHORIZED", "message": message}]},
                       [("WWW-Authenticate", 'Basic realm="fluxopctl-test-token-issuer"')], grant)

        def issue(self, subject, service, scope_values, grant=None, refresh_token=None):
            if service != issuer.args.service:
                self.reply(400, {"errors": [{"code": "DENIED", "message": f"unknown service {service!r}"}]},
                           grant=grant)
                return
            access = issuer.grant(subject, parse_scopes(scope_values))
            token, now = issuer.token(subject, service, access)
            body = {
                "token": token,
                "access_token": token,
                "expires_in": issuer.args.lifetime,
                "issued_at": datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
                .strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            if scope_values:
                body["scope"] = " ".join(scope_values)
            if refresh_token:
                body["refresh_token"] = refresh_token
            self.reply(200, body, grant=grant, subject=subject)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path != "/token":
                self.reply(404, {"errors": [{"code": "NOT_FOUND", "message": "no such path"}]})
                return
            query = urllib.parse.parse_qs(url.query)
            subject = None
            authorization = self.headers.get("Authorization")
            if authorization:
                ok, subject = issuer.check_basic(authorization)
                if not ok:
                    self.unauthorized()
                    return
            refresh = issuer.args.identity_token if (
                subject and query.get("offline_token", [""])[0] == "true") else None
            self.issue(subject, query.get("service", [""])[0], query.get("scope", []),
                       refresh_token=refresh)

        def do_POST(self):
            url = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            form = urllib.parse.parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
            if url.path != "/token":
                self.reply(404, {"errors": [{"code": "NOT_FOUND", "message": "no such path"}]})
                return
            grant = form.get("grant_type", [""])[0]
            service = form.get("service", [""])[0]
            scopes = form.get("scope", [])
            if grant == "refresh_token":
                token = form.get("refresh_token", [""])[0]
                if not issuer.args.identity_token or not hmac.compare_digest(
                        token, issuer.args.identity_token):
                    self.unauthorized(grant, "invalid refresh token")
                    return
                self.issue(issuer.args.user, service, scopes, grant, refresh_token=token)
            elif grant == "password":
                user = form.get("username", [""])[0]
                password = form.get("password", [""])[0]
                if not (hmac.compare_digest(user, issuer.args.user) and
                        hmac.compare_digest(password, issuer.args.password)):
                    self.unauthorized(grant)
                    return
                refresh = issuer.args.identity_token if form.get("access_type", [""])[0] == "offline" else None
                self.issue(user, service, scopes, grant, refresh_token=refresh)
            else:
                self.reply(400, {"error": "unsupported_grant_type"}, grant=grant or "none")

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port-file", required=True, help="written with the port once listening")
    parser.add_argument("--cert", required=True, help="written with the signing certificate (PEM)")
    parser.add_argument("--log", required=True, help="request log (appended)")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", default=os.environ.get("TOKEN_ISSUER_PASSWORD"),
                        help="default: $TOKEN_ISSUER_PASSWORD")
    parser.add_argument("--identity-token", default=os.environ.get("TOKEN_ISSUER_IDENTITY_TOKEN", ""),
                        help="the refresh token accepted by POST grant_type=refresh_token")
    parser.add_argument("--service", default="fluxopctl-test-registry")
    parser.add_argument("--issuer", default="fluxopctl-test-issuer")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--lifetime", type=int, default=300, help="token lifetime, seconds")
    parser.add_argument("--timeout", type=float, default=600, help="exit after this many seconds")
    args = parser.parse_args()
    if args.password is None:
        parser.error("--password or $TOKEN_ISSUER_PASSWORD is required")

    issuer = Issuer(args)
    with open(args.cert, "wb") as f:
        f.write(issuer.cert.public_bytes(serialization.Encoding.PEM))
    open(args.log, "a").close()

    serve([ThreadingHTTPServer((args.host, args.port), handler_for(issuer))], args.port_file,
          args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
