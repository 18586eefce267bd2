#!/bin/bash
# On the many-core machine, from the project root: build/benchbundle/turns.sh
# (installed there by test/bench/manycore-ab.sh). CPU time per review of
# each server in SERVERS (topogate, topogate-new, nginx; any build put in
# bin/ as topogate-NAME can be named), each alone on SRV_CPU in turn,
# kept alive at saturation (wrk, 4 threads, 32 connections) and at RATE
# (1,000)/s (openloop, kept connections): one CPU and one client for all,
# the order rotated from round to round, so neither a CPU's state nor a
# place in the order reads as a difference between builds. ROUNDS (3)
# rounds; figures in $OUT/turns.txt, one line per server, test and round,
# and their medians and ratios to nginx in $OUT/turns.md.
# (The machine has no PMU to count cache misses with: no "cpu" in
# /sys/bus/event_source/devices.) With bin/decide_bench there
# (manycore-ab.sh puts it), each turn is bracketed by "pace" lines: see
# pace() below.
#   SRV_CPU=2 LOAD_CPU=8 CLIENT_CPUS=8-11 RATE=1000 DUR=6 FX=p4d-training.json
set -u
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here/lib PATH=$here/bin:$PATH
res=${OUT:-/tmp/turns-out}
mkdir -p "$res"
fx=$here/fixtures/${FX:-p4d-training.json}
cpu=${SRV_CPU:-2}
dur=${DUR:-6}
crt=$here/certs/ecdsa/tls.crt key=$here/certs/ecdsa/tls.key
work=$(mktemp -d)

start_topogate() {
	taskset -c "$cpu" "$here/bin/$1" serve --listen 127.0.0.1:8445 \
		--probe-listen 127.0.0.1:8448 --tls-cert "$crt" --tls-key "$key" \
		2>"$work/$1.log" &
	PID=$! MASTER=
	for _ in $(seq 50); do
		curl -sf -o /dev/null http://127.0.0.1:8448/readyz && return
		sleep 0.1
	done
}

start_nginx() {
	local run=$work/nginx
	mkdir -p "$run"
	python3 - "$here/nginx" "$run" "$crt" "$key" <<'PY'
import sys
src, run, crt, key = sys.argv[1:]
conf = open(src + "/nginx.conf.in").read()
body = open(src + "/canned-response.json").read().strip()
for k, v in (("@RUNDIR@", run), ("@LISTEN@", "127.0.0.1:8445"),
             ("@CERT@", crt), ("@KEY@", key), ("@BODY@", body)):
    conf = conf.replace(k, v)
open(run + "/nginx.conf", "w").write(conf)
PY
	taskset -c "$cpu" nginx -p "$run" -c "$run/nginx.conf" -e "$run/error.log" \
		-g "daemon off; user root root;" &
	MASTER=$!
	for _ in $(seq 50); do
		PID=$(awk '{print $1}' "/proc/$MASTER/task/$MASTER/children" 2>/dev/null)
		[ -n "$PID" ] && curl -skf -o /dev/null https://127.0.0.1:8445/healthz &&
			return
		sleep 0.1
	done
}

stop() {
	kill -TERM "${MASTER:-$PID}" 2>/dev/null
	wait "${MASTER:-$PID}" 2>/dev/null
}

# The server's time on a CPU in microseconds, all its threads (schedstat).
cpu_us() {
	cat /proc/"$PID"/task/*/schedstat | awk '{ns += $1} END {printf "%.0f", ns / 1000}'
}

# One test: the server's CPU time while the load runs, per review answered.
measure() { # NAME TEST ROUND
	local url=https://127.0.0.1:8445/mutate?timeout=10s n c0 c1 extra
	c0=$(cpu_us)
	if [ "$2" = ka ]; then
		taskset -c "${CLIENT_CPUS:-8-11}" wrk -t4 -c32 -d"${dur}s" \
			--timeout 10s -s "$here/bench/post.lua" "$url" -- "$fx" \
			>"$work/out" 2>&1
		n=$(awk '/requests in/ {print $1}' "$work/out")
		extra=$(awk '/Non-2xx|Socket errors/' "$work/out" | tr -s ' \n' ' ')
	else
		taskset -c "${LOAD_CPU:-8}" openloop -u "$url" -b "$fx" \
			-r "${RATE:-1000}" -d "$dur" -w 0 -c 64 -p 4 -t 5000 -g 3 \
			>"$work/out" 2>"$work/err"
		n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["measured_ok"])' "$work/out" 2>/dev/null)
		extra=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("p50 %d p99 %d p99.9 %d us, failed %d" % (j["p50_us"], j["p99_us"], j["p999_us"], j["measured_failed"]))' "$work/out" 2>/dev/null)
	fi
	c1=$(cpu_us)
	awk -v who="$1" -v test="$2" -v round="$3" -v n="${n:-0}" -v c0="$c0" -v c1="$c1" -v extra="$extra" 'BEGIN {
		if (n == 0) printf "r%s %-3s %-14s no reviews counted\n", round, test, who
		else printf "r%s %-3s %-14s %7d reviews  %6.1f us CPU a review  %s\n", round, test, who, n, (c1 - c0) / n, extra
	}'
}

# The CPU's pace (the fixture's parse by decide_bench -m read: 300
# parses, the median of 10 batches, ns) just before and after a server's
# turn: the device's CPUs switch between two paces on their own, often
# within a turn, so this flags a turn's pace (both ends alike or not); it
# cannot sort turns into two clean sets.
pace() { # NAME ROUND WHEN
	[ -x "$here/bin/decide_bench" ] || return 0
	printf 'r%s pace %-14s %-6s %s ns\n' "$2" "$1" "$3" \
		"$(taskset -c "$cpu" decide_bench -n 30 -b 10 -m read "$fx" |
			sed -n 's/.*"read_ns":\([0-9]*\).*/\1/p')"
}

read -r -a servers <<<"${SERVERS:-topogate topogate-new nginx}"
echo "# turns FX=$(basename "$fx") SRV_CPU=$cpu DUR=$dur RATE=${RATE:-1000}" \
	"ROUNDS=${ROUNDS:-3} SERVERS=$(IFS=,; echo "${servers[*]}")" |
	tee "$res/turns.txt"
for r in $(seq "${ROUNDS:-3}"); do
	for i in $(seq 0 $((${#servers[@]} - 1))); do
		s=${servers[$(((i + r - 1) % ${#servers[@]}))]}
		pace "$s" "$r" before
		if [ "$s" = nginx ]; then start_nginx; else start_topogate "$s"; fi
		for t in ka 1k; do measure "$s" "$t" "$r"; done
		stop
		pace "$s" "$r" after
	done
done 2>&1 | tee -a "$res/turns.txt"
rm -rf "$work"
# The medians and ratios (test/bench/turns_table.py, in the bundle).
[ ! -f "$here/turns-table.py" ] ||
	python3 "$here/turns-table.py" "$res/turns.txt" | tee "$res/turns.md"
