#!/bin/bash
# On the many-core machine, from the project root: build/benchbundle/probe.sh
# (installed there by test/bench/manycore-ab.sh). Where a review's CPU goes
# at RATE (1,000)/s: CPU time and context switches per thread of each
# build (/proc/PID/task/*/schedstat), its log to a file and to /dev/null,
# then system calls per review of topogate-new (strace -c -f, when the
# bundle has strace). About a minute; figures in $OUT/probe.txt.
#   SRV_CPU=2 LOAD_CPU=8 RATE=1000 FX=p4d-training.json
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here/lib
res=${OUT:-/tmp/probe-out}; mkdir -p $res
fx=$here/fixtures/${FX:-p4d-training.json}
serve() { taskset -c ${SRV_CPU:-2} "$here/bin/$1" serve --listen 127.0.0.1:8445 --probe-listen 127.0.0.1:8448 --tls-cert $here/certs/ecdsa/tls.crt --tls-key $here/certs/ecdsa/tls.key 2>"$2" & PID=$!; for _ in $(seq 50); do $here/bin/curl -sf -o /dev/null http://127.0.0.1:8448/readyz && break; sleep 0.1; done; }
snap() { for t in /proc/$PID/task/*; do echo "$(cat $t/comm | tr ' ' _) $(cat $t/schedstat)"; done; }
load() { taskset -c ${LOAD_CPU:-8} $here/bin/openloop -u 'https://127.0.0.1:8445/mutate?timeout=10s' -b $fx -r ${RATE:-1000} -d 8 -w 2 -c 64 -p 4 -t 5000 -g 3 | python3 -c 'import json,sys; j=json.load(sys.stdin); print("  p50 %d p99 %d p99.9 %d us, failed %d, conns %d, lag %d us" % (j["p50_us"], j["p99_us"], j["p999_us"], j["measured_failed"], j["conns_opened"], j["max_dispatch_lag_us"]))'; }
for b in topogate topogate-new; do for logto in file null; do
  f=/tmp/probe-$b.log; [ $logto = null ] && f=/dev/null
  serve $b $f; snap > /tmp/s0; load; snap > /tmp/s1
  echo "$b, log to $logto:"; paste /tmp/s0 /tmp/s1 | awk -v n=$(( ${RATE:-1000} * 10 )) '{cpu=($6-$2)/1e3; tot+=cpu; printf "  %-14s %9.0f us  %6d switches  (%.1f us/review)\n", $1, cpu, $8-$4, cpu/n} END {printf "  all threads: %.1f us/review\n", tot/n}'
  kill -TERM $PID; wait $PID
done; done 2>&1 | tee $res/probe.txt
[ -x "$here/bin/strace" ] || exit 0
serve topogate-new /tmp/probe-st.log
$here/bin/strace -c -f -p $PID -o $res/strace-c.txt & ST=$!
sleep 0.5; load; kill -INT $ST; wait $ST; kill -TERM $PID; wait $PID
awk -v n=$(( ${RATE:-1000} * 10 )) 'NR>2 && $4 ~ /^[0-9]+$/ {printf "%s %.2f/review  ", $NF, $4/n} END {print ""}' $res/strace-c.txt | tee -a $res/probe.txt
