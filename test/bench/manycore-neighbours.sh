#!/bin/bash
# On the many-core machine, from the project root:
# build/benchbundle/neighbours.sh (installed there by
# test/bench/manycore-ab.sh). Whether another CPU of the machine, kept
# busy, slows the CPUs in PROBE_CPUS ("2 5"): for each other CPU, the
# probed CPU's pace (pace_ns, manycore-servers.sh) SAMPLES (5) times with
# that CPU idle and as often with it running the same parse in a loop,
# alternately, and the medians of both. A pair of CPUs that are two
# threads of one core would read about 1.5x slower when busy. Issue 15's
# twelfth round ran it: none did, on a machine whose CPUs change pace on
# their own. One line per pair on stdout.
#   PROBE_CPUS="2 5" SAMPLES=5 FX=p4d-training.json
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=test/bench/manycore-servers.sh # the bundle's servers.sh
. "$here/servers.sh"

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "# probed busy idle_median busy_median busy/idle (idle samples | busy samples), ns"
for probed in ${PROBE_CPUS:-2 5}; do
	for busy in $(seq 0 $(($(nproc) - 1))); do
		[ "$busy" = "$probed" ] && continue
		idle_ns='' busy_ns=''
		for _ in $(seq "${SAMPLES:-5}"); do
			idle_ns="$idle_ns $(pace_ns "$probed")"
			# A million parses, seconds of work: stopped long before its end.
			taskset -c "$busy" decide_bench -n 100000 -b 10 -m read "$fx" >/dev/null &
			spin=$!
			sleep 0.05
			busy_ns="$busy_ns $(pace_ns "$probed")"
			kill "$spin"
			wait "$spin" 2>/dev/null
		done
		i=$(echo "$idle_ns" | median) b=$(echo "$busy_ns" | median)
		echo "$probed $busy $i $b $(awk -v i="$i" -v b="$b" 'BEGIN {printf "%.2f", b / i}') ($idle_ns |$busy_ns)"
	done
done
