#!/bin/bash
# test/bench/parse-peer.sh DECIDE_BENCH SIMDJSON_PEER FIXTURE...
# topogate's parse of each review (decide_bench -m read) beside simdjson's
# DOM parse of it (simdjson_peer), then topogate's whole review in process
# (decide_bench -m review: the parse, the decision, the answer), in turn,
# ROUNDS (3) times, each on CPU CPU (the last one) when taskset is there;
# prints a markdown table of the medians, and the median and range of each
# round's own ratio (the two parses ran next to each other, so a round's
# ratio is freer of the CPU's pace than a ratio of medians). Each run is
# the median of batches of about 20 ms. `make bench-parse` runs it on
# ../shared/bench/fixtures; parse-peer-bundle.sh packs it for another
# machine.
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
	"${pin[@]}" "$ours" -m review "$@" >>"$out/review"
done
python3 - "$out/ours" "$out/peer" "$out/review" <<'PY'
import json, os, statistics, sys
def rounds(path, key):
    runs = {}
    for line in open(path):
        d = json.loads(line)
        runs.setdefault(d["fixture"], []).append(d)
    return {f: ([d[key] for d in ds], ds[0]) for f, ds in runs.items()}
ours = rounds(sys.argv[1], "read_ns")
peer = rounds(sys.argv[2], "simdjson_ns")
review = rounds(sys.argv[3], "review_ns")
impl = next(iter(peer.values()))[1]["implementation"]
print("| fixture | size | topogate's parse (jsonread, arena) | simdjson DOM parse (%s) | ratio of medians | each round's ratio: median (range) | topogate's whole review in process |" % impl)
print("|---|---|---|---|---|---|---|")
for f in sorted(ours):
    o, d = ours[f]
    p = peer[f][0]
    each = [a / b for a, b in zip(o, p)]
    print("| %s | %.1f KB | %.1f µs | %.1f µs | %.2f× | %.2f× (%.2f-%.2f×) | %.1f µs |" % (
        os.path.basename(f), d["bytes"] / 1000, statistics.median(o) / 1000,
        statistics.median(p) / 1000, statistics.median(o) / statistics.median(p),
        statistics.median(each), min(each), max(each),
        statistics.median(review[f][0]) / 1000))
PY
