#!/bin/bash
# test/audit/run.sh BIN: `topogate audit` over manifests.
#
#   - The 40 manifests of ../shared/corpus/manifests in one run: the text
#     report must equal corpus.txt, read line by line when written.
#   - inputs/list.yaml (a kind: List) as text and JSON: list.txt, list.json.
#   - stdin: the same report as the file, named <stdin>.
#   - Exit statuses: --fail-on deny|warn|never, unreadable paths, usage.
#   - check.py: every suggested patch applies with python jsonpatch and
#     the patched pod passes k8s-validate --strict; and the very pods the
#     audit expanded, sent to `serve` over HTTPS, get the same decision
#     and the same patch.
# UPDATE=1 rewrites the golden reports. SHARED overrides ../shared.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
export SHARED
PY=/usr/bin/python3
FAILED=0

TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-audit.XXXXXX") || exit 2
trap 'rm -rf "$TMP"; [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null' EXIT

ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/#   /'
	FAILED=1
}

# golden NAME ACTUAL: compare with (or, UPDATE=1, write) $HERE/NAME.
golden() {
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$2" "$HERE/$1"
		ok "$1 written: read it"
	elif diff -u "$HERE/$1" "$2" >"$TMP/diff"; then
		ok "$1"
	else
		not_ok "$1" "$(head -40 "$TMP/diff")"
	fi
}

# expect_rc WHAT WANT GOT
expect_rc() {
	if [ "$3" = "$2" ]; then ok "$1: exit $2"; else not_ok "$1: exit $3, want $2"; fi
}

# Paths in the report are as given: run from the corpus so they read
# manifests/NAME.yaml wherever ../shared is.
(cd "$SHARED/corpus" && "$BIN" audit manifests) >"$TMP/corpus.txt" 2>"$TMP/err"
expect_rc "corpus audit (default --fail-on deny)" 0 $?
golden corpus.txt "$TMP/corpus.txt"
[ -s "$TMP/err" ] && not_ok "corpus audit wrote to stderr" "$(cat "$TMP/err")"

(cd "$SHARED/corpus" && "$BIN" audit --fail-on warn manifests) >/dev/null 2>&1
expect_rc "corpus audit --fail-on warn" 1 $?

(cd "$HERE" && "$BIN" audit inputs/list.yaml) >"$TMP/list.txt" 2>&1
expect_rc "list audit: a deny" 1 $?
golden list.txt "$TMP/list.txt"
(cd "$HERE" && "$BIN" audit -o json inputs/list.yaml) >"$TMP/list.json" 2>&1
golden list.json "$TMP/list.json"
(cd "$HERE" && "$BIN" audit --fail-on never inputs/list.yaml) >/dev/null 2>&1
expect_rc "list audit --fail-on never" 0 $?

"$BIN" audit - <"$HERE/inputs/list.yaml" >"$TMP/stdin.txt" 2>&1
expect_rc "stdin audit" 1 $?
if sed 's|^inputs/list.yaml$|<stdin>|' "$TMP/list.txt" | diff -u - "$TMP/stdin.txt" >"$TMP/diff"; then
	ok "stdin gives the file's report"
else
	not_ok "stdin gives the file's report" "$(cat "$TMP/diff")"
fi

"$BIN" audit "$TMP/no-such-file.yaml" >/dev/null 2>"$TMP/err"
expect_rc "missing file" 2 $?
grep -q 'no-such-file.yaml: No such file' "$TMP/err" && ok "missing file named" ||
	not_ok "missing file named" "$(cat "$TMP/err")"
"$BIN" audit -o yaml "$HERE/inputs/list.yaml" >/dev/null 2>&1
expect_rc "bad -o" 2 $?
"$BIN" audit >/dev/null 2>&1
expect_rc "no path" 2 $?

# --- patches apply and validate; serve agrees -----------------------------

(cd "$SHARED/corpus" && "$BIN" audit -o json --with-pods --fail-on never manifests) \
	>"$TMP/corpus.json" || not_ok "corpus -o json --with-pods"
"$BIN" audit -o json --with-pods --fail-on never "$HERE/inputs" >"$TMP/inputs.json" ||
	not_ok "inputs -o json --with-pods"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-keyout "$TMP/tls.key" -out "$TMP/tls.crt" -days 1 -subj /CN=localhost \
	-addext subjectAltName=DNS:localhost >/dev/null 2>&1 || not_ok "test certificate"
for _ in 1 2 3 4 5; do
	read -r PORT PROBE < <($PY -c 'import socket
s=[socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
	"$BIN" serve --listen "127.0.0.1:$PORT" --probe-listen "127.0.0.1:$PROBE" \
		--tls-cert "$TMP/tls.crt" --tls-key "$TMP/tls.key" 2>"$TMP/serve.log" &
	SERVER_PID=$!
	for _ in $(seq 50); do
		curl -sf "http://127.0.0.1:$PROBE/readyz" >/dev/null && break
		sleep 0.1
	done
	curl -sf "http://127.0.0.1:$PROBE/readyz" >/dev/null && break
	kill "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
done
if [ -z "${SERVER_PID:-}" ]; then
	not_ok "serve started" "$(cat "$TMP/serve.log")"
else
	$PY "$HERE/check.py" --url "https://localhost:$PORT/mutate" \
		--cacert "$TMP/tls.crt" --port "$PORT" "$TMP/corpus.json" "$TMP/inputs.json" || FAILED=1
	kill -TERM "$SERVER_PID"
	wait "$SERVER_PID" 2>/dev/null
	SERVER_PID=
fi

[ "$FAILED" = 0 ] && echo "# audit: all passed"
exit "$FAILED"
