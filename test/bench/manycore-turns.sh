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
# (manycore-ab.sh puts it), each turn is bracketed by "pace" lines: they
# flag a turn whose pace changed (both ends unlike), and cannot sort
# turns into two clean sets. together.sh runs the servers at once instead.
#   SRV_CPU=2 LOAD_CPU=8 CLIENT_CPUS=8-11 RATE=1000 DUR=6 FX=p4d-training.json
set -u
here=$(cd "$(dirname "$0")" && pwd)
res=${OUT:-/tmp/turns-out}
mkdir -p "$res"
cpu=${SRV_CPU:-2}
dur=${DUR:-6}
work=$(mktemp -d)
# shellcheck source=test/bench/manycore-servers.sh # the bundle's servers.sh
. "$here/servers.sh"

# One test: the server's CPU time while the load runs, per review answered.
measure() { # NAME TEST ROUND
	local c0 c1 clients=${CLIENT_CPUS:-8-11}
	[ "$2" = ka ] || clients=${LOAD_CPU:-8}
	c0=$(cpu_us "$PID")
	load "$2" 8445 "$clients" "$work/out"
	c1=$(cpu_us "$PID")
	report "$1" "$2" "$3" "$work/out" "$c0" "$c1"
}

read -r -a servers <<<"${SERVERS:-topogate topogate-new nginx}"
echo "# turns FX=$(basename "$fx") SRV_CPU=$cpu DUR=$dur RATE=${RATE:-1000}" \
	"ROUNDS=${ROUNDS:-3} SERVERS=$(IFS=,; echo "${servers[*]}")" |
	tee "$res/turns.txt"
for r in $(seq "${ROUNDS:-3}"); do
	for i in $(seq 0 $((${#servers[@]} - 1))); do
		s=${servers[$(((i + r - 1) % ${#servers[@]}))]}
		pace "$s" "$r" before
		if [ "$s" = nginx ]; then start_nginx 8445; else start_topogate "$s" 8445 8448; fi
		for t in ka 1k; do measure "$s" "$t" "$r"; done
		stop "${MASTER:-$PID}"
		pace "$s" "$r" after
	done
done 2>&1 | tee -a "$res/turns.txt"
rm -rf "$work"
# The medians and ratios (test/bench/turns_table.py, in the bundle).
[ ! -f "$here/turns-table.py" ] ||
	python3 "$here/turns-table.py" "$res/turns.txt" | tee "$res/turns.md"
