#!/bin/bash
# test/kube/run.sh BUILD: kube/kube.c against a stand-in apiserver.
#
# BUILD is the build directory holding kube_dump (or the topogate binary
# in it, or kube_dump itself). First the config loaders, through
# `kube_dump --config`; then each scenario in test/kube/scenarios/, run
# by check.py: the stand-in (standin.py, written from the API docs)
# serves HTTPS with a CA made here by openssl, kube_dump watches what
# serve watches (clusterview/kuberesources.c) against it, and the
# callbacks it prints are compared, resource by resource, with the
# scenario's "expect". Prints `ok - name` or `not ok - name: details`;
# exits 1 if any failed.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD" >&2
	exit 2
fi
if [ -d "$1" ]; then
	DUMP=$1/kube_dump
elif [ "$(basename "$1")" = kube_dump ]; then
	DUMP=$1
else
	DUMP=$(dirname "$1")/kube_dump
fi
case $DUMP in /*) ;; *) DUMP=$PWD/$DUMP ;; esac
if [ ! -x "$DUMP" ]; then
	echo "$0: no kube_dump at $DUMP (make BUILD=... \$BUILD/kube_dump)" >&2
	exit 2
fi
BIN=$DUMP
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-kube.XXXXXX")
. "$ROOT/test/e2e/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
# The client's own temporary files (kubeconfig *-data) land here too, so
# a run that leaves one behind is noticed.
export TMPDIR=$TMP/clienttmp
mkdir -p "$TMPDIR"

# --- certificates: a CA, the server's, a client's, and a stranger CA -------

C=$TMP/certs
mkdir -p "$C"
ossl() {
	openssl "$@" 2>>"$TMP/openssl.log" || {
		echo "openssl $1 failed:"
		cat "$TMP/openssl.log"
		exit 1
	}
}
for ca in ca other-ca; do
	ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-sha256 -nodes -days 1 -subj "/CN=test $ca" \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign \
		-keyout "$C/$ca.key" -out "$C/$ca.crt"
done
leaf() { # leaf NAME SUBJECT EXTFILE-LINES
	ossl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-subj "$2" -keyout "$C/$1.key" -out "$C/$1.csr"
	printf '%s\n' "$3" >"$C/$1.ext"
	ossl x509 -req -in "$C/$1.csr" -CA "$C/ca.crt" -CAkey "$C/ca.key" \
		-CAcreateserial -days 1 -sha256 -extfile "$C/$1.ext" \
		-out "$C/$1.crt"
}
leaf server /CN=kube-apiserver \
	"subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost
extendedKeyUsage=serverAuth"
leaf client "/O=system:masters/CN=tester" "extendedKeyUsage=clientAuth"

# --- config loading: kube_dump --config -------------------------------------

K=$TMP/kc
mkdir -p "$K/sub"
config() { # config ARGS...: sets OUT to kube_dump's line and RC
	OUT=$("$DUMP" --config "$@" 2>&1)
	RC=$?
}
field() { # field KEY: that key of OUT
	printf '%s' "$OUT" | $PY -c "import json,sys; v=json.load(sys.stdin)\
.get('$1'); sys.stdout.write('null' if v is None else v)"
}
kc() { # kc FILE CLUSTER-LINES USER-LINES
	{
		echo "apiVersion: v1"
		echo "kind: Config"
		echo "current-context: c"
		echo "contexts:"
		echo "- name: c"
		echo "  context: {cluster: k, user: u}"
		echo "clusters:"
		echo "- name: k"
		echo "  cluster:"
		printf '%s\n' "$2" | sed 's/^/    /'
		echo "users:"
		echo "- name: u"
		echo "  user:"
		printf '%s\n' "$3" | sed 's/^/    /'
	} >"$1"
}

kc "$K/sub/config" "server: https://example.test:6443/
certificate-authority: ../ca.pem" "client-certificate: certs/me.crt
client-key: /abs/me.key
tokenFile: tok"
config --kubeconfig "$K/sub/config"
expect "kubeconfig: relative paths from its directory, absolute kept" \
	"0 https://example.test:6443 $K/sub/../ca.pem $K/sub/certs/me.crt /abs/me.key $K/sub/tok" \
	"$RC $(field server) $(field ca_file) $(field cert_file) $(field key_file) $(field token_file)"

kc "$K/data" "server: https://[::1]:6443
certificate-authority-data: $(base64 -w0 "$C/ca.crt")" \
	"client-certificate-data: $(base64 "$C/client.crt" | tr -d '\n')
client-key-data: $(base64 -w0 "$C/client.key")"
config --kubeconfig "$K/data"
expect "kubeconfig: *-data decoded to the PEM" \
	"0 $(cat "$C/ca.crt" | md5sum) $(cat "$C/client.key" | md5sum) null" \
	"$RC $(field ca_pem | md5sum) $(field key_pem | md5sum) $(field ca_file)"

kc "$K/exec" "server: https://k:6443" "exec:
      apiVersion: client.authentication.k8s.io/v1
      command: aws"
config --kubeconfig "$K/exec"
expect_match "kubeconfig: an exec plugin is refused by name, with its place" \
	"^1 .*$K/exec:[0-9]+:[0-9]+: user 'exec' is not supported" "$RC $OUT"

kc "$K/authp" "server: https://k:6443" "auth-provider: {name: gcp}"
config --kubeconfig "$K/authp"
expect_match "kubeconfig: an auth-provider is refused by name" \
	"^1 .*user 'auth-provider' is not supported" "$RC $OUT"

kc "$K/insecure" "server: https://k:6443
insecure-skip-tls-verify: true" "token: x"
config --kubeconfig "$K/insecure"
expect_match "kubeconfig: insecure-skip-tls-verify is refused" \
	"^1 .*insecure-skip-tls-verify is refused" "$RC $OUT"

kc "$K/http" "server: http://k:8080" "token: x"
config --kubeconfig "$K/http"
expect_match "kubeconfig: a plain-http server is refused" \
	"^1 .*server 'http://k:8080' is not https://" "$RC $OUT"

kc "$K/halfcert" "server: https://k:6443" "client-certificate: a.crt"
config --kubeconfig "$K/halfcert"
expect_match "kubeconfig: a certificate without its key is refused" \
	"^1 .*needs its key" "$RC $OUT"

sed 's/current-context: c/current-context: nope/' "$K/exec" >"$K/noctx"
config --kubeconfig "$K/noctx"
expect_match "kubeconfig: a current-context that is not there" \
	"^1 .*no contexts named 'nope'" "$RC $OUT"

config --kubeconfig "$K/missing"
expect_match "kubeconfig: a file that is not there" \
	"^1 .*cannot read kubeconfig '$K/missing': No such file" "$RC $OUT"

OUT=$(env -u KUBERNETES_SERVICE_HOST "$DUMP" --config --in-cluster 2>&1)
expect_match "in cluster: without the environment, says so" \
	"not in a cluster: KUBERNETES_SERVICE_HOST" "$OUT"
mkdir -p "$TMP/sa"
echo tok >"$TMP/sa/token"
OUT=$(KUBERNETES_SERVICE_HOST=fd00::1 KUBERNETES_SERVICE_PORT=443 \
	TOPOGATE_SA_DIR=$TMP/sa "$DUMP" --config --in-cluster 2>&1)
expect "in cluster: IPv6 in brackets, CA and token from the SA dir" \
	"https://[fd00::1]:443 $TMP/sa/ca.crt $TMP/sa/token" \
	"$(field server) $(field ca_file) $(field token_file)"
OUT=$(KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 \
	TOPOGATE_SA_DIR=$TMP/nosa "$DUMP" --config --in-cluster 2>&1)
expect_match "in cluster: no token mounted, says so at once" \
	"cannot read '$TMP/nosa/token': No such file" "$OUT"
if [ ! -e /var/run/secrets/kubernetes.io/serviceaccount/token ]; then
	OUT=$(KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 \
		env -u TOPOGATE_SA_DIR "$DUMP" --config --in-cluster 2>&1)
	expect_match "in cluster: the service-account mount by default" \
		"cannot read '/var/run/secrets/kubernetes.io/serviceaccount/token'" \
		"$OUT"
fi

# --- nothing listening: retried with back-off, logged once ------------------

PORT=$(free_port)
kc "$K/down" "server: https://127.0.0.1:$PORT
certificate-authority-data: $(base64 -w0 "$C/ca.crt")" "token: x"
KUBE_DUMP_BACKOFF_MS=100 "$DUMP" --kubeconfig "$K/down" >"$TMP/down.out" \
	2>"$TMP/down.err" &
pid=$!
sleep 2
kill -TERM $pid
wait $pid
rc=$?
tries=$(grep -c '"res":"nodes","reason":"dropped"' "$TMP/down.out")
logged=$(grep -c 'nodes: dropped' "$TMP/down.err")
states=$(grep -c '"res":"nodes","synced":false,"why":"dropped"' \
	"$TMP/down.out")
if [ "$rc" = 0 ] && [ "$tries" -ge 3 ] && [ "$logged" = 1 ] &&
	[ "$states" = 1 ]; then
	ok "apiserver down: $tries tries in 2 s, one state change, one log line"
else
	not_ok "apiserver down: tries, one state change, one log line" \
		"rc $rc, $tries tries, $states states, $logged lines: $(cat "$TMP/down.err")"
fi

# --- scenarios against the stand-in -----------------------------------------

# KUBE_SCENARIOS="name ..." runs only those.
for s in "$HERE"/scenarios/*.json; do
	n=$(basename "$s" .json)
	case " ${KUBE_SCENARIOS:-$n} " in *" $n "*) ;; *) continue ;; esac
	mkdir -p "$TMP/s/$n"
	out=$($PY "$HERE/check.py" "$DUMP" "$C" "$s" "$TMP/s/$n")
	printf '%s\n' "$out"
	PASSED=$((PASSED + $(printf '%s\n' "$out" | grep -c '^ok - ')))
	FAILED=$((FAILED + $(printf '%s\n' "$out" | grep -c '^not ok - ')))
	if ! printf '%s\n' "$out" | grep -q '^ok - '; then
		not_ok "$n" "check.py ran no check"
	fi
done

left=$(find "$TMPDIR" -mindepth 1 | head -n 3)
expect "the client leaves no temporary file behind" "" "$left"

echo "kube: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
