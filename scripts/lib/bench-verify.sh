# Sourced by scripts/bench: the verify mode (issue 42). What `--verify` adds
# to a warm `apply --dry-run=server` of an instance of four controllers: the
# distribution artifact and the four images, each verified once (the sealed
# records in the cache filled by a first apply), then timed side by side
# with the same apply without --verify, both --offline (the artifact's tag
# read from the cache: neither asks a registry). The fixture: the synthetic
# images and a distribution of tests/mirror (Flux's newest 2.9 manifests) in
# a local registry, signed by cosign with a key pair (scripts/lib/cosign.sh),
# installed on a local control plane (scripts/cluster). Median wall time and
# mean CPU time (hyperfine); checks the goal (at most 5 ms more). Uses
# $fluxopctl, $distribution, $root, $work, $keep and $runs from scripts/bench.

# Median and mean CPU (user + system) seconds of result I of hyperfine's JSON FILE.
bench_verify_times() {
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][int(sys.argv[2])]; print(r['median'], r['user'] + r['system'])" "$1" "$2"
}

bench_verify() {
  source "$root/scripts/lib/cosign.sh"
  source "$root/tests/mirror/lib.sh"
  local version ref up
  bench_verify_cluster=$work/cluster  # global: the EXIT trap stops it
  version=$(ls "$distribution/flux-images" | grep '^v2\.9\.' | sort -V | tail -n 1)
  [ -n "$version" ] || die "no Flux 2.9 in $distribution"
  runs=${runs:-30}
  cosign_ensure_built || die "cosign $cosign_version could not be built"
  registry_ensure_installed || die "the Debian package docker-registry is not installed and could not be"
  trap 'set +e; registry_stop; FLUXOPCTL_CLUSTER_DIR=$bench_verify_cluster "$root/scripts/cluster" down >/dev/null 2>&1; $keep || rm -rf "$work"' EXIT
  # The test infrastructure's cache (cosign, the cluster's binaries) stays
  # the machine's; fluxopctl's cache and seal are the run's own.
  export FLUXOPCTL_TEST_CACHE=${FLUXOPCTL_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fluxopctl-test}
  export XDG_CACHE_HOME=$work/cache XDG_STATE_HOME=$work/state DOCKER_CONFIG=$work/docker
  export COSIGN_PASSWORD='' COSIGN_YES=true TUF_ROOT=$work/tuf
  mkdir -p "$DOCKER_CONFIG"
  registry_start "$work/registry" >/dev/null 2>"$work/registry.err" || die "the local registry did not start"
  mirror_source_fixture "$distribution/flux/$version" "$version" "$work/dist" ||
    die "the synthetic images or the test distribution"
  "$fluxopctl" push "$work/dist" "oci://$REGISTRY_ADDR/flux/manifests:v1" >/dev/null 2>"$work/push.err" ||
    die "fluxopctl push: $(tail -n 1 "$work/push.err")"
  (cd "$work" && "$cosign" generate-key-pair --output-key-prefix signer >/dev/null 2>&1) ||
    die "cosign generate-key-pair failed"
  for ref in "$REGISTRY_ADDR/flux/manifests:v1" $(mirror_catalog_refs "$work/dist" "$version"); do
    "$cosign" sign --key "$work/signer.key" --tlog-upload=false --use-signing-config=false \
      --new-bundle-format=false "$ref" >"$work/sign.out" 2>&1 || die "cosign sign $ref: $(tail -n 1 "$work/sign.out")"
  done
  up=$(FLUXOPCTL_CLUSTER_DIR=$bench_verify_cluster "$root/scripts/cluster" up 2>"$work/up.err") ||
    { tail -n 5 "$work/up.err" >&2; die "scripts/cluster up failed"; }
  eval "$up"
  cat >"$work/instance.yaml" <<YAML
apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata:
  name: flux
  namespace: flux-system
spec:
  distribution:
    version: "2.9.x"
    registry: $REGISTRY_ADDR/fluxcd
    variant: upstream-alpine
    artifact: oci://$REGISTRY_ADDR/flux/manifests:v1
  components: [source-controller, kustomize-controller, helm-controller, notification-controller]
YAML
  # Installed once, verifying: the five records sealed in the cache.
  "$fluxopctl" apply "$work/instance.yaml" --no-wait --verify --key "$work/signer.pub" \
    >"$work/install.out" 2>"$work/install.err" || die "the install: $(tail -n 1 "$work/install.err")"
  local verified
  verified=$(grep -c '^verified the signature' "$work/install.err")
  [ "$verified" = 5 ] || die "the install verified $verified signatures, not 5 (the artifact and 4 images)"
  local plain="$fluxopctl apply $work/instance.yaml --dry-run=server --offline"
  local checked="$plain --verify --key $work/signer.pub"
  echo "apply --dry-run=server --offline of Flux $version, four controllers, warm; $runs runs each, side by side"
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$work/verify.json" "$plain" "$checked" >/dev/null 2>&1 ||
    die "hyperfine failed"
  local without with
  read -r -a without < <(bench_verify_times "$work/verify.json" 0)
  read -r -a with < <(bench_verify_times "$work/verify.json" 1)
  echo
  echo "| apply --dry-run=server, warm | median | mean CPU (user + sys) |"
  echo "|---|---|---|"
  python3 - "${without[@]}" "${with[@]}" <<'PY'
import sys
m0, c0, m1, c1 = map(float, sys.argv[1:5])
print(f"| without --verify | {m0 * 1000:.1f} ms | {c0 * 1000:.1f} ms |")
print(f"| --verify (artifact + 4 images, sealed records) | {m1 * 1000:.1f} ms | {c1 * 1000:.1f} ms |")
print(f"| what --verify adds | {(m1 - m0) * 1000:+.1f} ms | {(c1 - c0) * 1000:+.1f} ms |")
sys.exit(0 if (c1 - c0) * 1000 <= 5 else 1)
PY
  local goal=$?
  echo
  [ "$goal" = 0 ] && echo "goal met: --verify adds at most 5 ms of CPU" ||
    echo "GOAL MISSED: --verify adds more than 5 ms of CPU"
}
