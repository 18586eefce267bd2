#!/bin/bash
# On the many-core machine, from the project root:
# build/benchbundle/together.sh (installed there by
# test/bench/manycore-ab.sh). The servers in SERVERS (topogate nginx; any
# build in bin/ as topogate-NAME too) on one CPU, SRV_CPU (2), at the same
# time, each under its own load at the same time: kept alive at saturation
# (a wrk each, 4 threads, 32 connections) and at RATE (1,000)/s (an
# openloop each, kept connections), DUR (5) s each, ROUNDS (6) rounds, the
# servers started afresh each round. Server i listens on 8445+i (probes
# 8465+i); its clients run on the i-th CPU list of CLIENTS ("8-11
# 12-15"), openloop on the first CPU of it.
#
# Why at once: the device's CPUs switch between two paces about 1.5x
# apart on their own, several times a second (issue 15's eleventh and
# twelfth rounds), so servers measured in turns each get their own mix of
# the two. Servers sharing a CPU's moments share its pace: their ratio in
# one round does not depend on the mix. What they share besides is the
# CPU's caches: at saturation each runs for a scheduler slice (a few ms,
# hundreds of reviews) before the other, so little; at RATE/s the other
# server runs between every two reviews, so the open-loop figures are
# colder than a server alone would see, more so for the one that touches
# more memory.
#
# Figures in $OUT/together.txt, in turns.sh's line format, and their
# medians and ratios in $OUT/together.md (turns-table.py; its "paired"
# column, the median of each round's ratio to nginx, is the figure this
# run is for). With bin/decide_bench, each round is bracketed by "pace"
# lines as in turns.sh.
# TESTS ("ka 1k") picks the tests; "go" is ka's load from Go's net/http
# client (bin/apiload), whose TLS records are shaped like the apiserver's.
#   SRV_CPU=2 CLIENTS="8-11 12-15" TESTS="ka 1k" RATE=1000 DUR=5 ROUNDS=6
#   FX=p4d-training.json
set -u
here=$(cd "$(dirname "$0")" && pwd)
res=${OUT:-/tmp/together-out}
mkdir -p "$res"
cpu=${SRV_CPU:-2}
dur=${DUR:-5}
work=$(mktemp -d)
# shellcheck source=test/bench/manycore-servers.sh # the bundle's servers.sh
. "$here/servers.sh"

read -r -a servers <<<"${SERVERS:-topogate nginx}"
n=${#servers[@]}

read -r -a client_cpus <<<"${CLIENTS:-8-11 12-15}"
[ "${#client_cpus[@]}" -ge "$n" ] ||
	{ echo "together.sh: CLIENTS names fewer CPU lists than SERVERS" >&2; exit 2; }

clients() { # I TEST: server i's client CPUs
	if [ "$2" != 1k ]; then echo "${client_cpus[$1]}"; else echo "${client_cpus[$1]%%[-,]*}"; fi
}

# One test for all servers at once: their CPU time while their loads run.
measure_all() { # TEST ROUND
	local i c0=() c1=() loads=()
	for i in $(seq 0 $((n - 1))); do c0[i]=$(cpu_us "${pids[i]}"); done
	for i in $(seq 0 $((n - 1))); do
		load "$1" $((8445 + i)) "$(clients "$i" "$1")" "$work/out-$i" &
		loads[i]=$!
	done
	wait "${loads[@]}"
	for i in $(seq 0 $((n - 1))); do c1[i]=$(cpu_us "${pids[i]}"); done
	for i in $(seq 0 $((n - 1))); do
		report "${servers[i]}" "$1" "$2" "$work/out-$i" "${c0[i]}" "${c1[i]}"
	done
}

echo "# together FX=$(basename "$fx") SRV_CPU=$cpu DUR=$dur" \
	"RATE=${RATE:-1000} ROUNDS=${ROUNDS:-6}" \
	"SERVERS=$(IFS=,; echo "${servers[*]}")" | tee "$res/together.txt"
for r in $(seq "${ROUNDS:-6}"); do
	pids=() stops=()
	pace all "$r" before
	for i in $(seq 0 $((n - 1))); do
		s=${servers[i]}
		if [ "$s" = nginx ]; then
			start_nginx $((8445 + i))
		else
			start_topogate "$s" $((8445 + i)) $((8465 + i))
		fi
		pids[i]=$PID stops[i]=${MASTER:-$PID}
	done
	for t in ${TESTS:-ka 1k}; do measure_all "$t" "$r"; done
	for p in "${stops[@]}"; do stop "$p"; done
	pace all "$r" after
done 2>&1 | tee -a "$res/together.txt"
rm -rf "$work"
[ ! -f "$here/turns-table.py" ] ||
	python3 "$here/turns-table.py" "$res/together.txt" | tee "$res/together.md"
