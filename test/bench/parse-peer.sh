#!/bin/bash
# test/bench/parse-peer.sh DECIDE_BENCH SIMDJSON_PEER FIXTURE...
# topogate's parse of each review (decide_bench -m read) beside simdjson's
# DOM parse of it (simdjson_peer), in turn, ROUNDS (3) times, each on CPU
# CPU (the last one) when taskset is there; prints a markdown table of the
# medians. `make bench-parse` runs it on ../shared/bench/fixtures.
set -euo pipefail
ours=$1 peer=$2
shift 2
cpu=${CPU:-$(($(nproc) - 1))}
pin=()
command -v taskset >/dev/null && pin=(taskset -c "$cpu")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "${ROUNDS:-3}"); do
	"${pin[@]}" "$ours" -m read "$@" >>"$out/ours"
	"${pin[@]}" "$peer" "$@" >>"$out/peer"
done
python3 - "$out/ours" "$out/peer" <<'PY'
import json, os, statistics, sys
def medians(path, key):
    runs = {}
    for line in open(path):
        d = json.loads(line)
        runs.setdefault(d["fixture"], []).append(d)
    return {f: (statistics.median(d[key] for d in ds), ds[0]) for f, ds in runs.items()}
ours, peer = medians(sys.argv[1], "read_ns"), medians(sys.argv[2], "simdjson_ns")
impl = next(iter(peer.values()))[1]["implementation"]
print("| fixture | size | topogate's parse (jsonread, arena) | simdjson DOM parse (%s) | ratio |" % impl)
print("|---|---|---|---|---|")
for f in sorted(ours):
    o, d = ours[f]
    p = peer[f][0]
    print("| %s | %.1f KB | %.1f µs | %.1f µs | %.2f× |" % (os.path.basename(f), d["bytes"] / 1000, o / 1000, p / 1000, o / p))
PY
