# Registry authentication: basic (htpasswd; auths, credHelpers, credsStore)
# and tokens (tests/oci/token_issuer.py), refusals that say 401, no secret on stderr.
# Sourced by tests/oci/oci_test.sh after its setup, in its order (a case may
# use what an earlier file left: the main registry's artifacts, the cache);
# the helpers are tests/oci/lib.sh's.
# shellcheck shell=bash disable=SC2154 # NAME_REGISTRY_* are set by registry_save NAME

basic_user=fluxuser
basic_password=pw-$RANDOM$RANDOM-secret
secret_leaked() {  # secret_leaked SECRET: in any stderr so far?
  grep -qF -- "$1" "$work/all-stderr"
}

cat >"$work/bin/docker-credential-fluxoptest" <<HELPER
#!/bin/sh
# A Docker credential helper for the test: answers 'get' for any server.
read -r server
echo "\$1 \$server" >>"$work/credential-helper.log"
[ "\$1" = get ] || exit 1
printf '{"ServerURL":"%s","Username":"%s","Secret":"%s"}\n' "\$server" "$basic_user" "$basic_password"
HELPER
chmod +x "$work/bin/docker-credential-fluxoptest"

t_basic() {
  local how=$1
  registry_use basic
  fresh_cache
  case $how in
    auth) docker_config "{\"auths\":{\"$basic\":{\"auth\":\"$(b64 "$basic_user:$basic_password")\"}}}" ;;
    username) docker_config "{\"auths\":{\"$basic\":{\"username\":\"$basic_user\",\"password\":\"$basic_password\"}}}" ;;
    credHelpers) docker_config "{\"credHelpers\":{\"$basic\":\"fluxoptest\"}}" ;;
    credsStore) docker_config "{\"credsStore\":\"fluxoptest\"}" ;;
  esac
  : >"$work/credential-helper.log"
  fx pull "oci://$basic/flux:v1" -o json
  succeeded "pull with $how credentials" || return 1
  [ "$(json_field "$work/out" digest)" = "$basic_digest" ] || { because "digest is not $basic_digest"; return 1; }
  case $how in
    cred*) grep -q "^get .*$basic" "$work/credential-helper.log" ||
      { because "docker-credential-fluxoptest was not asked for $basic"; return 1; } ;;
  esac
  ! secret_leaked "$basic_password" || because "the password appears on stderr"
}

# t_denied NAME REPO USER PASSWORD none|wrong: a pull from the registry saved as
# NAME without or with wrong credentials fails with a clear 401, never
# showing the password.
t_denied() {
  local name=$1 repo=$2 user=$3 password=$4 how=$5 addr
  registry_use "$name"
  addr=$REGISTRY_ADDR
  fresh_cache
  case $how in
    none) docker_config '{}' ;;
    wrong) docker_config "{\"auths\":{\"$addr\":{\"auth\":\"$(b64 "$user:wrong-$password")\"}}}" ;;
  esac
  fx pull "oci://$addr/$repo:v1"
  one_line_error "pull of $repo with $how credentials" '401|unauthori[sz]ed' || return 1
  ! secret_leaked "$password" || because "the password appears on stderr"
}

if start_mini_registry basic --htpasswd "$basic_user:$basic_password"; then
  tcase "basic auth: auths.auth" t_basic auth
  tcase "basic auth: auths username/password" t_basic username
  tcase "basic auth: credHelpers" t_basic credHelpers
  tcase "basic auth: credsStore" t_basic credsStore
  tcase "basic auth: no credentials, a clear 401" t_denied basic flux "$basic_user" "$basic_password" none
  tcase "basic auth: wrong password, a clear 401" t_denied basic flux "$basic_user" "$basic_password" wrong
else
  fail "basic auth" "the htpasswd registry did not start"
fi
docker_config '{}'

# --- token auth ----------------------------------------------------------------------

token_user=tokenuser
token_password=tpw-$RANDOM$RANDOM-secret
identity_token=idt-$RANDOM$RANDOM-refresh

token_log_since() { tail -n +$(($1 + 1)) "$work/token.log"; }

t_token() {
  local how=$1 repo=private mark want
  registry_use token
  fresh_cache
  case $how in
    anonymous) docker_config '{}'; repo=public; want='^GET /token.* auth=no .*status=200' ;;
    basic) docker_config "{\"auths\":{\"$token\":{\"auth\":\"$(b64 "$token_user:$token_password")\"}}}"
      want='^GET /token.* auth=yes sub='$token_user' status=200' ;;
    identity) docker_config "{\"auths\":{\"$token\":{\"auth\":\"$(b64 "$token_user:")\",\"identitytoken\":\"$identity_token\"}}}"
      want='^POST /token .*grant=refresh_token sub='$token_user' status=200' ;;
  esac
  mark=$(lines "$work/token.log")
  fx pull "oci://$token/$repo/flux:v1" -o json
  succeeded "pull of $repo/flux with $how credentials" || return 1
  local digest_var=token_digest_$repo
  [ "$(json_field "$work/out" digest)" = "${!digest_var}" ] || { because "digest is not ${!digest_var}"; return 1; }
  token_log_since "$mark" | grep -qE "$want" ||
    { because "the token service saw no request like /$want/: $(token_log_since "$mark" | tr '\n' ';')"; return 1; }
  ! secret_leaked "$token_password" && ! secret_leaked "$identity_token" || because "a secret appears on stderr"
}

if [ -z "$issuer_python" ]; then
  fail "token auth" "no Python with the cryptography module (python3-cryptography) for token_issuer.py"
elif start_helper "$work/token.port" env TOKEN_ISSUER_PASSWORD="$token_password" \
  TOKEN_ISSUER_IDENTITY_TOKEN="$identity_token" "$issuer_python" "$here/token_issuer.py" \
  --port-file "$work/token.port" --cert "$work/token-issuer.pem" --log "$work/token.log" \
  --user "$token_user" --timeout 3600 &&
  registry_start "$work/reg-token" --token "http://127.0.0.1:$(cat "$work/token.port")/token" \
    fluxopctl-test-registry fluxopctl-test-issuer "$work/token-issuer.pem" \
    --credentials "$token_user:$token_password"; then
  registry_save token
  token=$REGISTRY_ADDR
  # Two digests: the pushes' created annotations may differ by a second.
  # shellcheck disable=SC2034 # read through digest_var in t_token
  token_digest_public=$(registry_push_artifact public/flux:v1 "$mini" flux flux-images)
  # shellcheck disable=SC2034
  token_digest_private=$(registry_push_artifact private/flux:v1 "$mini" flux flux-images)
  tcase "token auth: anonymous pull of public/" t_token anonymous
  tcase "token auth: private repository with basic credentials" t_token basic
  tcase "token auth: identitytoken via refresh_token" t_token identity
  tcase "token auth: private repository without credentials, a clear 401" \
    t_denied token private/flux "$token_user" "$token_password" none
  tcase "token auth: wrong password, a clear 401" \
    t_denied token private/flux "$token_user" "$token_password" wrong
  grep -qF -- "$token_password" "$work/token.log" && echo "note: the token service's log holds the password"
else
  fail "token auth" "the token service or its registry did not start"
fi
docker_config '{}'
