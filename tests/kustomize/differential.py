#!/usr/bin/env python3
"""Differential test: `fluxopctl kustomize DIR` against `kubectl kustomize DIR`.

Every fixture is a directory NN-short-name/ with a kustomization.yaml at its
root. Both tools render it; the outputs must be byte-identical (the README
promises it). When they are not, the outputs are also parsed and compared as
lists of objects in order (kustomize's output order is part of the behaviour),
to name the first differing object and show a readable diff.

A fixture holding a file `expect-error` must fail in both tools; fluxopctl must
then print nothing on stdout and exactly one stderr line, which must contain
every non-empty line of `expect-error` as a substring.

Known differences wait in pending/ (see its README), outside the default run.

fluxopctl runs with a cache directory of its own (XDG_CACHE_HOME in a
temporary directory), never the user's parse cache.

Exit codes: 0 all passed, 1 any failure, 77 kubectl missing (ctest's skip;
a failure when CI=true, as tests/lib/skip.sh).
"""

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

FIXTURE_NAME = re.compile(r"^\d\d-[a-z0-9-]+$")
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
DIFF_LINES = 40


class Run:
    """The outcome of one tool on one fixture."""

    def __init__(self, argv, timeout, env=None):
        self.argv = argv
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=timeout, env=env)
            self.code, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr
            self.timed_out = False
        except subprocess.TimeoutExpired as e:
            self.code, self.stdout, self.stderr = None, e.stdout or b"", e.stderr or b""
            self.timed_out = True

    def ok(self):
        return self.code == 0

    def describe(self):
        if self.timed_out:
            return "timed out"
        return f"exit {self.code}"


def text(raw):
    return raw.decode("utf-8", "replace").strip()


def one_line(error):
    return " ".join(str(error).split())


def fixtures(root, only):
    names = sorted(
        n
        for n in os.listdir(root)
        if FIXTURE_NAME.match(n)
        and any(os.path.isfile(os.path.join(root, n, k)) for k in KUSTOMIZATION_FILES)
    )
    if only:
        names = [n for n in names if n == only or n.startswith(only + "-")]
    return names


def same(a, b):
    """Strict structural equality: Python's == says 1 == 1.0 == True, YAML does not."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def identity(obj):
    if not isinstance(obj, dict):
        return repr(obj)[:60]
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    name = meta.get("name", "<no name>")
    return f"{obj.get('kind', '<no kind>')}/{name}" + (f" (namespace {ns})" if ns else "")


class Dumper(yaml.SafeDumper):
    """Renders multi-line strings as literal blocks, so diffs of scripts stay readable."""


def represent_str(dumper, value):
    style = "|" if "\n" in value and value == value.rstrip(" ") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


Dumper.add_representer(str, represent_str)


def render(obj):
    if obj is None:
        return []
    return yaml.dump(obj, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=1000).splitlines()


def object_diff(expected, actual):
    """Names the first differing object and shows a short diff of its two renderings."""
    for i in range(max(len(expected), len(actual))):
        want = expected[i] if i < len(expected) else None
        got = actual[i] if i < len(actual) else None
        if want is not None and got is not None and same(want, got):
            continue
        lines = [
            f"  object #{i + 1}: kubectl has {identity(want) if want is not None else 'nothing'},"
            f" fluxopctl has {identity(got) if got is not None else 'nothing'}"
            f" ({len(expected)} vs {len(actual)} objects)"
        ]
        diff = list(
            difflib.unified_diff(render(want), render(got), "kubectl", "fluxopctl", lineterm="", n=2)
        )
        if not diff and want is not None and got is not None:
            diff = ["  (same rendering; the scalar types differ, e.g. 1 against \"1\" or true)"]
        lines += ["    " + d for d in diff[:DIFF_LINES]]
        if len(diff) > DIFF_LINES:
            lines.append(f"    ... {len(diff) - DIFF_LINES} more diff lines")
        return lines
    return []


def first_byte_difference(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for n, (x, y) in enumerate(zip(la, lb), 1):
        if x != y:
            return f"line {n}: kubectl {x[:70]!r} vs fluxopctl {y[:70]!r}"
    return f"line {min(len(la), len(lb)) + 1}: one output ends early ({len(la)} vs {len(lb)} lines)"


class Loader(yaml.SafeLoader):
    """PyYAML's safe loader without the YAML 1.1 `=` and `<<` tags: kubectl emits both plain."""


UNUSED_TAGS = ("tag:yaml.org,2002:value", "tag:yaml.org,2002:merge")
Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in UNUSED_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse(stream):
    return [d for d in yaml.load_all(stream.decode("utf-8"), Loader=Loader) if d is not None]


def check_error(directory, kubectl, fluxop):
    """Returns a list of failure lines (empty when the fixture passes)."""
    with open(os.path.join(directory, "expect-error"), encoding="utf-8") as f:
        expected = [line.strip() for line in f if line.strip()]
    problems = []
    if kubectl.ok():
        problems.append("kubectl succeeded but the fixture expects an error (fixture bug)")
    if fluxop.ok() or fluxop.timed_out:
        problems.append(f"fluxopctl {fluxop.describe()}, an error was expected")
    if fluxop.stdout:
        problems.append(f"fluxopctl printed {len(fluxop.stdout)} bytes on stdout while failing")
    message = fluxop.stderr.decode("utf-8", "replace").rstrip("\n")
    if "\n" in message or not message:
        problems.append(f"fluxopctl stderr should be one line, got {message.count(chr(10)) + 1 if message else 0}")
    problems += [f"fluxopctl stderr lacks {e!r}" for e in expected if e not in message]
    if problems:
        problems.append(f"fluxopctl stderr: {message[:300]!r}")
    return problems


def byte_diff(kubectl, fluxop):
    """The first differing line and a short unified diff of the two outputs."""
    want, got = text(kubectl.stdout), text(fluxop.stdout)
    diff = list(
        difflib.unified_diff(want.splitlines(), got.splitlines(), "kubectl", "fluxopctl", lineterm="", n=1)
    )
    lines = ["  same objects, but the bytes differ: " + first_byte_difference(want, got)]
    if want == got:
        lines.append("  (they differ only in trailing whitespace or a final newline)")
    lines += ["    " + d for d in diff[:DIFF_LINES]]
    return lines


def check_output(kubectl, fluxop):
    """Returns the failure lines (empty when the outputs are byte-identical)."""
    if not kubectl.ok():
        return [f"kubectl {kubectl.describe()} (fixture bug): {text(kubectl.stderr)[:300]}"]
    if not fluxop.ok():
        return [f"fluxopctl {fluxop.describe()}: {text(fluxop.stderr)[:300]}"]
    if kubectl.stdout == fluxop.stdout:
        return []
    try:
        expected = parse(kubectl.stdout)
    except yaml.YAMLError as e:
        return [f"kubectl output does not load in PyYAML (test script bug): {one_line(e)}"]
    try:
        actual = parse(fluxop.stdout)
    except yaml.YAMLError as e:
        return [f"fluxopctl output is not YAML: {one_line(e)}"]
    if len(expected) == len(actual) and all(same(a, b) for a, b in zip(expected, actual)):
        return byte_diff(kubectl, fluxop)
    return object_diff(expected, actual)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fluxopctl", required=True, help="path to the fluxopctl binary")
    ap.add_argument("--fixtures", default=here, help="directory holding the NN-name fixtures")
    ap.add_argument("--only", help="run one fixture (its full name, or its NN number)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per tool run")
    ap.add_argument("-v", "--verbose", action="store_true", help="show byte differences and errors")
    args = ap.parse_args()

    kubectl = shutil.which("kubectl")
    if not kubectl:
        if os.environ.get("CI") == "true":
            print("FAIL cannot run in CI: kubectl not found")
            print("0 passed, 1 failed")
            return 1
        print("skipped: kubectl not found")
        return 77
    if not os.access(args.fluxopctl, os.X_OK):
        print(f"FAIL: fluxopctl not executable: {args.fluxopctl}")
        print("0 passed, 1 failed")
        return 1

    names = fixtures(args.fixtures, args.only)
    if not names:
        print(f"FAIL: no fixture matches in {args.fixtures}")
        print("0 passed, 1 failed")
        return 1

    cache = tempfile.TemporaryDirectory(prefix="differential-cache-")
    env = dict(os.environ, XDG_CACHE_HOME=cache.name)
    passed, failed = 0, 0
    started = time.monotonic()
    for name in names:
        directory = os.path.join(args.fixtures, name)
        want = Run([kubectl, "kustomize", directory], args.timeout)
        got = Run([args.fluxopctl, "kustomize", directory], args.timeout, env)
        if os.path.exists(os.path.join(directory, "expect-error")):
            problems = check_error(directory, want, got)
            note = "failed as expected"
            if args.verbose:
                note += f"; kubectl: {text(want.stderr)[:200]!r}; fluxopctl: {text(got.stderr)!r}"
        else:
            problems = check_output(want, got)
            note = "bytes identical"
        if problems:
            failed += 1
            print(f"FAIL {name}: {problems[0].strip()}")
            for p in problems[1:]:
                print(p if p.startswith("  ") else "  " + p)
            continue
        passed += 1
        print(f"ok {name} ({note})")
    cache.cleanup()
    print(f"({time.monotonic() - started:.1f}s)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
