# test/bench/pinned-server.sh, sourced by thread-cost.sh, body-sweep.sh
# and log-tail.sh: a server on a CPU of its own, loaded from another.
#
# Sourcing it makes $work, a temporary folder removed on exit together
# with the server (pinned_cleanup). pinned_certs CERTGEN: certificates
# into $work/certs. pinned_serve BIN LOG: BIN serve on CPU SERVER_CPU
# (0), on a random port with its probes on the next one, no cluster
# view, stderr to LOG; sets port and pid once /readyz answers (10 s at
# most).
# shellcheck shell=bash

work=$(mktemp -d)
pid=
pinned_cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap pinned_cleanup EXIT

pinned_certs() {
	"$1" --service bench --namespace bench --out "$work/certs" \
		>/dev/null 2>&1 || { echo "$0: $1 failed" >&2; exit 1; }
}

pinned_serve() {
	port=$((20000 + RANDOM % 20000))
	taskset -c "${SERVER_CPU:-0}" "$1" serve --listen "127.0.0.1:$port" \
		--probe-listen "127.0.0.1:$((port + 1))" --no-cluster-view \
		--tls-cert "$work/certs/tls.crt" --tls-key "$work/certs/tls.key" \
		2>"$2" &
	pid=$!
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$((port + 1))/readyz" &&
			break
		sleep 0.1
	done
}
