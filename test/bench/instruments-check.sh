#!/bin/bash
# test/bench/instruments-check.sh TOPOGATE FLOOR NOPARSE CHECKONLY FIXTURE...
# The bench's instruments measure what they say (make test runs this):
# topogate-floor answers every review "allowed" with no patch, whatever
# topogate answers (the eighth round's new way into the review had quietly
# made it a second topogate until the tenth); topogate-noparse and
# topogate-checkonly answer the same body three times, the first parsed
# and the rest from their kept tree, with topogate's own bytes (`audit
# --review -` answers exactly as serve).
set -u
HERE=$(cd "$(dirname "$0")/../e2e" && pwd)
REAL=$1 FLOOR=$2
SAME=("$3" "$4")
shift 4
TMP=$(mktemp -d)
trap 'stop_server; rm -rf "$TMP"' EXIT
# shellcheck source=../e2e/lib.sh
. "$HERE/lib.sh"
mkcert tls

# answers BIN FIXTURE: serve's answers to FIXTURE posted three times, one
# line each (an answer ends in a newline), in TMP/answers.
answers() {
	BIN=$1
	: >"$TMP/answers"
	start_server --no-cluster-view || { echo "cannot start $1"; return 1; }
	for _ in 1 2 3; do
		curl -sS --max-time 10 --cacert "$TMP/tls.crt" \
			-H 'Content-Type: application/json' --data-binary @"$2" \
			"https://127.0.0.1:$PORT/mutate" >>"$TMP/answers"
	done
	stop_server
}

for fixture in "$@"; do
	name=$(basename "$fixture")
	want=$("$REAL" audit --review - <"$fixture")
	answers "$FLOOR" "$fixture"
	if grep -q '"patch"' "$TMP/answers" ||
		[ "$(grep -c '"allowed":true}}' "$TMP/answers")" != 3 ]; then
		not_ok "floor answers $name allowed, no patch" "$(head -c 300 "$TMP/answers")"
	else
		ok "floor answers $name allowed, no patch"
	fi
	for bin in "${SAME[@]}"; do
		what="$(basename "$bin") answers $name three times as topogate does"
		answers "$bin" "$fixture"
		if [ "$(sort -u "$TMP/answers")" = "$want" ] &&
			[ "$(wc -l <"$TMP/answers")" = 3 ]; then
			ok "$what"
		else
			not_ok "$what" "$(head -c 300 "$TMP/answers")"
		fi
	done
done
echo "instruments: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
