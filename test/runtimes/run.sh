#!/bin/bash
# test/runtimes/run.sh BIN: the real runtimes run what topogate's patches
# produce, on CPU: Open MPI 4.1's mpirun runs each launcher's own mpirun
# line (its -x and --mca flags, its hostfile's hosts reached the way ssh
# reaches them) with the patched env, and torch's torchrun (1.13, gloo)
# reads and starts each torchrun line with the env the operators set.
# Every variable topogate adds must reach every rank; the world size
# must be what the line, and any fix topogate prints, says. harness.py
# says exactly what is checked, mpi.py and torchlaunch.py what is changed
# to run on one machine, and why.
#
# Run alone: test/runtimes/run.sh build/topogate
# Needs Debian's openmpi-bin, python3-torch, python3-jsonpatch and
# python3-yaml (`make test-deps`). SHARED overrides where ../shared is;
# ONLY=GLOB takes only the golden cases whose names match it.

set -u

. "$(dirname "$0")/../bin-arg.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3

missing=
[ -x /usr/bin/mpirun ] || missing="$missing openmpi-bin"
$PY -c 'import torch.distributed' 2>/dev/null ||
	missing="$missing python3-torch"
$PY -c 'import jsonpatch, yaml' 2>/dev/null ||
	missing="$missing python3-jsonpatch python3-yaml"
if [ -n "$missing" ]; then
	echo "not ok - runtimes: missing Debian packages:$missing (make test-deps)"
	exit 1
fi

export PYTHONDONTWRITEBYTECODE=1
# The whole run is bounded; each mpirun and torchrun has its own limit.
timeout -k 10 600 $PY "$HERE/harness.py" "$BIN"
