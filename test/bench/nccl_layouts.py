#!/usr/bin/env python3
"""One rank of a collective benchmark: all-reduce and all-gather, timed.

Not run by hand: test/bench/nccl_run.py starts one of these per rank (one
per GPU), inside the namespaces that stand in for pods, with RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT set. To run one alone:

    RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    python3 test/bench/nccl_layouts.py --backend nccl --out /tmp/rank0.json

It writes one JSON object to --out: where the rank ran (hostname, the
device and size of its /dev/shm, its namespaces), and for each operation
and size the time of every timed iteration. Bus bandwidth follows
nccl-tests (NVIDIA/nccl-tests doc/PERFORMANCE.md): all-reduce moves
2(n-1)/n of the buffer per rank, all-gather (n-1)/n of the gathered
buffer, where the size is the gathered (output) buffer.
Exit status: 0 done, 2 bad arguments or environment, 3 wrong result.
"""

import argparse
import json
import os
import socket
import sys
import time

# NVLink multicast (NVLS) can take a shared host's GPUs out of service
# (/work/.library/device/KINDS.md); a rank refuses to start without these.
MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}

OPS = ("all_reduce", "all_gather")


def parse_size(text):
    """'16MiB' -> 16777216. Units: B, KiB, MiB, GiB (binary) or none."""
    units = {"GIB": 1 << 30, "MIB": 1 << 20, "KIB": 1 << 10, "B": 1}
    t = text.strip().upper()
    for unit, mult in units.items():
        if t.endswith(unit):
            num = t[: -len(unit)]
            break
    else:
        num, mult = t, 1
    if not num.isdigit() or int(num) == 0:
        raise argparse.ArgumentTypeError(f"bad size {text!r}: want e.g. 16MiB, 1GiB, 4096")
    return int(num) * mult


def parse_sizes(text):
    return [parse_size(s) for s in text.split(",") if s.strip()]


def parse_ops(text):
    ops = [o.strip() for o in text.split(",") if o.strip()]
    for o in ops:
        if o not in OPS:
            raise argparse.ArgumentTypeError(f"unknown op {o!r}: want {','.join(OPS)}")
    return ops


def where_am_i():
    """What NCCL looks at to decide SHM and P2P (src/init.cc: hostHash from
    hostname + boot_id, shmDev = st_dev of /dev/shm), and the namespaces."""
    st = os.stat("/dev/shm")
    vfs = os.statvfs("/dev/shm")
    ns = {}
    for kind in ("ipc", "mnt", "uts", "net"):
        try:
            ns[kind] = os.readlink(f"/proc/self/ns/{kind}")
        except OSError:
            ns[kind] = None
    return {
        "hostname": socket.gethostname(),
        "shm_dev": st.st_dev,
        "shm_total_bytes": vfs.f_blocks * vfs.f_frsize,
        "namespaces": ns,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "multicast_env": {k: os.environ.get(k) for k in MULTICAST_OFF},
    }


def shm_used_bytes():
    vfs = os.statvfs("/dev/shm")
    return (vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize


def bus_factor(op, n):
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    return (n - 1) / n


class Timer:
    """Per-iteration times: CUDA events on the stream (no sync between
    iterations), or the wall clock for the CPU backend."""

    def __init__(self, torch, on_gpu):
        self.torch = torch
        self.on_gpu = on_gpu

    def run(self, fn, iters):
        torch = self.torch
        if self.on_gpu:
            evs = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
            evs[0].record()
            for i in range(iters):
                fn()
                evs[i + 1].record()
            torch.cuda.synchronize()
            return [evs[i].elapsed_time(evs[i + 1]) / 1e3 for i in range(iters)]
        out = []
        for _ in range(iters):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out


def make_op(dist, torch, op, nbytes, elem, world, dtype, device, backend):
    """The collective as a closure over preallocated buffers, and a check
    of its result on inputs of rank + 1."""
    count = nbytes // elem
    if op == "all_reduce":
        buf = torch.zeros(count, dtype=dtype, device=device)

        def fn():
            dist.all_reduce(buf)

        def check(rank):
            buf.fill_(rank + 1)
            dist.all_reduce(buf)
            want = world * (world + 1) / 2
            return bool((buf == want).all().item())

        return fn, check, count * elem
    per_rank = count // world
    if per_rank == 0:
        raise SystemExit(f"size {nbytes} too small for all_gather over {world} ranks")
    inp = torch.zeros(per_rank, dtype=dtype, device=device)
    if backend == "gloo":  # gloo has no all_gather_into_tensor
        outs = [torch.empty(per_rank, dtype=dtype, device=device) for _ in range(world)]

        def fn():
            dist.all_gather(outs, inp)

        def gathered():
            return torch.cat(outs)
    else:
        out = torch.empty(per_rank * world, dtype=dtype, device=device)

        def fn():
            dist.all_gather_into_tensor(out, inp)

        def gathered():
            return out

    def check(rank):
        inp.fill_(rank + 1)
        fn()
        g = gathered().view(world, per_rank)
        want = torch.arange(1, world + 1, dtype=dtype, device=device).view(world, 1)
        return bool((g == want).all().item())

    return fn, check, per_rank * world * elem


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("nccl", "gloo"), default="nccl")
    ap.add_argument("--sizes", type=parse_sizes, default=parse_sizes("16MiB,256MiB,1GiB"))
    ap.add_argument("--ops", type=parse_ops, default=list(OPS))
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--dtype", choices=("bfloat16", "float32"), default="bfloat16")
    ap.add_argument("--device", type=int, default=None,
                    help="CUDA device index (default: LOCAL_RANK, else 0)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.warmup < 0 or a.iters < 1:
        ap.error("--warmup must be >= 0 and --iters >= 1")
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        if k not in os.environ:
            ap.error(f"{k} is not set: this script is one rank, started by nccl_run.py")
    wrong = {k: os.environ.get(k) for k, v in MULTICAST_OFF.items() if os.environ.get(k) != v}
    if a.backend == "nccl" and wrong:
        print(f"nccl_layouts: refusing to run: NVLink multicast must stay off; "
              f"want {MULTICAST_OFF}, have {wrong}", file=sys.stderr)
        return 2

    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    on_gpu = a.backend == "nccl"
    dtype = getattr(torch, a.dtype)
    elem = torch.tensor([], dtype=dtype).element_size()
    if on_gpu:
        idx = a.device if a.device is not None else int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(idx)
        device = torch.device("cuda", idx)
        if _has_device_id(dist):
            dist.init_process_group("nccl", device_id=device)
        else:
            dist.init_process_group("nccl")
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")

    rec = {
        "rank": rank, "world": world, "backend": a.backend, "dtype": a.dtype,
        "warmup": a.warmup, "iters": a.iters, "torch": torch.__version__,
        "nccl": ".".join(map(str, torch.cuda.nccl.version())) if on_gpu else None,
        "device": torch.cuda.get_device_name(device) if on_gpu else "cpu",
        "where": where_am_i(), "results": [], "checks_ok": True,
    }
    timer = Timer(torch, on_gpu)
    for op in a.ops:
        for nbytes in a.sizes:
            fn, check, moved = make_op(dist, torch, op, nbytes, elem, world, dtype, device, a.backend)
            for _ in range(a.warmup):
                fn()
            if on_gpu:
                torch.cuda.synchronize()
            dist.barrier()
            times = timer.run(fn, a.iters)
            ok = check(rank)
            rec["checks_ok"] &= ok
            mean = sum(times) / len(times)
            algbw = moved / mean / 1e9
            rec["results"].append({
                "op": op, "bytes": moved, "requested_bytes": nbytes,
                "times_s": times, "mean_s": mean, "algbw_GBps": algbw,
                "busbw_GBps": algbw * bus_factor(op, world) if world > 1 else 0.0,
                "check_ok": ok,
            })
            del fn, check
    rec["shm_used_bytes_end"] = shm_used_bytes()
    dist.barrier()
    dist.destroy_process_group()
    with open(a.out, "w") as f:
        json.dump(rec, f, indent=1)
        f.write("\n")
    return 0 if rec["checks_ok"] else 3


def _has_device_id(dist):
    """torch >= 2.3 binds the communicator to the device at init."""
    import inspect
    return "device_id" in inspect.signature(dist.init_process_group).parameters


if __name__ == "__main__":
    sys.exit(main())
