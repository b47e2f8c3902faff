#!/usr/bin/env python3
"""The SPDX 2.3 JSON SBOM of a static fluxopctl (scripts/release), on stdout.

Every library linked into the binary, from the linker's map (-Wl,-Map, set by
CMakeLists.txt for FLUXOPCTL_STATIC): each archive the linker took a member
of is a file of a Debian package (dpkg -S), named with the package's version
and its source package and version, or a library built from Debian's source
package by scripts/lib/static-build.sh (--from-source: libcurl, ISA-L),
named by that source; the header-only libraries compiled in (--header-only
PACKAGE) are added. With --deb-fields FILE, also writes the .deb's
Built-Using field (the source packages of what the binary contains, as
Debian's policy asks of a package that includes parts of others) to FILE.

Deterministic: the same inputs give the same bytes (the time is --epoch).
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--binary", required=True)
parser.add_argument("--map", required=True)
parser.add_argument("--arch", required=True)
parser.add_argument("--version", required=True)
parser.add_argument("--epoch", type=int, required=True)
parser.add_argument("--from-source", action="append", default=[], metavar="ARCHIVE=SOURCE=VERSION[=NOTE]",
                    help="an archive built from Debian's source package SOURCE VERSION; "
                         "its library is named by the archive (libcurl.a: libcurl)")
parser.add_argument("--header-only", action="append", default=[])
parser.add_argument("--deb-fields")
parser.add_argument("--sysroot", help="packages extracted, not installed (scripts/lib/static-build.sh)")
args = parser.parse_args()


def dpkg_query(package):
    out = subprocess.run(
        ["dpkg-query", "-W", "-f=${Package} ${Version} ${source:Package} ${source:Version}", package],
        check=True, capture_output=True, text=True).stdout.split()
    return {"package": out[0], "version": out[1], "source": out[2], "source_version": out[3]}


def control_field(text, name):
    m = re.search(rf"^{name}: (\S+)(?: \((\S+)\))?", text, re.M)
    return m.groups() if m else (None, None)


def sysroot_owner(path):
    """The record of the extracted package (--sysroot) that holds PATH, or None."""
    if not args.sysroot:
        return None
    sysroot = os.path.realpath(args.sysroot)
    real = os.path.realpath(path)
    if not real.startswith(sysroot + "/"):
        return None
    inner = real[len(sysroot):]
    info = os.path.join(sysroot, "info")
    for name in sorted(os.listdir(info)):
        if name.endswith(".list") and inner in open(os.path.join(info, name)).read().split("\n"):
            control = open(os.path.join(info, name[:-5] + ".control")).read()
            package, _ = control_field(control, "Package")
            version, _ = control_field(control, "Version")
            source, source_version = control_field(control, "Source")
            return {"package": package, "version": version, "source": source or package,
                    "source_version": source_version or version}
    raise SystemExit(f"release-sbom: {path} is in {sysroot} but in none of its packages")


def owner(path):
    """The Debian package that ships PATH ("libssl-dev:amd64")."""
    for candidate in (path, os.path.realpath(path)):
        result = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if result.returncode == 0:
            return result.stdout.split(": ")[0]
    raise SystemExit(f"release-sbom: {path} belongs to no Debian package")


# The archives the linker took members of.
archives = set()
with open(args.map, encoding="utf-8", errors="replace") as f:
    for line in f:
        m = re.match(r"^(/\S+?\.a)\(", line)
        if m:
            archives.add(os.path.normpath(m.group(1)))

from_source = {}  # real path of the archive -> record
for spec in args.from_source:
    path, source, version, *note = spec.split("=", 3)
    comment = "built from Debian's source package" + (f" {note[0]}" if note else "") + \
        " (scripts/lib/static-build.sh)"
    from_source[os.path.realpath(path)] = {
        "package": os.path.basename(path).removesuffix(".a"), "version": version, "source": source,
        "source_version": version, "from_source": True, "comment": comment}

libraries = {}  # name -> record
for archive in sorted(archives):
    built = from_source.get(os.path.realpath(archive))
    if built:
        libraries[built["package"]] = dict(built, archives=[archive])
        continue
    if os.path.basename(archive).startswith("libfluxop_"):
        continue  # fluxopctl's own layers
    extracted = sysroot_owner(archive)
    package = extracted["package"] if extracted else owner(archive)
    record = libraries.setdefault(package, dict(extracted or dpkg_query(package), archives=[]))
    record["archives"].append(archive)
for package in args.header_only:
    libraries[package] = dict(dpkg_query(package), archives=[],
                              comment="header-only, compiled into fluxopctl")

binary = open(args.binary, "rb").read()
digest = hashlib.sha256(binary).hexdigest()
created = datetime.datetime.fromtimestamp(args.epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def spdx_id(text):
    return "SPDXRef-" + re.sub(r"[^A-Za-z0-9.-]", "-", text)


name = f"fluxopctl-{args.version}-linux-{args.arch}"
main_id = spdx_id("Package-fluxopctl")
packages = [{
    "SPDXID": main_id,
    "name": "fluxopctl",
    "versionInfo": args.version,
    "supplier": "NOASSERTION",
    "downloadLocation": "NOASSERTION",
    "filesAnalyzed": False,
    "checksums": [{"algorithm": "SHA256", "checksumValue": digest}],
    "licenseConcluded": "NOASSERTION",
    "licenseDeclared": "Apache-2.0",
    "copyrightText": "NOASSERTION",
    "primaryPackagePurpose": "APPLICATION",
    "comment": f"the static executable of {name}.tar.gz, .deb and the image (linux/{args.arch})",
}]
relationships = [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                  "relatedSpdxElement": main_id}]
for key in sorted(libraries):
    lib = libraries[key]
    package_name = lib["package"].split(":")[0]
    pid = spdx_id(f"Package-{package_name}")
    purl = f"pkg:deb/debian/{package_name}@{lib['version']}?arch={args.arch}&distro=debian-12"
    if lib.get("from_source"):
        purl = f"pkg:deb/debian/{lib['source']}@{lib['version']}?arch=source&distro=debian-12"
    entry = {
        "SPDXID": pid,
        "name": package_name,
        "versionInfo": lib["version"],
        "supplier": "Organization: Debian",
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "sourceInfo": f"Debian source package {lib['source']} {lib['source_version']}",
        "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION",
        "copyrightText": "NOASSERTION",
        "primaryPackagePurpose": "LIBRARY",
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                          "referenceLocator": purl}],
    }
    comment = lib.get("comment", "")
    archives = sorted(os.path.basename(a) for a in lib["archives"])
    if archives:
        comment = (comment + "; " if comment else "") + "linked: " + ", ".join(archives)
    entry["comment"] = comment
    packages.append(entry)
    relationships.append({"spdxElementId": main_id, "relationshipType": "STATIC_LINK",
                          "relatedSpdxElement": pid})

document = {
    "spdxVersion": "SPDX-2.3",
    "dataLicense": "CC0-1.0",
    "SPDXID": "SPDXRef-DOCUMENT",
    "name": name,
    "documentNamespace": f"https://github.com/fluxopctl/fluxopctl/spdx/{name}-{digest}",
    "creationInfo": {"created": created, "creators": ["Tool: fluxopctl-scripts-release"]},
    "packages": packages,
    "relationships": relationships,
}
json.dump(document, sys.stdout, indent=2)
sys.stdout.write("\n")

if args.deb_fields:
    sources = sorted({(lib["source"], lib["source_version"]) for lib in libraries.values()})
    with open(args.deb_fields, "w") as f:
        f.write("Built-Using: " + ", ".join(f"{s} (= {v})" for s, v in sources) + "\n")
