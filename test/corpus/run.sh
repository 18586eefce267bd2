#!/bin/bash
# test/corpus/run.sh BIN: every pod template in the third-party corpus
# (../shared/corpus/manifests) and every fixture in
# ../shared/corpus/admissionreviews goes through `BIN audit --review -`
# without a crash.
#
# extract.py finds the pod templates (Pod, Deployment/Job/..., CronJob,
# PyTorchJob, MPIJob, JobSet, (Cluster)TrainingRuntime, TrainJob,
# AppWrapper, and any other kind that embeds a pod template), adds the
# labels and env their controllers would add, and wraps each as a Pod
# CREATE review. A review must get exit 0 and a response with its uid;
# a fixture file sent as it is must get exit 0 or 2 and a JSON body.
# Files that are not YAML as stored (a Jinja template, ${...} line
# injection) are reported as `skip`, not failures. Exit status 1 if
# anything crashed (signal, timeout, sanitizer report) or broke that.
# The decisions themselves are not judged here: the goldens do that.
# SHARED overrides where ../shared is.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
# A clone alone: what the tests read of ../shared is in test/data.
[ -d "$SHARED" ] || SHARED=$REPO/test/data
export SHARED
PY=/usr/bin/python3

TMP=$(mktemp -d "${TMPDIR:-/tmp}/topogate-corpus.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

if ! $PY "$HERE/extract.py" reviews "$TMP" >"$TMP/index"; then
	echo "not ok - extract.py failed"
	exit 1
fi

while IFS=$'\t' read -r kind file _; do
	[ "$kind" = skip ] && continue
	base=$TMP/${file%.json}
	timeout -k 5 30 "$BIN" audit --review - <"$TMP/$file" \
		>"$base.out" 2>"$base.err"
	echo $? >"$base.rc"
done <"$TMP/index"

$PY "$HERE/extract.py" report "$TMP" "$TMP/index"
