#!/bin/bash
# test/bench/log-tail.sh CERTGEN OPENLOOP BIN... [-- ROUNDS [RATE [SECONDS]]]
# Does the review log reach the latency tail (issue 49, point 9)? Each
# BIN serves on CPU 0 (SERVER_CPU) twice, its log (one line a review)
# once to a file on the working directory's disk (LOGDIR, default
# build/) and once to /dev/null; OPENLOOP sends the 6 KB p4d-training
# review at RATE (10,000) a second for SECONDS (10) over kept
# connections from CPU 1 (LOAD_CPU), open loop (a late answer delays no
# later request). BIN x {file, /dev/null} in turn, ROUNDS (5) times over.
# Prints one line per run (p50, p99, p99.9, max in ms; lines the log
# dropped, from /metrics), then the medians per BIN and log.
# With LOG_RATE=BYTES (a second) the file is written through a pipe read
# at that pace, a disk that cannot keep up: a writer held up for good,
# on purpose, where a file on a busy disk holds it up now and then.
set -euo pipefail
certgen=$(readlink -f "$1")
openloop=$(readlink -f "$2")
shift 2
bins=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do bins+=("$(readlink -f "$1")"); shift; done
[ $# -gt 0 ] && shift
rounds=${1:-5}
rate=${2:-10000}
seconds=${3:-10}
here=$(cd "$(dirname "$0")" && pwd)
shared=${SHARED:-$here/../../../shared}
fixture=$shared/bench/fixtures/p4d-training.json
logdir=${LOGDIR:-$here/../../build}
mkdir -p "$logdir"
# work, pinned_certs, pinned_serve.
# shellcheck source=test/bench/pinned-server.sh
. "$here/pinned-server.sh"
trap 'pinned_cleanup; rm -f "$logdir/log-tail.$$.log"' EXIT
pinned_certs "$certgen"

run() { # BIN LOG NAME
	rm -f "$logdir/log-tail.$$.log"
	local sink=$2
	if [ -n "${LOG_RATE:-}" ] && [ "$2" != /dev/null ]; then
		rm -f "$work/fifo"
		mkfifo "$work/fifo"
		python3 -c 'import sys, time
r, o = open(sys.argv[1], "rb", 0), open(sys.argv[2], "wb")
while True:
    b = r.read(4096)
    if not b:
        break
    o.write(b)
    time.sleep(len(b) / float(sys.argv[3]))' "$work/fifo" "$2" "$LOG_RATE" &
		sink=$work/fifo
	fi
	pinned_serve "$1" "$sink"
	taskset -c "${LOAD_CPU:-1}" "$openloop" \
		-u "https://127.0.0.1:$port/mutate?timeout=10s" -b "$fixture" \
		-r "$rate" -d "$seconds" -w 1 -c 64 -p 16 >"$work/load.json" || true
	dropped=$(curl -sf "http://127.0.0.1:$((port + 1))/metrics" |
		awk '$1 == "topogate_log_dropped_lines_total" { print $2 }')
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	wait 2>/dev/null || true # the slow reader, once the log is closed
	python3 - "$work/load.json" "$3" "${dropped:-?}" <<'PY' | tee -a "$work/rows"
import json, sys
j = json.load(open(sys.argv[1]))
bad = j["measured_failed"] + j["unfinished"]
print("%s %.2f %.2f %.2f %.2f %s %d %d" % (sys.argv[2], j["p50_us"] / 1e3, j["p99_us"] / 1e3,
      j["p999_us"] / 1e3, j["max_us"] / 1e3, sys.argv[3], j["measured_ok"], bad))
PY
}

echo "# name p50 p99 p99.9 max (ms) log-dropped answered failed; $rate/s for $seconds s"
for r in $(seq "$rounds"); do
	for i in "${!bins[@]}"; do
		run "${bins[$i]}" "$logdir/log-tail.$$.log" "bin$i-file"
		[ -n "${LOG_RATE:-}" ] || run "${bins[$i]}" /dev/null "bin$i-null"
	done
done
for i in "${!bins[@]}"; do echo "# bin$i = ${bins[$i]}"; done
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = {}
for l in open(sys.argv[1]):
    f = l.split()
    rows.setdefault(f[0], []).append(f[1:])
print("# medians over rounds: name p50 p99 p99.9 max (ms); p99.9 of each round")
for n in sorted(rows):
    r = rows[n]
    med = [statistics.median(float(x[k]) for x in r) for k in range(4)]
    print("%-10s %6.2f %6.2f %7.2f %7.2f   [%s]" % (n, *med, " ".join(x[2] for x in r)))
PY
