#!/bin/bash
# test/kube/nrt-helper.sh BIN: NFD's NodeResourceTopologies through the
# watch helper. The stand-in apiserver (standin.py) serves the objects of
# test/kube/scenarios/nrt-served.json and nrt-v1alpha1-only.json (as
# nfd-topology-updater writes them); then topogate-kubewatch --once
#   1. at v1alpha2 writes one item line per object, of kind
#      NodeResourceTopology, cut down to what the view reads
#      (cmd/kubewatch_main.c slim_nrt()): the attributes
#      topologyManagerPolicy and topologyManagerScope (not the pod
#      fingerprint), topologyPolicies, each zone's name, type and its
#      resources' capacity and allocatable (not "available", not costs);
#   2. at v1alpha1 alone (an older NFD) takes that version and keeps the
#      object's topologyPolicies;
#   3. with topology.node.k8s.io not served, settles it as not served;
#   4. with the list forbidden (RBAC without the rule), settles it as
#      forbidden; both times --once still ends and nodes are synced.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
HELPER=$(dirname "$BIN")/topogate-kubewatch
SERVED=$HERE/scenarios/nrt-served.json
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-nrt.XXXXXX") || exit 2
. "$ROOT/test/e2e/lib.sh"
trap cleanup EXIT

standin_credentials

# once NAME SCENARIO: the helper --once against the stand-in on SCENARIO;
# its lines in TMP/NAME.lines, its log in TMP/NAME.log.
once() {
	standin_start "$2" nrt-helper
	"$HELPER" --kubeconfig "$TMP/kubeconfig" --once >"$TMP/$1.lines" \
		2>"$TMP/$1.log"
	expect "$1: helper --once ends" 0 $?
	kill "$STANDIN" 2>/dev/null
}

# lines NAME PYTHON: PYTHON run with `items` (the objects of the
# noderesourcetopologies item lines), `state` (each resource's last
# synced and why) and `log` (the helper's log); prints what it prints.
lines() {
	$PY - "$TMP/$1.lines" "$TMP/$1.log" "$2" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
items = [l["object"] for l in lines
         if l["op"] == "item" and l["res"] == "noderesourcetopologies"]
state = {l["res"]: (l["synced"], l.get("why")) for l in lines
         if l["op"] == "state"}
log = open(sys.argv[2]).read()
exec(sys.argv[3])
PY
}

# --- 1. v1alpha2 ------------------------------------------------------------

once v1alpha2 "$SERVED"
expect "v1alpha2: the helper takes the storage version" \
	"served as topology.node.k8s.io/v1alpha2" \
	"$(grep -o 'served as topology.node.k8s.io/v1alpha[0-9]' "$TMP/v1alpha2.log")"
expect "v1alpha2: one item per node, of kind NodeResourceTopology, synced" \
	"hgx-h100-01 NodeResourceTopology True" \
	"$(lines v1alpha2 'print(" ".join(o["metadata"]["name"] + " " + o["kind"]
                     for o in items), state["noderesourcetopologies"][0])')"
expect "v1alpha2: the Topology Manager's attributes, not the fingerprint" \
	'[{"name": "topologyManagerPolicy", "value": "single-numa-node"}, {"name": "topologyManagerScope", "value": "container"}] ["SingleNUMANodeContainerLevel"]' \
	"$(lines v1alpha2 'print(json.dumps(items[0]["attributes"]),
                     json.dumps(items[0]["topologyPolicies"]))')"
expect "v1alpha2: zones keep their totals, not what is available" \
	"['metadata', 'kind', 'attributes', 'topologyPolicies', 'zones'] node-0 Node nvidia.com/gpu 4 4; node-1 Node nvidia.com/gpu 4 4" \
	"$(lines v1alpha2 'o = items[0]
print(list(o), "; ".join(
    "%s %s %s" % (z["name"], z["type"], " ".join(r.get(k, "-") for r in
                  z["resources"] if r["name"] == "nvidia.com/gpu"
                  for k in ("name", "capacity", "allocatable")))
    for z in o["zones"] if set(z) == {"name", "type", "resources"} and
    all(set(r) == {"name", "capacity", "allocatable"}
        for r in z["resources"])))')"

# --- 2. v1alpha1 alone ------------------------------------------------------

once v1alpha1 "$HERE/scenarios/nrt-v1alpha1-only.json"
expect "v1alpha1 alone: the helper takes it" \
	"served as topology.node.k8s.io/v1alpha1" \
	"$(grep -o 'served as topology.node.k8s.io/v1alpha[0-9]' "$TMP/v1alpha1.log")"
expect "v1alpha1 alone: topologyPolicies kept, no attributes, synced" \
	'hgx-h100-01 ["SingleNUMANodeContainerLevel"] [] True' \
	"$(lines v1alpha1 'o = items[0]
print(o["metadata"]["name"], json.dumps(o["topologyPolicies"]),
      json.dumps(o["attributes"]), state["noderesourcetopologies"][0])')"

# --- 3. not served, 4. forbidden ------------------------------------------

# variant FILE PYTHON: nrt-served.json changed by PYTHON (on `sc`).
variant() {
	$PY - "$SERVED" "$2" >"$1" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
exec(sys.argv[2])
print(json.dumps(sc))
PY
}

variant "$TMP/absent.json" 'del sc["nrt"]'
once absent "$TMP/absent.json"
expect "not served: settled as such; nodes synced; no item" \
	"(False, 'not served') True 0" \
	"$(lines absent 'print(state["noderesourcetopologies"],
                     state["nodes"][0], len(items))')"

variant "$TMP/forbidden.json" 'sc["faults"] = [{"resource":
    "noderesourcetopologies", "kind": "list", "nth": 1, "status": 403,
    "reason": "Forbidden", "message": "noderesourcetopologies.topology.'\
'node.k8s.io is forbidden"}]'
once forbidden "$TMP/forbidden.json"
expect "forbidden: settled as not ours to read; nodes synced; no item" \
	"(False, 'forbidden') True 0" \
	"$(lines forbidden 'print(state["noderesourcetopologies"],
                     state["nodes"][0], len(items))')"

finish nrt-helper
