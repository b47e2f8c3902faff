#!/usr/bin/env python3
"""Pushes small synthetic controller images to a plain-HTTP test registry.

  synthetic_images.py HOST:PORT PREFIX

Pushes PREFIX/source-controller (an OCI index of linux/amd64 and linux/arm64),
kustomize-controller, helm-controller and notification-controller (one
manifest each). Every image holds a layer shared by all of them (so that a
mirror can mount it across repositories) and one of its own. The bytes are
fixed, so the digests are too: tests/mirror/upstream-alpine.yaml names them.
Prints "NAME TAG DIGEST" per image.
"""
import hashlib
import json
import sys
import urllib.request

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
CONFIG = "application/vnd.oci.image.config.v1+json"
TIMEOUT = 30


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def request(method, url, data=None, content_type=None):
    req = urllib.request.Request(url, data=data, method=method)
    if content_type:
        req.add_header("Content-Type", content_type)
    with urllib.request.urlopen(req, timeout=TIMEOUT) as response:
        return response.status, response.headers


def push_blob(base, repo, data):
    _, headers = request("POST", f"{base}/v2/{repo}/blobs/uploads/", b"")
    location = headers["Location"]
    if location.startswith("/"):
        location = base + location
    separator = "&" if "?" in location else "?"
    request("PUT", f"{location}{separator}digest={digest(data)}", data, "application/octet-stream")
    return {"mediaType": LAYER, "digest": digest(data), "size": len(data)}


def push_manifest(base, repo, reference, document, media_type):
    data = json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
    request("PUT", f"{base}/v2/{repo}/manifests/{reference}", data, media_type)
    return {"mediaType": media_type, "digest": digest(data), "size": len(data)}


def push_image(base, repo, name, platform):
    shared = push_blob(base, repo, b"fluxopctl mirror test: the layer every image shares\n")
    own = push_blob(base, repo, f"fluxopctl mirror test: {name} for {platform}\n".encode())
    os_name, arch = platform.split("/")
    config_bytes = json.dumps({"architecture": arch, "os": os_name,
                               "rootfs": {"type": "layers",
                                          "diff_ids": [shared["digest"], own["digest"]]}},
                              sort_keys=True).encode()
    config = push_blob(base, repo, config_bytes)
    config["mediaType"] = CONFIG
    manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "config": config,
                "layers": [shared, own]}
    return manifest


def main():
    host, prefix = sys.argv[1], sys.argv[2]
    base = f"http://{host}"
    tags = {"source-controller": "v1.9.0", "kustomize-controller": "v1.9.0",
            "helm-controller": "v1.6.0", "notification-controller": "v1.9.0"}
    for name, tag in tags.items():
        repo = f"{prefix}/{name}"
        if name == "source-controller":
            children = []
            for platform in ("linux/amd64", "linux/arm64"):
                manifest = push_image(base, repo, name, platform)
                child = push_manifest(base, repo, digest(json.dumps(
                    manifest, separators=(",", ":"), sort_keys=True).encode()), manifest,
                    OCI_MANIFEST)
                os_name, arch = platform.split("/")
                child["platform"] = {"architecture": arch, "os": os_name}
                children.append(child)
            top = push_manifest(base, repo, tag, {"schemaVersion": 2, "mediaType": OCI_INDEX,
                                                  "manifests": children}, OCI_INDEX)
        else:
            top = push_manifest(base, repo, tag, push_image(base, repo, name, "linux/amd64"),
                                OCI_MANIFEST)
        print(f"{host}/{repo} {tag} {top['digest']}")


if __name__ == "__main__":
    main()
