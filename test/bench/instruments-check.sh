#!/bin/bash
# test/bench/instruments-check.sh TOPOGATE FLOOR NOPARSE CHECKONLY TWICE FIXTURE...
# The bench's instruments measure what they say (make test runs this):
# topogate-floor answers every review "allowed" with no patch, whatever
# topogate answers (the eighth round's new way into the review had quietly
# made it a second topogate until the tenth); topogate-noparse,
# topogate-checkonly and topogate-twice answer the same body three times
# with topogate's own bytes (`audit --review -` answers exactly as serve),
# the first two parsing it once and the rest from their kept tree. Under
# each of its names topogate-twice also says, at its exit, that it made
# the first reviews (or only the copies) that name asks for.
set -u
HERE=$(cd "$(dirname "$0")/../e2e" && pwd)
REAL=$1 FLOOR=$2 TWICE=$5
SAME=("$3" "$4" "$5")
shift 5
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
	: >"$TMP/server.log"
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
# twice_as NAME FIXTURE FIRST WANT: topogate-twice run as NAME (a link in
# TMP/bin, with FIRST as TMP/fixtures/other.json) answers FIXTURE as
# topogate does, and its exit line is WANT.
twice_as() {
	local what="topogate-twice as $1 answers $(basename "$2") as topogate does, $4"
	mkdir -p "$TMP/bin" "$TMP/fixtures"
	ln -sf "$(cd "$(dirname "$TWICE")" && pwd)/$(basename "$TWICE")" "$TMP/bin/$1"
	cp "$3" "$TMP/fixtures/other.json"
	answers "$TMP/bin/$1" "$2"
	if [ "$(sort -u "$TMP/answers")" = "$("$REAL" audit --review - <"$2")" ] &&
		grep -q "^topogate-twice: $4\$" "$TMP/server.log"; then
		ok "$what"
	else
		not_ok "$what" "$(grep topogate-twice "$TMP/server.log"; head -c 300 "$TMP/answers")"
	fi
}
twice_as topogate-twice "$1" "$1" "3 first reviews, 3 copies"
twice_as topogate-twice-copy "$1" "$1" "0 first reviews, 3 copies"
twice_as topogate-twice-first-other "$1" "${!#}" "3 first reviews, 3 copies"
echo "instruments: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
