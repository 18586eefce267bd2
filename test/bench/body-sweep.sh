#!/bin/bash
# test/bench/body-sweep.sh BIN CERTGEN OPENLOOP [ROUNDS [SECONDS [KIB...]]]
# What a review costs per KB of body, from small bodies to large (issue
# 49, point 10). test/bench/body_sizes.py grows the 6 KB p4d-training
# review to each size (16, 64, 256, 1024 KiB unless KIB... says
# otherwise); BIN serves on CPU 0 (SERVER_CPU) with its log to LOG
# (/dev/null); OPENLOOP keeps 4 reviews in flight over kept connections
# for SECONDS (5) from CPU 1 (LOAD_CPU), each size in turn, ROUNDS (3)
# times over. Per size it prints the median over rounds of the server's
# CPU time per review (all threads, /proc/PID/stat), per KB of body, and
# page faults per review: the last does not move with the machine's load,
# and counts the pages mapped fresh for each review.
# `make bench-bodies` runs it.
set -euo pipefail
bin=$(readlink -f "$1")
certgen=$(readlink -f "$2")
openloop=$(readlink -f "$3")
rounds=${4:-3}
seconds=${5:-5}
shift $(($# < 5 ? $# : 5))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16 64 256 1024)
here=$(cd "$(dirname "$0")" && pwd)
shared=${SHARED:-$here/../../../shared}
# work, pinned_serve.
# shellcheck source=test/bench/pinned-server.sh
. "$here/pinned-server.sh"

python3 "$here/body_sizes.py" "$shared/bench/fixtures/p4d-training.json" \
	"$work/fx" "${sizes[@]}" >/dev/null
pinned_certs "$certgen"
pinned_serve "$bin" "${LOG:-/dev/null}"

# "cpu_ticks minor_faults major_faults" of the whole process.
usage() { awk '{ print $14 + $15, $10, $12 }' "/proc/$pid/stat"; }
tick=$(getconf CLK_TCK)
for r in $(seq "$rounds"); do
	for k in "${sizes[@]}"; do
		f=$work/fx/body-${k}k.json
		read -r c0 f0 m0 < <(usage)
		taskset -c "${LOAD_CPU:-1}" "$openloop" -k -c 4 -d "$seconds" -w 0 \
			-u "https://127.0.0.1:$port/mutate?timeout=10s" -b "$f" \
			>"$work/load.json" || true
		read -r c1 f1 m1 < <(usage)
		python3 - "$work/load.json" "$k" "$(stat -c %s "$f")" \
			$((c1 - c0)) $((f1 - f0 + m1 - m0)) "$tick" <<'PY' >>"$work/rows"
import json, sys
j = json.load(open(sys.argv[1]))
k, size, ticks, faults, hz = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
n = j["measured_ok"]
bad = j["measured_failed"] + j["unfinished"] + j["errors"] + j["non2xx"]
if n == 0:
    print(k, size, "nan nan nan", bad)
else:
    us = ticks * 1e6 / hz / n
    print(k, size, "%.1f %.3f %.2f" % (us, us / (size / 1000), faults / n), bad)
PY
	done
done
echo "# $bin, log to ${LOG:-/dev/null}, $rounds rounds of $seconds s per size, medians"
printf '%-8s %10s %14s %10s %16s %8s\n' KiB bytes "CPU us/review" "us/KB" "faults/review" failed
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    k, size, us, perkb, faults, bad = line.split()
    r = rows.setdefault(int(k), [int(size), [], [], [], 0])
    r[1].append(float(us)); r[2].append(float(perkb)); r[3].append(float(faults)); r[4] += int(bad)
for k in sorted(rows):
    size, us, perkb, faults, bad = rows[k]
    print("%-8d %10d %14.1f %10.3f %16.1f %8d" % (k, size, statistics.median(us),
          statistics.median(perkb), statistics.median(faults), bad))
PY
