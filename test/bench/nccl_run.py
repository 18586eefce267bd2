#!/usr/bin/env python3
"""Run the NCCL layout cases (test/bench/nccl_cases.py) on this host.

Usually started by test/bench/nccl_bench.sh, which records the host first:

    test/bench/nccl_bench.sh OUTDIR            # on a 4- or 8-GPU host, as root
    test/bench/nccl_bench.sh --dry-run OUTDIR  # CPU, gloo, 2 ranks, tiny sizes

Directly:

    python3 test/bench/nccl_run.py --out OUTDIR [--dry-run] [--gpus N]
        [--only GLOB,GLOB] [--sizes 16MiB,256MiB,1GiB] [--warmup 5]
        [--iters 20] [--topogate-shm 256GiB] [--timeout 300] [--share-gpu]

For each case it starts one test/bench/nccl_layouts.py per rank, inside
namespaces that stand for pods (unshare/nsenter: needs root), with
NCCL_DEBUG=INFO, and keeps each rank's log and JSON under OUTDIR/CASE/.
Then it writes OUTDIR/results.json and OUTDIR/results.md
(test/bench/nccl_report.py). Inherited NCCL_* variables are dropped so
that each case has only its own; NVLink multicast is kept off in every
rank (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
NVSHMEM_DISABLE_NVLS=1), and a rank whose log shows NVLS channels stops
the run (exit 4).
Exit status: 0 the run is complete (a case that failed or timed out is a
result: its status and reason are in the files), 2 bad arguments, 4 NVLS
seen.
"""

import argparse
import fnmatch
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import nccl_cases  # noqa: E402
import nccl_report  # noqa: E402
from nccl_layouts import MULTICAST_OFF, parse_size, parse_sizes  # noqa: E402

WORKER = os.path.join(HERE, "nccl_layouts.py")
FULL_SIZES = "16MiB,256MiB,1GiB"
DRY_SIZES = "16KiB,256KiB,1MiB"  # the same steps, 1024 times smaller


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gpu_count():
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        return len(visible.split(","))
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


class Holder:
    """A process parked in new namespaces (a pod's IPC and/or mount
    namespace with its own /dev/shm tmpfs); ranks join it with nsenter."""

    def __init__(self, ipc, shm_size):
        flags = ["--mount", "--propagation", "private"] + (["--ipc"] if ipc else [])
        script = (f"mount -t tmpfs -o size={shm_size},mode=1777 tmpfs /dev/shm"
                  " && echo ready && exec sleep 86400")
        self.ipc = ipc
        self.proc = subprocess.Popen(["unshare"] + flags + ["--", "sh", "-c", script],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            err = self.proc.stderr.read().strip()
            self.stop()
            raise RuntimeError(f"cannot make a pod namespace: {err or 'no ready line'}")

    def prefix(self):
        return (["nsenter", "-t", str(self.proc.pid), "--mount"]
                + (["--ipc"] if self.ipc else []) + ["--"])

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def plan_ranks(c, gpus, dry, share_gpu=False):
    """[(pod index, local rank, CUDA device for CUDA_VISIBLE_DEVICES)] or a
    reason to skip. With one GPU, a split case runs as two pods on GPU 0
    where NCCL allows it (pods it sees as two hosts), or everywhere with
    share_gpu, to see which pods NCCL takes for one host."""
    if dry:
        n = 2
    elif c["layout"] == "group" or gpus >= 2:
        n = gpus
    elif share_gpu or nccl_cases.distinct_host_hashes(c):
        return [(0, 0, 0), (1, 0, 0)], "2 ranks share GPU 0 (single-GPU proof run)"
    else:
        return None, "needs 2 GPUs: NCCL refuses two ranks of one host on one GPU"
    if c["layout"] == "group":
        return [(0, r, None) for r in range(n)], None
    return [(r, 0, r) for r in range(n)], None


def rank_env(c, rank, world, local, port, cuda_dev, dry):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    env.update({
        "RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(local),
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "PYTHONUNBUFFERED": "1",
        "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,ENV,SHM,NVLS",
    })
    env.update(c["env"])
    env.update(MULTICAST_OFF)  # last: no case may turn multicast on
    if cuda_dev is not None and not dry:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        ids = visible.split(",") if visible else [str(i) for i in range(cuda_dev + 1)]
        env["CUDA_VISIBLE_DEVICES"] = ids[cuda_dev]
    return env


def run_case(c, a, outdir):
    ranks, note = plan_ranks(c, a.gpus, a.dry_run, a.share_gpu)
    res = {"case": c, "note": note}
    if ranks is None:
        res.update(status="skipped", reason=note)
        return res
    if nccl_cases.needs_namespaces(c) and not a.can_unshare:
        res.update(status="skipped", reason="needs root and unshare/nsenter for pod namespaces")
        return res
    scope, size = nccl_cases.shm_parts(c["shm"])
    cdir = os.path.join(outdir, c["name"])
    os.makedirs(cdir, exist_ok=True)
    holders, procs, logs = {}, [], []
    world, port = len(ranks), free_port()
    try:
        try:
            if scope == "shared":
                holders["all"] = Holder(False, size)
            for pod in sorted({p for p, _, _ in ranks}):
                if scope in ("pod", "private"):
                    holders[pod] = Holder(scope == "private", size)
        except (OSError, RuntimeError) as e:  # the finally below stops those made
            res.update(status="failed", reason=str(e))
            return res
        for rank, (pod, local, dev) in enumerate(ranks):
            h = holders.get("all") or holders.get(pod)
            cmd = h.prefix() if h else []
            if c["hostname"] == "pod":
                cmd += ["unshare", "--uts", "--", "sh", "-c",
                        'hostname "$0" && exec "$@"', f"pod-{pod}"]
            cmd += [a.python, WORKER, "--backend", "gloo" if a.dry_run else "nccl",
                    "--sizes", a.sizes, "--warmup", str(a.warmup), "--iters", str(a.iters),
                    "--dtype", "float32" if a.dry_run else "bfloat16",
                    "--device", str(local if dev is None else 0),
                    "--out", os.path.join(cdir, f"rank{rank}.json")]
            log = open(os.path.join(cdir, f"rank{rank}.log"), "w")
            logs.append(log)
            log.write("$ " + " ".join(cmd) + "\n")
            log.flush()
            procs.append(subprocess.Popen(
                cmd, env=rank_env(c, rank, world, local, port, dev, a.dry_run),
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.monotonic() + a.timeout
        codes = []
        for p in procs:
            try:
                codes.append(p.wait(timeout=max(1, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                codes.append(None)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for log in logs:
            log.close()
        for h in holders.values():
            h.stop()
    res["exit_codes"] = codes
    res.update(nccl_report.read_case(cdir, world))
    if None in codes:
        res.update(status="timeout", reason=f"ranks still running after {a.timeout} s")
    elif any(codes):
        res.update(status="failed", reason=nccl_report.failure_reason(res, codes))
    else:
        res.update(status="ok", reason=None)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--dry-run", action="store_true",
                    help="CPU: gloo, 2 ranks, sizes 1024x smaller, float32")
    ap.add_argument("--gpus", type=int, default=None)
    ap.add_argument("--only", default="*", help="comma-separated globs of case names")
    ap.add_argument("--sizes", default=None)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--topogate-shm", type=parse_size, default=parse_size("256GiB"),
                    help="the /dev/shm topogate sets for this host (deploy/policy.yaml "
                         "shm; 256Gi for p5e/p5en.48xlarge)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per case")
    ap.add_argument("--share-gpu", action="store_true",
                    help="one GPU: run every split case as 2 ranks on GPU 0; NCCL refuses "
                         "those it takes for one host ('Duplicate GPU', src/init.cc)")
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    a.sizes = a.sizes or (DRY_SIZES if a.dry_run else FULL_SIZES)
    try:
        parse_sizes(a.sizes)
    except Exception as e:  # argparse.ArgumentTypeError
        ap.error(str(e))
    if a.warmup < 0 or a.iters < 1 or a.timeout < 1:
        ap.error("--warmup >= 0, --iters >= 1, --timeout >= 1")
    if a.gpus is None:
        a.gpus = 0 if a.dry_run else gpu_count()
    if not a.dry_run and a.gpus < 1:
        ap.error("no GPU found (nvidia-smi -L); use --dry-run on a CPU machine")
    a.can_unshare = os.geteuid() == 0 and bool(shutil.which("unshare") and shutil.which("nsenter"))
    globs = [g for g in a.only.split(",") if g]
    cases = [c for c in nccl_cases.all_cases(a.topogate_shm)
             if any(fnmatch.fnmatch(c["name"], g) for g in globs)]
    if not cases:
        ap.error(f"--only {a.only!r} matches no case")
    os.makedirs(a.out, exist_ok=True)

    results, rc = [], 0
    for c in cases:
        t0 = time.monotonic()
        r = run_case(c, a, a.out)
        r["wall_s"] = round(time.monotonic() - t0, 1)
        results.append(r)
        print(f"{c['name']:32} {r['status']:8} {r.get('reason') or ''}", flush=True)
        if r.get("nvls_seen"):
            print("nccl_run: NVLS (NVLink multicast) was used: stopping", file=sys.stderr)
            rc = 4
            break
    params = {"dry_run": a.dry_run, "gpus": a.gpus, "sizes": parse_sizes(a.sizes),
              "warmup": a.warmup, "iters": a.iters, "topogate_shm": a.topogate_shm,
              "multicast_env": MULTICAST_OFF, "can_unshare": a.can_unshare,
              "share_gpu": a.share_gpu}
    doc = nccl_report.build(params, results, a.out)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(nccl_report.markdown(doc))
    return rc


if __name__ == "__main__":
    sys.exit(main())
