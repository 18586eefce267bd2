#!/bin/bash
# test/dra/run.sh BIN: a cluster described only by DRA objects gets the
# decisions of the same cluster described by the device plugin and GPU
# Feature Discovery (issue 46).
#
# test/nodes/dra-h100-slices.yaml holds two HGX H100 nodes whose GPUs are
# ResourceSlice devices alone (no nvidia.com/gpu.* label, no
# nvidia.com/gpu allocatable); test/nodes/dra-h100-plugin.yaml the same
# nodes by labels and allocatable. Checked:
#   1. `BIN nodes -o json` sees the same kinds on both (name, GPUs,
#      interconnect, nodes);
#   2. a 4 x 1-GPU TrainJob pod is refused on both, with the same code and
#      the same finding and layout; only the resource fix differs: claim
#      terms (the template's count) on the DRA view, nvidia.com/gpu limits
#      on the other. Written with nvidia.com/gpu: 1 (the driver's class
#      serves that extended resource), it gets the very same response on
#      both views;
#   3. without the view of its template (no --nodes) the claim pod is
#      warned, never refused, in every mode;
#   4. every DRA object of test/nodes passes k8s-validate --strict against
#      the resource.k8s.io/v1 OpenAPI.
# The golden cases view-dra-* hold the same reviews; this compares them.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
[ -d "$SHARED" ] || SHARED=$REPO/test/data
CASES=$REPO/test/golden/cases
DRA=test/nodes/dra-h100-slices.yaml
PLUGIN=test/nodes/dra-h100-plugin.yaml
PASSED=0 FAILED=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-dra.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
cd "$REPO" || exit 2

ok() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
not_ok() { FAILED=$((FAILED + 1)); echo "not ok - $1: $2"; }
check() { # NAME COMMAND...: ok when the command succeeds, its output why not
	local name=$1
	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi
}

review() { # CASE ARGS... -> TMP/CASE.out
	"$BIN" audit --review - "${@:2}" <"$CASES/$1.in.json" >"$TMP/$1${SUFFIX:-}.out"
}

# --- 1. the same kinds ----------------------------------------------------

"$BIN" nodes --nodes "$DRA" -o json >"$TMP/dra.json"
"$BIN" nodes --nodes "$PLUGIN" -o json >"$TMP/plugin.json"
check "nodes: the DRA-only view has the device plugin's kinds" \
	/usr/bin/python3 - "$TMP/dra.json" "$TMP/plugin.json" <<'PY'
import json, sys
def kinds(p):
    d = json.load(open(p))
    return d["nodes"], [(k["name"], k["gpus"], k["interconnect"], k["nodes"])
                        for k in d["kinds"]]
a, b = kinds(sys.argv[1]), kinds(sys.argv[2])
assert a == b and a[0] == 2 and a[1][0][2] == "nvswitch", (a, b)
PY

# --- 2. the same refusal --------------------------------------------------

review view-dra-4x1-claim-deny --nodes "$DRA"
review view-dra-plugin-4x1-gpu-deny --nodes "$PLUGIN"
review view-dra-4x1-gpu-limit-deny --nodes "$DRA"
SUFFIX=.plugin review view-dra-4x1-gpu-limit-deny --nodes "$PLUGIN"
check "4 x 1 GPU by claim on DRA = by nvidia.com/gpu on the plugin's nodes" \
	/usr/bin/python3 - "$TMP/view-dra-4x1-claim-deny.out" \
	"$TMP/view-dra-plugin-4x1-gpu-deny.out" <<'PY'
import json, sys
a, b = (json.load(open(p))["response"] for p in sys.argv[1:3])
assert a["allowed"] is False and b["allowed"] is False, (a, b)
assert a["status"]["code"] == b["status"]["code"] == 403, (a, b)
ma, mb = a["status"]["message"], b["status"]["message"]
# finding; layout; resources: the first two are the same words.
pa, pb = ma.split("; "), mb.split("; ")
assert pa[:3] == pb[:3], (pa, pb)
assert pa[0].startswith("fragmented layout: NVIDIA-H100-80GB-HBM3 (8x H100"), pa
assert pa[3] == ("set count: 4 (or allocationMode: All) in "
                 "ResourceClaimTemplate 'single-gpu' request 'gpu'"), pa
assert "nvidia.com/gpu: 4" in pb[3], pb
assert a.get("auditAnnotations") == b.get("auditAnnotations"), (a, b)
PY
check "nvidia.com/gpu: 1 gets one response on both views" \
	/usr/bin/python3 - "$TMP/view-dra-4x1-gpu-limit-deny.out" \
	"$TMP/view-dra-4x1-gpu-limit-deny.plugin.out" \
	"$TMP/view-dra-plugin-4x1-gpu-deny.out" <<'PY'
import json, sys
a, b, c = (json.load(open(p))["response"] for p in sys.argv[1:4])
assert a == b, (a, b)
a.pop("uid"), c.pop("uid")
assert a == c, (a, c)
PY

review view-dra-claim-eight-gpus-allow --nodes "$DRA"
review view-dra-plugin-eight-gpus-allow --nodes "$PLUGIN"
check "whole nodes by claim get the patch of nvidia.com/gpu: 8" \
	/usr/bin/python3 - "$TMP/view-dra-claim-eight-gpus-allow.out" \
	"$TMP/view-dra-plugin-eight-gpus-allow.out" <<'PY'
import base64, json, sys
a, b = (json.load(open(p))["response"] for p in sys.argv[1:3])
pa, pb = (json.loads(base64.b64decode(r["patch"])) for r in (a, b))
assert a["allowed"] and b["allowed"] and pa == pb and len(pa) >= 3, (pa, pb)
assert not any("nvidia.com~1gpu" in o["path"] or "resources" in o["path"]
               for o in pa), pa
PY

# --- 3. no view of the template: a warning, never a refusal ---------------

for mode in enforce warn audit; do
	"$BIN" audit --mode "$mode" --review - <"$CASES/dra-claim-no-view-warn.in.json" \
		>"$TMP/noview.$mode.out"
	check "claim without its template in view, $mode mode: warned, allowed" \
		/usr/bin/python3 - "$TMP/noview.$mode.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["response"]
assert r["allowed"] is True and "patch" not in r, r
assert any("ResourceClaimTemplate 'single-gpu' is not in the cluster view"
           in w for w in r.get("warnings", [])), r
PY
done

# --- 4. the DRA objects against resource.k8s.io/v1 ------------------------

VALIDATE=$SHARED/tools/k8s-validate
if [ -x "$VALIDATE" ] || [ -f "$VALIDATE" ]; then
	for f in test/nodes/dra-h100-slices.yaml test/nodes/eks-dranet-p4d.yaml; do
		out=$(/usr/bin/python3 "$VALIDATE" --strict "$f" 2>&1)
		if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q '^OK ResourceSlice/' &&
			printf '%s\n' "$out" | grep -q '^OK ResourceClaimTemplate/' &&
			! printf '%s\n' "$out" | grep -q '^SKIP'; then
			ok "$f: every object valid ($(printf '%s\n' "$out" | tail -n 1))"
		else
			not_ok "$f" "$out"
		fi
	done
else
	echo "# skipped: schema check (no $VALIDATE)"
fi

echo "# dra: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
