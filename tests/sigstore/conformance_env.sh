#!/usr/bin/env bash
# The Python environment of the Sigstore conformance suite: a virtual
# environment in the test cache with the suite's requirements.txt (pinned,
# with hashes) from PyPI. Made once; .ci/run calls it.
#   conformance_env.sh [--path]   (--path: print where it is, make nothing)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${FLUXOPCTL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fluxopctl-test}
suite=${FLUXOPCTL_SIGSTORE_CONFORMANCE:-$root/../shared/sigstore-conformance}
requirements=$suite/requirements.txt
# The environment is named by its requirements: a new suite makes a new one.
venv=$cache/sigstore-conformance-$(sha256sum "$requirements" 2>/dev/null | cut -c1-12)
if [ "${1:-}" = --path ]; then
  echo "$venv"
  exit 0
fi
[ -f "$requirements" ] || { echo "conformance_env.sh: no $requirements" >&2; exit 1; }
# .complete: the last step, so that an interrupted install is made again.
[ -f "$venv/.complete" ] && exit 0
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$requirements"
touch "$venv/.complete"
