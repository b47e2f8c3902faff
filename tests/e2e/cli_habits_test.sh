#!/usr/bin/env bash
# End-to-end tests of kubectl's habits (issue 29) on a local control plane
# (scripts/cluster) of their own:
#   version     global flags before the command: `fluxopctl --kubeconfig K version`
#     shows the server's version as kubectl does, and the Flux version from
#     the flux-system namespace's label once there is one
#   impersonation
#               --as the unprivileged user (the admin may impersonate)
#     is Forbidden, naming that user; --as-group system:masters with it is
#     allowed; the kubeconfig user's `as:` does the same as --as; version
#     as that user shows the server's version, the Flux version forbidden
#   proxies     the kubeconfig's proxy-url tunnels every request through a
#     CONNECT proxy (tests/oci/connect_proxy.py), which never sees a
#     credential; HTTPS_PROXY is not used for the loopback API server (as
#     kubectl), and NO_PROXY=* with a dead HTTPS_PROXY changes nothing
#
# Each case from whatever the cluster holds.
#
#   tests/e2e/cli_habits_test.sh BIN ROOT [CASE...]
#
# Closes with `N passed, M failed`; a skip (exit 77, a failure when CI=true)
# only when kubectl, python3 or the cluster binaries are missing.
set -uo pipefail
root=$(cd "${2:?usage: $0 BIN ROOT [CASE...]}" && pwd)
# shellcheck source=tests/e2e/lib.sh
source "$root/tests/e2e/lib.sh"
e2e_suite "$1"
shift 2

command -v python3 >/dev/null || skip_test "python3 is not installed"
all_cases=(version impersonation proxies)
e2e_select_cases "$@"
e2e_cluster_up "$work/cluster"
admin=$KUBECONFIG
nobody=fluxopctl-e2e-nobody
server_version=$(k version -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')
# given_namespace: the namespace flux-system, Flux's version on its label.
given_namespace() {
  k create namespace flux-system --dry-run=client -o yaml | k apply -f - >/dev/null &&
    k label namespace flux-system app.kubernetes.io/version=v2.7.0 --overwrite >/dev/null
}

# Global flags before the command; version as kubectl version.
case_version() {
  check "version: no namespace flux-system yet" eval 'kwait 180 delete namespace flux-system --ignore-not-found >/dev/null' || return
  fx version --kubeconfig "$admin" --request-timeout 30s version
  check "version: exit 0" exit_is 0
  check "version: the server's version, as kubectl's ($server_version)" out_has version "^Server Version: ${server_version//./\\.}$"
  check "version: no Flux yet" out_has version '^Flux Version: none in flux-system$'
  check "version: the namespace flux-system labelled with Flux's version" given_namespace
  fx version_flux -n flux-system --kubeconfig "$admin" version -o json
  check "version: version -o json: exit 0" exit_is 0
  check "version: version -o json: fluxVersion from the namespace's label" out_has version_flux '"fluxVersion": "v2.7.0"'
}

# Impersonation.
case_impersonation() {
  check "impersonation: the namespace flux-system" given_namespace || return
  fx as_nobody --kubeconfig "$admin" --as "$nobody" report -o json
  check "impersonation: --as nobody: exit 1" exit_is 1
  check "impersonation: --as nobody: forbidden, naming the user" err_has as_nobody "forbidden: User \"$nobody\" cannot"
  fx version_as_nobody version --kubeconfig "$admin" --as "$nobody"
  check "impersonation: version --as nobody: exit 0, as kubectl version" exit_is 0
  check "impersonation: version --as nobody: the server's version" out_has version_as_nobody "^Server Version: ${server_version//./\\.}$"
  check "impersonation: version --as nobody: the Flux version forbidden" out_has version_as_nobody '^Flux Version: unknown \(forbidden to read it in flux-system\)$'
  fx as_admin_group report --kubeconfig "$admin" --as "$nobody" --as-group dev --as-group system:masters -o json
  check "impersonation: --as nobody --as-group dev --as-group system:masters: allowed" exit_is 0
  python3 - "$admin" "$work/as.kubeconfig" "$nobody" <<'PY'
import sys
text = open(sys.argv[1]).read()
open(sys.argv[2], "w").write(text.replace("  user:\n", "  user:\n    as: " + sys.argv[3] + "\n", 1))
PY
  fx kubeconfig_as report --kubeconfig "$work/as.kubeconfig" -o json
  check "impersonation: kubeconfig as: exit 1" exit_is 1
  check "impersonation: kubeconfig as: forbidden, naming the user" err_has kubeconfig_as "forbidden: User \"$nobody\" cannot"
}

# Proxies.
case_proxies() {
  local api port proxy
  check "proxies: the namespace flux-system" given_namespace || return
  rm -f "$work/proxy.port"
  api=$(sed -n 's|^ *server: https://||p' "$admin" | head -1)
  python3 "$root/tests/oci/connect_proxy.py" --target "$api" --port-file "$work/proxy.port" \
    --log "$work/proxy.log" --timeout 600 &
  proxy=$!
  proxy_listens() { [ -s "$work/proxy.port" ]; }
  wait_until 30 proxy_listens || { fail "proxies" "the CONNECT proxy did not start"; return; }
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
  check "proxies: proxy-url: exit 0" exit_is 0
  check "proxies: proxy-url: the server's version" out_has proxied "^Server Version: ${server_version//./\\.}$"
  tunnelled() { grep -q "^CONNECT $api" "$work/proxy.log"; }
  check "proxies: proxy-url: the requests went through the proxy's tunnel to $api" tunnelled
  no_credential() { ! grep -q 'with credentials' "$work/proxy.log"; }
  check "proxies: proxy-url: no credential sent to the proxy" no_credential
  : >"$work/proxy.log"
  HTTPS_PROXY=http://127.0.0.1:$port fx env_loopback report --kubeconfig "$admin" -o json
  check "proxies: HTTPS_PROXY: exit 0" exit_is 0
  not_tunnelled() { [ ! -s "$work/proxy.log" ]; }
  check "proxies: HTTPS_PROXY: the loopback API server is not proxied, as kubectl" not_tunnelled
  HTTPS_PROXY=http://127.0.0.1:1 https_proxy=http://127.0.0.1:1 fx env_dead report --kubeconfig "$admin" -o json
  check "proxies: a dead HTTPS_PROXY: loopback reached directly" exit_is 0
  HTTPS_PROXY=http://127.0.0.1:1 fx proxy_url_wins report --kubeconfig "$work/proxied.kubeconfig" -o json
  check "proxies: proxy-url wins over HTTPS_PROXY" exit_is 0
  stop_process "$proxy"
}

e2e_run_cases
summary
