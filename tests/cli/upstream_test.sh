#!/usr/bin/env bash
# fluxopctl against the upstream flux-operator CLI (v0.58.1, built by
# scripts/lib/upstream-cli.sh), each run on the same line:
#
# The upstream CLI's lines (docs/upstream-cli.md): every line
# of the table runs with the upstream CLI (which must accept it: no usage
# error) and with fluxopctl in its place, which runs it ("runs": no usage
# error, exit 0 or the cluster's error) or refuses it ("refused": exit 2,
# one line). The table holds every subcommand and flag of the upstream
# build, get, export, reconcile, suspend, resume, delete, wait and version
# commands, as upstream's own --help lists them. No cluster: the kubeconfig
# names a closed port, so a line that reaches for the cluster fails there,
# after its flags were taken. `build instance` is compared with `fluxopctl
# build`, byte for byte.
#
# `create secret KIND NAME ... --export` prints what upstream prints for the
# same flags, byte for byte, for every kind; values from files and stdin;
# bad input refused in one line that never holds a secret value.
set -uo pipefail
bin=$1
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
root=$2
# shellcheck source=scripts/lib/upstream-cli.sh
source "$root/scripts/lib/upstream-cli.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"

[ -x "$upstream" ] || skip_test "the upstream CLI is not built ($upstream; scripts/lib/upstream-cli.sh)"

export HOME=$work/home XDG_CACHE_HOME=$work/cache
mkdir -p "$HOME"
# A cluster that is not there, and no proxy or registry either: a line fails
# when it reaches out, at once.
cat >"$work/kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: none, user: {token: none}}]
contexts:
  - {name: none, context: {cluster: none, user: none, namespace: flux-system}}
  - {name: prod, context: {cluster: none, user: none, namespace: flux-system}}
current-context: none
EOF
export KUBECONFIG=$work/kubeconfig HTTPS_PROXY=http://127.0.0.1:1 HTTP_PROXY=http://127.0.0.1:1
export FLUXOPCTL_DISTRIBUTION=$root/tests/cli/distribution
cp "$root/tests/e2e/instances/flux-2.9-four.yaml" "$work/flux.yaml"
cd "$work" || exit 1

# The table: "LINE<TAB>VERDICT" for each row between the markers.
table=$work/table
awk '/<!-- upstream-lines -->/ {on = 1; next} /<!-- \/upstream-lines -->/ {on = 0}
     on && /^\| `flux-operator / {
       line = $0; sub(/^\| `flux-operator /, "", line); cell = line
       sub(/` \|.*/, "", line); sub(/^[^|]*\| /, "", cell); sub(/:.*/, "", cell)
       print line "\t" cell }' "$root/docs/upstream-cli.md" >"$table"
[ -s "$table" ] || abort "no upstream lines in docs/upstream-cli.md"

# Upstream's tree, from its own help: "COMMAND SUBCOMMAND" (or "COMMAND")
# and the long flags of each, the global ones apart.
help_flags() { awk '/^Flags:/ {on = 1; next} /^[A-Z].*:$/ {on = 0} on' | grep -oE -- '--[a-z][a-z-]*' | grep -v -- '^--help$' | sort -u; }
subcommands() { awk '/^Available Commands:/ {on = 1; next} /^$/ {on = 0} on {print $1}' | grep -v '^help$'; }
global_flags=$("$upstream" --help | help_flags)
in_table() {  # in_table COMMAND_WORDS [FLAG]: a line of that command (and with that flag)
  local words=$1 flag=${2:-} line
  while IFS=$'\t' read -r line _; do
    # the line's words before its first argument, globals skipped
    local first
    first=$(sed -E 's/(--?[a-zA-Z-]+( [^- ][^ ]*)? )*//' <<<"$line")
    [[ "$first " == "$words "* ]] || continue
    [ -z "$flag" ] && return 0
    [[ " $line " =~ [[:space:]]$flag([[:space:]=]) ]] && return 0
  done <"$table"
  return 1
}
for command in build get export reconcile suspend resume delete wait version; do
  subs=$("$upstream" "$command" --help | subcommands)
  for sub in ${subs:-""}; do
    words="$command${sub:+ $sub}"
    if ! in_table "$words"; then
      fail "the table has no line of \`flux-operator $words\`"
      continue
    fi
    for flag in $("$upstream" $words --help | help_flags); do
      in_table "$words" "$flag" || fail "the table has no line of \`flux-operator $words\` with $flag"
    done
  done
done
for flag in $global_flags; do
  grep -qE -- "(^| )$flag([[:space:]=]|\$)" "$table" || fail "the table has no line with the global flag $flag"
done
pass "the table has every subcommand and flag of the upstream help"

usage_error() { grep -qiE 'unknown (flag|command|shorthand)|invalid argument|accepts|required flag|Error: .*usage' "$1"; }

while IFS=$'\t' read -r line verdict; do
  read -ra args <<<"$line"
  timeout -k 5 60 "$upstream" "${args[@]}" >"$work/up.out" 2>"$work/up.err" </dev/null
  if usage_error "$work/up.err"; then
    fail "upstream refuses \`flux-operator $line\`: $(head -n 1 "$work/up.err")"
    continue
  fi
  timeout -k 5 60 "$bin" "${args[@]}" >"$work/out" 2>"$work/err" </dev/null
  rc=$?
  case $verdict in
    runs)
      if [ "$rc" -eq 2 ] || grep -q "^error: unknown" "$work/err"; then
        fail "fluxopctl does not run \`$line\`: exit $rc: $(head -n 1 "$work/err")"
      else
        pass "runs: $line"
      fi ;;
    refused)
      if [ "$rc" -ne 2 ] || [ "$(wc -l <"$work/err")" -ne 1 ] || [ -s "$work/out" ]; then
        fail "fluxopctl does not refuse \`$line\` in one line: exit $rc: $(head -n 2 "$work/err")"
      else
        pass "refused: $line"
      fi ;;
    *) fail "\`$line\`: the verdict '$verdict' is neither runs nor refused" ;;
  esac
done <"$table"

# The common CI line renders what `build` renders.
same_build() {
  "$bin" build flux.yaml >"$work/build.out" 2>/dev/null || { echo "fluxopctl build failed"; return 1; }
  "$bin" build instance -f flux.yaml >"$work/instance.out" 2>/dev/null || { echo "build instance -f failed"; return 1; }
  cmp -s "$work/build.out" "$work/instance.out" || { echo "the outputs differ"; return 1; }
  "$bin" build instance -f - <flux.yaml >"$work/stdin.out" 2>/dev/null && cmp -s "$work/build.out" "$work/stdin.out" ||
    { echo "build instance -f - differs"; return 1; }
}
check "build instance -f FILE renders as build FILE" same_build

# --- create secret ---------------------------------------------------------
mkdir -p "$work/secret" && cd "$work/secret" || exit 1

# Inputs: an SSH key pair, a TLS certificate and key, keys of any text.
ssh-keygen -q -t ed25519 -N '' -C test -f id >/dev/null || abort "ssh-keygen failed"
printf 'github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n' >known_hosts
openssl req -x509 -newkey rsa:2048 -nodes -keyout tls.key -out tls.crt -days 1 -subj /CN=test 2>/dev/null ||
  abort "openssl failed"
cp tls.crt ca.crt
openssl genrsa -out other.key 2048 2>/dev/null
printf 'AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ\n' >age.key
printf -- '-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGZ\n-----END PGP PRIVATE KEY BLOCK-----\n' >gpg.asc
cp tls.key app.pem

# Each case: the flags after `create secret`, and what stdin holds.
cases=(
  "basic-auth git-auth -n apps --username flux --password s3cr&t<x>"
  "basic-auth git-auth --namespace flux-system --username flux --password-stdin|hunter2"
  "basic-auth git-auth -n apps --username flux --password p --label team=a,tier=b --annotation note=x"
  "ssh git-ssh -n apps --private-key-file id --public-key-file id.pub --knownhosts-file known_hosts"
  "ssh git-ssh -n apps --private-key-file id --knownhosts-file known_hosts --password-stdin|passphrase"
  "githubapp gh -n apps --app-id 1 --app-installation-owner org --app-private-key-file app.pem"
  "githubapp gh -n apps --app-id 1 --app-installation-id 2 --app-private-key-file app.pem --app-base-url https://ghe.example.com/api/v3"
  "registry ghcr -n apps --server ghcr.io --username flux --password-stdin|tok&en"
  "tls certs -n apps --tls-crt-file tls.crt --tls-key-file tls.key --ca-crt-file ca.crt"
  "tls ca -n apps --ca-crt-file ca.crt"
  "proxy proxy -n apps --address http://proxy:3128 --username u --password p"
  "proxy proxy -n apps --address http://proxy:3128"
  "sops sops -n apps --age-key-file age.key --gpg-key-file gpg.asc"
  "sops sops -n apps --age-key-stdin|AGE-SECRET-KEY-1ABC"
)

compare() {  # compare FLAGS|STDIN
  local flags=${1%%|*} input=
  [[ $1 == *"|"* ]] && input=${1#*|}
  read -ra args <<<"$flags"
  # A here-string, not a pipe: a command that reads no stdin may exit before
  # a writer into the pipe writes, which then dies of SIGPIPE, and pipefail
  # took that for the command's failure (seen under load, with nothing on stderr).
  "$upstream" create secret "${args[@]}" --export <<<"$input" >up.out 2>up.err ||
    { echo "upstream failed: $(head -n 1 up.err)"; return 1; }
  "$bin" create secret "${args[@]}" --export <<<"$input" >ours.out 2>ours.err ||
    { echo "fluxopctl failed: $(head -n 1 ours.err)"; return 1; }
  diff up.out ours.out >diff.out || { echo "the outputs differ:"; head -n 20 diff.out; return 1; }
}

for case in "${cases[@]}"; do
  check "as upstream: create secret ${case%%|*}" compare "$case"
done

refused() {  # refused EXIT PATTERN ARGS...: one line on stderr, nothing on stdout, no secret
  local want=$1 pattern=$2
  shift 2
  printf 'hunter2\n' | "$bin" create secret "$@" >out 2>err
  local rc=$?
  [ "$rc" -eq "$want" ] || { echo "exit $rc (want $want): $(cat err)"; return 1; }
  [ ! -s out ] && [ "$(wc -l <err)" -eq 1 ] || { echo "not one line on stderr and nothing on stdout"; return 1; }
  grep -qE -- "$pattern" err || { echo "stderr: $(cat err)"; return 1; }
  ! grep -q hunter2 err || { echo "the secret is in the error"; return 1; }
}
check "no password: refused" refused 2 '^error: --password is required' basic-auth x --username u --export
check "a bad name: refused" refused 2 '^error: NAME: "Bad_Name" must be a DNS-1123 subdomain' \
  basic-auth Bad_Name --username u --password-stdin --export
check "a bad label: refused" refused 2 '^error: --label: "a b" is not KEY=VALUE|^error: --label' \
  basic-auth x --username u --password-stdin --label 'a b' --export
check "githubapp: owner and id both: refused" refused 2 'give exactly one' \
  githubapp gh --app-id 1 --app-installation-owner o --app-installation-id 2 --app-private-key-file app.pem --export
check "tls: a key that is not the certificate's: refused" refused 1 'not a PEM certificate and its private key' \
  tls t --tls-crt-file tls.crt --tls-key-file other.key --export
check "ssh: a missing file: named, refused" refused 1 '^error: --private-key-file: .*nothere' \
  ssh s --private-key-file nothere --knownhosts-file known_hosts --export
check "sops: no key: refused" refused 2 'is required' sops s --export

stdin_whole_line() {
  printf 'pass word with spaces\n' | "$bin" create secret basic-auth x --username u --password-stdin --export >out 2>err ||
    { echo "failed: $(cat err)"; return 1; }
  grep -qx '  password: pass word with spaces' out || { cat out; return 1; }
}
check "--password-stdin: the whole first line (upstream stops at a space)" stdin_whole_line
summary
