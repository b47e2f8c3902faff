# Sourced by the test scripts: what a test does when it cannot run, or when
# one of its cases cannot.
#
# Outside CI a skip stays a skip, printed: the whole test exits 77 (ctest's
# skip), a case is counted as skipped. In CI (CI=true) every test must run,
# so the same calls are failures: .ci/run installs or builds everything the
# tests need, and a test that still cannot run means something is broken.
#
#   skip_test REASON            the whole test cannot run: exit 77, or 1 in CI
#   skip_is_failure             true in CI: a script's own skip() counts it failed

skip_is_failure() { [ "${CI:-}" = true ]; }

skip_test() {
  if skip_is_failure; then
    echo "FAIL cannot run in CI: $*"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "skipped: $*"
  exit 77
}
