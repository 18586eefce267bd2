#!/bin/bash
# test/e2e/hostile.sh BIN: hostile clients inside the cluster (issue 16).
#
# Any pod can connect to the webhook's service. Against `BIN serve` on
# 127.0.0.1, with the flood coming from 127.0.0.2-41 (forty pods; Linux
# routes all of 127/8 to loopback) or from 127.0.0.1 itself, while
# stressc (test/stress/flood.c) times a request on a fresh connection
# every 100 ms from 127.0.0.1:
#
#  1. admission port, 2,000 idle TCP connections (never a TLS byte) and
#     200 new ones a second: every review answered correctly within 1 s.
#  2. admission port, the same with half a ClientHello each: the same.
#  3. probe port, 2,000 idle connections from forty addresses and 200 new
#     a second; then 100 idle ones from the prober's own address (the
#     issue's case), then half request heads: /healthz within 1 s.
#  4. a connection that sends nothing is closed 3 s (SERVER_FIRST_MS)
#     after it was opened, and 300 idle ones from one address are held to
#     128 (SERVER_PER_ADDRESS).
#  5. MEMORY=1 (run by test/stress/run.sh on the -O2 build): 200 clients
#     each announce a 3 MiB body and send all but its last byte, while
#     reviews are timed and resident memory is read every 0.2 s. Inside a
#     memory cgroup at the chart's limit (128 MiB) when this machine has
#     one to give (cgroup v2 memory.max, or v1 memory.limit_in_bytes): no
#     OOM kill. Peak resident memory stays under 96 MiB (the 32 MiB body
#     budget, not 600 MiB), and within 16 MiB of where it started once
#     the clients are gone.
#
# SECONDS_PER_CASE (default 4) is how long each flood is timed; `make
# stress` runs 30. STRESSC: the client (default: beside BIN, stress/).
# Prints `ok - ...` / `not ok - ...` with the figures; exits 1 on failure.

set -u

. "$(dirname "$0")/../bin-arg.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CASES=$REPO/test/golden/cases
STRESSC=${STRESSC:-$(dirname "$BIN")/stress/stressc}
SECS=${SECONDS_PER_CASE:-4}
MEMORY=${MEMORY:-0}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-hostile.XXXXXX")
CGROUP=

. "$HERE/lib.sh"
hostile_cleanup() {
	cleanup
	if [ -n "$CGROUP" ]; then
		rmdir "$CGROUP" 2>/dev/null
	fi
}
trap hostile_cleanup EXIT
trap 'exit 130' INT TERM HUP

if [ ! -x "$STRESSC" ]; then
	echo "not ok - hostile: no stress client at $STRESSC (make ... stressc)"
	exit 1
fi
# 2,000 connections need descriptors on both sides.
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
if ! mkcert tls; then
	echo "not ok - certificates: $(cat "$TMP/openssl.log")"
	exit 1
fi

# flood PORT ARGS...: stressc flood against PORT; its line in $OUT.
flood() {
	local port=$1
	shift
	OUT=$("$STRESSC" flood -p "$port" -a "$TMP/tls.crt" -d "$CASES" \
		-T "$SECS" "$@" 2>>"$TMP/client.err")
}

field() {
	printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# expect_flood NAME: the last flood held every timed request to 1 s.
expect_flood() {
	if [ "$RC" -eq 0 ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		ok "$1: $(field ok "$OUT")/$(field checks "$OUT") in time, p99 $(field p99_ms "$OUT") ms, max $(field max_ms "$OUT") ms; the flood opened $(field opened "$OUT"), held $(field held_min "$OUT")-$(field held_max "$OUT")"
	else
		not_ok "$1" "$OUT $(tail -n 3 "$TMP/client.err")"
	fi
}

vmrss_kib() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"
}

if [ "$MEMORY" != 1 ]; then
	start_server || {
		not_ok "serve starts" "$(tail -5 "$TMP/server.log")"
		finish hostile
	}

	# --- 1, 2: the admission port --------------------------------------
	flood "$PORT" -k idle -n 2000 -r 200 -S 40
	RC=$?
	expect_flood "a review on a fresh connection beside 2,000 idle connections from 40 addresses, +200/s"
	flood "$PORT" -k half -n 2000 -r 200 -S 40
	RC=$?
	expect_flood "a review beside 2,000 half-open TLS connections from 40 addresses, +200/s"

	# --- 3: the probe port ------------------------------------------------
	flood "$PROBE" -m probe -k idle -n 2000 -r 200 -S 40
	RC=$?
	expect_flood "/healthz beside 2,000 idle connections from 40 addresses, +200/s"
	flood "$PROBE" -m probe -k idle -n 100 -r 0 -S 0
	RC=$?
	expect_flood "/healthz beside 100 idle connections from its own address"
	flood "$PROBE" -m probe -k head -n 500 -r 200 -S 0
	RC=$?
	expect_flood "/healthz beside 500 half request heads, +200/s"

	# --- 4: the first window and the per-address cap ---------------------
	out=$(timeout 20 /usr/bin/python3 - "$PORT" <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port))
start = time.monotonic()
s.settimeout(10)
try:
    s.recv(1)
except OSError:
    pass
print("closed after %.1f s" % (time.monotonic() - start))
held = []
for _ in range(300):
    c = socket.socket()
    c.bind(("127.0.0.9", 0))
    c.connect(("127.0.0.1", port))
    held.append(c)
for c in held:
    c.setblocking(False)
# Until the server has taken and sorted them all (5 s at most).
for _ in range(20):
    time.sleep(0.25)
    alive = 0
    for c in held:
        try:
            alive += c.recv(1) != b""
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    if alive <= 132:
        break
print("held %d of 300" % alive)
EOF
)
	expect_match "a connection that sends nothing is closed 3 s after it opened" \
		'closed after 3\.[0-9] s' "$out"
	# 128, and a few of the connections this address had before, which
	# its client closed and the server has not yet closed on its side.
	expect_match "one address holds 128 connections, not 300" \
		'held (1[01][0-9]|12[0-9]|13[0-2]) of 300' "$out"
	expect_log "slots full: the evictions are logged, not one line each" \
		'admission: slots full \(1000 in all, 128 per address\): closed [0-9]+ silent connections'
	# Not a line per connection (the floods open thousands a second): at
	# most a few per 0.25 s tick and libmicrohttpd's 10 a second.
	lines=$(grep -vc 'review uid=' "$TMP/server.log")
	if [ "$lines" -le $((50 * 5 * SECS + 50)) ]; then
		ok "the log stays short under the floods: $lines lines besides the reviews'"
	else
		not_ok "the log stays short under the floods" \
			"$lines lines besides the reviews', over $((50 * 5 * SECS + 50))"
	fi
	expect_no_sanitizer_report
	stop_server
	finish hostile
	exit 0
fi

# --- 5: stalled large bodies and memory --------------------------------------

# A memory cgroup at the chart's limit, if this machine lends one.
LIMIT=$((128 * 1024 * 1024))
v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$v2" ] && grep -qw memory "$v2/cgroup.controllers" 2>/dev/null &&
	mkdir "$v2/topogate-hostile.$$" 2>/dev/null; then
	CGROUP=$v2/topogate-hostile.$$
	echo "$LIMIT" >"$CGROUP/memory.max" 2>/dev/null || CGROUP=
elif [ -d /sys/fs/cgroup/memory ] &&
	mkdir "/sys/fs/cgroup/memory/topogate-hostile.$$" 2>/dev/null; then
	CGROUP=/sys/fs/cgroup/memory/topogate-hostile.$$
	echo "$LIMIT" >"$CGROUP/memory.limit_in_bytes" 2>/dev/null || CGROUP=
fi
oom_kills() {
	if [ -f "$CGROUP/memory.events" ]; then
		sed -n 's/^oom_kill //p' "$CGROUP/memory.events"
	else
		sed -n 's/^oom_kill //p' "$CGROUP/memory.oom_control"
	fi
}
REAL=$BIN
if [ -n "$CGROUP" ]; then
	BIN=$TMP/in-cgroup
	printf '#!/bin/sh\necho $$ >%s/cgroup.procs && exec %s "$@"\n' \
		"$CGROUP" "$REAL" >"$BIN"
	chmod +x "$BIN"
	echo "# in memory cgroup $CGROUP, limit 128 MiB"
else
	echo "# no memory cgroup to be had here: resident memory only"
fi
start_server || {
	not_ok "serve starts" "$(tail -5 "$TMP/server.log")"
	finish hostile
}
sleep 0.5
base=$(vmrss_kib "$SERVER_PID")
(while kill -0 "$SERVER_PID" 2>/dev/null; do
	vmrss_kib "$SERVER_PID"
	sleep 0.2
done) >"$TMP/rss" 2>/dev/null &
background $!
flood "$PORT" -k stall -n 200 -S 20
RC=$?
expect_flood "a review beside 200 clients stalled 1 byte short of a 3 MiB body"
peak=$(sort -n "$TMP/rss" | tail -n 1)
peak=${peak:-0}
# The clients are gone: what the server still holds.
sleep 1
after=$(vmrss_kib "$SERVER_PID")
after=${after:-0}
if [ "$peak" -le $((96 * 1024)) ]; then
	ok "200 stalled 3 MiB bodies: peak resident $((peak / 1024)) MiB (started at $((base / 1024)) MiB; 96 MiB allowed)"
else
	not_ok "200 stalled 3 MiB bodies: peak resident memory" \
		"$((peak / 1024)) MiB, over 96 MiB"
fi
if [ "$after" -le $((base + 16 * 1024)) ]; then
	ok "memory given back after the burst: $((after / 1024)) MiB (started at $((base / 1024)) MiB)"
else
	not_ok "memory given back after the burst" \
		"$((after / 1024)) MiB, started at $((base / 1024)) MiB"
fi
if [ -n "$CGROUP" ]; then
	expect "no OOM kill in the 128 MiB cgroup" "0 alive" \
		"$(oom_kills) $(kill -0 "$SERVER_PID" 2>/dev/null && echo alive)"
fi
stop_server
finish hostile
