#!/usr/bin/env python3
"""Turn one `make bench` run into test/bench/results.md (and the table in docs/performance.md).

    summarize.py OUT RESULTS_MD [README_MD]

OUT holds, from test/bench/run.sh: main/run/ (compare.sh's folder for the
6 KB pod: results.jsonl, raw/, table.md), <fixture>/run/ for the other
fixtures, decide.jsonl (decide_bench) and callgrind.jsonl. The figures are
read with compare.sh's own parsers (bench/report.py of the peers' copy), and
medians are taken the way report.py takes them: over the rounds whose
outside load stayed under the threshold when there are any.
"""
import datetime
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys

MAIN = "p4d-training"
OTHERS = ["nongpu-small", "p4d-1gpu-deny", "large-pod"]
BEGIN = "<!-- bench-table:begin (make bench writes this) -->"
END = "<!-- bench-table:end -->"


def load_report(out):
    path = os.path.join(out, "..", "..", "peers", "bench", "report.py")
    spec = importlib.util.spec_from_file_location("report", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Run:
    """One compare.sh folder: median figures per (endpoint, test)."""

    def __init__(self, report, folder):
        self.folder = folder
        rows = [json.loads(l) for l in open(os.path.join(folder, "results.jsonl")) if l.strip()]
        settings = json.load(open(os.path.join(folder, "settings.json")))
        self.other_max = settings.get("other_max", 1e9)
        self.names, self.runs, self.mem = [], {}, {}
        for r in rows:
            if r["name"] not in self.names:
                self.names.append(r["name"])
            if r["test"] in ("mem_start", "mem_end"):
                self.mem.setdefault(r["name"], {})[r["test"]] = r["mem"]
                continue
            if r.get("skipped"):
                continue
            with open(os.path.join(folder, r["raw"])) as f:
                p = report.PARSERS[r["test"]](f.read()) or {"failed": True}
            p["cpu"] = r.get("cpu") or {}
            n = p.get("requests")
            if r["test"] == "lat" and not p.get("failed"):
                n = p.get("measured_ok", 0) / max(p.get("duration_s", 1), 1e-9) * \
                    (p.get("duration_s", 0) + p.get("warmup_s", 0))
            c = p["cpu"]
            if n and c.get("server_cpu_pct") is not None and c.get("elapsed_s"):
                p["cpu_us"] = c["server_cpu_pct"] / 100.0 * c["elapsed_s"] * 1e6 / n
            self.runs.setdefault((r["name"], r["test"]), []).append(p)

    def usable(self, name, test):
        v = [p for p in self.runs.get((name, test), []) if not p.get("failed")]
        clean = [p for p in v if p["cpu"].get("other_cpu_pct", 0) <= self.other_max]
        return clean or v

    def med(self, name, test, key):
        vals = [p[key] for p in self.usable(name, test) if p.get(key) is not None]
        return statistics.median(vals) if vals else None

    def client_bound(self, name, test):
        v = self.usable(name, test)
        busy = [p for p in v if p["cpu"].get("client_cpu_pct", 0) >= 90]
        return bool(v) and len(busy) * 2 > len(v)

    def other(self, name):
        """The most CPU used outside the bench during this endpoint's tests."""
        used = [p["cpu"].get("other_cpu_pct", 0) for t in ("ka", "nc", "lat")
                for p in self.usable(name, t)]
        return "%.0f%% of a CPU" % max(used or [0])

    def rss_mib(self, name):
        kb = (self.mem.get(name, {}).get("mem_end") or {}).get("vmhwm_kb")
        return kb / 1024.0 if kb else None


def fmt_rate(v):
    return "n/a" if v is None else "{:,.0f}/s".format(v)


def fmt_us(v):
    return "n/a" if v is None else ("%.1f µs" % v if v < 10 else "{:,.0f} µs".format(v))


def fmt_ms(us):
    return "n/a" if us is None else "%.2f ms" % (us / 1000.0)


def ratio(a, b):
    return "n/a" if a is None or not b else "%.2f×" % (a / b)


def targets(run, dec):
    """Rows: figure, target, topogate, reference, ratio, met?"""
    t, go, ng = "topogate", "go", "nginx"
    m = run.med
    rows = []

    def row(fig, target, ours, ref, r, ok):
        rows.append((fig, target, ours, ref, r, "n/a" if ok is None else ("yes" if ok else "**no**")))

    a, b = m(t, "ka", "rps"), m(go, "ka", "rps")
    row("keep-alive reviews/s", "≥ 4× Go peer", fmt_rate(a), "Go " + fmt_rate(b), ratio(a, b),
        None if a is None or b is None else a >= 4 * b)
    a, b = m(t, "ka", "cpu_us"), m(ng, "ka", "cpu_us")
    row("server CPU/review, keep-alive", "≤ 3× nginx floor", fmt_us(a), "nginx " + fmt_us(b),
        ratio(a, b), None if a is None or b is None else a <= 3 * b)
    a, b = m(t, "nc", "rps"), m(go, "nc", "rps")
    row("new-connection reviews/s", "≥ Go peer", fmt_rate(a), "Go " + fmt_rate(b), ratio(a, b),
        None if a is None or b is None else a >= b)
    a, b = m(t, "nc", "cpu_us"), m(go, "nc", "cpu_us")
    row("server CPU/review, new connection", "(no target: the figure behind the one above)",
        fmt_us(a), "Go " + fmt_us(b), ratio(a, b), None)
    a, b = m(t, "lat", "p99_us"), m(ng, "lat", "p99_us")
    row("p99 at 1,000/s", "≤ nginx floor's p99", fmt_ms(a), "nginx " + fmt_ms(b), ratio(a, b),
        None if a is None or b is None else a <= b)
    a, b = run.rss_mib(t), run.rss_mib(go)
    row("peak RSS", "≤ ⅓ Go peer", "n/a" if a is None else "%.1f MiB" % a,
        "Go " + ("n/a" if b is None else "%.1f MiB" % b), ratio(a, b),
        None if a is None or b is None else a * 3 <= b)
    for fx, limit in ((MAIN, 20.0), ("large-pod", 200.0)):
        d = dec.get(fx)
        us = d["decide_ns"] / 1000.0 if d else None
        ir = d.get("decide_ir") if d else None
        row("decide(), %s (%s)" % (fx, kib(d)), "≤ %.0f µs" % limit, fmt_us(us),
            "%s instructions" % ("{:,.0f}".format(ir) if ir else "n/a"), "",
            None if us is None else us <= limit)
    return rows


def kib(d):
    return "n/a" if not d else "%.1f KB" % (d["bytes"] / 1000.0)


def md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def main_table(run):
    """compare.sh's main table (report.py's first table and its legend)."""
    text = open(os.path.join(run.folder, "table.md")).read()
    lines = text.splitlines()
    i = lines.index("") if "" in lines else len(lines)
    j = lines.index("", i + 1) if "" in lines[i + 1:] else len(lines)
    return lines[:i], lines[i + 1:j]


def fixtures_table(runs):
    rows = []
    for fx, run in runs:
        for n in run.names:
            ka, nc = run.med(n, "ka", "rps"), run.med(n, "nc", "rps")
            t_ka, t_nc = run.med("topogate", "ka", "rps"), run.med("topogate", "nc", "rps")
            rows.append((fx, n,
                         fmt_rate(ka) + (" ‡" if run.client_bound(n, "ka") else "") +
                         ("" if n == "topogate" else " (%s)" % ratio(ka, t_ka)),
                         fmt_us(run.med(n, "ka", "cpu_us")),
                         fmt_rate(nc) + (" ‡" if run.client_bound(n, "nc") else "") +
                         ("" if n == "topogate" else " (%s)" % ratio(nc, t_nc)),
                         fmt_us(run.med(n, "nc", "cpu_us")), run.other(n)))
    return md_table(["fixture", "endpoint", "keep-alive", "server CPU/review ka",
                     "new-conn", "server CPU/review nc", "other CPU load (max)"], rows)


def decide_rows(out):
    dec = {}
    for line in open(os.path.join(out, "decide.jsonl")):
        if line.strip():
            d = json.loads(line)
            dec[os.path.basename(d["fixture"])[:-5]] = d
    cg = os.path.join(out, "callgrind.jsonl")
    if os.path.exists(cg):
        for line in open(cg):
            if line.strip():
                c = json.loads(line)
                fx = os.path.basename(c["fixture"])[:-5]
                key = "decide_ir" if c["function"] == "decide" else "review_ir"
                if fx in dec and c["ir"]:
                    dec[fx][key] = c["ir"] / c["calls"]
    return dec


def decide_table(dec):
    rows = []
    for fx in [MAIN] + OTHERS:
        d = dec.get(fx)
        if not d:
            continue
        ir = lambda k: "{:,.0f}".format(d[k]) if d.get(k) else "n/a"  # noqa: E731
        rows.append((fx, kib(d), fmt_us(d["parse_ns"] / 1000), fmt_us(d["decide_ns"] / 1000),
                     fmt_us(d["review_ns"] / 1000), ir("decide_ir"), ir("review_ir")))
    return md_table(["fixture", "size", "cJSON parse + delete (malloc)", "decide()",
                     "review_respond() (arena)",
                     "decide() instructions", "review_respond() instructions"], rows)


def memory_note(folder):
    """topogate's resident memory at the end of the main pass, by kind."""
    path = os.path.join(folder, "topogate-mem.txt")
    if not os.path.exists(path):
        return None
    kb = {}
    for line in open(path):
        k, v = line.split(":", 1)
        kb[k.strip()] = int(v.split()[0])
    if not all(k in kb for k in ("VmHWM", "RssAnon", "RssFile", "Pss")):
        return None
    mib = lambda k: "%.1f MiB" % (kb[k] / 1024.0)  # noqa: E731
    return ("topogate's memory at the end of the run: peak RSS %s; now %s anonymous "
            "(heap, stacks, arenas) and %s of shared-library pages (GnuTLS and the "
            "eight libraries under it, libc, ...) that every process using those "
            "libraries maps too; PSS %s."
            % (mib("VmHWM"), mib("RssAnon"), mib("RssFile"), mib("Pss")))


def git_rev(repo):
    try:
        rev = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine(folder):
    meta = open(os.path.join(folder, "meta.txt")).read()
    host = re.search(r"^host: (.*)$", meta, re.M)
    cpu = re.search(r"^cpu: (.*)$", meta, re.M)
    return "%s; %s" % (host.group(1) if host else "?", cpu.group(1) if cpu else "?")


NOTES = [
    "`p4d-1gpu-deny.json` is a notebook StatefulSet pod, not a training pod: topogate allows "
    "it untouched (it governs training jobs only), while the Go peer denies any pod of fewer "
    "than 8 GPUs on p4d. The two do different work on that fixture; it is listed for the "
    "cost of the transport and of reading the pod.",
    "nginx answers a canned review without reading JSON: it is the TLS + HTTP floor of this "
    "machine, not a webhook.",
    "‡ = the load generator's core was saturated: that req/s is a lower bound set by the "
    "client; compare server CPU per review instead, which does not depend on the client.",
    "The machine is shared with other engineers compiling and testing: tests are retried "
    "when outside load is high and the 'other CPU load' column says how much was left. "
    "Differences under about 10 % are noise.",
]


def main():
    out, results_md = sys.argv[1], sys.argv[2]
    readme = sys.argv[3] if len(sys.argv) > 3 else None
    report = load_report(out)
    main_run = Run(report, os.path.join(out, "main", "run"))
    others = [(fx, Run(report, os.path.join(out, fx, "run")))
              for fx in OTHERS if os.path.isdir(os.path.join(out, fx, "run"))]
    dec = decide_rows(out)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(results_md))))
    meta = open(os.path.join(main_run.folder, "meta.txt")).read()
    when = re.search(r"^date: (\S+)", meta, re.M)
    stamp = when.group(1) if when else datetime.datetime.now().astimezone().isoformat()
    head = "Run of %s at commit %s; %s. Server on CPU 0, load tools on CPU 1; ECDSA P-256 " \
           "certificates for all three servers." % (stamp, git_rev(repo), machine(main_run.folder))

    table, _ = main_table(main_run)
    mem = memory_note(os.path.join(out, "main"))
    tgt = md_table(["figure", "target", "topogate", "reference", "ratio", "met"],
                   targets(main_run, dec))
    dtab = decide_table(dec)

    short = [head, "", "6 KB PyTorchJob worker pod (`p4d-training.json`), medians over "
             "rounds, ratios to topogate:", ""] + table + ["", "Targets:", ""] + tgt + \
        ([""] + [mem] if mem else []) + \
        ["", "The decision alone, in process (median CPU time per call; instructions per "
         "call under callgrind):", ""] + dtab + ["", "Note: " + NOTES[0]]
    full = ["# `make bench` results", "", "Written by `make bench` (test/bench/run.sh); "
            "see docs/performance.md for the method.", ""] + short + \
        ["", "## Notes", ""] + ["- " + n for n in NOTES] + \
        ["", "## The other fixtures (one round each, the 6 KB pod from the main pass: read the outside load before a figure)", ""] + \
        fixtures_table([(MAIN, main_run)] + others) + \
        ["", "## compare.sh's full report for the 6 KB pod", ""] + \
        open(os.path.join(main_run.folder, "table.md")).read().rstrip().splitlines() + [""]
    with open(results_md, "w") as f:
        f.write("\n".join(full))
    print("\n".join(short))

    if readme:
        text = open(readme).read()
        if BEGIN in text and END in text:
            a, rest = text.split(BEGIN, 1)
            _, b = rest.split(END, 1)
            text = a + BEGIN + "\n" + "\n".join(short) + "\n" + END + b
            with open(readme, "w") as f:
                f.write(text)
        else:
            print("summarize: no bench-table markers in %s; left alone" % readme, file=sys.stderr)


if __name__ == "__main__":
    main()
