#!/bin/bash
# test/e2e/view.sh BIN: the cluster view end to end. `BIN serve
# --kubeconfig` watches test/kube/standin.py (a stand-in apiserver written
# from the API documentation), and a pod that pins only a node group is
# reviewed over HTTPS while the cluster changes under it: its node
# appears, changes its labels, comes back, goes away. Each change is
# cued by a file the stand-in waits for, and the decision must follow
# within seconds: denied while a p4d.24xlarge node of that group exists,
# allowed with "no node ... fits" while other GPU nodes exist. Also: a
# TrainJob on a runtime the cluster serves, the view's metrics,
# readiness with the apiserver away, and no sanitizer report.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-view.XXXXXX") || exit 2
. "$HERE/lib.sh"
trap cleanup EXIT

REVIEW=$ROOT/test/golden/cases/view-nodegroup-16x1-trainjob-deny.in.json

# The apiserver's CA and certificate, and ours.
standin_credentials
mkcert tls

# The scenario: only a g5.12xlarge node of another group at first; then,
# one cue at a time, the p4d node of test/nodes/eks-p4d-p5-g5.yaml is
# added, moved to another node group, moved back, and deleted.
# Trainer is installed: its ClusterTrainingRuntimes are those of
# test/golden/runtimes/mpi-runtimes.yaml. So is NFD's topology updater:
# the g5 node's NodeResourceTopology (test/kube/scenarios/nrt-served.json's,
# renamed) is there, and the p4d node's arrives with it, its kubelet's
# Topology Manager policy none; at cue 10 it turns single-numa-node (the
# split is then warned, not refused: its whole-node fix would not be
# admitted), at cue 11 back to none.
$PY - "$ROOT/test/nodes/eks-p4d-p5-g5.yaml" "$TMP" \
	"$ROOT/test/golden/runtimes/mpi-runtimes.yaml" \
	"$ROOT/test/kube/scenarios/nrt-served.json" >"$TMP/scenario.json" <<'PY'
import copy, json, sys, yaml
items = yaml.safe_load(open(sys.argv[1]))["items"]
runtimes = list(yaml.safe_load_all(open(sys.argv[3])))
nrt = json.load(open(sys.argv[4]))["objects"]["noderesourcetopologies"][0]
# policy: kubelet's, set as NFD writes it (the attribute, and the
# deprecated list's name for it with scope container).
LISTED = {"none": "None", "single-numa-node": "SingleNUMANodeContainerLevel"}
def topology(node, policy=None):
    t = copy.deepcopy(nrt)
    t["metadata"]["name"] = node["metadata"]["name"]
    if policy:
        for a in t["attributes"]:
            if a["name"] == "topologyManagerPolicy":
                a["value"] = policy
        t["topologyPolicies"] = [LISTED[policy]]
    return t
node = next(i for i in items if i.get("kind") == "Node" and
            i["metadata"]["labels"].get("eks.amazonaws.com/nodegroup")
            == "p4d-workers")
moved = copy.deepcopy(node)
moved["metadata"]["labels"]["eks.amazonaws.com/nodegroup"] = "p4d-spare"
cue = lambda n: {"wait_for": "%s/cue-%d" % (sys.argv[2], n)}
steps = [cue(1), {"add": node}, cue(2), {"modify": moved},
         cue(3), {"modify": node}, cue(4),
         {"delete": node["metadata"]["name"]}, cue(5)]
g5 = next(i for i in items if i.get("kind") == "Node" and
          i["metadata"]["labels"].get("eks.amazonaws.com/nodegroup")
          == "g5-dev")
print(json.dumps({"comment": "test/e2e/view.sh",
                  "trainer": {"versions": ["v1alpha1"]},
                  "nrt": {"versions": ["v1alpha2", "v1alpha1"]},
                  "objects": {"nodes": [g5],
                              "clustertrainingruntimes": runtimes,
                              "noderesourcetopologies": [topology(g5)]},
                  "watch": {"nodes": [steps],
                            "noderesourcetopologies": [
                                [cue(1), {"add": topology(node, "none")},
                                 cue(10), {"modify": topology(
                                     node, "single-numa-node")},
                                 cue(11), {"modify": topology(node, "none")}
                                 ]]}}))
PY

# standin SCENARIO: the stand-in apiserver (lib.sh standin_start).
standin() { standin_start "$1" view; }

standin "$TMP/scenario.json"


# review: POSTs the pod; sets VERDICT to "deny" or "allow: WARNING".
review() {
	VERDICT=$(curl -s --max-time 5 --cacert "$TMP/tls.crt" \
		-H 'Content-Type: application/json' --data-binary "@$REVIEW" \
		"https://127.0.0.1:$PORT/mutate" | $PY -c '
import json, sys
r = json.load(sys.stdin)["response"]
print("deny" if not r["allowed"] else "allow: " + " / ".join(r.get("warnings", [])))')
}

# until_verdict NAME PATTERN: reviews until VERDICT matches, up to 10 s.
until_verdict() {
	for _ in $(seq 1 100); do
		review
		if printf '%s' "$VERDICT" | grep -Eq -- "$2"; then
			ok "$1"
			return 0
		fi
		sleep 0.1
	done
	not_ok "$1" "still '$VERDICT'"
}

# The policy of the TrainJob golden case below (it turns the legacy-efa
# env profile on), composed as test/golden/run.sh composes it.
GOLD=$ROOT/test/golden/cases/job-trainjob-mpi-runtime-launcher-env-mutate
{
	cat "$GOLD.policy"
	sed -n '/^instanceTypes:/,$p' "$ROOT/deploy/policy.yaml"
} >"$TMP/policy.yaml"

if ! start_server --kubeconfig "$TMP/kubeconfig" --policy "$TMP/policy.yaml"; then
	not_ok "serve --kubeconfig" "did not become ready: $(tail -5 "$TMP/server.log")"
	finish view
fi
wait_metric topogate_view_synced 1
expect "the view is synced, with the g5 node" "1 1" \
	"$(metric topogate_view_synced) $(metric topogate_view_nodes)"
expect_log "NodeResourceTopologies are watched at v1alpha2" \
	'noderesourcetopologies: served as topology.node.k8s.io/v1alpha2'
until_verdict "no node of the group yet: allowed, and it says so" \
	"^allow: no node in the cluster fits this pod yet"

# A TrainJob naming a runtime the view learnt: the same answer as the
# golden case that gets the runtime from a file (the view is rebuilt at
# most once a second, so it may take that long).
for _ in $(seq 1 50); do
	curl -s --max-time 5 --cacert "$TMP/tls.crt" \
		-H 'Content-Type: application/json' --data-binary "@$GOLD.in.json" \
		"https://127.0.0.1:$PORT/mutate" >"$TMP/trainjob.out.json"
	cmp -s "$GOLD.out.json" "$TMP/trainjob.out.json" && break
	sleep 0.1
done
if cmp -s "$GOLD.out.json" "$TMP/trainjob.out.json"; then
	ok "a TrainJob on a runtime the cluster serves: its launcher's env patched"
else
	not_ok "a TrainJob on a runtime the cluster serves" \
		"got $(head -c 400 "$TMP/trainjob.out.json")"
fi

touch "$TMP/cue-1"
until_verdict "its p4d.24xlarge node appears: 16 x 1 GPU denied" "^deny$"
expect "the view holds the node" "2" "$(metric topogate_view_nodes)"
touch "$TMP/cue-10"
until_verdict "its kubelet turns single-numa-node: the split is not refused" \
	"^allow: p4d.24xlarge .*not refused; kubelet's single-numa-node policy"
touch "$TMP/cue-11"
until_verdict "and back to none: denied again" "^deny$"

touch "$TMP/cue-2"
until_verdict "the node moves to another group: allowed again" \
	"^allow: no node in the cluster fits"

touch "$TMP/cue-3"
until_verdict "the node comes back to the group: denied again" "^deny$"

touch "$TMP/cue-4"
until_verdict "the node goes away: allowed" "^allow: no node in the cluster fits"
expect "the view is back to the g5 node" "1" "$(metric topogate_view_nodes)"
expect_match "reviews counted by how the hardware was known" \
	'^[1-9][0-9]*$' "$(metric 'topogate_reviews_known_by_total{known_by="nodes"}')"
expect_match "the enforce verdict is counted with the mode" \
	'^[1-9][0-9]*$' "$(metric 'topogate_reviews_judged_total{decision="deny",mode="enforce"}')"
expect_log "the log line says how the hardware was known" \
	'review uid=.* type=p4d.24xlarge known=nodes decision=deny'

# `topogate nodes` lists the same cluster once, through the same helper.
expect_match "topogate nodes --kubeconfig lists the cluster's kinds" \
	'^g5.12xlarge +4  pcie .* 1  node.kubernetes.io/instance-type' \
	"$("$BIN" nodes --kubeconfig "$TMP/kubeconfig" 2>>"$TMP/nodes.err" | sed -n 2p)"

# The apiserver goes away: the server stays ready and keeps deciding
# with the last view; the synced gauge drops.
kill "$STANDIN" 2>/dev/null
wait_metric topogate_view_synced 0
expect "apiserver gone: the view is not synced" "0" \
	"$(metric topogate_view_synced)"
expect "apiserver gone: still ready" "200" \
	"$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PROBE/readyz")"
review
expect_match "apiserver gone: reviews still answered from the last view" \
	"^allow: no node in the cluster fits" "$VERDICT"
expect_match "the restarts are counted by reason" \
	'^[1-9][0-9]*$' "$(curl -s "http://127.0.0.1:$PROBE/metrics" |
		grep '^topogate_watch_restarts_total' | awk '{s += $2} END {print s}')"

stop_server
expect "SIGTERM with the watch running: clean exit" "0" "$SERVER_RC"
expect_no_sanitizer_report

# RBAC that leaves LocalQueues out (every list of them is 403): the view
# is still synced, with the refusal counted; Trainer, not installed here,
# is settled as not served.
$PY -c '
import json
faults = [{"resource": "localqueues", "kind": "list", "nth": n,
           "status": 403, "reason": "Forbidden",
           "message": "localqueues.kueue.x-k8s.io is forbidden"}
          for n in range(1, 100)]
print(json.dumps({"kueue": {"versions": ["v1beta1"]},
                  "objects": {"nodes": [{"metadata": {"name": "a"}}]},
                  "faults": faults}))' >"$TMP/forbidden.json"
standin "$TMP/forbidden.json"
if ! start_server --kubeconfig "$TMP/kubeconfig"; then
	not_ok "serve --kubeconfig (forbidden)" "did not become ready"
	finish view
fi
wait_metric topogate_view_synced 1
expect "LocalQueues forbidden: the view is synced all the same" "1" \
	"$(metric topogate_view_synced)"
expect_match "the refusal is counted" '^[1-9][0-9]*$' \
	"$(metric 'topogate_watch_restarts_total{reason="forbidden"}')"
stop_server
expect "SIGTERM: clean exit" "0" "$SERVER_RC"
finish view
