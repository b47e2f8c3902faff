#!/usr/bin/env bash
# End-to-end tests of kubectl's habits (issue 29) on a local control plane
# (scripts/cluster) of their own:
#   1 global flags before the command: `fluxopctl --kubeconfig K version`
#     shows the server's version as kubectl does, and the Flux version from
#     the flux-system namespace's label once there is one
#   2 impersonation: --as the unprivileged user (the admin may impersonate)
#     is Forbidden, naming that user; --as-group system:masters with it is
#     allowed; the kubeconfig user's `as:` does the same as --as; version
#     as that user shows the server's version, the Flux version forbidden
#   3 proxies: the kubeconfig's proxy-url tunnels every request through a
#     CONNECT proxy (tests/oci/connect_proxy.py), which never sees a
#     credential; HTTPS_PROXY is not used for the loopback API server (as
#     kubectl), and NO_PROXY=* with a dead HTTPS_PROXY changes nothing
#
#   tests/e2e/cli_habits_test.sh BIN ROOT
#
# Closes with `N passed, M failed`; a skip (exit 77, a failure when CI=true)
# only when kubectl, python3 or the cluster binaries are missing.
set -uo pipefail
bin=$(realpath "${1:?usage: $0 BIN ROOT}")
root=$(cd "${2:?usage: $0 BIN ROOT}" && pwd)
work=$(mktemp -d)
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"

proxy=
cleanup() {
  [ -z "$proxy" ] || stop_process "$proxy"
  e2e_cluster_down
  rm -rf "$work"
}
on_exit cleanup

command -v kubectl >/dev/null || skip_test "kubectl is not installed"
command -v python3 >/dev/null || skip_test "python3 is not installed"
e2e_cluster_up "$work/cluster"
admin=$KUBECONFIG
nobody=fluxopctl-e2e-nobody

out_has() { grep -qE -- "$1" "$work/$2.out"; }
err_has() { grep -qE -- "$1" "$work/$2.err"; }

# 1 global flags before the command; version as kubectl version.
server_version=$(k version -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')
fx version --kubeconfig "$admin" --request-timeout 30s version
check "1 version: exit 0" exit_is 0
check "1 version: the server's version, as kubectl's ($server_version)" out_has "^Server Version: ${server_version//./\\.}$" version
check "1 version: no Flux yet" out_has '^Flux Version: none in flux-system$' version
k create namespace flux-system >/dev/null
k label namespace flux-system app.kubernetes.io/version=v2.7.0 >/dev/null
fx version_flux -n flux-system --kubeconfig "$admin" version -o json
check "1 version -o json: exit 0" exit_is 0
check "1 version -o json: fluxVersion from the namespace's label" out_has '"fluxVersion": "v2.7.0"' version_flux

# 2 impersonation.
fx as_nobody --kubeconfig "$admin" --as "$nobody" report -o json
check "2 --as nobody: exit 1" exit_is 1
check "2 --as nobody: forbidden, naming the user" err_has "forbidden: User \"$nobody\" cannot" as_nobody
fx version_as_nobody version --kubeconfig "$admin" --as "$nobody"
check "2 version --as nobody: exit 0, as kubectl version" exit_is 0
check "2 version --as nobody: the server's version" out_has "^Server Version: ${server_version//./\\.}$" version_as_nobody
check "2 version --as nobody: the Flux version forbidden" out_has '^Flux Version: unknown \(forbidden to read it in flux-system\)$' version_as_nobody
fx as_admin_group report --kubeconfig "$admin" --as "$nobody" --as-group dev --as-group system:masters -o json
check "2 --as nobody --as-group dev --as-group system:masters: allowed" exit_is 0
python3 - "$admin" "$work/as.kubeconfig" "$nobody" <<'PY'
import sys
text = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(text.replace("  user:\n", "  user:\n    as: " + sys.argv[3] + "\n", 1))
PY
fx kubeconfig_as report --kubeconfig "$work/as.kubeconfig" -o json
check "2 kubeconfig as: exit 1" exit_is 1
check "2 kubeconfig as: forbidden, naming the user" err_has "forbidden: User \"$nobody\" cannot" kubeconfig_as

# 3 proxies.
api=$(sed -n 's|^ *server: https://||p' "$admin" | head -1)
python3 "$root/tests/oci/connect_proxy.py" --target "$api" --port-file "$work/proxy.port" \
  --log "$work/proxy.log" --timeout 600 &
proxy=$!
proxy_listens() { [ -s "$work/proxy.port" ]; }
wait_until 30 proxy_listens || abort "the CONNECT proxy did not start"
port=$(cat "$work/proxy.port")
python3 - "$admin" "$work/proxied.kubeconfig" "$port" <<'PY'
import sys
text = open(sys.argv[1]).read()
marker = "    server: "
at = text.index(marker)
line_end = text.index("\n", at)
text = text[: line_end + 1] + "    proxy-url: http://127.0.0.1:" + sys.argv[3] + "\n" + text[line_end + 1 :]
open(sys.argv[2], "w").write(text)
PY
fx proxied --kubeconfig "$work/proxied.kubeconfig" version
check "3 proxy-url: exit 0" exit_is 0
check "3 proxy-url: the server's version" out_has "^Server Version: ${server_version//./\\.}$" proxied
tunnelled() { grep -q "^CONNECT $api" "$work/proxy.log"; }
check "3 proxy-url: the requests went through the proxy's tunnel to $api" tunnelled
no_credential() { ! grep -q 'with credentials' "$work/proxy.log"; }
check "3 proxy-url: no credential sent to the proxy" no_credential
: >"$work/proxy.log"
HTTPS_PROXY=http://127.0.0.1:$port fx env_loopback report --kubeconfig "$admin" -o json
check "3 HTTPS_PROXY: exit 0" exit_is 0
not_tunnelled() { [ ! -s "$work/proxy.log" ]; }
check "3 HTTPS_PROXY: the loopback API server is not proxied, as kubectl" not_tunnelled
HTTPS_PROXY=http://127.0.0.1:1 https_proxy=http://127.0.0.1:1 fx env_dead report --kubeconfig "$admin" -o json
check "3 a dead HTTPS_PROXY: loopback reached directly" exit_is 0
HTTPS_PROXY=http://127.0.0.1:1 fx proxy_url_wins report --kubeconfig "$work/proxied.kubeconfig" -o json
check "3 proxy-url wins over HTTPS_PROXY" exit_is 0

summary
