#!/bin/bash
# test/bench/nccl_bench.sh: measure NCCL's transports and bandwidth for the
# pod layouts topogate decides about, on one multi-GPU host (issue 48).
#
# On a host with 4 or 8 NVLink GPUs, as root (pods are emulated with
# unshare/nsenter), with PyTorch built with NCCL:
#
#     test/bench/nccl_bench.sh /tmp/nccl-layouts
#     test/bench/nccl_bench.sh /tmp/nccl-layouts --only 'p2p-level-*'
#     test/bench/nccl_bench.sh /tmp/nccl-layouts --topogate-shm 256GiB
#
# On any machine, no GPU (gloo on CPU, 2 ranks, sizes 1024x smaller): checks
# the plumbing, not NCCL:
#
#     test/bench/nccl_bench.sh --dry-run /tmp/nccl-dry
#
# Writes OUTDIR/host.json (GPUs, driver, kernel, torch, NCCL),
# OUTDIR/topo.txt (nvidia-smi topo -m), then runs test/bench/nccl_run.py,
# which writes OUTDIR/results.json, OUTDIR/results.md and one folder of
# logs per case. Arguments after OUTDIR go to nccl_run.py (--help there).
# A full run is 18 cases of about 15-30 s each on 8 GPUs.
#
# NVLink multicast stays off, here and in every rank: a program that uses
# it can take a shared host's GPUs out of service (the device notes of
# this workplace, /work/.library/device/KINDS.md).
set -euo pipefail

export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

here=$(cd "$(dirname "$0")" && pwd)
dry=()
if [ "${1:-}" = --dry-run ]; then
    dry=(--dry-run)
    shift
fi
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
    echo "usage: $0 [--dry-run] OUTDIR [nccl_run.py options]" >&2
    exit 2
fi
out=$1
shift
mkdir -p "$out"
py=${PYTHON:-python3}

if [ ${#dry[@]} -eq 0 ]; then
    command -v nvidia-smi >/dev/null || { echo "$0: no nvidia-smi: use --dry-run" >&2; exit 2; }
    [ "$(id -u)" = 0 ] || echo "$0: not root: cases that need pod namespaces are skipped" >&2
    nvidia-smi topo -m >"$out/topo.txt" 2>&1 || true
    gpus=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | paste -sd';')
else
    gpus="none (dry run)"
fi

GPUS=$gpus KERNEL=$(uname -r) "$py" - "$out/host.json" <<'EOF'
import json, os, socket, sys, time
h = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
     "hostname": socket.gethostname(), "kernel": os.environ["KERNEL"],
     "gpus": os.environ["GPUS"], "cpus": str(os.cpu_count())}
try:
    import torch
    h["torch"] = torch.__version__
    if torch.cuda.is_available():
        h["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
        h["cuda"] = str(torch.version.cuda)
except Exception as e:  # the dry run needs no CUDA
    h["torch"] = f"unavailable: {e}"
json.dump(h, open(sys.argv[1], "w"), indent=1)
EOF

exec "$py" "$here/nccl_run.py" --out "$out" "${dry[@]}" "$@"
