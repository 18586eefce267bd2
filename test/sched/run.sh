#!/bin/bash
# test/sched/run.sh BIN: the Kubernetes scheduler's own test cases
# (upstream-cases.json) through `topogate audit --review - --nodes FILE`,
# the decision path a review takes with a cluster view: each case's node
# becomes the view's one GPU node (a p4d.24xlarge, so that a pod that fits
# it is patched), each case's placement goes into an 8-GPU TrainJob pod,
# and the pod must be patched exactly when upstream lets it onto the node.
# The matcher alone is test/unit/test_sched_upstream.c over the same file.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../.." || exit 2
exec /usr/bin/python3 "$HERE/audit_cases.py" "$BIN"
