# shellcheck shell=bash disable=SC2154 # the caller sets here, cpu, work, dur
# Sourced by the bundle's turns.sh, together.sh and neighbours.sh (put
# there by test/bench/manycore-ab.sh): the bundle's programs on PATH and
# the fixture FX (p4d-training.json) as fx; each server of a run started
# on the CPU $cpu, stopped, and its CPU time read; the loads; the CPU's
# pace. Needs here (the bundle's root), and for the servers cpu and work
# (a scratch directory), for the loads dur.
export LD_LIBRARY_PATH=$here/lib PATH=$here/bin:$PATH
fx=$here/fixtures/${FX:-p4d-training.json}
crt=$here/certs/ecdsa/tls.crt key=$here/certs/ecdsa/tls.key

# A build from bin/ (NAME) serving on PORT, its probes on PROBE_PORT.
# Sets PID; MASTER stays empty (no master process).
start_topogate() { # NAME PORT PROBE_PORT
	local port=$2 probe=$3
	taskset -c "$cpu" "$here/bin/$1" serve --listen "127.0.0.1:$port" \
		--probe-listen "127.0.0.1:$probe" --tls-cert "$crt" --tls-key "$key" \
		2>"$work/$1.log" &
	PID=$! MASTER=
	for _ in $(seq 50); do
		curl -sf -o /dev/null "http://127.0.0.1:$probe/readyz" && return
		sleep 0.1
	done
}

# nginx answering its canned review on PORT. Sets MASTER, and PID to its
# one worker, the process that serves.
start_nginx() { # PORT
	local port=$1 run=$work/nginx-$1
	mkdir -p "$run"
	python3 - "$here/nginx" "$run" "$crt" "$key" "127.0.0.1:$port" <<'PY'
import sys
src, run, crt, key, listen = sys.argv[1:]
conf = open(src + "/nginx.conf.in").read()
body = open(src + "/canned-response.json").read().strip()
for k, v in (("@RUNDIR@", run), ("@LISTEN@", listen),
             ("@CERT@", crt), ("@KEY@", key), ("@BODY@", body)):
    conf = conf.replace(k, v)
open(run + "/nginx.conf", "w").write(conf)
PY
	taskset -c "$cpu" nginx -p "$run" -c "$run/nginx.conf" -e "$run/error.log" \
		-g "daemon off; user root root;" &
	MASTER=$!
	for _ in $(seq 50); do
		PID=$(awk '{print $1}' "/proc/$MASTER/task/$MASTER/children" 2>/dev/null)
		[ -n "$PID" ] && curl -skf -o /dev/null "https://127.0.0.1:$port/healthz" &&
			return
		sleep 0.1
	done
}

stop() { # MASTER, or PID where there is none
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# A server's time on a CPU in microseconds, all its threads (schedstat).
cpu_us() { # PID
	cat /proc/"$1"/task/*/schedstat |
		awk '{ns += $1} END {printf "%.0f", ns / 1000}'
}

# One load on the server at PORT for $dur s from CLIENT_CPUS, into OUT:
# kept alive at saturation (ka: wrk, 4 threads, 32 connections; go: the
# same with Go's net/http client, whose records are shaped like the
# apiserver's, bin/apiload from test/bench/apiload) or open loop at RATE
# (1,000)/s (1k: openloop, kept connections).
load() { # TEST PORT CLIENT_CPUS OUT
	local url="https://127.0.0.1:$2/mutate?timeout=10s"
	if [ "$1" = ka ]; then
		taskset -c "$3" wrk -t4 -c32 -d"${dur}s" --timeout 10s \
			-s "$here/bench/post.lua" "$url" -- "$fx" >"$4" 2>&1
	elif [ "$1" = go ]; then
		taskset -c "$3" apiload -u "$url" -b "$fx" -d "$dur" -c 32 >"$4" 2>&1
	else
		taskset -c "$3" openloop -u "$url" -b "$fx" -r "${RATE:-1000}" \
			-d "$dur" -w 0 -c 64 -p 4 -t 5000 -g 3 >"$4" 2>"$4.err"
	fi
}

# One server's line for one load (OUT, from load()): reviews answered and
# its CPU per review (C0, C1: its cpu_us() before and after), then the
# latencies (1k) or any errors (ka).
report() { # NAME TEST ROUND OUT C0 C1
	local n extra
	if [ "$2" = ka ]; then
		n=$(awk '/requests in/ {print $1}' "$4")
		extra=$(awk '/Non-2xx|Socket errors/' "$4" | tr -s ' \n' ' ')
	elif [ "$2" = go ]; then
		n=$(awk '/ reviews$/ {print $1}' "$4")
		extra=$(awk '/ failed$/' "$4")
	else
		n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["measured_ok"])' "$4" 2>/dev/null)
		extra=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("p50 %d p99 %d p99.9 %d us, failed %d" % (j["p50_us"], j["p99_us"], j["p999_us"], j["measured_failed"]))' "$4" 2>/dev/null)
	fi
	awk -v who="$1" -v test="$2" -v round="$3" -v n="${n:-0}" -v c0="$5" -v c1="$6" -v extra="$extra" 'BEGIN {
		if (n == 0) printf "r%s %-3s %-14s no reviews counted\n", round, test, who
		else printf "r%s %-3s %-14s %7d reviews  %6.1f us CPU a review  %s\n", round, test, who, n, (c1 - c0) / n, extra
	}'
}

# The pace of CPU (the fixture's parse by decide_bench -m read: 300
# parses, the median of 10 batches, ns): the device's CPUs switch between
# two paces on their own, several times a second.
pace_ns() { # CPU
	taskset -c "$1" decide_bench -n 30 -b 10 -m read "$fx" |
		sed -n 's/.*"read_ns":\([0-9]*\).*/\1/p'
}

# A "pace" line for the run's CPU; nothing without bin/decide_bench.
pace() { # NAME ROUND WHEN
	[ -x "$here/bin/decide_bench" ] || return 0
	printf 'r%s pace %-14s %-6s %s ns\n' "$2" "$1" "$3" "$(pace_ns "$cpu")"
}
