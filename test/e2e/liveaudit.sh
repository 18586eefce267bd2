#!/bin/bash
# test/e2e/liveaudit.sh BIN: serve --live-audit end to end, against
# test/kube/standin.py (written from the API documentation; its writes in
# standin_writes.py). A PyTorchJob of 16 x 1 GPU starts running on the
# p4d.24xlarge node group of test/nodes/eks-p4d-p5-g5.yaml (its pods pin
# only the group: the view says what the nodes are), and is judged as
# `topogate audit` judges its pods: a "fail" result in the namespace's
# PolicyReport (valid against the PolicyReport CRD's schema), 16 GPUs on
# the fragmented-GPU gauge and one Event on the PyTorchJob. When its pods
# go, all three go. Then: the CRD absent (nothing written, the gauge
# says so, Events still come), the reports forbidden by RBAC, audit mode
# (warn, as `audit --mode audit` says) with a job that runs without its
# EFA and /dev/shm, a JobSet of 4 x 1-GPU DRA claims on the DRA-only
# H100 nodes of test/nodes/dra-h100-slices.yaml (fail, its 4 GPUs on the
# gauge, as admission judges its pods), the CRD deleted while serve
# runs, and the helper
# refusing commands that are not its own (bad names, unknown ops).
#
# The waits poll (up to 120 s each, which a busy machine does not reach:
# a judging pass is once a second) and the time each took is printed.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-liveaudit.XXXXXX") || exit 2
. "$HERE/lib.sh"
trap cleanup EXIT
SHARED=${SHARED:-$ROOT/../shared}
[ -d "$SHARED" ] || SHARED=$ROOT/test/data
VALIDATE=$SHARED/tools/k8s-validate
CRDS=$ROOT/test/data/k8s/crds

standin_credentials
mkcert tls

# scenario NAME [OPTIONS-JSON]: TMP/NAME.json. The nodes of
# eks-p4d-p5-g5.yaml; the job's 16 pods (the p4d-16x1 golden pod, its
# instance-type pin swapped for the node group, Running) and one CPU pod
# of the same job, which is not watched. Options: "bert" (also a
# PyTorchJob "bert" of 2 x 8 GPUs in team-b, without EFA or /dev/shm),
# "fix_bert" (on cue-1 its pods are replaced by what topogate's patch
# makes of them; on cue-2 they go), "pods_at_start" (the
# pods are there from the start, not added on cue-1), "policyreport"
# (false: no CRD), "forbid", "crd_off_at" (the cue after which the CRD
# is deleted), "jobs" (N: N one-pod jobs in place of the 16-pod one),
# "dra" (the nodes and DRA objects of
# test/nodes/dra-h100-slices.yaml, served, and the 4 pods of a JobSet
# that claim a GPU each in place of the 16).
scenario() {
	$PY - "$ROOT" "$TMP" "$1" "${2:-{\}}" "$BIN" >"$TMP/$1.json" <<'PY'
import base64, copy, json, subprocess, sys, yaml
root, tmp, name, opts = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
bin_ = sys.argv[5]
nodes = [i for i in yaml.safe_load(open(root + "/test/nodes/eks-p4d-p5-g5.yaml"))["items"]
         if i.get("kind") == "Node"]
gold = json.load(open(root + "/test/golden/cases/p4d-16x1-pytorchjob-enforce-deny.in.json"))
base = gold["request"]["object"]
pods = []
for i in range(16):
    p = copy.deepcopy(base)
    p["metadata"]["name"] = "llama3-70b-pretrain-worker-%d" % i
    p["metadata"]["uid"] = "00000000-0000-4000-8000-%012d" % i
    p["metadata"]["labels"]["training.kubeflow.org/replica-index"] = str(i)
    p["spec"]["nodeSelector"] = {"eks.amazonaws.com/nodegroup": "p4d-workers"}
    p["spec"].pop("affinity", None)
    for e in p["spec"]["containers"][0]["env"]:
        if e["name"] in ("RANK", "PET_NODE_RANK"):
            e["value"] = str(i)
    p["status"] = {"phase": "Running"}
    pods.append(p)
cpu = copy.deepcopy(pods[0])
cpu["metadata"]["name"] = "llama3-70b-pretrain-tensorboard"
for c in cpu["spec"]["containers"]:
    c["resources"] = {"limits": {"cpu": "1"}}
if opts.get("bert"):
    for i in range(2):
        p = copy.deepcopy(base)
        md = p["metadata"]
        md["name"], md["namespace"] = "bert-worker-%d" % i, "team-b"
        md["uid"] = "00000000-0000-4000-9000-%012d" % i
        md["labels"]["training.kubeflow.org/job-name"] = "bert"
        md["ownerReferences"][0]["name"] = "bert"
        md["ownerReferences"][0]["uid"] = "b0000000-0000-4000-8000-000000000000"
        p["spec"]["nodeSelector"] = {"eks.amazonaws.com/nodegroup": "p4d-workers"}
        c = p["spec"]["containers"][0]
        c["resources"] = {"limits": {"nvidia.com/gpu": "8"},
                          "requests": {"nvidia.com/gpu": "8", "cpu": "10"}}
        env = {"PET_NPROC_PER_NODE": "8", "PET_NNODES": "2",
               "RANK": str(i), "PET_NODE_RANK": str(i)}
        for e in c["env"]:
            e["value"] = env.get(e["name"], e.get("value"))
        p["status"] = {"phase": "Running"}
        pods.append(p)
sel = "pods?training.kubeflow.org/job-name"
if opts.get("jobs"):
    # That many PyTorchJobs of ml-training, one running pod each (of the
    # 16-pod job's, so each is judged fragmented): the Event limit and
    # the report's cap.
    many = []
    for j in range(opts["jobs"]):
        p = copy.deepcopy(pods[j % 16])
        md = p["metadata"]
        md["name"] = "job-%04d-worker-0" % j
        md["uid"] = "00000000-0000-4000-b000-%012d" % j
        md["labels"]["training.kubeflow.org/job-name"] = "job-%04d" % j
        md["ownerReferences"][0]["name"] = "job-%04d" % j
        md["ownerReferences"][0]["uid"] = "00000000-0000-4000-c000-%012d" % j
        many.append(p)
    pods, cpu = many, None
if opts.get("dra"):
    # The DRA-only H100 nodes (no nvidia.com/gpu anywhere): a TrainJob's
    # JobSet of 4 pods, each claiming one GPU through the template
    # single-gpu (the pod of the view-dra-4x1-claim-deny golden, Running).
    res = {"Node": "nodes", "DeviceClass": "deviceclasses",
           "ResourceSlice": "resourceslices",
           "ResourceClaimTemplate": "resourceclaimtemplates"}
    objs = {}
    for it in yaml.safe_load(open(root + "/test/nodes/dra-h100-slices.yaml"))["items"]:
        objs.setdefault(res[it["kind"]], []).append(it)
    dra = json.load(open(root + "/test/golden/cases/view-dra-4x1-claim-deny.in.json"))
    pods = []
    for i in range(4):
        p = copy.deepcopy(dra["request"]["object"])
        md = p["metadata"]
        md["name"] = "llama3-8b-dra-node-0-%d" % i
        md.pop("generateName", None)
        md["uid"] = "00000000-0000-4000-a000-%012d" % i
        md["labels"]["batch.kubernetes.io/job-completion-index"] = str(i)
        md["annotations"]["batch.kubernetes.io/job-completion-index"] = str(i)
        p["status"] = {"phase": "Running"}
        pods.append(p)
    nodes, cpu = objs.pop("nodes"), None
    sel = "pods?jobset.sigs.k8s.io/jobset-name"
cue = lambda n: {"wait_for": "%s/%s-cue-%d" % (tmp, name, n)}
sc = {"comment": "test/e2e/liveaudit.sh " + name,
      "state_file": "%s/%s.state.json" % (tmp, name),
      "objects": {"nodes": nodes}, "watch": {}}
if opts.get("dra"):
    sc["objects"].update(objs)
    sc["dra"] = {"versions": ["v1"]}
if opts.get("policyreport", True):
    sc["policyreport"] = {"versions": ["v1alpha2"]}
if "forbid" in opts:
    sc["forbid"] = opts["forbid"]
if opts.get("pods_at_start"):
    sc["objects"]["pods"] = pods + ([cpu] if cpu else [])
    steps = [cue(1)]
else:
    steps = [cue(1), {"batch": [{"add": p} for p in pods + [cpu]]}, cue(2),
             {"batch": [{"delete": "ml-training/" + p["metadata"]["name"]}
                        for p in pods + [cpu]]}, cue(3)]
if opts.get("fix_bert"):
    # What topogate would have made of each bert pod at admission: its
    # own patch (audit --review, enforce), applied.
    import jsonpatch
    fixed = []
    for p in pods:
        if p["metadata"]["namespace"] != "team-b":
            continue
        rev = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
               "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                           "resource": {"group": "", "version": "v1", "resource": "pods"},
                           "namespace": "team-b", "operation": "CREATE", "object": p}}
        out = subprocess.run([bin_, "audit", "--review", "-", "--mode", "enforce", "--nodes",
                              root + "/test/nodes/eks-p4d-p5-g5.yaml"],
                             input=json.dumps(rev).encode(), capture_output=True)
        patch = json.loads(base64.b64decode(json.loads(out.stdout)["response"]["patch"]))
        fixed.append(jsonpatch.apply_patch(p, patch))
    steps = [cue(1), {"batch": [{"modify": f} for f in fixed]}, cue(2),
             {"batch": [{"delete": "team-b/" + f["metadata"]["name"]}
                        for f in fixed]}, cue(3)]
if "crd_off_at" in opts:
    steps = [cue(1), {"policyreport_off": True}, cue(2),
             {"add": dict(copy.deepcopy(pods[0]),
                          metadata=dict(pods[0]["metadata"],
                                        name="llama3-70b-pretrain-worker-16"))},
             cue(3)]
sc["watch"][sel] = [steps]
print(json.dumps(sc))
PY
}

# standin NAME: the stand-in on TMP/NAME.json; sets STANDIN, API_PORT,
# and writes TMP/kubeconfig for it.
standin() {
	standin_start "$TMP/$1.json" liveaudit --request-log "$TMP/$1.requests"
}

# state NAME EXPR: EXPR (Python) over the stand-in's state of NAME:
# reports = {"ns/name": PolicyReport}, events = {"ns/name": Event}.
state() {
	$PY - "$TMP/$1.state.json" "$2" <<'PY'
import json, os, sys
path, expr = sys.argv[1], sys.argv[2]
st = json.load(open(path)) if os.path.exists(path) else {}
reports, events = st.get("policyreports", {}), st.get("events", {})
print(eval(expr))
PY
}

# until NAME WHAT CMD: polls CMD (a shell command) until it prints
# WHAT, up to 120 s; ok with the time it took, or not_ok.
until_is() {
	local name=$1 want=$2 got start
	shift 2
	start=$(date +%s%N)
	for _ in $(seq 1 1200); do
		got=$("$@")
		if [ "$got" = "$want" ]; then
			ok "$name ($((($(date +%s%N) - start) / 1000000)) ms)"
			return 0
		fi
		sleep 0.1
	done
	not_ok "$name" "still '$got', wanted '$want'"
	return 1
}

# writes NAME METHOD: how many such requests the stand-in answered.
writes() {
	grep -c "\"method\": \"$2\"" "$TMP/$1.requests" 2>/dev/null
}

# --- the job runs, then goes ------------------------------------------------
scenario main
standin main
if ! start_server --kubeconfig "$TMP/kubeconfig" --live-audit; then
	not_ok "serve --live-audit" "did not become ready: $(tail -5 "$TMP/server.log")"
	finish liveaudit
fi
until_is "every pod watch listed" 1 metric topogate_liveaudit_synced
until_is "the PolicyReport CRD is found served" 1 \
	metric 'topogate_liveaudit_policyreport_crd{state="served"}'
expect "pods are listed and watched by label, one selector a controller" \
	"jobset.sigs.k8s.io/jobset-name leaderworkerset.sigs.k8s.io/name ray.io/cluster training.kubeflow.org/job-name volcano.sh/job-name" \
	"$($PY -c '
import json, sys, urllib.parse
sels = set()
for l in open(sys.argv[1]):
    u = urllib.parse.urlsplit(json.loads(l)["path"])
    if u.path == "/api/v1/pods":
        sels.add(urllib.parse.parse_qs(u.query).get("labelSelector", ["(none)"])[0])
print(" ".join(sorted(sels)))' "$TMP/main.requests")"
expect "no job yet: no GPU on a slow path" 0 \
	"$(metric 'topogate_liveaudit_slow_path_gpus{reason="nvlink_split"}')"

touch "$TMP/main-cue-1"
until_is "the running 16 x 1-GPU job is a fail result in ml-training's report" \
	"fail fragmented-layout PyTorchJob/llama3-70b-pretrain" \
	state main 'next((" ".join((r["result"], r["rule"], r["resources"][0]["kind"] + "/" + r["resources"][0]["name"])) for r in reports.get("ml-training/topogate", {}).get("results", [])), "")'
expect "one result, the workload's, not one per pod; summary fail 1" \
	"1 1 16 16" \
	"$(state main '(lambda r: " ".join(map(str, (len(r["results"]), r["summary"]["fail"], r["results"][0]["properties"]["pods"], r["results"][0]["properties"]["slowPathGPUs"]))))(reports["ml-training/topogate"])')"
expect_match "its message is the decision's, with the fix" \
	'^fragmented layout: p4d.24xlarge \(8x A100, NVSwitch\) split into 1-GPU pods.*; use .*nprocPerNode: 8' \
	"$(state main 'reports["ml-training/topogate"]["results"][0]["message"]')"
state main 'json.dumps(reports["ml-training/topogate"])' >"$TMP/report.json"
if [ -x "$VALIDATE" ] || [ -f "$VALIDATE" ]; then
	expect_match "the report validates against the PolicyReport CRD's schema" \
		'^OK PolicyReport/topogate' \
		"$($PY "$VALIDATE" --crds "$CRDS" --strict "$TMP/report.json" 2>&1 | head -1)"
else
	echo "# skipped: the report's schema check (no k8s-validate)"
fi
until_is "16 GPUs on the fragmented-GPU gauge of ml-training" 16 \
	metric 'topogate_liveaudit_fragmented_gpus{namespace="ml-training",reason="nvlink_split"}'
expect "one job counted" 1 \
	"$(metric 'topogate_liveaudit_fragmented_jobs{namespace="ml-training",reason="nvlink_split"}')"
expect "the CPU pod of the job is not watched: 16 pods" 16 \
	"$(metric topogate_liveaudit_pods)"
until_is "one Event on the PyTorchJob" \
	"1 Warning FragmentedLayout PyTorchJob/llama3-70b-pretrain" \
	state main '" ".join([str(len(events))] + [(e["type"] + " " + e["reason"] + " " + e["involvedObject"]["kind"] + "/" + e["involvedObject"]["name"]) for e in events.values()][:1])'
sleep 2.5 # a few judging passes more: nothing is written again
expect "the report was applied once, the Event created once" "1 1" \
	"$(writes main PATCH) $(writes main POST)"

touch "$TMP/main-cue-2"
until_is "the job's pods go: its report goes" "False" \
	state main '"ml-training/topogate" in reports'
until_is "the gauge goes back to 0" 0 \
	metric 'topogate_liveaudit_slow_path_gpus{reason="nvlink_split"}'
expect "and its namespace's series goes" "" \
	"$(metric 'topogate_liveaudit_fragmented_gpus{namespace="ml-training",reason="nvlink_split"}')"
until_is "its Event goes" 0 state main 'len(events)'
stop_server
expect "SIGTERM with the live audit on: clean exit" "0" "$SERVER_RC"
expect_no_sanitizer_report
kill "$STANDIN" 2>/dev/null

# --- no PolicyReport CRD -----------------------------------------------------
scenario nocrd '{"pods_at_start": true, "policyreport": false}'
standin nocrd
: >"$TMP/server.log"
start_server --kubeconfig "$TMP/kubeconfig" --live-audit ||
	not_ok "serve (no CRD)" "did not become ready"
until_is "no CRD: the gauge says reports are not served" 1 \
	metric 'topogate_liveaudit_policyreport_crd{state="not_served"}'
until_is "no CRD: the fragmented GPUs are counted all the same" 16 \
	metric 'topogate_liveaudit_slow_path_gpus{reason="nvlink_split"}'
until_is "no CRD: the Event is still sent" 1 state nocrd 'len(events)'
expect "no CRD: nothing written to a PolicyReport path" 0 \
	"$(grep -c 'policyreports/' "$TMP/nocrd.requests")"
stop_server
kill "$STANDIN" 2>/dev/null

# --- RBAC forbids the reports ---------------------------------------------------
scenario forbidden '{"pods_at_start": true, "forbid": [{"resource": "policyreports", "verb": "list"}, {"resource": "policyreports", "verb": "patch"}]}'
standin forbidden
start_server --kubeconfig "$TMP/kubeconfig" --live-audit ||
	not_ok "serve (forbidden)" "did not become ready"
until_is "reports forbidden: the gauge says so" 1 \
	metric 'topogate_liveaudit_policyreport_crd{state="forbidden"}'
until_is "reports forbidden: the GPUs are counted" 16 \
	metric 'topogate_liveaudit_slow_path_gpus{reason="nvlink_split"}'
sleep 2
expect "reports forbidden: no apply tried" 0 \
	"$(grep -c 'policyreports/topogate' "$TMP/forbidden.requests")"
stop_server
kill "$STANDIN" 2>/dev/null

# --- audit mode; a job without its NICs and /dev/shm -----------------------------
scenario modes '{"pods_at_start": true, "bert": true, "fix_bert": true}'
standin modes
start_server --kubeconfig "$TMP/kubeconfig" --live-audit --mode audit ||
	not_ok "serve --mode audit" "did not become ready"
until_is "audit mode: the fragmented job is warn, as audit says" \
	"warn fragmented-layout" \
	state modes '" ".join((lambda r: (r["result"], r["rule"]))(reports["ml-training/topogate"]["results"][0])) if "ml-training/topogate" in reports else ""'
until_is "a 2 x 8-GPU job running without EFA is warn missing-nics" \
	"warn missing-nics 16" \
	state modes '" ".join((lambda r: (r["result"], r["rule"], r["properties"]["slowPathGPUs"]))(reports["team-b/topogate"]["results"][0])) if "team-b/topogate" in reports else ""'
expect_match "its message names what the running pods lack" \
	'^runs without what topogate adds at admission: .*/dev/shm.*EFA' \
	"$(state modes 'reports["team-b/topogate"]["results"][0]["message"]')"
expect "its GPUs are on the missing_nics and missing_shm gauges" "16 16" \
	"$(metric 'topogate_liveaudit_fragmented_gpus{namespace="team-b",reason="missing_nics"}') $(metric 'topogate_liveaudit_fragmented_gpus{namespace="team-b",reason="missing_shm"}')"
until_is "an Event per job and reason: 3" \
	"FragmentedLayout MissingDevShm MissingRDMANICs" \
	state modes '" ".join(sorted(e["reason"] for e in events.values()))'
touch "$TMP/modes-cue-1"
until_is "the job fixed (its pods as topogate patches them): pass" \
	"pass gpu-layout 0" \
	state modes '" ".join((lambda r: (r["result"], r["rule"], r["properties"]["slowPathGPUs"]))(reports["team-b/topogate"]["results"][0]))'
until_is "fixed: off the gauges" 0 \
	metric 'topogate_liveaudit_slow_path_gpus{reason="missing_nics"}'
expect "fixed: the job stays in the report, a pass; its summary says so" \
	"1 0" "$(state modes '(lambda s: "%d %d" % (s["pass"], s["warn"]))(reports["team-b/topogate"]["summary"])')"
until_is "fixed: a Normal Event says so for each reason; the Warnings stay, as history" \
	"Normal MissingDevShmFixed, Normal MissingRDMANICsFixed, Warning MissingDevShm, Warning MissingRDMANICs" \
	state modes '", ".join(sorted(e["type"] + " " + e["reason"] for e in events.values() if e["involvedObject"]["name"] == "bert"))'
expect_match "the Normal Event's message is the job's result now" \
	'^no longer missing-nics: ' \
	"$(state modes 'next(e["message"] for e in events.values() if e["reason"] == "MissingRDMANICsFixed")')"
expect "the job still fragmented keeps its Warning alone" "Warning FragmentedLayout" \
	"$(state modes '", ".join(sorted(e["type"] + " " + e["reason"] for e in events.values() if e["involvedObject"]["name"] == "llama3-70b-pretrain"))')"
touch "$TMP/modes-cue-2"
until_is "the fixed job goes: its Warnings and Normal Events go, the other job's stay" \
	"0 1" \
	state modes '"%d %d" % tuple(sum(1 for e in events.values() if e["involvedObject"]["name"] == j) for j in ("bert", "llama3-70b-pretrain"))'
stop_server
kill "$STANDIN" 2>/dev/null

# --- GPUs from DRA claims, on nodes described by DRA alone ---------------------
scenario dra '{"pods_at_start": true, "dra": true}'
standin dra
start_server --kubeconfig "$TMP/kubeconfig" --live-audit ||
	not_ok "serve (DRA)" "did not become ready"
until_is "DRA: a running 4 x 1-GPU-claim job is a fail result, as admission says" \
	"fail fragmented-layout JobSet/llama3-8b-dra 4" \
	state dra 'next((" ".join((r["result"], r["rule"], r["resources"][0]["kind"] + "/" + r["resources"][0]["name"], r["properties"]["slowPathGPUs"])) for r in reports.get("ml-training/topogate", {}).get("results", [])), "")'
expect_match "DRA: its fix is in claim terms, the template's count" \
	"^fragmented layout: NVIDIA-H100-80GB-HBM3 .*split into 1-GPU pods.*set count: 4 \\(or allocationMode: All\\) in ResourceClaimTemplate 'single-gpu' request 'gpu'" \
	"$(state dra 'reports["ml-training/topogate"]["results"][0]["message"]')"
until_is "DRA: its 4 claimed GPUs on the fragmented-GPU gauge" 4 \
	metric 'topogate_liveaudit_fragmented_gpus{namespace="ml-training",reason="nvlink_split"}'
expect "DRA: the 4 claim pods are watched" 4 "$(metric topogate_liveaudit_pods)"
until_is "DRA: one Event on the JobSet" "1 FragmentedLayout JobSet" \
	state dra '" ".join([str(len(events))] + [(e["reason"] + " " + e["involvedObject"]["kind"]) for e in events.values()][:1])'
stop_server
kill "$STANDIN" 2>/dev/null

# --- the Event limit and the report's cap --------------------------------------
# 1,001 one-pod jobs, each fragmented, in one namespace. Events: 10 at
# once, then one per 6 s (EVENT_BURST, EVENT_EVERY_MS): whenever counted,
# at most 10 + 1 + (seconds since serve started) / 6 exist, and the 12th
# comes no sooner than 12 s after the start (both hold however slow the
# machine: a slow machine only sees fewer). The report keeps 1,000
# results (RESULTS_MAX) and its summary counts all 1,001.
scenario many '{"pods_at_start": true, "jobs": 1001}'
standin many
t0=$(date +%s%N)
start_server --kubeconfig "$TMP/kubeconfig" --live-audit ||
	not_ok "serve (1,001 jobs)" "did not become ready"
until_is "1,001 jobs: the report keeps 1,000 results, its summary counts 1,001" \
	"1000 1001" \
	state many '(lambda r: "%d %d" % (len(r["results"]), r["summary"]["fail"]))(reports["ml-training/topogate"]) if "ml-training/topogate" in reports else ""'
until_is "the first 10 Events come at once" True state many 'len(events) >= 10'
until_is "the Events past 10 are counted as held back" True \
	$PY -c 'import sys; print(float(sys.argv[1] or 0) >= 1)' \
	"$(metric topogate_liveaudit_events_limited_total)"
bad=
for _ in 1 2 3 4 5 6 7 8; do
	n=$(state many 'len(events)')
	elapsed=$((($(date +%s%N) - t0) / 1000000000))
	[ "$n" -le $((11 + elapsed / 6)) ] || bad="$bad $n@${elapsed}s"
	sleep 1
done
expect "after the burst, at most one Event per 6 s (counted 8 times)" "" "$bad"
until_is "a 12th Event comes, one interval after another" True state many 'len(events) >= 12'
elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
expect "and no sooner than 12 s after serve started" True \
	"$([ "$elapsed_ms" -ge 12000 ] && echo True || echo "False ($elapsed_ms ms)")"
stop_server
kill "$STANDIN" 2>/dev/null

# --- the CRD deleted while serve runs ----------------------------------------
scenario crdoff '{"pods_at_start": true, "crd_off_at": 1}'
standin crdoff
start_server --kubeconfig "$TMP/kubeconfig" --live-audit ||
	not_ok "serve (CRD deleted)" "did not become ready"
until_is "CRD there: the report is written" "fail" \
	state crdoff 'reports.get("ml-training/topogate", {}).get("results", [{}])[0].get("result")'
touch "$TMP/crdoff-cue-1"
until_is "CRD deleted: the gauge says reports are not served" 1 \
	metric 'topogate_liveaudit_policyreport_crd{state="not_served"}'
before=$(writes crdoff PATCH)
touch "$TMP/crdoff-cue-2"
until_is "CRD deleted: a 17th pod is still judged" 17 metric topogate_liveaudit_pods
sleep 2
expect "CRD deleted: no report written after" "$before" \
	"$(writes crdoff PATCH)"
stop_server
expect "SIGTERM: clean exit" "0" "$SERVER_RC"
expect_no_sanitizer_report
kill "$STANDIN" 2>/dev/null

# --- the helper writes only what it builds -----------------------------------
# serve faces the cluster's pods; what it may ask the helper (which holds
# the token) is bounded: names are checked, paths are the helper's own.
scenario helper '{"pods_at_start": true}'
standin helper
printf '%s\n' \
	'{"op":"report","ns":"../kube-system","body":{}}' \
	'{"op":"unevent","ns":"ml-training","name":"x/../../secrets/y"}' \
	'{"op":"delete","ns":"ml-training","name":"x"}' \
	'not json' \
	'{"op":"report","ns":"ml-training","body":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"evil","namespace":"kube-system"}}}' |
	timeout 10 "$(dirname "$BIN")/topogate-kubewatch" --kubeconfig "$TMP/kubeconfig" \
		--live-audit 2>>"$TMP/helper.log" | grep --line-buffered '"op":"wrote"' >"$TMP/wrote" &
until_is "the helper answers every command" 5 \
	$PY -c 'import sys; print(sum(1 for _ in open(sys.argv[1])))' "$TMP/wrote"
expect "a bad namespace, a bad name, an unknown op, not JSON: refused, unsent" \
	"0 0 0 0" \
	"$($PY -c 'import json, sys; print(" ".join(str(json.loads(l)["code"]) for l in list(open(sys.argv[1]))[:4]))' "$TMP/wrote")"
expect "a report is a PolicyReport named topogate in its own namespace" \
	"201 ['ml-training/topogate'] PolicyReport" \
	"$($PY -c 'import json, sys; print(json.loads(list(open(sys.argv[1]))[4])["code"])' "$TMP/wrote") $(state helper 'sorted(reports)') $(state helper 'reports["ml-training/topogate"]["kind"]')"
expect "nothing else reached the apiserver's write paths" 1 \
	"$(grep -c '"method": "\(PATCH\|POST\|DELETE\|PUT\)"' "$TMP/helper.requests")"
kill "$STANDIN" 2>/dev/null
finish liveaudit
