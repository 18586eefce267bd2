#!/bin/bash
# test/bench/thread-cost.sh BIN CERTGEN OPENLOOP [FIXTURE [RATE [SECONDS]]]
# Where a review's CPU goes, thread by thread, at a steady rate: BIN
# serves on CPU 0 (SERVER_CPU), OPENLOOP sends FIXTURE at RATE reviews/s
# (1,000) for SECONDS (10) from CPU 1 (LOAD_CPU) over kept connections,
# and each of the server's threads' time on a CPU (/proc/PID/task/*/
# schedstat, nanoseconds) over the run is printed per review answered.
# At 1,000/s the request thread carries the review; the others (the log
# writer, the deadline watchdog, the probe server) wake on their own and
# cost what they cost whatever the review does: this is where the log
# writer's batch interval shows (issue 15's
# eighth round).
# `make bench-threads` runs it on the 6 KB pod.
set -euo pipefail
bin=$(readlink -f "$1")
certgen=$(readlink -f "$2")
openloop=$(readlink -f "$3")
fixture=${4:-../shared/bench/fixtures/p4d-training.json}
rate=${5:-1000}
seconds=${6:-10}
# work, pinned_serve.
# shellcheck source=test/bench/pinned-server.sh
. "$(dirname "$0")/pinned-server.sh"
pinned_certs "$certgen"
pinned_serve "$bin" "$work/serve.log"

# "name/tid nanoseconds", one line per thread.
threads() {
	for t in /proc/"$pid"/task/*; do
		echo "$(cat "$t/comm")/${t##*/} $(cut -d' ' -f1 "$t/schedstat")"
	done | sort
}
threads >"$work/before"
taskset -c "${LOAD_CPU:-1}" "$openloop" \
	-u "https://127.0.0.1:$port/mutate?timeout=10s" -b "$fixture" \
	-r "$rate" -d "$seconds" -w 0 -c 64 >"$work/load.json" || true
threads >"$work/after"
read -r answered failed < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["measured_ok"], j["measured_failed"] + j["unfinished"])' "$work/load.json")
echo "# $(basename "$fixture") at $rate/s for $seconds s: $answered reviews answered, $failed failed"
join "$work/before" "$work/after" | awk -v n="$answered" '
	{ printf "%-28s %8.2f us/review\n", $1, ($3 - $2) / 1000 / n; sum += $3 - $2 }
	END { printf "%-28s %8.2f us/review\n", "all threads", sum / 1000 / n }'
