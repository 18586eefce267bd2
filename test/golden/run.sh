#!/bin/bash
# test/golden/run.sh BIN: the golden AdmissionReview cases.
#
# Each test/golden/cases/<case>.in.json is an AdmissionReview request (or,
# for malformed-*, bytes that are not one). Optional beside it:
#   <case>.args        extra flags on one line, e.g. `--mode warn`
#   <case>.policy      the top of a policy file; the instanceTypes table of
#                      deploy/policy.yaml is appended and passed as --policy
#   <case>.novalidate  the pods of this case are not checked by k8s-validate
#   <case>.out.json    the exact response body (reviewed by a person)
#   <case>.patch.json  its JSON Patch decoded, for reviewers
#
# 1. `BIN audit --review - ARGS < in` must exit 0 with a review response,
#    or 2 with a metav1.Status body (code 400) for input that is not a
#    readable review; stdout must equal <case>.out.json byte for byte.
# 2. Unless VALGRIND=1: the same bytes POSTed with curl to `BIN serve`
#    over HTTPS (one server per distinct ARGS) must get the same body, with
#    HTTP 200, or the Status code for a malformed case.
# 3. oracle.py: the inputs pass k8s-validate; every response keeps the
#    envelope rules; every patch applies with python jsonpatch, keeps the
#    generic invariants, gives a pod that passes k8s-validate --strict, and
#    a second pass over the patched pod yields no ops.
#
# UPDATE=1 rewrites <case>.out.json and <case>.patch.json from `audit`
# and prints what changed: read every changed line before committing.
# ONLY=GLOB takes only the cases whose names match it.
# VALGRIND=1 runs `audit` under valgrind (no leaks, no errors) and skips
# the HTTPS pass. SHARED overrides where ../shared is.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CASES=$HERE/cases
SHARED=${SHARED:-$REPO/../shared}
# A clone alone: what the tests read of ../shared is in test/data.
[ -d "$SHARED" ] || SHARED=$REPO/test/data
export SHARED
PY=/usr/bin/python3
ORACLE="$PY $HERE/oracle.py"
UPDATE=${UPDATE:-0}
VALGRIND=${VALGRIND:-0}
export VALGRIND

if [ "$VALGRIND" = 1 ]; then
	# shellcheck disable=SC2054 # the commas belong to a valgrind flag
	WRAP=(valgrind --leak-check=full
		--errors-for-leak-kinds=definite,indirect --error-exitcode=99 -q)
	LIMIT=300
else
	WRAP=()
	LIMIT=30
fi
SANITIZER='AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:'

TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-golden.XXXXXX") || exit 2
SERVER_PID=
cleanup() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

failures=0
checks=0
ok() {
	checks=$((checks + 1))
	echo "ok - $1"
}
not_ok() {
	checks=$((checks + 1))
	failures=$((failures + 1))
	echo "not ok - $1"
	if [ $# -gt 1 ] && [ -n "$2" ]; then
		printf '%s\n' "$2" | head -n 60 | sed 's/^/#   /'
	fi
}
# Runs an oracle.py subcommand, echoing its lines and counting them.
oracle() {
	local line out rc
	out=$($ORACLE "$@")
	rc=$?
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		case $line in
		"ok - "*) checks=$((checks + 1)) ;;
		"not ok - "*) checks=$((checks + 1)) failures=$((failures + 1)) ;;
		esac
		printf '%s\n' "$line"
	done <<<"$out"
	if [ $rc -ne 0 ] && ! grep -q '^not ok' <<<"$out"; then
		not_ok "oracle.py $1 exited $rc"
	fi
}

# The flags for a case: its .policy (composed) and its .args.
case_args() {
	local name=$1 policy
	if [ -f "$CASES/$name.policy" ]; then
		policy=$TMP/policy/$name.yaml
		mkdir -p "$TMP/policy"
		{
			cat "$CASES/$name.policy"
			sed -n '/^instanceTypes:/,$p' "$REPO/deploy/policy.yaml"
		} >"$policy"
		printf -- '--policy %s ' "$policy"
	fi
	if [ -f "$CASES/$name.args" ]; then
		tr '\n' ' ' <"$CASES/$name.args"
	fi
}

names=()
for f in "$CASES"/*.in.json; do
	[ -e "$f" ] || continue
	n=${f##*/}
	n=${n%.in.json}
	# ONLY='job-mpijob-*' runs (or, with UPDATE=1, rewrites) those alone.
	# shellcheck disable=SC2053 # a glob on purpose
	[[ -z ${ONLY:-} || $n == $ONLY ]] && names+=("$n")
done
if [ ${#names[@]} -eq 0 ]; then
	echo "$0: no cases in $CASES" >&2
	exit 2
fi

# --- the inputs themselves are valid Kubernetes 1.36 objects ------------

oracle inputs "$CASES"

# --- audit --review ------------------------------------------------------

declare -A RC ARGS
for name in "${names[@]}"; do
	in=$CASES/$name.in.json
	exp=$CASES/$name.out.json
	out=$TMP/$name.out
	err=$TMP/$name.err
	args=$(case_args "$name")
	ARGS[$name]=$args
	# shellcheck disable=SC2086 # args are words by design
	timeout -k 5 "$LIMIT" "${WRAP[@]}" "$BIN" audit --review - $args \
		<"$in" >"$out" 2>"$err"
	rc=$?
	RC[$name]=$rc
	problem=
	case $rc in
	0 | 2) ;;
	99) problem="valgrind reported errors or leaks" ;;
	124 | 137) problem="timed out after ${LIMIT}s" ;;
	*) problem="exit status $rc (want 0, or 2 for an unreadable review)" ;;
	esac
	if [ -z "$problem" ] && grep -Eq "$SANITIZER" "$err"; then
		problem="sanitizer report on stderr"
	fi
	if [ -n "$problem" ]; then
		not_ok "$name (audit)" "$problem
$(tail -n 40 "$err")"
		RC[$name]=bad
		continue
	fi
	if [ "$UPDATE" = 1 ]; then
		if ! cmp -s "$out" "$exp"; then
			cp "$out" "$exp"
			echo "updated: ${exp#"$REPO"/}"
		fi
		$ORACLE write-patch "$exp" "$CASES/$name.patch.json"
	fi
	if [ ! -f "$exp" ]; then
		not_ok "$name (audit)" "no ${exp#"$REPO"/}: run UPDATE=1 and review it"
		RC[$name]=bad
	elif cmp -s "$out" "$exp"; then
		ok "$name (audit)"
	else
		not_ok "$name (audit)" "$($ORACLE diff "$exp" "$out")"
		RC[$name]=bad
	fi
done

# --- oracles: envelope, patch, k8s-validate, idempotence ------------------

for name in "${names[@]}"; do
	[ "${RC[$name]}" = bad ] && continue
	extra=()
	# A policy that overrides user values, or repacks jobs (in the file
	# or with --repack), overwrites what the user set by design.
	if { [ -f "$CASES/$name.policy" ] &&
		grep -Eq '^overrideUserValues:[[:space:]]*true|^[[:space:]]+repack:[[:space:]]*true' \
			"$CASES/$name.policy"; } ||
		[[ " ${ARGS[$name]} " == *" --repack "* ]]; then
		extra=(--allow-overwrite)
	fi
	# shellcheck disable=SC2086
	oracle case --bin "$BIN" --dir "$CASES" --name "$name" \
		--rc "${RC[$name]}" "${extra[@]}" -- ${ARGS[$name]}
done

# --- the same cases over HTTPS against `serve` ----------------------------

free_ports() {
	$PY -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])'
}

# Starts `serve` with the given flags; sets SERVER_PID, PORT, PROBE.
start_server() {
	local log=$1
	shift
	for _ in 1 2 3; do
		read -r PORT PROBE < <(free_ports)
		"$BIN" serve --listen "127.0.0.1:$PORT" \
			--probe-listen "127.0.0.1:$PROBE" \
			--tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" "$@" \
			>"$log" 2>&1 &
		SERVER_PID=$!
		for _ in $(seq 100); do
			if ! kill -0 "$SERVER_PID" 2>/dev/null; then
				break
			fi
			if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
				"http://127.0.0.1:$PROBE/readyz")" = 200 ]; then
				return 0
			fi
			sleep 0.1
		done
		stop_server
		# Another process may have taken a port: try fresh ones.
		grep -qi 'in use' "$log" || break
	done
	return 1
}

# Stops the server (SIGTERM, then SIGKILL after 5 s); its exit status
# goes to STOP_STATUS.
STOP_STATUS=
stop_server() {
	STOP_STATUS=
	[ -n "$SERVER_PID" ] || return 0
	kill -TERM "$SERVER_PID" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID" 2>/dev/null
	STOP_STATUS=$?
	SERVER_PID=
}

if [ "$VALGRIND" != 1 ]; then
	if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 1 \
		-subj /CN=localhost \
		-addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
		>"$TMP/openssl.log" 2>&1; then
		not_ok "serve: a throw-away certificate" "$(cat "$TMP/openssl.log")"
	else
		# One server per distinct set of flags (keys get an "x" in
		# front: bash refuses an empty key).
		declare -A GROUP
		for name in "${names[@]}"; do
			GROUP[x${ARGS[$name]}]+="$name "
		done
		g=0
		for key in "${!GROUP[@]}"; do
			args=${key#x}
			g=$((g + 1))
			log=$TMP/serve.$g.log
			label="serve${args:+ ${args//$TMP\//}}"
			label=${label% }
			# shellcheck disable=SC2086 # args are words by design
			if ! start_server "$log" $args; then
				for name in ${GROUP[$key]}; do
					not_ok "$name ($label)" "the server did not get ready within 10 s:
$(tail -n 20 "$log")"
				done
				continue
			fi
			for name in ${GROUP[$key]}; do
				exp=$CASES/$name.out.json
				body=$TMP/$name.http
				if [ ! -f "$exp" ]; then
					not_ok "$name ($label)" "no ${exp#"$REPO"/}"
					continue
				fi
				want=$($ORACLE http-code "$exp")
				got=$(curl -sS --max-time 10 --cacert "$TMP/cert.pem" \
					-H 'Content-Type: application/json' \
					--data-binary "@$CASES/$name.in.json" \
					-o "$body" -w '%{http_code}' \
					"https://127.0.0.1:$PORT/mutate?timeout=10s" \
					2>"$TMP/curl.err")
				if [ "$got" != "$want" ]; then
					not_ok "$name ($label)" "HTTP $got, want $want
$(cat "$TMP/curl.err")
$(head -c 600 "$body" 2>/dev/null)"
				elif ! cmp -s "$body" "$exp"; then
					not_ok "$name ($label)" "$($ORACLE diff "$exp" "$body")"
				else
					ok "$name ($label)"
				fi
			done
			stop_server
			st=$STOP_STATUS
			if grep -Eq "$SANITIZER" "$log"; then
				not_ok "$label: shutdown" "sanitizer report:
$(grep -E -A 30 "$SANITIZER" "$log" | head -n 40)"
			elif [ "$st" != 0 ] && [ "$st" != 143 ]; then
				not_ok "$label: shutdown" "exit status $st after SIGTERM
$(tail -n 20 "$log")"
			else
				ok "$label: stopped cleanly (exit $st)"
			fi
		done
	fi
fi

echo "# ${#names[@]} cases, $checks checks, $failures failed"
[ "$failures" -eq 0 ]
