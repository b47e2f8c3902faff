"""A pytest plugin that keeps the Sigstore conformance suite offline.

The suite's `client` fixture downloads an OIDC token for its signing
tests, even when only verification runs (--skip-signing). Loaded with
`-p offline_token` before the suite's conftest imports urllib3.request, it
answers that one request with a token of the same shape that signs
nothing: the verification tests read no field of it.
"""

import base64
import json
import time

import urllib3


class _Answer:
    def __init__(self, data: bytes) -> None:
        self.data = data


def _part(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def _offline_request(method, url, *args, **kwargs):
    if not url.startswith("https://storage.googleapis.com/sigstore-conformance-testing-token/"):
        raise RuntimeError(f"the conformance run is offline: no request to {url}")
    claims = {"email": "offline@invalid", "iss": "https://offline.invalid", "exp": int(time.time()) + 3600}
    return _Answer(f"{_part({'alg': 'none'})}.{_part(claims)}.".encode())


urllib3.request = _offline_request
