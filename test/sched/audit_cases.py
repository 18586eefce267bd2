"""Run test/sched/upstream-cases.json through `topogate audit --review -
--nodes FILE` (see run.sh). Prints one TAP-like line a case; exit 1 when a
case disagrees with upstream, 2 when the tool cannot be run."""
import copy
import json
import subprocess
import sys
import tempfile

BIN = sys.argv[1]
CASES = "test/sched/upstream-cases.json"
# An 8-GPU TrainJob pod pinned by a node group, patched on a p4d node.
TEMPLATE = "test/golden/cases/view-nodegroup-2x8-trainjob-mutate.in.json"
PLACEMENT = ("nodeSelector", "affinity", "tolerations", "nodeName")


def node_list(node):
    labels = dict(node.get("labels", {}))
    labels["node.kubernetes.io/instance-type"] = "p4d.24xlarge"
    return {"apiVersion": "v1", "kind": "NodeList", "items": [{
        # The view keys nodes by name: a nameless upstream node gets one
        # (no such case names nodes).
        "metadata": {"name": node.get("name") or "unnamed", "labels": labels},
        "spec": {"taints": node.get("taints", [])},
        "status": {"allocatable": {
            "cpu": "96", "memory": "1140Gi", "nvidia.com/gpu": "8",
            "vpc.amazonaws.com/efa": "4", "pods": "110"}}}]}


def review(template, pod):
    r = copy.deepcopy(template)
    spec = r["request"]["object"]["spec"]
    for key in PLACEMENT:
        spec.pop(key, None)
    for key in PLACEMENT:
        if key in pod:
            spec[key] = pod[key]
    return r


def main():
    doc = json.load(open(CASES))
    template = json.load(open(TEMPLATE))
    passed = failed = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        nodes = tmp + "/nodes.json"
        for c in doc["cases"]:
            label = "%s: %s" % (c["test"], c["name"])
            if "skip" in c:
                skipped += 1
                continue
            with open(nodes, "w") as f:
                json.dump(node_list(c["node"]), f)
            p = subprocess.run([BIN, "audit", "--review", "-", "--nodes", nodes],
                               input=json.dumps(review(template, c["pod"])),
                               capture_output=True, text=True)
            if p.returncode != 0:
                print("not ok - %s: exit %d: %s" % (label, p.returncode,
                                                    p.stderr.strip()))
                failed += 1
                continue
            ann = json.loads(p.stdout)["response"].get("auditAnnotations", {})
            got = ann.get("decision") == "patch"
            if got == c["want"]:
                passed += 1
                print("ok - %s" % label)
            else:
                failed += 1
                print("not ok - %s: want %s, got %s (%s)" % (
                    label, c["want"], got, ann.get("reason")))
    print("# sched: %d agree with upstream, %d disagree, %d skipped"
          % (passed, failed, skipped))
    return 1 if failed or passed < 70 else 0


sys.exit(main())
