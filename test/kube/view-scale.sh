#!/bin/bash
# test/kube/view-scale.sh BIN: the cluster view at fleet scale, against
# the stand-in apiserver (standin.py, "generate": GPU nodes of five pools,
# each with a label of its own and GFD's timestamp, one in 97 not ready,
# a status with images as the kubelet writes it; a list at
# resourceVersion=0 comes whole in one page, as from the watch cache).
#
#   NODES=10000 (default; `make bench` runs 50,000) nodes of POOLS=5
#   node groups (as many kinds), and:
#   1. topogate-kubewatch --once, alone, at 100 nodes and at NODES: its
#      peak resident memory (/usr/bin/time) may not grow with the
#      cluster: the bound asserted is 8 MiB more than at 100 nodes.
#   2. `BIN serve --kubeconfig` loads the view: topogate_view_nodes is
#      NODES, in POOLS kinds (the unique labels split nothing); serve's peak
#      (VmHWM) is bounded the same way, against a serve with no view.
#   3. The cluster shrinks to 8 nodes (DELETED events): serve's
#      resident memory falls back under its peak.
#   4. The helper is stopped (SIGSTOP): topogate_view_synced drops to 0
#      and the view's age grows; the helper is killed and started again
#      (a new pid) and the view is synced once more.
# Run it on a plain build (make test does): a sanitizer's quarantine
# holds freed memory, and its bounds would not hold.
# Figures go to stdout, "# mem ..." lines, for docs/operating.md; the
# bounds are memory, never time: a busy machine makes the run slower,
# not the figures larger. The time it takes is waited for with
# generous limits only.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
HELPER=$(dirname "$BIN")/topogate-kubewatch
NODES=${NODES:-10000}
POOLS=${POOLS:-5} # node groups, a multiple of 5: as many kinds
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-scale.XXXXXX") || exit 2
. "$ROOT/test/e2e/lib.sh"
trap cleanup EXIT

[ -x /usr/bin/time ] || { echo "# skipped: view-scale (no /usr/bin/time)"; exit 0; }

standin_credentials
mkcert tls

# scenario N FILE: N generated nodes; the watch shrinks the cluster to 8
# when TMP/cue-shrink appears.
scenario() {
	$PY - "$1" "$TMP" "$POOLS" >"$2" <<'PY'
import json, sys
n, tmp, pools = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
print(json.dumps({"comment": "test/kube/view-scale.sh",
                  "generate": {"nodes": n, "unique_label": True,
                               "pools": pools},
                  # Every watch: the first may be a --once helper's.
                  "watch": {"nodes": [[{"wait_for": tmp + "/cue-shrink"},
                                       {"shrink_generated": 8},
                                       {"wait_for": tmp + "/cue-never"}]]
                            * 10}}))
PY
}

# standin SCENARIO: sets STANDIN and API_PORT, writes TMP/kubeconfig.
standin() { standin_start "$1" view-scale; }

# helper_peak: runs the helper --once; sets PEAK (KiB) and ITEMS.
helper_peak() {
	/usr/bin/time -f "%M" -o "$TMP/time.out" "$HELPER" \
		--kubeconfig "$TMP/kubeconfig" --once >"$TMP/lines" \
		2>>"$TMP/helper.log"
	HELPER_RC=$?
	PEAK=$(tail -n 1 "$TMP/time.out")
	ITEMS=$(grep -c '^{"op":"item","res":"nodes"' "$TMP/lines")
}

# status_kib PID FIELD: VmHWM or VmRSS of a process, in KiB.
status_kib() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

MIB=1024

# --- 1. the helper alone ------------------------------------------------

scenario 100 "$TMP/small.json"
standin "$TMP/small.json"
helper_peak
SMALL=$PEAK
expect "helper --once at 100 nodes: every node, one line each" "0 100" \
	"$HELPER_RC $ITEMS"
kill "$STANDIN"

scenario "$NODES" "$TMP/big.json"
standin "$TMP/big.json"
helper_peak
BYTES=$(stat -c %s "$TMP/lines")
expect "helper --once at $NODES nodes: every node, one line each" \
	"0 $NODES" "$HELPER_RC $ITEMS"
echo "# mem helper peak: 100 nodes $SMALL KiB, $NODES nodes $PEAK KiB" \
	"($BYTES bytes of lines)"
if [ "$PEAK" -le $((SMALL + 8 * MIB)) ]; then
	ok "helper at $NODES nodes: $PEAK KiB, within 8 MiB of 100 nodes ($SMALL KiB)"
else
	not_ok "helper memory does not grow with the cluster" \
		"$PEAK KiB at $NODES nodes, $SMALL KiB at 100"
fi

# --- 2. serve loads the view ---------------------------------------------

start_server --no-cluster-view || not_ok "serve without a view" "not ready"
BASE=$(status_kib "$SERVER_PID" VmHWM)
stop_server

TOPOGATE_TEST_HELPER_SILENT_S=6 start_server --kubeconfig "$TMP/kubeconfig" ||
	{ not_ok "serve --kubeconfig" "not ready: $(tail -5 "$TMP/server.log")"
	  finish view-scale; }
for _ in $(seq 1 1200); do # generous: a busy machine lists slowly
	[ "$(metric topogate_view_nodes)" = "$NODES" ] &&
		[ "$(metric topogate_view_synced)" = 1 ] && break
	sleep 0.1
done
expect "serve: the view holds every node, in $POOLS kinds, synced" \
	"$NODES $POOLS 1" "$(metric topogate_view_nodes) $(metric topogate_view_kinds) $(metric topogate_view_synced)"
SERVE_PEAK=$(status_kib "$SERVER_PID" VmHWM)
CHILD=$(pgrep -P "$SERVER_PID" -x topogate-kubewa | head -n 1)
CHILD_RSS=$(status_kib "$CHILD" VmHWM)
echo "# mem serve peak: no view $BASE KiB, $NODES nodes of $POOLS kinds" \
	"$SERVE_PEAK KiB;" \
	"its helper $CHILD_RSS KiB"
if [ -n "$SERVE_PEAK" ] && [ "$SERVE_PEAK" -le $((BASE + 8 * MIB)) ]; then
	ok "serve at $NODES nodes: $SERVE_PEAK KiB, within 8 MiB of no view ($BASE KiB)"
else
	not_ok "serve's memory follows what it keeps" \
		"$SERVE_PEAK KiB at $NODES nodes, $BASE KiB without a view"
fi

# --- 3. the cluster shrinks -----------------------------------------------

touch "$TMP/cue-shrink"
for _ in $(seq 1 600); do
	[ "$(metric topogate_view_nodes)" = 8 ] && break
	sleep 0.1
done
expect "the cluster shrinks to 8 nodes" "8" "$(metric topogate_view_nodes)"
SHRUNK=$(status_kib "$SERVER_PID" VmRSS)
echo "# mem serve after the shrink to 8 nodes: $SHRUNK KiB (peak $SERVE_PEAK)"
if [ -n "$SHRUNK" ] && [ "$SHRUNK" -le "$SERVE_PEAK" ]; then
	ok "serve after the shrink: $SHRUNK KiB, not above its peak"
else
	not_ok "serve gives memory back" "$SHRUNK KiB after, peak $SERVE_PEAK"
fi

# --- 4. a stopped helper ----------------------------------------------------

CHILD=$(pgrep -P "$SERVER_PID" -x topogate-kubewa | head -n 1)
AGE0=$(metric topogate_view_age_seconds)
kill -STOP "$CHILD"
for _ in $(seq 1 300); do
	[ "$(metric topogate_view_synced)" = 0 ] && break
	sleep 0.1
done
AGE1=$(metric topogate_view_age_seconds)
expect "a stopped helper: synced drops to 0" "0" "$(metric topogate_view_synced)"
# The last heartbeat came at most 2 s before the stop, and 6 s of
# silence (TOPOGATE_TEST_HELPER_SILENT_S) make it stale.
if [ "${AGE1:-0}" -gt "${AGE0:-0}" ] && [ "${AGE1:-0}" -ge 4 ]; then
	ok "a stopped helper: the view's age grows ($AGE0 -> $AGE1 s)"
else
	not_ok "a stopped helper: the view's age says stale" "$AGE0 -> $AGE1"
fi
expect_log "a stopped helper is said so" "silent for 6 s: view not in sync"
for _ in $(seq 1 600); do
	[ "$(metric topogate_view_synced)" = 1 ] && break
	sleep 0.1
done
NEW=$(pgrep -P "$SERVER_PID" -x topogate-kubewa | head -n 1)
if [ -n "$NEW" ] && [ "$NEW" != "$CHILD" ] &&
	[ "$(metric topogate_view_synced)" = 1 ]; then
	ok "a stopped helper is replaced, and the view is synced again"
else
	not_ok "a stopped helper is replaced" "pid $CHILD -> ${NEW:-none}," \
		"synced $(metric topogate_view_synced)"
fi
expect "readiness does not depend on the view" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PROBE/readyz")"
stop_server
expect "SIGTERM: clean exit" "0" "$SERVER_RC"
expect_no_sanitizer_report
finish view-scale
