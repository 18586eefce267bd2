#!/bin/bash
# test/kube/dra-helper.sh BIN: the cluster view of DRA objects through the
# watch helper. The stand-in apiserver (standin.py) serves every object of
# test/nodes/dra-h100-slices.yaml (Nodes without GPUs, the NVIDIA driver's
# ResourceSlices, DeviceClasses, ResourceClaimTemplates) under
# resource.k8s.io/v1; then
#   1. topogate-kubewatch --once writes one item line per object, cut down
#      to what the view reads (cmd/kubewatch_main.c slim_dra()): a
#      device's name, the attributes kept (type, productName, ...) and
#      its memory capacity, no uuid or driver versions; a class's
#      selectors; a template's requests; and every resource settles;
#   2. `BIN nodes --kubeconfig` over the stand-in says what `BIN nodes
#      --nodes` says of the file: one view, two transports;
#   3. with resource.k8s.io not served (a cluster before 1.34), the three
#      settle as not served and --once still ends.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
HELPER=$(dirname "$BIN")/topogate-kubewatch
CLUSTER=$ROOT/test/nodes/dra-h100-slices.yaml
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-dra.XXXXXX") || exit 2
. "$ROOT/test/e2e/lib.sh"
trap cleanup EXIT

standin_credentials

# scenario SERVED FILE: the cluster file's objects, by resource; SERVED
# 1: resource.k8s.io/v1 served, 0: not.
scenario() {
	$PY - "$CLUSTER" "$1" >"$2" <<'PY'
import json, sys, yaml
res = {"Node": "nodes", "DeviceClass": "deviceclasses",
       "ResourceSlice": "resourceslices",
       "ResourceClaimTemplate": "resourceclaimtemplates"}
objects = {}
for it in yaml.safe_load(open(sys.argv[1]))["items"]:
    objects.setdefault(res[it["kind"]], []).append(it)
sc = {"comment": "test/kube/dra-helper.sh", "objects": objects}
if sys.argv[2] == "1":
    sc["dra"] = {"versions": ["v1"]}
print(json.dumps(sc))
PY
}

# standin SCENARIO: starts it; writes TMP/kubeconfig.
standin() { standin_start "$1" dra-helper; }

# --- 1. the helper's lines ------------------------------------------------

scenario 1 "$TMP/served.json"
standin "$TMP/served.json"
"$HELPER" --kubeconfig "$TMP/kubeconfig" --once >"$TMP/lines" 2>"$TMP/helper.log"
expect "helper --once ends with DRA served" 0 $?
out=$($PY - "$TMP/lines" "$CLUSTER" <<'PY'
import json, sys, yaml
lines = [json.loads(l) for l in open(sys.argv[1])]
items = {}
for l in lines:
    if l["op"] == "item":
        items.setdefault(l["res"], []).append(l["object"])
state = {l["res"]: l["synced"] for l in lines if l["op"] == "state"}
want = {}
for it in yaml.safe_load(open(sys.argv[2]))["items"]:
    want.setdefault(it["kind"], []).append(it)
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)
for res, kind in (("deviceclasses", "DeviceClass"),
                  ("resourceslices", "ResourceSlice"),
                  ("resourceclaimtemplates", "ResourceClaimTemplate")):
    check(state.get(res) is True, res + " synced")
    check(sorted(o["metadata"]["name"] for o in items.get(res, [])) ==
          sorted(o["metadata"]["name"] for o in want[kind]),
          res + ": one item per object")
kept = {"type", "productName", "architecture", "cliqueID", "rdma",
        "pciDevice", "resource.kubernetes.io/pcieRoot"}
for s in items.get("resourceslices", []):
    spec = s["spec"]
    check(set(spec) <= {"driver", "nodeName", "allNodes", "pool", "devices"},
          "slice spec fields %s" % sorted(spec))
    check(spec["driver"] == "gpu.nvidia.com" and spec["nodeName"] and
          spec["pool"]["generation"] == 1, "slice driver, node, pool")
    check(len(spec["devices"]) == 8, "eight devices")
    for d in spec["devices"]:
        check(set(d["attributes"]) <= kept, "attributes %s" % sorted(d["attributes"]))
        check(d["attributes"]["productName"] == {"string": "NVIDIA H100 80GB HBM3"}
              and d["attributes"]["type"] == {"string": "gpu"}, "product, type")
        check(d["capacity"] == {"memory": {"value": "80Gi"}}, "memory")
for c in items.get("deviceclasses", []):
    check(list(c["spec"]) == ["selectors"], "class spec")
for t in items.get("resourceclaimtemplates", []):
    check(list(t["spec"]["spec"]["devices"]) == ["requests"] and
          t["metadata"]["namespace"] == "ml-training", "template spec")
print("ok" if not bad else "; ".join(sorted(set(bad))))
PY
)
expect "helper lines: DRA objects, one each, cut down" ok "$out"

# --- 2. topogate nodes, from the apiserver and from the file ------------

"$BIN" nodes --kubeconfig "$TMP/kubeconfig" >"$TMP/nodes.api" 2>"$TMP/nodes.err"
"$BIN" nodes --nodes "$CLUSTER" >"$TMP/nodes.file"
expect "nodes --kubeconfig says what nodes --nodes says" \
	"$(cat "$TMP/nodes.file")" "$(cat "$TMP/nodes.api")"
expect_match "the DRA-only nodes are H100 NVSwitch nodes" \
	'NVIDIA-H100-80GB-HBM3 +8 +nvswitch .* 2 +ResourceSlice productName' \
	"$(cat "$TMP/nodes.api")"
kill "$STANDIN" 2>/dev/null

# --- 3. not served --------------------------------------------------------

scenario 0 "$TMP/old.json"
standin "$TMP/old.json"
"$HELPER" --kubeconfig "$TMP/kubeconfig" --once >"$TMP/lines.old" 2>"$TMP/helper.old.log"
expect "helper --once ends with DRA not served" 0 $?
expect "the three settle as not served" 3 \
	"$(grep -c '"op":"state","res":"\(deviceclasses\|resourceslices\|resourceclaimtemplates\)","synced":false,"why":"not served' "$TMP/lines.old")"

finish dra-helper
