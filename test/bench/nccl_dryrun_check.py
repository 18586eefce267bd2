#!/usr/bin/env python3
"""Check the NCCL layout bench without a GPU: run it dry and read what it wrote.

    /usr/bin/python3 test/bench/nccl_dryrun_check.py     # as root, about 15 s

Runs test/bench/nccl_run.py --dry-run (gloo on CPU, 2 ranks) over one case
of each pod model and asserts the results file's shape (sizes, warm-ups,
20 timed iterations, both operations, correct collectives, bus bandwidth
factors), that each rank ran in the namespaces its case stands for
(hostnames, /dev/shm device and size, IPC namespace), that multicast was
off in every rank, and that the markdown has a row per case. Then it
feeds the NCCL log parser two logs of a real run (NCCL 2.28.9, one H200,
test/bench/nccl_sample_*.log) and checks the bad-input errors.
Not part of `make test`: the pod models need root (unshare).
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import nccl_report  # noqa: E402
from nccl_layouts import MULTICAST_OFF, bus_factor  # noqa: E402

MIB = 1 << 20
CASES = ["p2p-level-unset", "shm-64mi-cumem", "ipc-split-private",
         "ipc-split-hostipc-emptydir", "ipc-group-private"]
SIZES = [16 << 10, 256 << 10, 1 << 20]
TOPOGATE_SHM = 8 << 30
failures = []


def check(cond, what):
    print(("ok   - " if cond else "FAIL - ") + what)
    if not cond:
        failures.append(what)


def run(*args):
    return subprocess.run([sys.executable, os.path.join(HERE, "nccl_run.py"), *args],
                          capture_output=True, text=True, timeout=300)


def check_case(c):
    n = c["name"]
    check(c["status"] == "ok", f"{n}: status ok ({c.get('reason')})")
    check(c["world"] == 2 and len(c["where"]) == 2, f"{n}: 2 ranks")
    res = c["results"]
    check([(x["op"], x["bytes"]) for x in res]
          == [(o, s) for o in ("all_reduce", "all_gather") for s in SIZES],
          f"{n}: both ops at 16 KiB, 256 KiB, 1 MiB")
    check(all(x["iters"] == 20 and len(x["times_s"]) == 20 and x["warmup"] == 5 for x in res),
          f"{n}: 5 warm-ups, 20 timed iterations each")
    check(all(x["check_ok"] for x in res), f"{n}: collectives gave the right values")
    # n = 2: all-reduce busbw = algbw * 2(n-1)/n = algbw; all-gather = algbw / 2.
    check(all(abs(x["busbw_GBps"] - x["algbw_GBps"] * (1.0 if x["op"] == "all_reduce" else 0.5))
              < 1e-9 * max(1.0, x["algbw_GBps"]) for x in res), f"{n}: bus bandwidth factors")
    check(all(w["multicast_env"] == MULTICAST_OFF for w in c["where"]), f"{n}: multicast off")
    w0, w1 = c["where"]
    host = os.stat("/dev/shm").st_dev
    names = {w0["hostname"], w1["hostname"]}
    if c["shm"] == "host":
        check(w0["shm_dev"] == w1["shm_dev"] == host, f"{n}: the host's /dev/shm")
    elif c["shm"].startswith("shared:"):
        check(w0["shm_dev"] == w1["shm_dev"] != host and w0["shm_total_bytes"] == 64 * MIB,
              f"{n}: one private 64 MiB /dev/shm for both ranks")
    else:
        size = int(c["shm"].split(":")[1])
        same = w0["shm_dev"] == w1["shm_dev"]
        check(same == (c["layout"] == "group") and host not in (w0["shm_dev"], w1["shm_dev"])
              and w0["shm_total_bytes"] == size,
              f"{n}: /dev/shm of {size >> 20} MiB per pod")
    same_ipc = w0["namespaces"]["ipc"] == w1["namespaces"]["ipc"]
    want_same_ipc = c["layout"] == "group" or not c["shm"].startswith("private:")
    check(same_ipc == want_same_ipc, f"{n}: IPC namespace {'shared' if want_same_ipc else 'per pod'}")
    if c["hostname"] == "pod":
        want = {"pod-0"} if c["layout"] == "group" else {"pod-0", "pod-1"}
        check(names == want, f"{n}: hostnames {sorted(want)}")
    else:
        check(len(names) == 1, f"{n}: one hostname")


def check_factors():
    # nccl-tests doc/PERFORMANCE.md: 2(n-1)/n and (n-1)/n; 2 ranks cannot tell them apart.
    check([bus_factor("all_reduce", n) for n in (4, 8)] == [1.5, 1.75]
          and [bus_factor("all_gather", n) for n in (4, 8)] == [0.75, 0.875],
          "bus bandwidth factors for 4 and 8 ranks")


def check_parser():
    sock = nccl_report.parse_log(open(os.path.join(HERE, "nccl_sample_socket.log")).read())
    check(sock["transports"] == ["NET/Socket/0"], "real log: NET/Socket/0 read")
    check(sock["nccl_version"] == "2.28.9+cuda13.0", "real log: NCCL version read")
    check(sock["nvls_channels"] == [0], "real log: 0 nvls channels read")
    dup = nccl_report.parse_log(open(os.path.join(HERE, "nccl_sample_duplicate.log")).read())
    check(dup["warnings"][:1] == ["Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60"],
          "real log: the Duplicate GPU warning read")
    on = nccl_report.parse_log("h:1:1 [0] NCCL INFO 16 coll channels, 16 collnet channels, "
                               "16 nvls channels, 32 p2p channels, 32 p2p channels per peer\n")
    check(on["nvls_channels"] == [16], "NVLS channels > 0 are seen")


def check_bad_input(tmp):
    r = run("--dry-run", "--out", tmp, "--sizes", "0MiB")
    check(r.returncode == 2 and "bad size" in r.stderr, "--sizes 0MiB: exit 2, 'bad size'")
    r = run("--dry-run", "--out", tmp, "--only", "no-such-case")
    check(r.returncode == 2 and "matches no case" in r.stderr, "--only no-such-case: exit 2")
    r = subprocess.run([sys.executable, os.path.join(HERE, "nccl_layouts.py"), "--out", "x"],
                       capture_output=True, text=True, env={"PATH": os.environ["PATH"]})
    check(r.returncode == 2 and "RANK is not set" in r.stderr, "worker without RANK: exit 2")
    env = {**os.environ, "RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
           "MASTER_PORT": "1", "NCCL_NVLS_ENABLE": "1"}
    r = subprocess.run([sys.executable, os.path.join(HERE, "nccl_layouts.py"), "--out", "x"],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 2 and "multicast must stay off" in r.stderr,
          "worker with NCCL_NVLS_ENABLE=1: refuses, exit 2")


def main():
    if os.geteuid() != 0:
        print("nccl_dryrun_check: needs root (the pod models use unshare)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        r = run("--dry-run", "--out", out, "--only", ",".join(CASES),
                "--topogate-shm", f"{TOPOGATE_SHM}")
        check(r.returncode == 0, f"nccl_run.py --dry-run exits 0 ({r.stderr.strip()[-300:]})")
        doc = json.load(open(os.path.join(out, "results.json")))
        check(doc["schema"] == nccl_report.SCHEMA, "results.json schema")
        p = doc["params"]
        check(p["dry_run"] and p["sizes"] == SIZES and p["iters"] == 20 and p["warmup"] == 5,
              "params: dry run, sizes, 20 iterations, 5 warm-ups")
        check([c["name"] for c in doc["cases"]] == CASES, "one entry per case, in order")
        for c in doc["cases"]:
            check_case(c)
        md = open(os.path.join(out, "results.md")).read()
        check(all(f"| {n} |" in md for n in CASES) and "| AR 16 KiB |" in md,
              "results.md: a row per case, a column per size")
        check(all(os.path.exists(os.path.join(out, n, "rank1.log")) for n in CASES),
              "a log per rank per case")
        check_factors()
        check_parser()
        check_bad_input(os.path.join(tmp, "bad"))
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
