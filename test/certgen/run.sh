#!/bin/bash
# test/certgen/run.sh BIN: `BIN certgen` checked by tools we did not write.
#
# The openssl command line reads the certificates (names, key usage,
# chain, validity, key match), Python's yaml and ../shared/tools/
# k8s-validate read the Secret, Python's jsonpatch applies the caBundle
# patch, and curl talks to `BIN serve` by the Service's DNS names with
# the CA bundle as its only trust. Prints `ok - name` or `not ok - name:
# details` per check; exits 1 if any failed.

set -u

. "$(dirname "$0")/../bin-arg.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
SHARED=${SHARED:-$ROOT/../shared}
# A clone alone: what the tests read of ../shared is in test/data.
[ -d "$SHARED" ] || SHARED=$ROOT/test/data
VALIDATE=$SHARED/tools/k8s-validate
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-certgen.XXXXXX")

. "$ROOT/test/e2e/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

SVC=topogate
NS=topogate-system
OUT=$TMP/out

certgen() {
	"$BIN" certgen "$@" >"$TMP/stdout" 2>"$TMP/stderr"
}

# --- the helper executable ---------------------------------------------------

# OpenSSL is topogate-certgen's: the server must not load libcrypto.
if ldd "$BIN" | grep -q libcrypto; then
	not_ok "$(basename "$BIN") does not link libcrypto" "$(ldd "$BIN")"
else
	ok "$(basename "$BIN") does not link libcrypto"
fi
cp "$BIN" "$TMP/alone"
"$TMP/alone" certgen --help >/dev/null 2>"$TMP/stderr"
rc=$?
expect_match "without topogate-certgen beside it: exit 1, names the path" \
	"^1 topogate certgen: cannot run '$TMP/topogate-certgen': No such file" \
	"$rc $(cat "$TMP/stderr")"

# --- usage errors: exit 2, nothing written ----------------------------------

certgen
expect "no arguments: exit 2" 2 $?
certgen --service Bad_Name --namespace "$NS" --out "$TMP/x"
rc=$?
expect_match "an invalid --service: exit 2, says why" \
	"^2 .*--service 'Bad_Name': not a DNS-1123 label" "$rc $(cat "$TMP/stderr")"
certgen --service "$SVC" --namespace "$NS" --out "$TMP/x" --webhooks 2
expect "--webhooks without --webhook-config: exit 2" 2 $?
certgen --service "$SVC" --namespace "$NS" --out "$TMP/x" --days 0
expect "--days 0: exit 2" 2 $?
certgen --service "$SVC" --namespace "$NS" --out "$TMP/x" extra
expect "an extra argument: exit 2" 2 $?
[ ! -e "$TMP/x" ] && ok "a usage error writes nothing" ||
	not_ok "a usage error writes nothing" "$(ls -la "$TMP/x")"

echo keep >"$TMP/afile"
certgen --service "$SVC" --namespace "$NS" --out "$TMP/afile"
rc=$?
expect_match "--out naming a file: exit 1, says so, file untouched" \
	"^1 keep .*'.*afile': exists and is not a directory" \
	"$rc $(cat "$TMP/afile") $(cat "$TMP/stderr")"

# --- one run with everything ------------------------------------------------

certgen --service "$SVC" --namespace "$NS" --out "$OUT" \
	--secret-name topogate-tls --webhook-config topogate --webhooks 2
rc=$?
expect "certgen: exit 0" 0 "$rc"
[ "$rc" = 0 ] || { cat "$TMP/stderr"; exit 1; }
NOW=$(date +%s)

expect "the files, and no temporary left behind" \
	".:ca.crt cabundle-patch.json secret.yaml tls.crt tls.key" \
	"$(cd "$OUT" && ls -A | tr '\n' ' ' | sed 's/^/.:/; s/ $//')"
expect "tls.key and secret.yaml are 0600, the certificates 0644" \
	"600 600 644 644" \
	"$(stat -c %a "$OUT/tls.key" "$OUT/secret.yaml" "$OUT/tls.crt" \
		"$OUT/ca.crt" | tr '\n' ' ' | sed 's/ $//')"
expect "stdout is the CA bundle: base64 of ca.crt, one line" \
	"$(base64 -w0 "$OUT/ca.crt")" "$(cat "$TMP/stdout")"

x509() {
	openssl x509 -in "$1" -noout "${@:2}" 2>&1
}
# ext FILE NAME: the value lines of one extension, joined by " | ".
ext() {
	x509 "$1" -ext "$2" | tail -n +2 | sed 's/^ *//' | tr '\n' '|' |
		sed 's/|$//; s/|/ | /g'
}
# header FILE NAME: the extension's first line (says "critical").
header() {
	x509 "$1" -ext "$2" | head -n 1 | sed 's/^ *//'
}

expect "SANs: the Service's four DNS names, nothing else" \
	"DNS:$SVC, DNS:$SVC.$NS, DNS:$SVC.$NS.svc, DNS:$SVC.$NS.svc.cluster.local" \
	"$(ext "$OUT/tls.crt" subjectAltName)"
expect "leaf key usage: critical, digitalSignature only" \
	"X509v3 Key Usage: critical Digital Signature" \
	"$(header "$OUT/tls.crt" keyUsage) $(ext "$OUT/tls.crt" keyUsage)"
expect "leaf extended key usage: serverAuth only" \
	"TLS Web Server Authentication" "$(ext "$OUT/tls.crt" extendedKeyUsage)"
expect "leaf basic constraints: critical, CA:FALSE" \
	"X509v3 Basic Constraints: critical CA:FALSE" \
	"$(header "$OUT/tls.crt" basicConstraints) \
$(ext "$OUT/tls.crt" basicConstraints)"
expect "CA basic constraints: critical, CA:TRUE" \
	"X509v3 Basic Constraints: critical CA:TRUE, pathlen:0" \
	"$(header "$OUT/ca.crt" basicConstraints) \
$(ext "$OUT/ca.crt" basicConstraints)"
expect "CA key usage: critical, keyCertSign and cRLSign" \
	"X509v3 Key Usage: critical Certificate Sign, CRL Sign" \
	"$(header "$OUT/ca.crt" keyUsage) $(ext "$OUT/ca.crt" keyUsage)"
expect "leaf subject and issuer" \
	"subject=CN = $SVC.$NS.svc issuer=CN = topogate CA for $SVC.$NS.svc" \
	"$(x509 "$OUT/tls.crt" -subject -issuer | tr '\n' ' ' | sed 's/ $//')"
expect "the CA is self-signed" \
	"$(x509 "$OUT/ca.crt" -subject | sed 's/^subject/issuer/')" \
	"$(x509 "$OUT/ca.crt" -issuer)"

expect "chain: openssl verify -x509_strict -purpose sslserver" \
	"$OUT/tls.crt: OK" \
	"$(openssl verify -x509_strict -purpose sslserver -CAfile "$OUT/ca.crt" \
		"$OUT/tls.crt" 2>&1)"
# The control: another run's CA must not verify this leaf.
certgen --service "$SVC" --namespace "$NS" --out "$TMP/other"
if openssl verify -CAfile "$TMP/other/ca.crt" "$OUT/tls.crt" \
	>"$TMP/verify.out" 2>&1; then
	not_ok "another CA does not verify the leaf" "$(cat "$TMP/verify.out")"
else
	ok "another CA does not verify the leaf"
fi
expect "a new run makes a new serial" "different" \
	"$([ "$(x509 "$OUT/tls.crt" -serial)" != \
		"$(x509 "$TMP/other/tls.crt" -serial)" ] && echo different)"
expect_match "the serial is 16 random octets, positive" \
	'^serial=[4-7][0-9A-F]{31}$' "$(x509 "$OUT/tls.crt" -serial)"

expect "both keys are ECDSA P-256" "prime256v1 prime256v1" \
	"$(for f in tls.crt ca.crt; do x509 "$OUT/$f" -text |
		sed -n 's/^ *ASN1 OID: //p'; done | tr '\n' ' ' | sed 's/ $//')"
expect "signed with ecdsa-with-SHA256" "ecdsa-with-SHA256" \
	"$(x509 "$OUT/tls.crt" -text | sed -n 's/^ *Signature Algorithm: //p' |
		sort -u)"
expect "tls.key is the leaf's key" \
	"$(x509 "$OUT/tls.crt" -pubkey)" \
	"$(openssl pkey -in "$OUT/tls.key" -pubout 2>&1)"

# epoch FILE -startdate|-enddate
epoch() {
	date -d "$(x509 "$1" "$2" | cut -d= -f2)" +%s
}
# within NAME WANT GOT SLACK: |WANT - GOT| <= SLACK seconds.
within() {
	local d=$(($2 - $3))
	[ "${d#-}" -le "$4" ] && ok "$1" ||
		not_ok "$1" "want $2 +- $4, got $3 (off by $d s)"
}
within "notBefore is an hour back, for clock skew" $((NOW - 3600)) \
	"$(epoch "$OUT/tls.crt" -startdate)" 120
within "the leaf is valid for 365 days" $((NOW + 365 * 86400)) \
	"$(epoch "$OUT/tls.crt" -enddate)" 120
within "the CA is valid for 3650 days" $((NOW + 3650 * 86400)) \
	"$(epoch "$OUT/ca.crt" -enddate)" 120
certgen --service "$SVC" --namespace "$NS" --out "$TMP/short" --days 30
within "--days 30: the leaf is valid for 30 days" $((NOW + 30 * 86400)) \
	"$(epoch "$TMP/short/tls.crt" -enddate)" 120
certgen --service "$SVC" --namespace "$NS" --out "$TMP/long" --days 5000
within "--days 5000: the CA outlives the leaf" \
	"$(epoch "$TMP/long/tls.crt" -enddate)" \
	"$(epoch "$TMP/long/ca.crt" -enddate)" 5

# --- the Secret ---------------------------------------------------------------

got=$($PY - "$OUT" <<'PYEOF' 2>&1
import base64, sys, yaml
out = sys.argv[1]
doc = yaml.safe_load(open(out + "/secret.yaml"))
meta = doc["metadata"]
print(doc["apiVersion"], doc["kind"], doc["type"], meta["name"],
      meta["namespace"], " ".join(sorted(doc["data"])))
for name in ("ca.crt", "tls.crt", "tls.key"):
    if base64.b64decode(doc["data"][name]) != open(out + "/" + name, "rb").read():
        print("data." + name + " differs from the file")
PYEOF
)
expect "secret.yaml: a kubernetes.io/tls Secret holding the three files" \
	"v1 Secret kubernetes.io/tls topogate-tls $NS ca.crt tls.crt tls.key" \
	"$got"
"$VALIDATE" --strict "$OUT/secret.yaml" >"$TMP/validate.out" 2>&1
rc=$?
expect_match "k8s-validate --strict passes the Secret" \
	"^0 .*1 passed, 0 failed, 0 skipped" "$rc $(tr '\n' ' ' <"$TMP/validate.out")"

# --- the caBundle patch ---------------------------------------------------------

cat >"$TMP/mwc.yaml" <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: topogate
webhooks:
  - name: pods.topogate.io
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      service: {name: topogate, namespace: topogate-system, path: /mutate}
  - name: jobs.topogate.io
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      caBundle: b2xk
      service: {name: topogate, namespace: topogate-system, path: /mutate}
YAML
got=$($PY - "$OUT" "$TMP/mwc.yaml" "$TMP/patched.yaml" <<'PYEOF' 2>&1
import base64, json, sys, jsonpatch, yaml
out, src, dst = sys.argv[1:]
patch = json.load(open(out + "/cabundle-patch.json"))
doc = jsonpatch.apply_patch(yaml.safe_load(open(src)), patch)
yaml.safe_dump(doc, open(dst, "w"))
ca = open(out + "/ca.crt", "rb").read()
print(len(patch), " ".join(
    "same" if base64.b64decode(w["clientConfig"]["caBundle"]) == ca else "other"
    for w in doc["webhooks"]))
PYEOF
)
expect "the patch sets caBundle to the CA, with or without one before" \
	"2 same same" "$got"
"$VALIDATE" --strict "$TMP/patched.yaml" >"$TMP/validate.out" 2>&1
rc=$?
expect_match "k8s-validate --strict passes the patched configuration" \
	"^0 .*1 passed, 0 failed, 0 skipped" "$rc $(tr '\n' ' ' <"$TMP/validate.out")"

# --- serve with it, reached by the Service's names ---------------------------------

cp "$OUT/tls.crt" "$TMP/tls.crt" && cp "$OUT/tls.key" "$TMP/tls.key"
if ! start_server; then
	not_ok "serve: ready with the certgen certificate" \
		"$(tail -n 20 "$TMP/server.log")"
	exit 1
fi
for name in "$SVC" "$SVC.$NS" "$SVC.$NS.svc" "$SVC.$NS.svc.cluster.local"; do
	code=$(curl -sS --max-time 10 --cacert "$OUT/ca.crt" \
		--resolve "$name:$PORT:127.0.0.1" -o /dev/null -w '%{http_code}' \
		-H 'Content-Type: application/json' \
		--data-binary "@$ROOT/test/e2e/review-plain.json" \
		"https://$name:$PORT/mutate" 2>&1)
	expect "curl --cacert ca.crt https://$name/mutate is 200" 200 "$code"
done
got=$(curl -sS --max-time 10 --cacert "$OUT/ca.crt" \
	--resolve "other.$NS.svc:$PORT:127.0.0.1" -o /dev/null \
	"https://other.$NS.svc:$PORT/mutate" 2>&1)
expect_match "control: a name not in the certificate is refused by curl" \
	"no alternative certificate subject name matches|certificate subject name" \
	"$got"
stop_server
expect "serve stops with exit 0" 0 "$SERVER_RC"

echo "certgen: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
