#!/bin/bash
# test/audit/run.sh BIN: `topogate audit` over manifests.
#
#   - The 40 manifests of ../shared/corpus/manifests in one run: the text
#     report must equal corpus.txt, read line by line when written.
#   - inputs/list.yaml (a kind: List) as text and JSON: list.txt, list.json.
#   - stdin: the same report as the file, named <stdin>.
#   - Exit statuses: --fail-on deny|warn|never, unreadable paths, usage.
#   - ci.sh: -o junit and -o sarif against their schemas and golden
#     reports, finding ids, --baseline and --write-baseline.
#   - check.py: every suggested patch applies with python jsonpatch and
#     the patched pod passes k8s-validate --strict; and the very pods the
#     audit expanded, sent to `serve` over HTTPS, get the same decision
#     and the same patch.
# UPDATE=1 rewrites the golden reports. SHARED overrides ../shared.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
# A clone alone: what the tests read of ../shared is in test/data.
[ -d "$SHARED" ] || SHARED=$REPO/test/data
export SHARED
PY=/usr/bin/python3

TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-audit.XXXXXX") || exit 2
# ok, not_ok, expect, mkcert, start_server, stop_server, cleanup.
. "$REPO/test/e2e/lib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# golden NAME ACTUAL: compare with (or, UPDATE=1, write) $HERE/NAME.
golden() {
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$2" "$HERE/$1"
		ok "$1 written: read it"
	elif diff -u "$HERE/$1" "$2" >"$TMP/diff"; then
		ok "$1"
	else
		not_ok "$1" "differs from the golden report"
		head -40 "$TMP/diff" | sed 's/^/#   /'
	fi
}

# Paths in the report are as given: run from the corpus so they read
# manifests/NAME.yaml wherever ../shared is.
(cd "$SHARED/corpus" && "$BIN" audit manifests) >"$TMP/corpus.txt" 2>"$TMP/err"
expect "corpus audit (default --fail-on deny): exit status" 0 $?
golden corpus.txt "$TMP/corpus.txt"
[ -s "$TMP/err" ] && not_ok "corpus audit wrote to stderr" "$(cat "$TMP/err")"

(cd "$SHARED/corpus" && "$BIN" audit --fail-on warn manifests) >/dev/null 2>&1
expect "corpus audit --fail-on warn: exit status" 1 $?

(cd "$HERE" && "$BIN" audit inputs/list.yaml) >"$TMP/list.txt" 2>&1
expect "list audit: a deny: exit status" 1 $?
golden list.txt "$TMP/list.txt"
(cd "$HERE" && "$BIN" audit -o json inputs/list.yaml) >"$TMP/list.json" 2>&1
golden list.json "$TMP/list.json"
# With a cluster view: the corpus against an EKS cluster (--nodes), and
# the list with that cluster's Nodes and Kueue objects among the inputs.
(cd "$SHARED/corpus" && "$BIN" audit --fail-on never \
	--nodes "$REPO/test/nodes/eks-p4d-p5-g5.yaml" manifests) \
	>"$TMP/corpus-eks.txt" 2>"$TMP/err"
expect "corpus audit --nodes: exit status" 0 $?
golden corpus-eks.txt "$TMP/corpus-eks.txt"
(cd "$REPO" && "$BIN" audit --fail-on never test/nodes/eks-p4d-p5-g5.yaml \
	test/audit/inputs/list.yaml) >"$TMP/list-eks.txt" 2>&1
expect "list audit with the cluster among the inputs: exit status" 0 $?
golden list-eks.txt "$TMP/list-eks.txt"
# Trainer's runtimes from the cluster (--nodes), not the files.
(cd "$REPO" && "$BIN" audit --fail-on never \
	--nodes test/golden/runtimes/mpi-runtimes.yaml \
	test/audit/inputs/trainjobs-cluster-runtimes.yaml) \
	>"$TMP/runtimes-view.txt" 2>&1
expect "TrainJobs with the cluster's runtimes: exit status" 0 $?
golden runtimes-view.txt "$TMP/runtimes-view.txt"
(cd "$HERE" && "$BIN" audit --fail-on never inputs/list.yaml) >/dev/null 2>&1
expect "list audit --fail-on never: exit status" 0 $?

# Templates (issue 13 item 7): placeholders block only the fields they
# are in; --set and --env render them first.
(cd "$HERE" && "$BIN" audit --fail-on never inputs/templates.yaml) \
	>"$TMP/templates.txt" 2>&1
expect "templates audit: exit status" 0 $?
golden templates.txt "$TMP/templates.txt"
(cd "$HERE" && NUM_NODES=2 GPU_PER_NODE=8 "$BIN" audit --fail-on never \
	--env --set MANAGED=true --set NUM_NODES=3 inputs/templates.yaml) \
	>"$TMP/templates-set.txt" 2>&1
expect "templates audit --env --set: exit status" 0 $?
golden templates-set.txt "$TMP/templates-set.txt"
# More kinds (issue 13 item 8): Training Operator v1 MPIJob, Trainer MPI
# and DeepSpeed runtimes, JAXJob, Volcano, KubeRay, an unknown kind.
(cd "$HERE" && "$BIN" audit --fail-on never inputs/kinds.yaml) \
	>"$TMP/kinds.txt" 2>&1
expect "kinds audit: exit status" 0 $?
golden kinds.txt "$TMP/kinds.txt"
# GB200 (issue 13 item 6): only a ComputeDomain channel claim counts.
(cd "$HERE" && "$BIN" audit --fail-on never inputs/gb200.yaml) \
	>"$TMP/gb200.txt" 2>&1
expect "gb200 audit: exit status" 0 $?
golden gb200.txt "$TMP/gb200.txt"
# Not NVIDIA (issue 13 item 9): EFA with Gaudi or Neuron is no mistake.
(cd "$HERE" && "$BIN" audit --fail-on never inputs/accelerators.yaml) \
	>"$TMP/accelerators.txt" 2>&1
expect "accelerators audit: exit status" 0 $?
golden accelerators.txt "$TMP/accelerators.txt"
# The user's env that turns NCCL's fast paths off (issue 43 item 8).
(cd "$HERE" && "$BIN" audit --fail-on never inputs/slow-env.yaml) \
	>"$TMP/slow-env.txt" 2>&1
expect "slow-env audit: exit status" 0 $?
golden slow-env.txt "$TMP/slow-env.txt"

# Label keys and values the API refuses are mistakes (issue 44 point 5).
(cd "$HERE" && "$BIN" audit --fail-on never inputs/labels.yaml) \
	>"$TMP/labels.txt" 2>&1
expect "labels audit: exit status" 0 $?
golden labels.txt "$TMP/labels.txt"
# mpirun starting a process group per worker from a script (item 6).
(cd "$HERE" && "$BIN" audit --fail-on never inputs/per-node-launcher.yaml) \
	>"$TMP/per-node-launcher.txt" 2>&1
expect "per-node-launcher audit: exit status" 0 $?
golden per-node-launcher.txt "$TMP/per-node-launcher.txt"
# Frameworks governed by what their pods are (issue 46 point 5): Ray,
# Volcano's plugins, LeaderWorkerSet, JobSet, v1alpha2 MPIJob, a gang.
(cd "$HERE" && "$BIN" audit --fail-on never inputs/frameworks.yaml) \
	>"$TMP/frameworks.txt" 2>&1
expect "frameworks audit: exit status" 0 $?
golden frameworks.txt "$TMP/frameworks.txt"
"$BIN" audit --set 1X=2 "$HERE/inputs/templates.yaml" >/dev/null 2>&1
expect "--set with a bad name: exit status" 2 $?

"$BIN" audit - <"$HERE/inputs/list.yaml" >"$TMP/stdin.txt" 2>&1
expect "stdin audit: exit status" 1 $?
if sed 's|^inputs/list.yaml$|<stdin>|' "$TMP/list.txt" | diff -u - "$TMP/stdin.txt" >"$TMP/diff"; then
	ok "stdin gives the file's report"
else
	not_ok "stdin gives the file's report" "$(cat "$TMP/diff")"
fi

"$BIN" audit "$TMP/no-such-file.yaml" >/dev/null 2>"$TMP/err"
expect "missing file: exit status" 2 $?
grep -q 'no-such-file.yaml: No such file' "$TMP/err" && ok "missing file named" ||
	not_ok "missing file named" "$(cat "$TMP/err")"
"$BIN" audit -o yaml "$HERE/inputs/list.yaml" >/dev/null 2>&1
expect "bad -o: exit status" 2 $?
"$BIN" audit >/dev/null 2>&1
expect "no path: exit status" 2 $?

# --- CI: JUnit, SARIF, finding ids, baselines (ci.sh) --------------------

. "$HERE/ci.sh"

# --- patches apply and validate; serve agrees -----------------------------

(cd "$SHARED/corpus" && "$BIN" audit -o json --with-pods --fail-on never manifests) \
	>"$TMP/corpus.json" || not_ok "corpus -o json --with-pods"
"$BIN" audit -o json --with-pods --fail-on never "$HERE/inputs" >"$TMP/inputs.json" ||
	not_ok "inputs -o json --with-pods"

if ! mkcert tls; then
	not_ok "test certificate" "$(cat "$TMP/openssl.log")"
elif ! start_server; then
	not_ok "serve started" "$(cat "$TMP/server.log")"
else
	$PY "$HERE/check.py" --url "https://localhost:$PORT/mutate" \
		--cacert "$TMP/tls.crt" --port "$PORT" "$TMP/corpus.json" \
		"$TMP/inputs.json" || FAILED=$((FAILED + 1))
	stop_server
fi

echo "# audit: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
