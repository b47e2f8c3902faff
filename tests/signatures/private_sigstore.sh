# Sourced by tests/signatures/cosign_test.sh: a private Sigstore made at test
# time with the openssl CLI, as an organisation without Fulcio, Rekor or a CT
# log would run one. Nothing of it is committed.
#
#   pki_ca DIR NAME CN [ISSUER]
#                    a CA certificate DIR/NAME.pem and key DIR/NAME.key (EC
#                    P-256, two days): self-signed, or signed by the CA
#                    ISSUER (DIR/ISSUER.pem, an intermediate)
#   pki_signer DIR NAME ISSUER IDENTITY OIDC_ISSUER
#                    a code-signing certificate DIR/NAME.pem, key DIR/NAME.key,
#                    signed by the CA ISSUER, naming IDENTITY (a URI SAN) and
#                    OIDC_ISSUER in Fulcio's issuer extensions (1.1, raw, and
#                    1.8, DER UTF8String): what Fulcio puts in its certificates
#   pki_tsa DIR NAME ISSUER
#                    a timestamping certificate DIR/NAME.pem, key DIR/NAME.key,
#                    signed by the CA ISSUER, and DIR/NAME.cnf, the openssl
#                    configuration `openssl ts -reply` signs with
#   tsa_start DIR NAME
#                    runs tests/signatures/tsa_server.py with DIR/NAME.cnf;
#                    sets TSA_URL; the server dies with this shell, or
#   tsa_stop_all     stops every one tsa_start started
#   trusted_root_json CA_CHAIN TSA_CHAIN
#                    prints a trusted_root.json whose only certificate
#                    authority is CA_CHAIN and only timestamp authority
#                    TSA_CHAIN (PEM files, leaf-most first); no transparency
#                    nor CT log

pki_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# pki_issue DIR NAME CN ISSUER EXTENSIONS: DIR/NAME.pem signed by ISSUER
# (DIR/ISSUER.pem, or NAME itself), with the extensions of the text EXTENSIONS.
pki_issue() {
  local dir=$1 name=$2 cn=$3 issuer=$4 extensions=$5
  pki_key "$dir/$name.key" || return 1
  printf '%s\n' "$extensions" >"$dir/$name.ext"
  if [ "$issuer" = "$name" ]; then
    openssl req -x509 -new -key "$dir/$name.key" -subj "/O=fluxopctl test/CN=$cn" -days 2 \
      -extensions v3 -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n[v3]\n%s\n' "$extensions") \
      -out "$dir/$name.pem" 2>/dev/null
  else
    openssl req -new -key "$dir/$name.key" -subj "/O=fluxopctl test/CN=$cn" -out "$dir/$name.csr" 2>/dev/null &&
      openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$issuer.pem" -CAkey "$dir/$issuer.key" \
        -set_serial "0x$(openssl rand -hex 16)" -days 2 -extfile "$dir/$name.ext" \
        -out "$dir/$name.pem" 2>/dev/null
  fi
}

pki_ca() {
  local dir=$1 name=$2 cn=$3 issuer=${4:-$2}
  pki_issue "$dir" "$name" "$cn" "$issuer" "basicConstraints=critical,CA:TRUE
keyUsage=critical,keyCertSign,cRLSign
subjectKeyIdentifier=hash"
}

pki_signer() {
  local dir=$1 name=$2 issuer=$3 identity=$4 oidc_issuer=$5
  pki_issue "$dir" "$name" "" "$issuer" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=codeSigning
subjectAltName=critical,URI:$identity
1.3.6.1.4.1.57264.1.1=DER:$(printf '%s' "$oidc_issuer" | od -An -tx1 | tr -d ' \n')
1.3.6.1.4.1.57264.1.8=ASN1:UTF8String:$oidc_issuer"
}

pki_tsa() {
  local dir=$1 name=$2 issuer=$3
  pki_issue "$dir" "$name" "fluxopctl test timestamp authority" "$issuer" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=critical,timeStamping" || return 1
  cat "$dir/$issuer.pem" >"$dir/$name-chain.pem"
  echo 01 >"$dir/$name.serial"
  cat >"$dir/$name.cnf" <<CNF
[tsa]
default_tsa = tsa_config
[tsa_config]
serial = $dir/$name.serial
signer_cert = $dir/$name.pem
signer_key = $dir/$name.key
certs = $dir/$name-chain.pem
signer_digest = sha256
default_policy = 1.3.6.1.4.1.57264.2
digests = sha256, sha384, sha512
ess_cert_id_alg = sha256
ess_cert_id_chain = yes
accuracy = secs:1
ordering = no
tsa_name = no
CNF
}

tsa_start() {
  local dir=$1 name=$2 port_file=$1/$2.port
  rm -f "$port_file"
  setpriv --pdeathsig TERM python3 "$(dirname "${BASH_SOURCE[0]}")/tsa_server.py" "$dir/$name.cnf" \
    "$port_file" >"$dir/$name.log" 2>&1 &
  TSA_PIDS+=($!)
  wait_until 60 test -s "$port_file" || { echo "the timestamp authority did not start: $(tail -1 "$dir/$name.log")" >&2; return 1; }
  TSA_URL=http://127.0.0.1:$(cat "$port_file")
}

TSA_PIDS=()
tsa_stop_all() {
  local pid
  for pid in "${TSA_PIDS[@]}"; do stop_process "$pid"; done
  TSA_PIDS=()
}

trusted_root_json() {
  python3 - "$1" "$2" <<'PY'
import base64, datetime, json, re, ssl, sys

def chain(pem_file):
    pems = re.findall(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----",
                      open(pem_file).read(), re.S)
    return [{"rawBytes": base64.b64encode(ssl.PEM_cert_to_DER_cert(p)).decode()} for p in pems]

start = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1))
valid = {"start": start.strftime("%Y-%m-%dT%H:%M:%SZ")}
subject = {"organization": "fluxopctl test", "commonName": "private sigstore"}
print(json.dumps({
    "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
    "tlogs": [],
    "certificateAuthorities": [{"subject": subject, "uri": "https://fulcio.test.invalid",
                                "certChain": {"certificates": chain(sys.argv[1])},
                                "validFor": valid}],
    "ctlogs": [],
    "timestampAuthorities": [{"subject": subject, "uri": "https://tsa.test.invalid",
                              "certChain": {"certificates": chain(sys.argv[2])},
                              "validFor": valid}],
}, indent=2))
PY
}
