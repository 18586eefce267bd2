#!/bin/bash
# On the many-core machine, from the project root: build/benchbundle/same.sh
# (installed there by test/bench/manycore-ab.sh). The two builds
# alternately on one CPU (SRV_CPU, 2), open loop at RATE/s (10,000) for
# DUR s (5, after 2 s of warm-up), ROUNDS (4) times: a CPU's own noise
# then does not read as a difference. Figures in $OUT/same.txt.
here=$(cd "$(dirname "$0")" && pwd); export LD_LIBRARY_PATH=$here/lib
res=${OUT:-/tmp/same-out}; mkdir -p $res
for r in $(seq ${ROUNDS:-4}); do for b in topogate topogate-new; do
  taskset -c ${SRV_CPU:-2} $here/bin/$b serve --listen 127.0.0.1:8445 --probe-listen 127.0.0.1:8448 --tls-cert $here/certs/ecdsa/tls.crt --tls-key $here/certs/ecdsa/tls.key 2>/tmp/same-$b.log & pid=$!
  for _ in $(seq 50); do $here/bin/curl -sf -o /dev/null http://127.0.0.1:8448/readyz && break; sleep 0.1; done
  t0=$(awk '{print $14+$15}' /proc/$pid/stat)
  taskset -c ${LOAD_CPU:-8} $here/bin/openloop -u 'https://127.0.0.1:8445/mutate?timeout=10s' -b $here/fixtures/p4d-training.json -r ${RATE:-10000} -d ${DUR:-5} -w 2 -c 64 -p 4 -t 5000 -g 3 > $res/r$r-$b.json
  t1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill -TERM $pid; wait $pid
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); n=j["rate"]*(j["duration_s"]+j["warmup_s"]); print("r%s %-12s p50 %6d p99 %6d p99.9 %6d us; failed %d conns %d lag %d us; CPU %.1f us/review" % (sys.argv[2], sys.argv[3], j["p50_us"], j["p99_us"], j["p999_us"], j["measured_failed"], j["conns_opened"], j["max_dispatch_lag_us"], int(sys.argv[4])*1e4/n))' $res/r$r-$b.json $r $b $((t1-t0)) | tee -a $res/same.txt
done; done
