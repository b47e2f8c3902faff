#!/usr/bin/env bash
# The CLI contract scripts rely on: help on every command, output on stdout
# only, one error line on stderr, exit codes 0 (ok), 1 (error), 2 (usage).
set -uo pipefail
bin=$1
fixtures=$2
root=$(cd "$fixtures/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
# A failure shows the end of the last command's output.
show "$work/out" "$work/err"

# No cache of the machine's: the parse cache is the test's own.
export XDG_CACHE_HOME=$work/cache

# A FIFO nobody ever writes to is refused once it has given nothing for
# 30 s, never read as empty nor waited on forever: started first, checked
# at the end, so that the other cases run while it waits.
mkfifo "$work/unwritten.fifo"
"$bin" create secret tls ca -n flux-system --ca-crt-file "$work/unwritten.fifo" --export \
  >"$work/unwritten.out" 2>"$work/unwritten.err" &
unwritten=$!

# stream_holds FILE WANT: WANT is "empty", or an extended regex a line matches.
stream_holds() {
  if [ "$2" = empty ]; then [ ! -s "$1" ]; else grep -qE -- "$2" "$1"; fi
}
shown() { if [ "$1" = empty ]; then echo empty; else echo "/$1/"; fi; }

# expect NAME EXIT STDOUT STDERR -- COMMAND...: the exit status and what each
# stream holds (see stream_holds). An error (exit 1) or a usage error (exit 2)
# is one stderr line starting with "error: ".
expect() {
  local name=$1 want=$2 out=$3 err=$4
  shift 5
  timeout 60 "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name: exit $got (want $want)"
  elif ! stream_holds "$work/out" "$out"; then
    fail "$name: stdout is not $(shown "$out")"
  elif ! stream_holds "$work/err" "$err"; then
    fail "$name: stderr is not $(shown "$err")"
  elif [ "$want" -eq 1 ] || [ "$want" -eq 2 ] &&
    { [ "$(wc -l <"$work/err")" -ne 1 ] || ! grep -q '^error: ' "$work/err"; }; then
    fail "$name: an error is one line on stderr, starting with 'error: '"
  else
    pass "$name"
  fi
}

expect "--help" 0 '^Subcommands:' empty -- "$bin" --help
expect "kustomize --help" 0 '^Usage: .*kustomize' empty -- "$bin" kustomize --help
expect "version --help" 0 '^Usage: .*version' empty -- "$bin" version --help
# No cluster configured: the client's version alone, exit 0.
no_cluster=(env -u KUBECONFIG -u KUBERNETES_SERVICE_HOST HOME="$work")
expect "version" 0 '^fluxopctl [0-9]+\.[0-9]+\.[0-9]+' empty -- "${no_cluster[@]}" "$bin" version
[ "$(wc -l <"$work/out")" -eq 1 ] || fail "version without a cluster: $(wc -l <"$work/out") lines"
expect "--version" 0 '^fluxopctl [0-9]+\.[0-9]+\.[0-9]+' empty -- "$bin" --version
# Usage errors: one line naming what is wrong, nothing on stdout, exit 2.
# Alone, the usage on stdout, as kubectl.
expect "no subcommand" 0 '^Subcommands:' empty -- "$bin"
expect "unknown flag" 2 empty "^error: unknown flag --bogus; see 'fluxopctl kustomize --help' for the flags$" -- \
  "$bin" kustomize --bogus
expect "unknown flag, suggested" 2 empty '^error: unknown flag --ouptut; did you mean --output\?$' -- \
  "$bin" get --ouptut yaml
expect "unknown flag=value, suggested" 2 empty '^error: unknown flag --ouptut; did you mean --output\?$' -- \
  "$bin" build --ouptut=json "$work/none.yaml"
expect "unknown flag before the command" 2 empty '^error: unknown flag --kubeconfg; did you mean --kubeconfig\?$' -- \
  "$bin" --kubeconfg x get
expect "bad -o" 2 empty '^error: --output: xml not in \{yaml,json\}$' -- "$bin" kustomize -o xml "$fixtures/01-resources-files"
expect "bad -o=" 2 empty '^error: --output: xml not in \{yaml,json\}$' -- "$bin" kustomize -o=xml "$fixtures/01-resources-files"
expect "apply --timeout 5x" 2 empty "^error: --timeout: '5x' is not a duration such as 5m" -- \
  "$bin" apply --timeout 5x "$work/none.yaml"
expect "apply --lock-timeout xyz" 2 empty "^error: --lock-timeout: 'xyz' is not a duration" -- \
  "$bin" apply --lock-timeout xyz "$work/none.yaml"
expect "pull --older-than 5x" 2 empty "^error: --older-than: '5x' is not a duration such as 720h$" -- \
  "$bin" pull --prune --older-than 5x
expect "missing FILE" 2 empty '^error: FILE or -f FILE is required$' -- "$bin" build
expect "FILE and -f" 2 empty '^error: FILE excludes --filename$' -- "$bin" build a.yaml -f b.yaml
# diff --version: a constraint nothing matches, or no constraint, names the flag.
expect "diff --version 3.x" 2 empty '^error: --version: no Flux version in .* matches "3\.x"' -- \
  "$bin" diff --version 3.x "$root/tests/oci/instance.yaml" --distribution-artifact "$root/tests/cli/distribution"
expect "diff --version not a constraint" 2 empty '^error: --version: ' -- \
  "$bin" diff --version 'x.y!' "$root/tests/oci/instance.yaml" --distribution-artifact "$root/tests/cli/distribution"

# The app's --version is not a flag of the commands: after one it used to
# print fluxopctl's version and exit 0, applying nothing. Only diff defines
# a --version of its own (above).
for command in apply build get delete wait report reconcile suspend resume pull push kustomize \
  version completion help; do
  expect "$command --version is refused" 2 empty "^error: --version: not a flag of \"$command\"" -- \
    "$bin" "$command" --version 2.9.x "$work/none.yaml"
  expect "$command --version= is refused" 2 empty "^error: --version: not a flag of \"$command\"" -- \
    "$bin" "$command" --version=2.9.x
done
expect "--version before a command" 0 '^fluxopctl [0-9]+\.[0-9]+\.[0-9]+(-[0-9]+-g[0-9a-f]{7,})?(-dirty)?$' empty -- "$bin" --version build
expect "--color after a command still falls through" 2 empty '^error: FILE or -f FILE is required$' -- \
  "$bin" build --color never
expect "--version after -- is a file name" 1 empty '^error: --version: No such file' -- \
  "$bin" build -- --version

# An unknown command is named, with the closest one; before or after flags.
expect "unknown command" 2 empty '^error: unknown command "aply" for "fluxopctl"; did you mean "apply"\?$' -- \
  "$bin" aply instance.yaml
expect "unknown command after --color" 2 empty '^error: unknown command "versoin" for "fluxopctl"; did you mean "version"\?$' -- \
  "$bin" --color never versoin
expect "unknown command, nothing close" 2 empty '^error: unknown command "frobnicate" for "fluxopctl"; see .fluxopctl --help.' -- \
  "$bin" frobnicate

# help [COMMAND]
expect "help" 0 '^Subcommands:' empty -- "$bin" help
grep -q '^  apply ' "$work/out" || fail "help: the commands are not listed"
expect "help apply" 0 '^Usage: fluxopctl apply ' empty -- "$bin" help apply
grep -q -- '--dry-run' "$work/out" || fail "help apply: not apply's flags"
expect "help unknown" 2 empty '^error: unknown command "aply" for "fluxopctl"; did you mean "apply"\?$' -- "$bin" help aply

# completion SHELL: the scripts of completions/, compiled in, loadable.
for shell in bash zsh fish; do
  file=$(case $shell in bash) echo fluxopctl.bash ;; zsh) echo _fluxopctl ;; fish) echo fluxopctl.fish ;; esac)
  expect "completion $shell" 0 'fluxopctl' empty -- "$bin" completion "$shell"
  cmp -s "$work/out" "$root/completions/$file" || fail "completion $shell: not completions/$file"
  if command -v "$shell" >/dev/null; then
    "$shell" -n "$work/out" 2>"$work/err" || fail "completion $shell: $shell -n: $(head -1 "$work/err")"
  else
    echo "(no $shell: its script's syntax is not checked)"
  fi
done
# Sourced, the bash script completes commands and their flags.
got=$(bash -c 'source "$1"; COMP_WORDS=(fluxopctl --color always ap); COMP_CWORD=3; _fluxopctl
  echo "${COMPREPLY[*]}"; COMP_WORDS=(fluxopctl completion ""); COMP_CWORD=2; _fluxopctl
  echo "${COMPREPLY[*]}"' _ <("$bin" completion bash))
[ "$got" = $'apply\nbash zsh fish' ] || fail "completion bash: sourced, it completes '$got'"
if command -v zsh >/dev/null; then
  zsh -c 'autoload -U compinit && compinit -u -d "$2/zcompdump" && source "$1" && [[ $_comps[fluxopctl] == _fluxopctl ]]' \
    _ <("$bin" completion zsh) "$work" >/dev/null 2>&1 || fail "completion zsh: sourced, it does not register _fluxopctl"
fi
expect "completion tcsh" 2 empty '^error: SHELL: tcsh not in \{bash,zsh,fish\}$' -- "$bin" completion tcsh

# version -o json|yaml: the version, the commit and date the build knew, the libraries.
expect "version -o json" 0 '"gitCommit"' empty -- "$bin" version -o json
python3 - "$work/out" <<'PY' || fail "version -o json: not the document"
import json, re, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["version", "gitCommit", "gitTreeState", "buildDate", "libraries"], list(d)
assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+(-[0-9]+-g[0-9a-f]{7,})?(-dirty)?", d["version"]), d["version"]
assert d["gitCommit"] == "unknown" or re.fullmatch(r"[0-9a-f]{40}", d["gitCommit"]), d["gitCommit"]
assert d["gitTreeState"] in ("clean", "dirty", "unknown"), d["gitTreeState"]
assert d["buildDate"] == "unknown" or re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", d["buildDate"]), d["buildDate"]
libraries = ["yaml-cpp", "nlohmann-json", "libcurl", "zlib", "ISA-L", "OpenSSL", "CLI11"]
assert sorted(d["libraries"]) == sorted(libraries), d["libraries"]
for name in libraries:
    assert re.match(r"[0-9]+\.[0-9]+", d["libraries"][name]), (name, d["libraries"][name])
PY
if git -C "$root" rev-parse HEAD >/dev/null 2>&1; then
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gitCommit"])' "$work/out" >"$work/commit"
  # The build may be older than the last commit: the commit is one of the repository's.
  git -C "$root" cat-file -e "$(cat "$work/commit")^{commit}" 2>/dev/null ||
    fail "version -o json: gitCommit $(cat "$work/commit") is no commit of $root"
fi
cp "$work/out" "$work/version.json"
for form in "-o=json" "--output=json" "-ojson" "--output json"; do
  # shellcheck disable=SC2086 # "--output json" is two words
  expect "version $form" 0 '"gitCommit"' empty -- "$bin" version $form
  cmp -s "$work/out" "$work/version.json" || fail "version $form: differs from -o json"
done
expect "version -o yaml" 0 '^gitCommit: ' empty -- "$bin" version -o yaml
expect "version -o xml" 2 empty '^error: --output: xml not in \{yaml,json\}$' -- "$bin" version -o xml

# --color takes auto, always or never, before the command or after it.
expect "--color bogus" 2 empty '^error: --color: bogus not in \{auto,always,never\}$' -- "$bin" --color bogus version
expect "--color after the command" 0 '^fluxopctl [0-9]' empty -- "$bin" version --color always
expect "--color=never" 0 '^fluxopctl [0-9]' empty -- "$bin" --color=never version
expect "missing dir" 1 empty "^error: $work/nope: not a directory\$" -- "$bin" kustomize "$work/nope"

mkdir -p "$work/k"
printf 'resources:\n- cm.yaml\nconfigMapGenerator: []\n' >"$work/k/kustomization.yaml"
expect "refused field" 1 empty \
  "^error: $work/k/kustomization.yaml: configMapGenerator: generators are not supported" \
  -- "$bin" kustomize "$work/k"

printf 'resources:\n- cm.yaml\n' >"$work/k/kustomization.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: [\n' >"$work/k/cm.yaml"
expect "malformed yaml" 1 empty "^error: $work/k/cm.yaml:7:1: " -- "$bin" kustomize "$work/k"

# The fixture's three objects, in kustomize's order, and nothing on stderr.
expect "kustomize yaml" 0 '^kind: ' empty -- "$bin" kustomize "$fixtures/01-resources-files"
kinds=$(grep '^kind: ' "$work/out" | tr '\n' ' ')
[ "$kinds" = "kind: ConfigMap kind: Service kind: Deployment " ] || fail "kustomize yaml: kinds are '$kinds'"
[ "$(grep -c '^---$' "$work/out")" -eq 2 ] || fail "kustomize yaml: not three documents"
expect "kustomize json" 0 '"kind": "List"' empty -- "$bin" kustomize -o json "$fixtures/01-resources-files"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["kind"]=="List"
assert [i["kind"] for i in d["items"]] == ["ConfigMap", "Service", "Deployment"]' \
  "$work/out" || fail "kustomize json: not a List of the three objects"
(cd "$fixtures/01-resources-files" && timeout 60 "$bin" kustomize >"$work/cwd.yaml") &&
  timeout 60 "$bin" kustomize "$fixtures/01-resources-files" | cmp -s - "$work/cwd.yaml" ||
  fail "default dir: kustomize without DIR differs from kustomize ."

# Unbounded inputs are refused before they are read whole: a device, a
# manifest that is a FIFO or a symlink to a device, an endless stdin.
expect "build /dev/zero" 1 empty '^error: /dev/zero: not a regular file$' -- "$bin" build /dev/zero
expect "build: stdin larger than 3 MiB" 1 empty '^error: -: larger than 3 MiB' -- \
  bash -c 'head -c 70000000 /dev/zero | tr "\\0" x | "$0" build -' "$bin"
# A FluxInstance past what the API server takes (3 MiB): a patch's value is
# copied into every object it patches (one of 60 MiB took 700 MB before).
python3 -c 'print("apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec:\n  distribution: {version: \"2.x\", registry: ghcr.io/fluxcd}\n  kustomize:\n    patches:\n    - target: {kind: Deployment}\n      patch: |\n        - {op: add, path: /metadata/annotations/x, value: " + "a" * (4 << 20) + "}")' >"$work/big-patch.yaml"
expect "build: an instance larger than 3 MiB" 1 empty "^error: $work/big-patch.yaml: larger than 3 MiB, the most an input may be\$" -- "$bin" build "$work/big-patch.yaml"
mkdir -p "$work/special"
printf 'resources: [zero.yaml, fifo.yaml]\n' >"$work/special/kustomization.yaml"
ln -s /dev/zero "$work/special/zero.yaml"
# (kustomize's load restrictor refuses the link first: /dev/zero is outside the root)
expect "kustomize: a manifest linked to /dev/zero" 1 empty "^error: .*file '/dev/zero' is not in or below " -- \
  "$bin" kustomize "$work/special"
printf 'resources: [fifo.yaml]\n' >"$work/special/kustomization.yaml"
mkfifo "$work/special/fifo.yaml"
expect "kustomize: a manifest that is a FIFO" 1 empty "^error: .*fifo.yaml: not a regular file\$" -- \
  "$bin" kustomize "$work/special"

# Patch targets are Go regular expressions matched by RE2: in linear time and
# without recursion (std::regex hung on nested quantifiers and overflowed the
# stack, exit 139, on a long name); what RE2 refuses is one error naming the field.
mkdir -p "$work/regex"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %sb\n' "$(head -c 200000 /dev/zero | tr '\0' a)" \
  >"$work/regex/cm.yaml"
target_patch() {
  printf 'resources: [cm.yaml]\npatches:\n- target: {name: %s}\n  patch: |-\n    - {op: add, path: /data, value: {patched: "yes"}}\n' \
    "$1" >"$work/regex/kustomization.yaml"
}
target_patch "'.*'"
expect "kustomize: target .* on a 200k name" 0 '^  patched: "yes"$' empty -- "$bin" kustomize "$work/regex"
for pattern in '(a+)+$' '(a|aa)+' '(a*)*c'; do
  target_patch "'$pattern'"
  expect "kustomize: target $pattern on a 200k name" 0 '^  name: a+b$' empty -- "$bin" kustomize "$work/regex"
  ! grep -q patched "$work/out" || fail "kustomize: target $pattern selects a name it does not match"
done
target_patch "'(?=a)'"
expect "kustomize: a lookahead target" 1 empty \
  "^error: $work/regex/kustomization.yaml: patches\[0\]\.target\.name: invalid regular expression \"\(\?=a\)\": invalid perl operator: \(\?=\$" \
  -- "$bin" kustomize "$work/regex"
target_patch "'(a)\\1'"
expect "kustomize: a backreference target" 1 empty \
  '^error: .*patches\[0\]\.target\.name: invalid regular expression "\(a\)\\\\1": invalid escape sequence: \\1$' \
  -- "$bin" kustomize "$work/regex"
{
  cat "$root/tests/oci/instance.yaml"
  printf '  kustomize:\n    patches:\n    - target: {kind: Deployment, name: "(?!x)"}\n      patch: "[]"\n'
} >"$work/regex/instance.yaml"
expect "build: a lookahead target" 1 empty \
  '^error: .*instance\.yaml: \.spec\.kustomize\.patches\[0\]\.target\.name: invalid regular expression "\(\?!x\)": invalid perl operator: \(\?!' \
  -- "$bin" build "$work/regex/instance.yaml" --distribution-artifact "$root/tests/cli/distribution"

# Values the API server would refuse in the objects they end up in are
# refused when the instance is read: one error naming the file and the field.
mkdir -p "$work/values"
values_instance() { # SPEC: lines appended to the instance's .spec.distribution
  printf 'apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\nspec:\n  distribution:\n    version: "2.x"\n    registry: ghcr.io/fluxcd\n%s\n' \
    "$1" >"$work/values/instance.yaml"
}
build_values=("$bin" build "$work/values/instance.yaml" --distribution-artifact "$root/tests/cli/distribution")
while IFS='|' read -r field spec; do
  values_instance "$spec"
  expect "build: $field Kubernetes would refuse" 1 empty \
    "^error: $work/values/instance\\.yaml: $(printf '%s' "$field" | sed 's/[].[\\*^$]/\\&/g'): " -- "${build_values[@]}"
done <<'VALUES'
.spec.storage.size|  storage: {class: standard, size: ten gigs}
.spec.storage.size|  storage: {class: standard, size: -10Gi}
.spec.storage.class|  storage: {class: Fast SSD, size: 10Gi}
.spec.cluster.domain|  cluster: {domain: cluster local}
.spec.sharding.shards[0]|  sharding: {shards: [Shard_A]}
.spec.sharding.key|  sharding: {key: bad key, shards: [a]}
.spec.commonMetadata.labels["bad key"]|  commonMetadata: {labels: {bad key: x}}
.spec.commonMetadata.labels.team|  commonMetadata: {labels: {team: a b}}
.spec.commonMetadata.annotations["a/b/c"]|  commonMetadata: {annotations: {a/b/c: x}}
.spec.distribution.imagePullSecret|    imagePullSecret: Reg_Cred
.spec.cluster.tenantDefaultServiceAccount|  cluster: {tenantDefaultServiceAccount: ../x}
.spec.sync.pullSecret|  sync: {kind: GitRepository, url: https://h/r, ref: main, path: ./, pullSecret: a b}
.spec.sync.url|  sync: {kind: GitRepository, url: git@github.com:org/fleet, ref: main, path: ./}
.spec.sync.url|  sync: {kind: OCIRepository, url: https://ghcr.io/org/fleet, ref: latest, path: ./}
.spec.sync.url|  sync: {kind: Bucket, url: s3://bucket, ref: fleet, path: ./}
.spec.sync.ref|  sync: {kind: GitRepository, url: https://h/r, ref: "main\n  ignore: evil", path: ./}
VALUES
# What the API server takes stays taken.
values_instance '  storage: {class: standard, size: 0.5Gi}
  cluster: {domain: example.internal}
  commonMetadata: {labels: {app.kubernetes.io/part-of: flux, empty: ""}}'
expect "build: values Kubernetes takes" 0 '^kind: PersistentVolumeClaim$' '^using distribution ' -- "${build_values[@]}"
# A 2 MB value is quoted by its first characters, not echoed whole.
huge=$(head -c 2000000 /dev/zero | tr '\0' x)
for field in '  storage: {class: standard, size: %s}' '  cluster: {domain: %s}' \
  '  commonMetadata:\n    labels:\n      ? %s\n      : a' '  sync: {kind: OCIRepository, url: %s, ref: a, path: ./}'; do
  # shellcheck disable=SC2059 # the field is the format
  values_instance "$(printf "$field" "\"$huge\"")"
  expect "build: a 2 MB value in ${field:2:24}" 1 empty "^error: $work/values/instance\\.yaml: \\.spec\\." -- "${build_values[@]}"
  [ "$(wc -c <"$work/err")" -lt 500 ] || fail "build: a 2 MB value in ${field:2:24}: $(wc -c <"$work/err") bytes of error"
done
unset huge

# The commands on the instance in a cluster: usage before any connection,
# and a cluster that cannot be reached is one error line.
printf 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n' >"$work/empty.kubeconfig"
expect "delete FILE and -n" 2 empty '^error: .*(FILE|--namespace) excludes' -- "$bin" delete a.yaml -n flux-system
expect "delete --timeout 5x" 2 empty "^error: --timeout: '5x' is not a duration such as 5m$" -- \
  "$bin" delete --timeout 5x
expect "delete --dry-run=bogus" 2 empty '^error: --dry-run: bogus not in \{none,client,server\}$' -- \
  "$bin" delete --dry-run=bogus
# kubectl's --dry-run: alone it is client and never takes the next argument.
expect "apply --dry-run FILE: FILE is the instance" 1 empty "^error: $work/absent.yaml: " -- \
  "$bin" apply --dry-run "$work/absent.yaml"
expect "get -o jsonpath" 2 empty '^error: --output: jsonpath not in \{table,wide,yaml,json\}$' -- \
  "$bin" get -o jsonpath
expect "get --field-manager" 2 empty '^error: .*--field-manager' -- "$bin" get --field-manager x
expect "wait --timeout 1x" 2 empty "^error: --timeout: '1x' is not a duration" -- "$bin" wait --timeout 1x
expect "reconcile --timeout 1x" 2 empty "^error: --timeout: '1x' is not a duration" -- \
  "$bin" reconcile --timeout 1x
# The upstream CLI's global --timeout: taken by every command.
expect "suspend --timeout 1x" 2 empty "^error: --timeout: '1x' is not a duration" -- "$bin" suspend --timeout 1x
for command in delete get wait reconcile suspend resume; do
  expect "$command without a cluster" 1 empty '^error: ' -- \
    "$bin" "$command" --kubeconfig "$work/empty.kubeconfig"
done
expect "delete: a FILE that is no FluxInstance" 1 empty "^error: $work/empty.kubeconfig: " -- \
  "$bin" delete "$work/empty.kubeconfig" --kubeconfig "$work/empty.kubeconfig"

# kubectl's global flags, before or after the command: the same error either way.
for command in get wait report version; do
  out=empty
  [ "$command" = version ] && out='^fluxopctl [0-9]'
  expect "$command: --kubeconfig before the command" 1 "$out" "^error: $work/empty.kubeconfig: no current-context" -- \
    "$bin" --kubeconfig "$work/empty.kubeconfig" "$command"
  expect "$command: --kubeconfig= after the command" 1 "$out" "^error: $work/empty.kubeconfig: no current-context" -- \
    "$bin" "$command" --kubeconfig="$work/empty.kubeconfig"
done
expect "--context before the command" 1 empty '^error: --context: no context named "nope"' -- \
  "$bin" --context nope --kubeconfig "$work/empty.kubeconfig" get
expect "-n before the command is the command's -n" 2 empty '^error: .*(FILE|--namespace) excludes' -- \
  "$bin" -n flux-system delete a.yaml
expect "--request-timeout before the command is checked" 2 empty "^error: --request-timeout: '5x' is not a duration" -- \
  "$bin" --request-timeout 5x get
# A command that reaches no cluster accepts them and ignores them, as kubectl.
expect "kustomize ignores the cluster flags" 0 '^kind: ' empty -- \
  "$bin" --kubeconfig "$work/none" -n x --as jane kustomize --context c "$fixtures/01-resources-files"

# Impersonation, refused before any request when it cannot be sent.
cat >"$work/unreachable.kubeconfig" <<'KUBECONFIG'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KUBECONFIG
expect "--as-group without --as" 1 empty '^error: --as-group: groups to impersonate without a user to impersonate$' -- \
  "$bin" get --as-group dev --kubeconfig "$work/unreachable.kubeconfig"
expect "--as with a line break" 1 empty '^error: --as: Impersonate-User: holds a line break$' -- \
  "$bin" get --as "$(printf 'jane\r\nX-Evil: 1')" --kubeconfig "$work/unreachable.kubeconfig"
sed 's|server: "https://127.0.0.1:1"}|server: "https://127.0.0.1:1", proxy-url: "ftp://proxy"}|' \
  "$work/unreachable.kubeconfig" >"$work/ftp-proxy.kubeconfig"
expect "kubeconfig proxy-url not http" 1 empty "^error: $work/ftp-proxy.kubeconfig: clusters\\[0\\]\\.cluster\\.proxy-url: not an http://, https:// or socks5:// URL$" -- \
  "$bin" get --kubeconfig "$work/ftp-proxy.kubeconfig"

# version: a configured cluster that does not answer is an error after the client's version.
expect "version, cluster unreachable" 1 '^fluxopctl [0-9]' '^error: .*127\.0\.0\.1:1' -- \
  "$bin" version --kubeconfig "$work/unreachable.kubeconfig" --request-timeout 2s
expect "version --client reaches no cluster" 0 '^fluxopctl [0-9]' empty -- \
  "$bin" version --client --kubeconfig "$work/unreachable.kubeconfig"

# The upstream CLI's spellings: usage checked as the commands' own.
expect "get instance NAME not flux" 2 empty "^error: NAME: 'other' is not flux, the one name a FluxInstance has$" -- \
  "$bin" get instance other
expect "reconcile instance without NAME" 2 empty '^error: NAME is required' -- "$bin" reconcile instance
expect "get instance: the command's flags" 1 empty "^error: $work/empty.kubeconfig: no current-context" -- \
  "$bin" get instance flux -n flux-system --kubeconfig "$work/empty.kubeconfig"
expect "delete instance flux: the command's -n and FILE rule" 2 empty '^error: .*excludes' -- \
  "$bin" delete instance flux -n flux-system -f a.yaml
expect "export alone" 2 empty '^error: ' -- "$bin" export
expect "export report: report's flags" 2 empty '^error: --output: wide not in \{table,yaml,json,html\}$' -- \
  "$bin" export report -o wide

# A Secret's value that is not UTF-8 (a DER CA certificate) is kept byte
# for byte: under data, base64; the text stays under stringData.
printf '\x30\x82\x01\xff\x00\xc3' >"$work/ca.der"
expect "create secret tls --export, a DER CA" 0 '^data:$' empty -- \
  "$bin" create secret tls ca -n flux-system --ca-crt-file "$work/ca.der" --export
[ "$(sed -n 's/^  ca.crt: //p' "$work/out")" = "$(base64 -w0 <"$work/ca.der")" ] ||
  fail "create secret tls --export, a DER CA: not its bytes: $(cat "$work/out")"

# A FIFO whose writer comes late: it opens the FIFO only once fluxopctl holds
# it open (before, fluxopctl read it as empty and the writer then blocked
# forever); fluxopctl waits for its bytes and keeps them.
mkfifo "$work/ca.fifo"
write_once_held() {
  local deadline=$((SECONDS + 30)) pid fd
  while [ $SECONDS -lt $deadline ]; do
    for pid in $(pgrep -f -- "--ca-crt-file $work/ca.fifo"); do
      for fd in /proc/"$pid"/fd/*; do
        if [ "$(readlink "$fd" 2>/dev/null)" = "$work/ca.fifo" ]; then
          timeout 10 bash -c 'printf "late bytes" >"$1"' _ "$work/ca.fifo"
          return
        fi
      done
    done
    sleep 0.05 # until fluxopctl holds the FIFO open
  done
}
write_once_held &
writer=$!
expect "create secret, a FIFO written late" 0 '^  ca\.crt: late bytes$' empty -- \
  "$bin" create secret tls ca -n flux-system --ca-crt-file "$work/ca.fifo" --export
wait "$writer"

wait "$unwritten"
unwritten_rc=$?
if [ "$unwritten_rc" -ne 1 ] || [ -s "$work/unwritten.out" ] || [ "$(wc -l <"$work/unwritten.err")" -ne 1 ] ||
  ! grep -q "^error: .*unwritten\.fifo: a pipe that gave nothing for 30 s (no process writes to it)$" "$work/unwritten.err"; then
  fail "create secret, a FIFO nobody writes to: exit $unwritten_rc: $(head -c 300 "$work/unwritten.err")"
else
  pass "create secret, a FIFO nobody writes to"
fi

summary
