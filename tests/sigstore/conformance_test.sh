#!/usr/bin/env bash
# The Sigstore conformance suite's verification cases (test/test_bundle.py::
# test_verify over test/assets/bundle-verify, each for the file and for its
# digest), run offline against `fluxopctl verify bundle` through
# tests/sigstore/conformance-client. The suite is read where it is
# (../shared/sigstore-conformance beside the repository, or
# $FLUXOPCTL_SIGSTORE_CONFORMANCE), never copied; its Python dependencies
# (pinned by its requirements.txt) are in a virtual environment that
# tests/sigstore/conformance_env.sh makes in the test cache.
#   conformance_test.sh BIN ROOT
set -euo pipefail
bin=$(realpath "$1")
root=$(realpath "$2")
source "$root/tests/lib/skip.sh"
suite=${FLUXOPCTL_SIGSTORE_CONFORMANCE:-$root/../shared/sigstore-conformance}
[ -f "$suite/test/test_bundle.py" ] || skip_test "no Sigstore conformance suite at $suite"
venv=$("$root/tests/sigstore/conformance_env.sh" --path)
[ -f "$venv/.complete" ] ||
  skip_test "no Python environment for the suite at $venv (tests/sigstore/conformance_env.sh makes it)"
cases=$(find "$suite/test/assets/bundle-verify" -mindepth 1 -maxdepth 1 -type d | wc -l)
report=$(mktemp)
trap 'rm -f "$report"' EXIT
# The suite's directory is read-only: no cache, no bytecode written there.
cd "$suite"
status=0
FLUXOPCTL=$bin PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$root/tests/sigstore" \
  "$venv/bin/pytest" -p offline_token -p no:cacheprovider -q --skip-signing \
  --entrypoint="$root/tests/sigstore/conformance-client" \
  "test/test_bundle.py::test_verify" >"$report" 2>&1 || status=$?
grep -E '^(FAILED|ERROR)' "$report" || true
tail -n 1 "$report"
passed=$(grep -oE '[0-9]+ passed' "$report" | grep -oE '[0-9]+' || echo 0)
# Each case runs twice: with the file, and with its digest.
if [ "$status" -ne 0 ] || [ "$passed" -ne $((cases * 2)) ]; then
  echo "FAIL sigstore conformance: $passed of $((cases * 2)) runs of the $cases cases passed"
  exit 1
fi
echo "ok sigstore conformance: all $cases cases, file and digest ($passed runs)"

# fluxopctl's own flags beyond the suite's, on one of its bundles: the
# identity and issuer by regular expression, and what a refusal says.
assets=$suite/test/assets/bundle-verify
bundle=(--bundle "$assets/happy-path-v0.3/bundle.sigstore.json")
actions=https://token.actions.githubusercontent.com
failures=0
expect() {  # expect NAME STATUS TEXT ARGS...: the exit status, and TEXT in the output
  local name=$1 status=$2 text=$3 out code=0
  shift 3
  out=$("$bin" verify bundle "$@" "$assets/a.txt" 2>&1) || code=$?
  if [ "$code" -eq "$status" ] && [[ "$out" == *"$text"* ]]; then
    echo "ok verify bundle: $name"
  else
    echo "FAIL verify bundle: $name: exit $code: $out"
    failures=$((failures + 1))
  fi
}
expect "identity and issuer by regexp" 0 "verified, signed by https://github.com/sigstore-conformance/" \
  "${bundle[@]}" --certificate-identity-regexp '^https://github\.com/sigstore-conformance/.*$' \
  --certificate-oidc-issuer-regexp '^https://token\.actions\.githubusercontent\.com$'
expect "another identity refused, both named" 1 \
  'not matching "^https://github\\.com/fluxcd/.*$"' \
  "${bundle[@]}" --certificate-identity-regexp '^https://github\.com/fluxcd/.*$' --certificate-oidc-issuer "$actions"
expect "another issuer refused, both named" 1 \
  "issued by \"$actions\", not \"https://accounts.google.com\"" \
  "${bundle[@]}" --certificate-identity-regexp . --certificate-oidc-issuer https://accounts.google.com
expect "keyless without an identity is a usage error" 2 "error: --certificate-identity: required" \
  "${bundle[@]}" --certificate-oidc-issuer "$actions"
expect "--key with --certificate-* is a usage error" 2 "error: --key:" \
  "${bundle[@]}" --key "$assets/managed-key-happy-path/key.pub" --certificate-oidc-issuer "$actions"
[ "$failures" -eq 0 ]
