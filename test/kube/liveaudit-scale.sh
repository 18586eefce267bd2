#!/bin/bash
# test/kube/liveaudit-scale.sh BIN: serve --live-audit at PODS running GPU
# pods (default 2,000 in make test; `make bench` runs 10,000), against
# the stand-in apiserver (standin.py): PyTorchJobs of 16 x 1 GPU, each
# pod the p4d-16x1 golden pod as the apiserver serves it (service-account
# volume and all), in namespaces of 10 jobs, on the p4d node group of
# test/nodes/eks-p4d-p5-g5.yaml, all fragmented.
#
#   1. serve --live-audit with no pods: its peak resident memory (VmHWM).
#   2. The same at PODS: every pod judged (topogate_liveaudit_pods), every
#      GPU on the fragmented gauge, one report per namespace; the figures
#      ("# mem", "# time" lines) for docs/operating.md. The bound asserted
#      is memory, never time (a busy machine is slower, not larger):
#      at most 8 KiB per pod above the empty run, plus 8 MiB.
# Run it on a plain build: a sanitizer's quarantine holds freed memory.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
PODS=${PODS:-2000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-lascale.XXXXXX") || exit 2
. "$ROOT/test/e2e/lib.sh"
trap cleanup EXIT

standin_credentials
mkcert tls

# scenario N FILE: N pods (jobs of 16, 10 jobs a namespace).
scenario() {
	$PY - "$ROOT" "$1" >"$2" <<'PY'
import copy, json, sys, yaml
root, n = sys.argv[1], int(sys.argv[2])
nodes = [i for i in yaml.safe_load(open(root + "/test/nodes/eks-p4d-p5-g5.yaml"))["items"]
         if i.get("kind") == "Node"]
base = json.load(open(root + "/test/golden/cases/p4d-16x1-pytorchjob-enforce-deny.in.json"))["request"]["object"]
base["spec"]["nodeSelector"] = {"eks.amazonaws.com/nodegroup": "p4d-workers"}
base["status"] = {"phase": "Running", "podIP": "10.0.0.1",
                  "conditions": [{"type": "Ready", "status": "True"}]}
pods = []
for i in range(n):
    job, rank = divmod(i, 16)
    p = copy.deepcopy(base)
    md = p["metadata"]
    md["namespace"] = "team-%d" % (job // 10)
    md["name"] = "job-%d-worker-%d" % (job, rank)
    md["uid"] = "00000000-0000-4000-8000-%012d" % i
    md["labels"]["training.kubeflow.org/job-name"] = "job-%d" % job
    md["labels"]["training.kubeflow.org/replica-index"] = str(rank)
    md["ownerReferences"][0]["name"] = "job-%d" % job
    for e in p["spec"]["containers"][0]["env"]:
        if e["name"] in ("RANK", "PET_NODE_RANK"):
            e["value"] = str(rank)
    pods.append(p)
print(json.dumps({"comment": "test/kube/liveaudit-scale.sh",
                  "policyreport": {"versions": ["v1alpha2"]},
                  "objects": {"nodes": nodes, "pods": pods}}))
PY
}

standin() { standin_start "$1" liveaudit-scale; }

status_kib() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

# until_metric SERIES VALUE: polls (up to 10 minutes: the bound is not
# time) until SERIES reads VALUE; sets WAITED (ms).
until_metric() {
	local start=$(date +%s%N)
	for _ in $(seq 1 6000); do
		[ "$(metric "$1")" = "$2" ] && break
		sleep 0.1
	done
	WAITED=$((($(date +%s%N) - start) / 1000000))
	[ "$(metric "$1")" = "$2" ]
}

run() { # N: serve --live-audit over N pods; sets HWM and RSS (KiB)
	scenario "$1" "$TMP/s$1.json"
	standin "$TMP/s$1.json"
	start_server --kubeconfig "$TMP/kubeconfig" --live-audit ||
		{ not_ok "serve --live-audit ($1 pods)" "not ready"; finish liveaudit-scale; }
	until_metric topogate_liveaudit_synced 1
	if until_metric topogate_liveaudit_pods "$1"; then
		ok "$1 pods: every one judged ($WAITED ms from ready)"
	else
		not_ok "$1 pods judged" "$(metric topogate_liveaudit_pods)"
	fi
	if until_metric 'topogate_liveaudit_slow_path_gpus{reason="nvlink_split"}' "$1"; then
		ok "$1 pods: all $1 GPUs on the fragmented gauge"
	else
		not_ok "$1 GPUs on the gauge" \
			"$(metric 'topogate_liveaudit_slow_path_gpus{reason="nvlink_split"}')"
	fi
	JUDGE=$(metric topogate_liveaudit_judge_seconds)
	sleep 2
	HWM=$(status_kib "$SERVER_PID" VmHWM)
	RSS=$(status_kib "$SERVER_PID" VmRSS)
	HELPER_PID=$(pgrep -P "$SERVER_PID" topogate-kubew | head -1)
	HELPER_HWM=$(status_kib "$HELPER_PID" VmHWM)
	stop_server
	kill "$STANDIN" 2>/dev/null
	wait "$STANDIN" 2>/dev/null
}

run 0
BASE=$HWM
echo "# mem serve --live-audit, no pods: VmHWM $HWM KiB"
run "$PODS"
echo "# mem serve --live-audit, $PODS GPU pods: VmHWM $HWM KiB, VmRSS $RSS KiB" \
	"(+$(((HWM - BASE) * 1024 / (PODS > 0 ? PODS : 1))) B a pod); helper VmHWM ${HELPER_HWM:-?} KiB"
echo "# time judging $PODS pods once: ${JUDGE}s"
LIMIT=$((BASE + PODS * 8 + 8 * 1024))
if [ "$HWM" -le "$LIMIT" ]; then
	ok "$PODS pods: serve's peak $HWM KiB, within 8 KiB a pod + 8 MiB of $BASE KiB"
else
	not_ok "serve's memory at $PODS pods" "$HWM KiB, over $LIMIT KiB"
fi
finish liveaudit-scale
