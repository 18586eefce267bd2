#!/bin/bash
# test/stress/run.sh smoke|full BIN PLAIN STRESSC: load and faults.
#
# BIN serves the checks that a sanitizer build should see (smoke passes
# the ASan+UBSan build); PLAIN is the -O2 build for what ASan would
# distort: resident memory and an address-space limit. STRESSC is the
# client (stressc.c). All traffic is on 127.0.0.1; every loop and wait is
# bounded. `smoke` runs in `make test` (about two minutes on 2 cores),
# `full` is `make stress`: the same checks with the issue's sizes (a
# million reviews for the memory check), all on PLAIN.
#
#  1. 1,000 concurrent keep-alive TLS connections send golden reviews:
#     all connect, every answer equals its .out.json, none dropped.
#  1b. 1,000 concurrent TLS connections from one address (the apiserver
#     is one client address, and opens a connection per call in flight):
#     every one connects and its review is answered correctly, none
#     refused or lost, past the 128 per address (deadline.h).
#  2. 50 slow clients (head or body a byte every 100 ms) and 20 that
#     vanish mid-body: each slow one is dropped by the server's deadline,
#     and the p99 latency of normal traffic beside them stays within
#     3x (plus 50 ms) of the p99 without them.
#  3. SIGTERM under load: the listener stops, no request written is left
#     unanswered, and the process exits 0 within the 5 s grace + 1 s.
#  4. Resident memory (PLAIN), after 100,000 reviews of warm-up, grows
#     less than 1 MiB over a million reviews (full) or proportionally over
#     50,000 (smoke, with a floor of 1 MiB for allocator noise).
#  5. Out of descriptors (serve under `ulimit -n 64`, 150 connections):
#     each connection is answered correctly or refused, never a crash;
#     it answers normally afterwards.
#  6. Out of memory (PLAIN under `ulimit -v`, 40 concurrent 3 MiB
#     bodies): each answer is the review or a clean 5xx Status, or the
#     connection is refused; it answers normally afterwards.
#  7. Policy reload and certificate rotation under load: zero failed
#     requests, and the new certificate is served.
#  8. Hostile clients (test/e2e/hostile.sh with MEMORY=1, on PLAIN): 200
#     clients stalled a byte short of a 3 MiB body, in a 128 MiB memory
#     cgroup where one can be had; `full` also runs its floods for 30 s.
# Prints `ok - ...` / `not ok - ...` with the figures; exits 1 on failure.

set -u

if [ $# -ne 4 ] || { [ "$1" != smoke ] && [ "$1" != full ]; }; then
	echo "usage: $0 smoke|full BIN PLAIN STRESSC" >&2
	exit 2
fi
MODE=$1
abspath() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
SAN_BIN=$(abspath "$2")
PLAIN_BIN=$(abspath "$3")
STRESSC=$(abspath "$4")
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CASES=$REPO/test/golden/cases
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-stress.XXXXXX") || exit 2
BIN=$SAN_BIN
[ "$MODE" = full ] && BIN=$PLAIN_BIN

. "$REPO/test/e2e/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# 1,000 connections need more than the usual 1,024 descriptors in the
# client (and, with its listeners, in the server).
ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 2100 ]; then
	echo "# ulimit -n is $(ulimit -n): too few descriptors for 1,000" \
		"connections; check 1 will say so"
fi

# A CA and two serving certificates it signed: rotation keeps the trust.
mkca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-sha256 -nodes -days 1 -subj /CN=stress-ca \
		-keyout "$TMP/ca.key" -out "$TMP/ca.crt" 2>>"$TMP/openssl.log" &&
		for n in tls next; do
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
				-sha256 -nodes -subj /CN=localhost \
				-keyout "$TMP/$n.key" -out "$TMP/$n.csr" \
				2>>"$TMP/openssl.log" &&
				printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' \
					>"$TMP/san.ext" &&
				openssl x509 -req -in "$TMP/$n.csr" -CA "$TMP/ca.crt" \
					-CAkey "$TMP/ca.key" -CAcreateserial -days 1 \
					-extfile "$TMP/san.ext" -out "$TMP/$n.crt" \
					2>>"$TMP/openssl.log" || return 1
		done
}
if ! mkca; then
	echo "not ok - certificates: $(cat "$TMP/openssl.log")"
	exit 1
fi
# start_server serves TMP/tls.{crt,key}; rotation replaces them, so each
# server gets its own copy.
cp "$TMP/tls.crt" "$TMP/first.crt"
cp "$TMP/tls.key" "$TMP/first.key"
fresh_certs() {
	cp "$TMP/first.crt" "$TMP/tls.crt"
	cp "$TMP/first.key" "$TMP/tls.key"
}

# pass WORDS...; fail NAME DETAIL-WORDS...: lib.sh's ok and not_ok with
# the words joined.
pass() { ok "$*"; }
fail() { not_ok "$1" "${*:2}"; }

# stressc load|slow ARGS...: the client against the running server.
sc() {
	local cmd=$1
	shift
	"$STRESSC" "$cmd" -p "$PORT" -a "$TMP/ca.crt" -d "$CASES" "$@"
}

# field NAME LINE: the value of NAME=... in a stressc summary line.
field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

alive() {
	kill -0 "$SERVER_PID" 2>/dev/null
}

# Fails when the server log holds a sanitizer report or a crash.
no_crash() {
	if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:|Segmentation|Aborted' \
		"$TMP/server.log"; then
		fail "$1: no sanitizer report" \
			"$(grep -E -m5 'ERROR|runtime error' "$TMP/server.log")"
		return 1
	fi
	return 0
}

vmrss_kib() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"
}

# Sizes: smoke keeps the whole run near two minutes on 2 cores.
if [ "$MODE" = smoke ]; then
	LOAD_REQS=5         # per connection, x 1,000
	RSS_WARM=12500      # 100,000 reviews: glibc's arenas settle by then
	RSS_REQS=6250       # 50,000 reviews
else
	LOAD_REQS=100
	RSS_WARM=12500      # 100,000 reviews
	RSS_REQS=125000     # 1,000,000 reviews
fi

# --- 1. a thousand concurrent keep-alive connections -------------------------

fresh_certs
start_server || { fail "serve starts" "$(tail -5 "$TMP/server.log")"; exit 1; }
# From 16 loopback addresses: the server holds 128 per address (as many
# kept connections as five apiservers' pools).
out=$(sc load -c 1000 -S 16 -r "$LOAD_REQS" -T 120 2>"$TMP/client.err")
rc=$?
if [ $rc -eq 0 ] && alive; then
	pass "1,000 concurrent connections: $(field answered "$out") reviews" \
		"all correct, $(field refused "$out") refused, $(field lost "$out") lost;" \
		"p50 $(field p50_ms "$out") ms, p99 $(field p99_ms "$out") ms," \
		"$(field rps "$out")/s; connect, handshake and first request" \
		"written: p99 $(field dial_p99_ms "$out") ms," \
		"max $(field dial_max_ms "$out") ms (SERVER_FIRST_MS is 3,000)"
else
	fail "1,000 concurrent connections" "$out $(head -3 "$TMP/client.err")"
fi
no_crash "1,000 connections"

# --- 1b. a thousand at once from one address -----------------------------------

# The apiserver's burst: one address, a connection per review in flight,
# each dialled with its review in hand (-r 1). Past the 128 per address
# none is reset: each is busy in its handshake or its review.
out=$(sc load -c 1000 -S 0 -r 1 -T 120 2>>"$TMP/client.err")
rc=$?
if [ $rc -eq 0 ] && alive && [ "$(field answered "$out")" = 1000 ]; then
	pass "1,000 concurrent connections from one address:" \
		"$(field correct "$out") reviews correct, $(field refused "$out")" \
		"refused, $(field lost "$out") lost; connect, handshake and first" \
		"request written: p99 $(field dial_p99_ms "$out") ms"
else
	fail "1,000 concurrent connections from one address" \
		"$out $(grep -v 'review uid' "$TMP/server.log" | tail -3)"
fi
no_crash "1,000 connections from one address"

# --- 2. slow and vanishing clients beside normal traffic ---------------------

base=$(sc load -c 20 -r 100 -w 50 -T 60 2>>"$TMP/client.err")
rc_base=$?
sc slow -k header -n 25 -i 100 -T 30 >"$TMP/slow-header.out" \
	2>>"$TMP/client.err" &
slow_header=$!
sc slow -k body -n 25 -i 100 -T 30 >"$TMP/slow-body.out" \
	2>>"$TMP/client.err" &
slow_body=$!
background "$slow_header $slow_body"
sc slow -k vanish -n 20 -T 30 >"$TMP/vanish.out" 2>>"$TMP/client.err"
rc_vanish=$?
sleep 1 # the slow clients are connected and trickling
# Long enough (about 10 s) to run beside them until the server drops them.
busy=$(sc load -c 20 -r 200 -w 50 -T 60 2>>"$TMP/client.err")
rc_busy=$?
wait $slow_header
rc_header=$?
wait $slow_body
rc_body=$?
p99_base=$(field p99_ms "$base")
p99_busy=$(field p99_ms "$busy")
within=$(awk -v a="$p99_base" -v b="$p99_busy" \
	'BEGIN { print (b <= 3 * a + 50) ? "yes" : "no" }')
if [ $rc_base -eq 0 ] && [ $rc_busy -eq 0 ] && [ "$within" = yes ]; then
	pass "normal traffic beside 50 slow clients: p99 $p99_busy ms" \
		"(alone: $p99_base ms), $(field answered "$busy") reviews all correct"
else
	fail "normal traffic beside 50 slow clients" \
		"alone: $base"$'\n'"beside: $busy"
fi
for kind in header body; do
	line=$(cat "$TMP/slow-$kind.out")
	eval "rc=\$rc_$kind"
	last=$(field last_drop_s "$line")
	if [ "$rc" -eq 0 ] && awk -v s="$last" 'BEGIN { exit !(s <= 13) }'; then
		pass "slow $kind, a byte every 100 ms: $(field dropped_by_server "$line")" \
			"of 25 dropped by the server $(field first_drop_s "$line")-$last s" \
			"into its window (from accept, or from the request line)"
	else
		fail "slow $kind clients are dropped within 13 s" "$line"
	fi
done
if [ $rc_vanish -eq 0 ] && alive && sc load -c 2 -r 10 >/dev/null 2>&1; then
	pass "20 clients vanished mid-body: the server answers on"
else
	fail "clients vanishing mid-body" "$(cat "$TMP/vanish.out")"
fi
no_crash "slow clients"
stop_server

# --- 3. SIGTERM under load ---------------------------------------------------

fresh_certs
start_server || { fail "serve starts" "$(tail -5 "$TMP/server.log")"; exit 1; }
sc load -U -c 100 -r 100000 -w 5 -T 30 >"$TMP/term.out" 2>>"$TMP/client.err" &
load_pid=$!
background "$load_pid"
sleep 3
term_start=$(date +%s%N)
kill -TERM "$SERVER_PID"
sleep 0.2
# No new connection is served now, even while requests drain: its TLS
# handshake gets no answer (or the connection is refused).
late_out=$(sc load -R -c 1 -r 1 -H 1000 -T 5 2>/dev/null)
if [ "$(field connected "$late_out")" = 0 ]; then
	late=refused
else
	late=served
fi
for _ in $(seq 1 100); do
	alive || break
	sleep 0.1
done
if alive; then
	term_rc=timeout
	kill -KILL "$SERVER_PID"
fi
wait "$SERVER_PID"
term_rc=${term_rc:-$?}
term_ms=$((($(date +%s%N) - term_start) / 1000000))
SERVER_PID=
wait $load_pid
load_rc=$?
out=$(cat "$TMP/term.out")
if [ "$term_rc" = 0 ] && [ $term_ms -le 6000 ] && [ $load_rc -eq 0 ] &&
	[ "$late" = refused ]; then
	pass "SIGTERM under load (100 connections): exit 0 after $term_ms ms," \
		"new connections not served, $(field answered "$out") answered," \
		"$(field lost "$out") lost, $(field closed "$out") connections" \
		"closed between requests"
else
	fail "SIGTERM under load" "exit $term_rc after $term_ms ms," \
		"a new connection $late; client: $out"
	grep -v 'review uid' "$TMP/server.log" | tail -4 | sed 's/^/#   /'
fi
no_crash "SIGTERM"
echo "# shutdown_ms=$term_ms"

# --- 4. resident memory across many reviews (plain build) --------------------

BIN=$PLAIN_BIN
fresh_certs
start_server || { fail "serve starts" "$(tail -5 "$TMP/server.log")"; exit 1; }
warm=$(sc load -c 8 -r "$RSS_WARM" -T 300 2>>"$TMP/client.err")
rss0=$(vmrss_kib "$SERVER_PID")
main=$(sc load -c 8 -r "$RSS_REQS" -T 1200 2>>"$TMP/client.err")
main_rc=$?
rss1=$(vmrss_kib "$SERVER_PID")
reviews=$(field answered "$main")
growth=$((rss1 - rss0))
# 1 MiB per million reviews, never less than the issue's 1 MiB: after the
# warm-up, RSS still moves by a few hundred KiB of allocator noise that
# does not grow with the count (measured: +456 KiB over 50,000 reviews,
# +272 KiB over 400,000). A leak of 21 bytes a review fails the smoke;
# `make stress` (a million) catches one of a byte.
limit=$((1024 * ${reviews:-0} / 1000000))
[ $limit -lt 1024 ] && limit=1024
if [ $main_rc -eq 0 ] && [ $growth -lt $limit ]; then
	pass "memory: RSS ${rss0} KiB after $(field answered "$warm") warm-up" \
		"reviews, ${rss1} KiB after $reviews more (growth $growth KiB," \
		"limit $limit KiB; $(field rps "$main")/s)"
else
	fail "memory stays flat" "RSS $rss0 -> $rss1 KiB (limit +$limit)" \
		"over: $main"
fi
stop_server

# --- 5. out of file descriptors ------------------------------------------------

BIN=$TMP/fd-limited
printf '#!/bin/bash\nulimit -n 64 && exec %q "$@"\n' "$SAN_BIN" >"$BIN"
[ "$MODE" = full ] &&
	printf '#!/bin/bash\nulimit -n 64 && exec %q "$@"\n' "$PLAIN_BIN" >"$BIN"
chmod +x "$BIN"
fresh_certs
start_server || { fail "serve starts" "$(tail -5 "$TMP/server.log")"; exit 1; }
out=$(sc load -R -c 150 -r 2 -H 3000 -T 60 2>>"$TMP/client.err")
rc=$?
after=$(sc load -c 10 -r 10 -T 30 2>>"$TMP/client.err")
rc_after=$?
if [ $rc -eq 0 ] && alive && [ $rc_after -eq 0 ]; then
	pass "out of descriptors (ulimit -n 64, 150 connections):" \
		"$(field connected "$out") served, $(field refused "$out") refused," \
		"$(field wrong "$out") wrong, $(field lost "$out") lost;" \
		"then $(field correct "$after") of 100 correct"
else
	fail "out of descriptors" "during: $out"$'\n'"after: $after" \
		"$(grep -v 'review uid' "$TMP/server.log" | tail -3)"
fi
no_crash "descriptors"
stop_server

# --- 6. out of memory (plain build under an address-space limit) -------------

BIN=$PLAIN_BIN
fresh_certs
start_server || { fail "serve starts" "$(tail -5 "$TMP/server.log")"; exit 1; }
vm=$(sed -n 's/^VmSize:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SERVER_PID/status")
stop_server
# 8 MiB above the idle server: room for two 3 MiB bodies, not 40.
AS_KIB=$((vm + 8 * 1024))
BIN=$TMP/as-limited
printf '#!/bin/bash\nulimit -v %d && exec %q "$@"\n' "$AS_KIB" "$PLAIN_BIN" \
	>"$BIN"
chmod +x "$BIN"
fresh_certs
start_server || { fail "serve starts under ulimit -v" "$(tail -5 "$TMP/server.log")"; exit 1; }
out=$(sc load -R -E -c 40 -r 3 -P 3000000 -T 120 2>>"$TMP/client.err")
rc=$?
after=$(sc load -c 4 -r 10 -T 30 2>>"$TMP/client.err")
rc_after=$?
if [ $rc -eq 0 ] && alive && [ $rc_after -eq 0 ]; then
	pass "out of memory (ulimit -v $((AS_KIB / 1024)) MiB, 40 x 3 MiB bodies):" \
		"$(field correct "$out") answered, $(field errors "$out") clean 5xx," \
		"$(field refused "$out") refused, $(field lost "$out") lost;" \
		"then $(field correct "$after") of 40 correct"
else
	fail "out of memory" "during: $out"$'\n'"after: $after" \
		"$(grep -v 'review uid' "$TMP/server.log" | tail -3)"
fi
stop_server

# --- 7. policy reload and certificate rotation under load --------------------

BIN=$SAN_BIN
[ "$MODE" = full ] && BIN=$PLAIN_BIN
fresh_certs
cp "$REPO/deploy/policy.yaml" "$TMP/policy.yaml"
start_server --policy "$TMP/policy.yaml" ||
	{ fail "serve starts" "$(tail -5 "$TMP/server.log")"; exit 1; }
reloads() {
	curl -s --max-time 2 "http://127.0.0.1:$PROBE/metrics" |
		sed -n "s/^topogate_reload_total{what=\"$1\",result=\"ok\"} //p"
}
if [ -z "$(reloads policy)" ]; then
	echo "# pending: this serve has no reload (no topogate_reload_total)"
else
	policy0=$(reloads policy)
	tls0=$(reloads certificate)
	# Long-lived connections and, beside them, a stream of new ones.
	sc load -c 20 -r 400 -w 25 -T 60 >"$TMP/reload-keep.out" \
		2>>"$TMP/client.err" &
	keep_pid=$!
	background "$keep_pid"
	(
		for _ in $(seq 1 12); do
			sc load -c 10 -r 2 -T 30 || exit 1
			sleep 0.5
		done
	) >"$TMP/reload-new.out" 2>>"$TMP/client.err" &
	new_pid=$!
	background "$new_pid"
	sleep 1
	# As the kubelet updates a ConfigMap: a new file moved over the old.
	{ cat "$REPO/deploy/policy.yaml"; echo "# reloaded under load"; } \
		>"$TMP/policy.new" && mv "$TMP/policy.new" "$TMP/policy.yaml"
	sleep 3
	cp "$TMP/next.key" "$TMP/tls.key.new"
	cp "$TMP/next.crt" "$TMP/tls.crt.new"
	mv "$TMP/tls.key.new" "$TMP/tls.key"
	mv "$TMP/tls.crt.new" "$TMP/tls.crt"
	wait $keep_pid
	rc_keep=$?
	wait $new_pid
	rc_new=$?
	sleep 1
	served=$(openssl s_client -connect "127.0.0.1:$PORT" \
		-CAfile "$TMP/ca.crt" </dev/null 2>/dev/null |
		openssl x509 -noout -serial 2>/dev/null | sed 's/serial=//')
	want=$(openssl x509 -in "$TMP/next.crt" -noout -serial | sed 's/serial=//')
	keep=$(cat "$TMP/reload-keep.out")
	new_ok=$(grep -c ' wrong=0 errors=0 lost=0 broken=0 ' "$TMP/reload-new.out")
	if [ $rc_keep -eq 0 ] && [ $rc_new -eq 0 ] &&
		[ "$(reloads policy)" -gt "$policy0" ] &&
		[ "$(reloads certificate)" -gt "$tls0" ] && [ "$served" = "$want" ]; then
		pass "reload under load: policy and certificate reloaded," \
			"$(field answered "$keep") reviews on 20 kept connections and" \
			"$new_ok x 20 on new ones, 0 failed; new serial served"
	else
		fail "reload under load" "keep: $keep; new: $(tr '\n' ' ' \
			<"$TMP/reload-new.out"); reloads policy $policy0 ->" \
			"$(reloads policy), tls $tls0 -> $(reloads certificate);" \
			"served $served, want $want"
	fi
	no_crash "reload"
fi
stop_server

# --- 8. hostile clients (test/e2e/hostile.sh, issue 16) ---------------------

# Stalled 3 MiB bodies and resident memory, on the plain build, in a
# 128 MiB memory cgroup where there is one; `full` also times the floods
# of idle and half-open connections for 30 s each on the plain build
# (`make test` runs them for 4 s on the sanitizer build, in `sanitize`).
if [ "$MODE" = full ]; then
	hostile_out=$(STRESSC=$STRESSC SECONDS_PER_CASE=30 \
		"$REPO/test/e2e/hostile.sh" "$PLAIN_BIN" 2>&1)
	hostile_rc=$?
	printf '%s\n' "$hostile_out" | sed 's/^/# /'
	[ $hostile_rc -eq 0 ] && pass "hostile floods, 30 s each" ||
		fail "hostile floods" "see the lines above"
fi
hostile_out=$(STRESSC=$STRESSC MEMORY=1 SECONDS_PER_CASE=$([ "$MODE" = full ] &&
	echo 30 || echo 4) "$REPO/test/e2e/hostile.sh" "$PLAIN_BIN" 2>&1)
hostile_rc=$?
printf '%s\n' "$hostile_out" | sed 's/^/# /'
[ $hostile_rc -eq 0 ] && pass "hostile: stalled bodies and memory" ||
	fail "hostile: stalled bodies and memory" "see the lines above"

echo "# $PASSED passed, $FAILED failed"
[ $FAILED -eq 0 ]
