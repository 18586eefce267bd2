#!/bin/bash
# On the many-core machine, from the project root: build/benchbundle/ab.sh
# (installed there by test/bench/manycore-ab.sh). The 6 KB pod, before
# (bin/topogate) and after (bin/topogate-new) beside both peers, keep-alive
# and open loop at 1,000/s and 10,000/s, 3 rounds; then the two builds
# alternately on one CPU, three times, 1,000/s for 10 s each, so a CPU's
# own noise does not read as a difference. About 7 minutes. Everything
# goes into one archive, $OUT/ab.tar.gz (the device hands back few files).
# All four servers run on TG_CPU unless told otherwise: the tests take
# turns, the servers not under test sleep, and the seventh round found
# that two builds on two CPUs differ by the CPUs (-21 % kept alive, where
# the same pair on one CPU was within 1 %).
#   TG_CPU=2 NEW_CPU=TG_CPU GO_CPU=TG_CPU NGX_CPU=TG_CPU LOAD_CPU=8
#   ROUNDS=3 FIXTURE=p4d-training.json TESTS=ka,lat
#   RATES=1000:10,10000:5 LIMIT=420 SAME=1 (0: no alternation)
set -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
res=${OUT:-$here/out}
out=/tmp/ab
rm -rf $out
mkdir -p $out "$res"
OUT=$out timeout "${LIMIT:-420}" "$here/run.sh" "${FIXTURE:-p4d-training.json}" \
	--servers topogate,topogate-new,go,nginx --tg-cpu "${TG_CPU:-2}" \
	--tg-null-cpu "${NEW_CPU:-${TG_CPU:-2}}" --go-cpu "${GO_CPU:-${TG_CPU:-2}}" \
	--ngx-cpu "${NGX_CPU:-${TG_CPU:-2}}" --tests "${TESTS:-ka,lat}" \
	--rates "${RATES:-1000:10,10000:5}" --rounds "${ROUNDS:-3}" --no-check
export LD_LIBRARY_PATH=$here/lib
L=()
if ! "$here/bin/topogate" version >/dev/null 2>&1; then
	L=("$here/glibc-fallback/ld-linux-x86-64.so.2" --library-path "$here/lib:$here/glibc-fallback")
fi
W=/tmp/devbench-work
mkdir -p $W
for r in $([ "${SAME:-1}" = 1 ] && echo 1 2 3); do
	for b in topogate topogate-new; do
		taskset -c "${TG_CPU:-2}" "${L[@]}" "$here/bin/$b" serve --listen 127.0.0.1:8445 \
			--probe-listen 127.0.0.1:8448 --tls-cert "$here/certs/ecdsa/tls.crt" \
			--tls-key "$here/certs/ecdsa/tls.key" 2>$W/same-$b.log &
		pid=$!
		for _ in $(seq 50); do
			"${L[@]}" "$here/bin/curl" -sf -o /dev/null http://127.0.0.1:8448/readyz && break
			sleep 0.1
		done
		t0=$(awk '{print $14+$15}' /proc/$pid/stat)
		taskset -c "${LOAD_CPU:-8}" "${L[@]}" "$here/bin/openloop" -u 'https://127.0.0.1:8445/mutate?timeout=10s' \
			-b "$here/fixtures/p4d-training.json" -r 1000 -d 10 -w 2 -c 64 \
			-o $out/same-r$r-$b.lat >$out/same-r$r-$b.json
		t1=$(awk '{print $14+$15}' /proc/$pid/stat)
		kill -TERM $pid
		wait $pid 2>/dev/null
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("same CPU r%s %-12s p50 %5d p99 %6d p99.9 %6d max %6d us; failed %3d, conns %3d, client lag %6d us; CPU %.0f us/review" % (sys.argv[2], sys.argv[3], j["p50_us"], j["p99_us"], j["p999_us"], j["max_us"], j["errors"], j["conns_opened"], j["max_dispatch_lag_us"], int(sys.argv[4]) * 1e4 / 12000))' \
			$out/same-r$r-$b.json $r $b $((t1 - t0)) | tee -a $out/same.txt
	done
done
(cd /tmp && tar czf "$res/ab.tar.gz" ab)
cat $out/table.md
[ ! -f $out/same.txt ] || cat $out/same.txt
