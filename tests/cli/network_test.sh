#!/usr/bin/env bash
# Servers that accept a connection and then misbehave (never answer, answer
# after minutes, trickle a byte a second) end a command within its
# --request-timeout: exit 1, one error line naming the host, never a hang.
set -uo pipefail
bin=$1
root=$2
work=$(mktemp -d)
server_pids=()
cleanup() {
  for pid in "${server_pids[@]}"; do kill "$pid" 2>/dev/null; done
  rm -rf "$work"
}
# shellcheck source=tests/lib/harness.sh
source "$root/tests/lib/harness.sh"
on_exit cleanup
# A failure shows the end of the last command's output.
show "$work/out" "$work/err"
export XDG_CACHE_HOME=$work/cache HOME=$work

# The misbehaving server: `serve MODE` listens on a free loopback port, and
# writes it to $work/MODE.port once it listens. Each connection's request is
# read, then: silent, no answer ever; late, an answer after 10 minutes;
# trickle, a status line and headers, then a byte a second of a large body
# (the headers too to a HEAD); busy and swamped, "429 Too Many Requests" with
# Retry-After: 2 or 100000 (more than a day), each request's path and
# arrival (seconds, monotonic) appended to $work/MODE.port.arrivals.
cat >"$work/server.py" <<'PY'
import socket, sys, threading, time

mode, port_file = sys.argv[1], sys.argv[2]
retry_after = {"busy": b"2", "swamped": b"100000"}

def handle(conn):
    try:
        request = conn.recv(65536)
        if mode in retry_after:
            with open(port_file + ".arrivals", "a") as f:
                path = request.split(b" ")[1].decode() if b" " in request else "?"
                f.write(f"{path} {time.monotonic()}\n")
            conn.sendall(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: " + retry_after[mode] +
                         b"\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n"
                         b"Connection: close\r\n\r\ntoo many\n")
            return
        if mode == "trickle":
            head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 1000000\r\n\r\n")
            # A HEAD has no body to trickle: its headers are.
            if request.startswith(b"HEAD"):
                for byte in head:
                    conn.sendall(bytes([byte]))
                    time.sleep(1)
            conn.sendall(head)
            while True:
                conn.sendall(b" ")
                time.sleep(1)
        time.sleep(600)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        time.sleep(600)
    except OSError:
        pass
    finally:
        conn.close()

listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(64)
with open(port_file + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
import os
os.rename(port_file + ".tmp", port_file)
while True:
    conn, _ = listener.accept()
    threading.Thread(target=handle, args=(conn,), daemon=True).start()
PY

for mode in silent late trickle busy swamped; do
  python3 "$work/server.py" "$mode" "$work/$mode.port" &
  server_pids+=($!)
done
for mode in silent late trickle busy swamped; do
  wait_until 30 test -s "$work/$mode.port" || abort "the $mode server did not start"
done

# bounded NAME HOST -- COMMAND...: exit 1 within 60 s (the guard of 120 s
# makes a hang a failure), nothing on stdout, one error line on stderr (the
# last, after the warnings of a render) naming HOST and the bound (what is
# not within it: $bound_words, an ERE).
bound_words='(no response|response not complete)'
bounded() {
  local name=$1 host=$2
  shift 3
  local started=$SECONDS
  timeout 120 "$@" >"$work/out" 2>"$work/err"
  local got=$? took=$((SECONDS - started))
  if [ "$got" -ne 1 ]; then
    fail "$name: exit $got after ${took}s (want 1)"
  elif [ "$took" -ge 60 ]; then
    fail "$name: took ${took}s"
  elif [ -s "$work/out" ]; then
    fail "$name: stdout is not empty"
  elif [ "$(grep -c '^error: ' "$work/err")" -ne 1 ] || ! tail -1 "$work/err" | grep -q '^error: '; then
    fail "$name: the error is not one line on stderr (the last), starting with 'error: '"
  elif ! tail -1 "$work/err" | grep -qE "$host/.*: $bound_words within 2s"; then
    fail "$name: the error does not name $host and the bound"
  else
    pass "$name (${took}s)"
  fi
}

{
  printf 'apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata:\n  name: flux\n'
  printf '  namespace: flux-system\nspec:\n  distribution:\n    version: "2.x"\n'
  printf '    registry: ghcr.io/fluxcd\n'
} >"$work/instance.yaml"
kubeconfig() {  # kubeconfig MODE: a kubeconfig whose API server is the MODE server
  printf 'apiVersion: v1\nkind: Config\ncurrent-context: c\n'
  printf 'clusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:%s\n' "$(cat "$work/$1.port")"
  printf 'contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n'
  printf 'users:\n- name: u\n  user:\n    token: t\n'
}

# The registries are reached over plain HTTP (--insecure-registry): a
# loopback one is tried over HTTPS first, whose handshake these servers
# never answer (the case after the loop).
for mode in silent late trickle; do
  host=127.0.0.1:$(cat "$work/$mode.port")
  bounded "pull, a $mode registry" "$host" -- \
    "$bin" pull "oci://$host/flux:v1" --request-timeout 2s --insecure-registry "$host"
  bounded "build, a $mode registry" "$host" -- \
    "$bin" build "$work/instance.yaml" --distribution-artifact "oci://$host/flux:v1" \
    --request-timeout 2s --insecure-registry "$host"
  bounded "push, a $mode registry" "$host" -- \
    "$bin" push "$root/tests/cli/distribution" "oci://$host/flux:v1" --request-timeout 2s \
    --insecure-registry "$host"
  kubeconfig "$mode" >"$work/$mode.kubeconfig"
  bounded "get, a $mode API server" "$host" -- \
    "$bin" get --kubeconfig "$work/$mode.kubeconfig" --request-timeout 2s
  bounded "apply, a $mode API server" "$host" -- \
    "$bin" apply "$work/instance.yaml" --kubeconfig "$work/$mode.kubeconfig" \
    --distribution-artifact "$root/tests/cli/distribution" --request-timeout 2s
done

# A loopback registry is tried over HTTPS first: a server that never answers
# the TLS handshake is bounded as one that never answers a request.
host=127.0.0.1:$(cat "$work/silent.port")
bound_words='no connection' bounded "pull, a silent loopback registry, over HTTPS first" "$host" -- \
  "$bin" pull "oci://$host/flux:v1" --request-timeout 2s

# retry_after NAME MODE MIN_REQUESTS MAX_REQUESTS -- COMMAND...: exit 1
# within 30 s with one error line, after the MODE server saw between MIN and
# MAX requests of a path (requests sent together, such as discovery's, each
# count), each at least 1.9 s after the one before (its Retry-After is 2 s:
# a client that ignores it, or cuts it short, comes back sooner).
retry_after() {
  local name=$1 mode=$2 min=$3 max=$4
  shift 5
  local arrivals=$work/$mode.port.arrivals
  rm -f "$arrivals"
  local started=$SECONDS
  timeout 120 "$@" >"$work/out" 2>"$work/err"
  local got=$? took=$((SECONDS - started))
  local gaps
  gaps=$(awk '$1 in last { printf "%.2f ", $2 - last[$1] } { last[$1] = $2 }' "$arrivals" 2>/dev/null)
  local requests
  requests=$(awk '{ n[$1]++ } END { for (p in n) if (n[p] > most) most = n[p]; print most + 0 }' "$arrivals" 2>/dev/null)
  if [ "$got" -ne 1 ]; then
    fail "$name: exit $got after ${took}s (want 1)"
  elif [ "$took" -ge 30 ]; then
    fail "$name: took ${took}s"
  elif [ "$(grep -c '^error: ' "$work/err")" -ne 1 ]; then
    fail "$name: the error is not one line on stderr starting with 'error: '"
  elif [ "${requests:-0}" -lt "$min" ] || [ "${requests:-0}" -gt "$max" ]; then
    fail "$name: ${requests:-0} requests (want $min to $max), gaps: $gaps"
  elif awk -v gaps="$gaps" 'BEGIN { n = split(gaps, g, " "); for (i = 1; i <= n; i++) if (g[i] < 1.9) exit 0; exit 1 }'; then
    fail "$name: a retry came sooner than Retry-After: 2 said (gaps: $gaps s)"
  else
    pass "$name (${took}s, gaps: $gaps s)"
  fi
}

# Retry-After: 2 with a bound of 5 s: attempts at 0, 2 and 4 s, then no
# time is left for another wait. A wait past the bound (a day) is not made
# at all: the 429 is the answer.
for case in "busy 2 3 Retry-After: 2" "swamped 1 1 a Retry-After of a day"; do
  read -r mode min max what <<<"$case"
  host=127.0.0.1:$(cat "$work/$mode.port")
  kubeconfig "$mode" >"$work/$mode.kubeconfig"
  retry_after "get, an API server answering 429 with $what" "$mode" "$min" "$max" -- \
    "$bin" get --kubeconfig "$work/$mode.kubeconfig" --request-timeout 5s
  retry_after "pull, a registry answering 429 with $what" "$mode" "$min" "$max" -- \
    "$bin" pull "oci://$host/flux:v1" --request-timeout 5s --insecure-registry "$host"
done

# The flag's value is checked before anything is reached.
timeout 60 "$bin" pull oci://127.0.0.1:1/flux:v1 --request-timeout 2x >"$work/out" 2>"$work/err"
if [ $? -eq 2 ] && grep -qx "error: --request-timeout: '2x' is not a duration such as 30s" "$work/err"; then
  pass "--request-timeout 2x"
else
  fail "--request-timeout 2x: not a usage error naming the flag"
fi

# Issue 41: configuration that holds a secret (a proxy's password, a token
# in a reference) is redacted in every message, and a configuration error is
# said at once, never retried.
no_secret() {  # no_secret NAME REGEX -- COMMAND...: exit 1 within 10 s, one error line matching REGEX, no S3CRET
  local name=$1 regex=$2
  shift 3
  local started=$SECONDS
  timeout 60 "$@" >"$work/out" 2>"$work/err"
  local got=$? took=$((SECONDS - started))
  if [ "$got" -ne 1 ]; then
    fail "$name: exit $got (want 1): $(tail -c 300 "$work/err")"
  elif grep -q 'S3CRET' "$work/err" "$work/out"; then
    fail "$name: the secret is in a message: $(grep S3CRET "$work/err" | head -c 300)"
  elif [ "$took" -ge 10 ]; then
    fail "$name: took ${took}s (retried?)"
  elif ! grep -qE "^error: $regex" "$work/err"; then
    fail "$name: no error matching '$regex': $(tail -c 300 "$work/err")"
  else
    pass "$name"
  fi
}
no_secret "HTTPS_PROXY with a mistyped scheme" 'oci://ghcr.example.test/flux:v1: HTTPS_PROXY: htps://\*\*\*@127.0.0.1:1: not an http://, https:// or socks5:// URL$' -- \
  env HTTPS_PROXY='htps://flux:S3CRET@127.0.0.1:1' "$bin" pull oci://ghcr.example.test/flux:v1
no_secret "HTTPS_PROXY with a port that is none" 'oci://ghcr.example.test/flux:v1: HTTPS_PROXY: http://\*\*\*@127.0.0.1:x: has a port' -- \
  env HTTPS_PROXY='http://flux:S3CRET@127.0.0.1:x' "$bin" pull oci://ghcr.example.test/flux:v1
no_secret "HTTPS_PROXY without a scheme, unreachable" 'oci://ghcr.example.test/flux:v1: ' -- \
  env HTTPS_PROXY='flux:S3CRET@127.0.0.1:1' "$bin" pull oci://ghcr.example.test/flux:v1 --request-timeout 5s
kubeconfig silent | sed 's|^    server: .*|&\n    proxy-url: htps://flux:S3CRET@127.0.0.1:1|' >"$work/proxy.kubeconfig"
no_secret "kubeconfig proxy-url with a mistyped scheme" '.*proxy-url' -- \
  "$bin" get --kubeconfig "$work/proxy.kubeconfig" --request-timeout 2s
no_secret "an oci:// reference with a password" 'oci://\*\*\*@' -- \
  "$bin" pull 'oci://flux:S3CRET@127.0.0.1:1/flux:v1' --request-timeout 2s

summary
