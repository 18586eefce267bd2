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

# same_answers WHAT WANT [EXIT]: TMP/answers is WANT three times, and
# with EXIT, topogate-twice said "topogate-twice: EXIT" as it ended.
same_answers() {
	if [ "$(sort -u "$TMP/answers")" = "$2" ] &&
		[ "$(wc -l <"$TMP/answers")" = 3 ] &&
		{ [ -z "${3:-}" ] || grep -qx "topogate-twice: $3" "$TMP/server.log"; }; then
		ok "$1"
	else
		not_ok "$1" "$(grep topogate-twice "$TMP/server.log"; head -c 300 "$TMP/answers")"
	fi
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
		exit_line=
		[ "$bin" != "$TWICE" ] || exit_line="3 first reviews, 3 copies"
		answers "$bin" "$fixture"
		same_answers "$(basename "$bin") answers $name three times as topogate does${exit_line:+, $exit_line}" \
			"$want" "$exit_line"
	done
done
# twice_as NAME FIRST EXIT: topogate-twice run as NAME (a link in TMP/bin,
# with FIRST as TMP/fixtures/other.json) answers the first fixture as
# topogate does, and says EXIT as it ends.
twice_as() {
	mkdir -p "$TMP/bin" "$TMP/fixtures"
	ln -sf "$(realpath "$TWICE")" "$TMP/bin/$1"
	cp "$2" "$TMP/fixtures/other.json"
	answers "$TMP/bin/$1" "$FIRST"
	same_answers "topogate-twice as $1 answers $(basename "$FIRST") as topogate does, $3" \
		"$("$REAL" audit --review - <"$FIRST")" "$3"
}
FIRST=$1
twice_as topogate-twice-copy "$1" "0 first reviews, 3 copies"
twice_as topogate-twice-first-other "${!#}" "3 first reviews, 3 copies"
echo "instruments: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
