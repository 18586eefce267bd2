"""Read the ranks' logs and JSON of test/bench/nccl_run.py; write the
results file and its markdown table.

What is read from NCCL_DEBUG=INFO (NVIDIA/nccl 2.28 message texts):
- "Channel NN/N : a[x] -> b[y] via T" (src/transport/*.cc): the transport
  T of each connection, e.g. P2P/CUMEM/read, SHM/direct/direct,
  NET/Socket/0;
- "N coll channels, ... K nvls channels" (src/init.cc) and "NVLS Creating
  Multicast group" (src/transport/nvls.cc): K must stay 0;
- "CUMEM allocated shareable buffer" / "MMAP allocated shareable host
  buffer" (src/transport/shm.cc): where SHM buffers live (cuMem host
  memory, or files in /dev/shm);
- "NCCL version V" and "NCCL WARN" lines.
"""

import json
import os
import re

SCHEMA = "topogate-nccl-layouts/1"

RE_VIA = re.compile(r"NCCL INFO Channel .* via (\S+)")
RE_NVLS_CH = re.compile(r"(\d+) nvls channels")
RE_VERSION = re.compile(r"NCCL version (\S+)")


def parse_log(text):
    via, nvls = set(), []
    out = {"nccl_version": None, "shm_alloc": {"cumem": 0, "dev_shm_files": 0},
           "nvls_created": False, "warnings": []}
    for line in text.splitlines():
        m = RE_VIA.search(line)
        if m:
            via.add(m.group(1))
        m = RE_NVLS_CH.search(line)
        if m:
            nvls.append(int(m.group(1)))
        m = RE_VERSION.search(line)
        if m and out["nccl_version"] is None:
            out["nccl_version"] = m.group(1)
        if "CUMEM allocated shareable buffer" in line:
            out["shm_alloc"]["cumem"] += 1
        if "MMAP allocated shareable host buffer" in line:
            out["shm_alloc"]["dev_shm_files"] += 1
        if "NVLS Creat" in line:
            out["nvls_created"] = True
        if "NCCL WARN" in line and len(out["warnings"]) < 5:
            out["warnings"].append(line.split("NCCL WARN", 1)[1].strip())
    out["transports"] = sorted(via)
    out["nvls_channels"] = nvls
    return out


def read_case(cdir, world):
    """Merge the ranks' files of one case: per-iteration time is the
    slowest rank's (a collective ends when its last rank does)."""
    ranks, logs, tails = [], [], []
    for r in range(world):
        path = os.path.join(cdir, f"rank{r}.json")
        ranks.append(json.load(open(path)) if os.path.exists(path) else None)
        lpath = os.path.join(cdir, f"rank{r}.log")
        text = open(lpath, errors="replace").read() if os.path.exists(lpath) else ""
        logs.append(parse_log(text))
        tails.append(next((ln for ln in reversed(text.splitlines()) if ln.strip()), ""))
    transports = sorted({t for lg in logs for t in lg["transports"]})
    nvls = [n for lg in logs for n in lg["nvls_channels"]]
    out = {
        "world": world,
        "where": [r["where"] if r else None for r in ranks],
        "transports": transports,
        "nccl_version": next((lg["nccl_version"] for lg in logs if lg["nccl_version"]), None),
        "shm_alloc": {k: sum(lg["shm_alloc"][k] for lg in logs) for k in ("cumem", "dev_shm_files")},
        "shm_used_bytes_end": max((r["shm_used_bytes_end"] for r in ranks if r), default=None),
        "nvls_channels": nvls,
        "nvls_seen": any(nvls) or any(lg["nvls_created"] for lg in logs),
        "warnings": [w for lg in logs for w in lg["warnings"]][:5],
        "log_tails": tails,
        "results": [],
    }
    done = [r for r in ranks if r]
    if len(done) != world:
        return out
    out["torch"] = done[0]["torch"]
    out["device"] = done[0]["device"]
    out["checks_ok"] = all(r["checks_ok"] for r in done)
    for i, first in enumerate(done[0]["results"]):
        per_iter = [max(r["results"][i]["times_s"][k] for r in done)
                    for k in range(len(first["times_s"]))]
        mean = sum(per_iter) / len(per_iter)
        factor = (first["busbw_GBps"] / first["algbw_GBps"]) if first["algbw_GBps"] else 0.0
        algbw = first["bytes"] / mean / 1e9
        best = first["bytes"] / min(per_iter) / 1e9
        out["results"].append({
            "op": first["op"], "bytes": first["bytes"], "warmup": done[0]["warmup"],
            "iters": len(per_iter), "times_s": per_iter, "mean_s": mean,
            "algbw_GBps": algbw, "busbw_GBps": algbw * factor, "busbw_best_GBps": best * factor,
            "check_ok": all(r["results"][i]["check_ok"] for r in done),
        })
    return out


def failure_reason(res, codes):
    if res.get("warnings"):
        return "NCCL WARN: " + res["warnings"][0]
    bad = next(i for i, c in enumerate(codes) if c)
    if codes[bad] == 3:
        return f"rank {bad}: wrong collective result"
    return f"rank {bad} exited {codes[bad]}: {res['log_tails'][bad][:200]}"


def build(params, results, outdir):
    host = None
    hpath = os.path.join(outdir, "host.json")
    if os.path.exists(hpath):
        host = json.load(open(hpath))
    cases = []
    for r in results:
        c = dict(r["case"])
        c.update({k: v for k, v in r.items() if k != "case"})
        cases.append(c)
    return {"schema": SCHEMA, "host": host, "params": params, "cases": cases}


def size_label(n):
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= m and n % m == 0:
            return f"{n // m} {unit}"
    return f"{n} B"


def pods_seen(c):
    """What the ranks saw: how many hostnames and /dev/shm mounts, and
    their sizes; the emulation of pods, checked."""
    where = [w for w in c.get("where") or [] if w]
    if not where:
        return "-"
    names = {w["hostname"] for w in where}
    devs = {w["shm_dev"] for w in where}
    sizes = sorted({w["shm_total_bytes"] for w in where})
    return (f"{len(names)} hostname{'s' * (len(names) > 1)}, {len(devs)} /dev/shm of "
            + "/".join(size_label(x) if x % (1 << 20) == 0 else f"{x >> 20} MiB" for x in sizes))


def markdown(doc):
    p = doc["params"]
    lines = ["# NCCL layouts on one host", ""]
    h = doc.get("host") or {}
    if h:
        lines.append("Host: " + "; ".join(f"{k} {v}" for k, v in h.items() if isinstance(v, str)) + ".")
    if p["dry_run"]:
        lines.append("DRY RUN: CPU, gloo, float32, 2 ranks: these figures are not NCCL's.")
    lines.append(f"Each figure: bus bandwidth in GB/s from the mean of {p['iters']} timed "
                 f"iterations after {p['warmup']} warm-ups, the slowest rank's time per "
                 "iteration (nccl-tests' busbw). NVLink multicast off in every rank.")
    lines.append("")
    sizes = [size_label(s) for s in p["sizes"]]
    ops = ("all_reduce", "all_gather")
    head = (["case", "stands for", "ranks", "pods seen", "transport seen", "expected"]
            + [f"{'AR' if o == 'all_reduce' else 'AG'} {s}" for o in ops for s in sizes]
            + ["status"])
    by_exp = {}
    for c in doc["cases"]:
        by_exp.setdefault(c["experiment"], []).append(c)
    for exp, cs in by_exp.items():
        lines += [f"## {exp}", "", "| " + " | ".join(head) + " |",
                  "|" + "---|" * len(head)]
        for c in cs:
            row = [c["name"], c["stands_for"], str(c.get("world", "")), pods_seen(c),
                   ", ".join(c.get("transports") or []) or "-", c["expect"]]
            for o in ops:
                for i, s in enumerate(sizes):
                    res = [x for x in c.get("results", []) if x["op"] == o]
                    x = res[i] if i < len(res) else None
                    row.append("-" if x is None or c.get("world", 0) < 2 else f"{x['busbw_GBps']:.1f}")
            st = c["status"] + (f": {c['reason']}" if c.get("reason") else "")
            if c.get("shm_alloc", {}).get("dev_shm_files"):
                st += "; SHM in /dev/shm files"
            row.append(st.replace("|", "/"))
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)
