#!/bin/bash
# test/bench/run.sh BIN DECIDE_BENCH: what `make bench` does.
#
# 1. Copies ../shared/bench (read-only there) to BUILD/benchwork/peers, so
#    its scripts can write their certificates, binaries and results.
# 2. Makes an ECDSA P-256 certificate with openssl and serves BIN on
#    127.0.0.1:8445, pinned to CPU 0 (SERVER_CPU).
# 3. Runs the peers' own bench/run-baseline.sh with FIRST=topogate: it
#    starts the Go webhook and the nginx floor on CPU 0, checks the Go peer,
#    and runs compare.sh with the load tools on CPU 1, interleaved A B C A B C
#    over ROUNDS rounds, ratios to topogate. Once in full (keep-alive,
#    new connection, latency at 1,000/s) on the 6 KB pod, then a shorter
#    keep-alive + new-connection pass on each other fixture.
# 4. The decision alone in process (DECIDE_BENCH), and its instructions
#    per review under valgrind --tool=callgrind.
# 5. summarize.py writes test/bench/results.md and the table in
#    docs/performance.md (between the bench-table markers).
#
# Environment (defaults: about 8 minutes on a quiet machine, more when
# tests are retried because of outside load):
#   SHARED        where ../shared is
#   ROUNDS=3      rounds of the main pass; each figure is the median
#   DUR=5         seconds of each keep-alive / new-connection test
#   LATDUR=10     seconds of the 1,000/s open-loop test (+2 s warm-up)
#   SIZES_DUR=3   seconds of each test of the per-fixture pass (1 round)
#   QUICK=1       1 round, 3 s tests, no per-fixture pass: for development
#   NO_README=1   leave docs/performance.md alone
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BIN DECIDE_BENCH" >&2
	exit 2
fi
BIN=$(readlink -f "$1")
DBENCH=$(readlink -f "$2")
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
[ -x "$BIN" ] && [ -x "$DBENCH" ] || {
	echo "$0: need executables $1 and $2" >&2
	exit 2
}
[ -d "$SHARED/bench/bench" ] || {
	echo "$0: no $SHARED/bench (set SHARED)" >&2
	exit 2
}

ROUNDS=${ROUNDS:-3} DUR=${DUR:-5} LATDUR=${LATDUR:-10} SIZES_DUR=${SIZES_DUR:-3}
if [ "${QUICK:-0}" = 1 ]; then
	ROUNDS=1 DUR=3 LATDUR=5
fi
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PORT=8445 PROBE=8448
MAIN_FIXTURE=p4d-training.json
OTHER_FIXTURES="nongpu-small.json p4d-1gpu-deny.json large-pod.json"

WORK=$(dirname "$BIN")/benchwork
PEERS=$WORK/peers
OUT=$WORK/results/$(date +%Y%m%d-%H%M%S)
mkdir -p "$PEERS" "$OUT" "$WORK/tls"
cp -r "$SHARED/bench/." "$PEERS/"
chmod -R u+w "$PEERS"
FIX=$PEERS/fixtures

# run-baseline.sh's fixed ports (Go 8443, nginx 8444) and ours must be free:
# a stray server there would be measured instead.
for p in 8443 8444 "$PORT" "$PROBE"; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		echo "$0: port $p on 127.0.0.1 is in use; stop what listens there" >&2
		exit 1
	fi
done

# ECDSA P-256, as the peers are served (RSA makes a handshake dearer).
if ! openssl x509 -in "$WORK/tls/tls.crt" -noout -checkend 86400 \
	>/dev/null 2>&1 || [ ! -s "$WORK/tls/tls.key" ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		-sha256 -nodes -days 30 -subj /CN=localhost \
		-addext subjectAltName=IP:127.0.0.1,DNS:localhost \
		-keyout "$WORK/tls/tls.key" -out "$WORK/tls/tls.crt" 2>/dev/null
	chmod 600 "$WORK/tls/tls.key"
fi

SERVER_PID=
stop_server() {
	if [ -n "$SERVER_PID" ]; then
		kill -TERM "$SERVER_PID" 2>/dev/null || true
		# It drains for a few seconds at most; never wait forever.
		for _ in $(seq 1 100); do
			state=$(awk '{print $3}' "/proc/$SERVER_PID/stat" 2>/dev/null || true)
			[ -n "$state" ] && [ "$state" != Z ] || break
			sleep 0.1
		done
		kill -KILL "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}
trap stop_server EXIT

# Serves BIN on CPU 0; its log (one line per review) goes to a file, as a
# pod's stderr would go to the container runtime.
start_server() {
	taskset -c "$SERVER_CPU" "$BIN" serve --listen "127.0.0.1:$PORT" \
		--probe-listen "127.0.0.1:$PROBE" --tls-cert "$WORK/tls/tls.crt" \
		--tls-key "$WORK/tls/tls.key" 2>"$1" &
	SERVER_PID=$!
	echo "$SERVER_PID" >"$WORK/topogate.pid"
	for _ in $(seq 1 100); do
		curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$PROBE/readyz" &&
			return 0
		sleep 0.1
	done
	echo "$0: topogate did not come up; see $1" >&2
	exit 1
}

# One run-baseline.sh pass: NAME FIXTURE compare.sh-options...
pass() {
	local name=$1 fixture=$2
	shift 2
	start_server "$OUT/topogate-$name.log"
	FIRST="topogate=https://127.0.0.1:$PORT/mutate?timeout=10s@$WORK/topogate.pid" \
		SERVER_CPU=$SERVER_CPU CLIENT_CPU=$CLIENT_CPU BENCH_OUT="$OUT/$name" \
		"$PEERS/bench/run-baseline.sh" ecdsa -f "$FIX/$fixture" "$@"
	# What topogate's resident memory is made of, before it stops.
	{
		grep -E '^(VmHWM|VmRSS|RssAnon|RssFile):' "/proc/$SERVER_PID/status"
		grep -E '^Pss:' "/proc/$SERVER_PID/smaps_rollup"
	} >"$OUT/$name/topogate-mem.txt" 2>/dev/null || true
	stop_server
	# run-baseline.sh names its folder by time: give it ours.
	mv "$OUT/$name"/*-ecdsa "$OUT/$name/run"
}

echo "== bench: results in $OUT"
# -W: wait at most a few seconds for quiet; the retries (-X) and the
# report's outside-load column say how disturbed each test was.
pass main "$MAIN_FIXTURE" -R "$ROUNDS" -d "$DUR" -l "$LATDUR" \
	-T ka,nc,lat -W 5
if [ "${QUICK:-0}" != 1 ]; then
	for f in $OTHER_FIXTURES; do
		pass "${f%.json}" "$f" -R 1 -d "$SIZES_DUR" -T ka,nc -W 5
	done
fi

echo "== the decision alone, in process (CPU $SERVER_CPU)"
fixtures=()
for f in "$MAIN_FIXTURE" $OTHER_FIXTURES; do fixtures+=("$FIX/$f"); done
taskset -c "$SERVER_CPU" "$DBENCH" "${fixtures[@]}" | tee "$OUT/decide.jsonl"

echo "== instructions per review (valgrind --tool=callgrind)"
CG_CALLS=20
: >"$OUT/callgrind.jsonl"
for f in "${fixtures[@]}"; do
	for fn in decide review_respond; do
		mode=review
		[ "$fn" = decide ] && mode=decide
		cg=$OUT/callgrind.$fn.$(basename "$f" .json).out
		valgrind --tool=callgrind --toggle-collect="$fn" \
			--callgrind-out-file="$cg" "$DBENCH" -m "$mode" \
			-n "$CG_CALLS" -b 1 "$f" >/dev/null 2>"$cg.log"
		ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$cg")
		printf '{"fixture":"%s","function":"%s","calls":%d,"ir":%s}\n' \
			"$f" "$fn" "$CG_CALLS" "${ir:-0}" >>"$OUT/callgrind.jsonl"
	done
done

readme=$REPO/docs/performance.md
[ "${NO_README:-0}" = 1 ] && readme=
/usr/bin/python3 "$HERE/summarize.py" "$OUT" "$HERE/results.md" $readme
echo "== wrote $HERE/results.md${readme:+ and the table in docs/performance.md}"
