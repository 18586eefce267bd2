"""Running a launcher's real mpirun line on this machine (Open MPI 4.1).

local_run() keeps the job's mpirun line: every -x and --mca flag, -np,
-N/--npernode, --map-by, the hostfile's hosts and slots, and the env the
launcher container has (its own, topogate's patch, the operator's). What
changes, and why:

  - The program (all_reduce_perf, python train.py, torchrun ...) becomes
    mpi_rank.sh, which prints the rank, the world size and the rank's env.
  - Each host of the hostfile becomes an address 127.0.1.N (a name that
    resolves at once: a host name would wait 5 s on DNS here), reached
    through rsh_agent.sh instead of ssh, which gives the orted a login's
    environment as sshd does. The launcher's own entry (runLauncherAsWorker,
    runLauncherAsNode) stays "localhost": its ranks inherit its env.
  - --mca plm_rsh_agent / --launch-agent / --prefix name the image's ssh
    and Open MPI: replaced by rsh_agent.sh, or dropped.
  - --oversubscribe and --allow-run-as-root are added: a 16-rank job runs
    on 2 CPUs, as root.
  - --bind-to becomes none, and CPU lists, rank files, PE= modifiers go:
    they bind to the cores of a node this machine does not have.
  - oob_tcp_if_include/exclude go: they name the pods' interfaces, and
    ORTE's own traffic here is on this machine's.
  - Output, working-directory and debugger flags (--output-filename,
    -wdir, -xterm, ...) go: they name paths of the image.
  - A word the harness could not expand (`-np $(cat ...)`) is replaced by
    what the hostfile gives, or the flag is dropped; each such change is
    listed in the result's notes.
"""

import os
import re
import ranks
from shellcmd import Unresolved

# Open MPI 4.1 mpirun options that take values (`mpirun --help all`).
ARGS2 = {"mca", "gmca"}
ARGS1 = {
    "am", "app", "bind-to", "c", "np", "n", "cartofile", "cf", "cpu-list",
    "cpu-set", "cpus-per-proc", "cpus-per-rank", "debugger",
    "default-hostfile", "H", "host", "hnp", "hostfile", "launch-agent",
    "machinefile", "map-by", "max-restarts", "max-vm-size", "N",
    "npernode", "npersocket", "ompi-server", "output-filename", "path",
    "personality", "ppr", "prefix", "preload-files", "rank-by",
    "report-events", "report-pid", "report-uri", "rf", "rankfile",
    "stdin", "timeout", "tune", "wd", "wdir", "x", "xml-file", "xterm",
    "tmpdir",
}
NP_FLAGS = {"c", "np", "n"}
PER_NODE_FLAGS = {"N", "npernode"}
HOSTFILE_FLAGS = {"hostfile", "machinefile", "default-hostfile"}
DROP_FLAGS = {
    "cpu-list", "cpu-set", "cpus-per-proc", "cpus-per-rank", "rf",
    "rankfile", "prefix", "path", "launch-agent", "wd", "wdir",
    "output-filename", "xterm", "xml-file", "debugger", "report-uri",
    "report-pid", "report-events", "ompi-server", "hnp", "preload-files",
    "personality", "max-vm-size", "cf", "cartofile", "am", "app", "tune",
    "tmpdir", "stdin",
}
DROP_MCA = re.compile(r"^(oob_tcp_if_(include|exclude)|plm_rsh_agent|"
                      r"orte_rsh_agent|orte_launch_agent)$")
DROP_ENV = re.compile(r"^OMPI_MCA_(oob_tcp_if_(include|exclude)|"
                      r"plm_rsh_agent|orte_rsh_agent|orte_launch_agent)$")


def split(words):
    """(options, program): options as (flag, [values]); None for an MPMD
    line (`a : b`), which the harness does not rewrite."""
    opts = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == ":":
            return None
        if not isinstance(w, Unresolved) and w.startswith("-") and len(w) > 1:
            name = w.lstrip("-")
            n = 2 if name in ARGS2 else 1 if name in ARGS1 else 0
            opts.append((w, list(words[i + 1:i + 1 + n])))
            i += 1 + n
            continue
        return opts, list(words[i:])
    return opts, []


def _int(v):
    return int(v) if not isinstance(v, Unresolved) and re.fullmatch(
        r"\d+", str(v)) else None


class Plan:
    """A local mpirun: argv, env, the hostfile's text, the world size the
    line asks for (None: whatever the slots give), and notes on what was
    changed beyond the fixed rules."""

    def __init__(self):
        self.argv = []
        self.env = {}
        self.hostfile = ""
        self.expect = None
        self.notes = []
        self.hosts = []


def local_run(words, env, hosts, here, tmp):
    """A Plan for the mpirun words of a launcher whose env is env and whose
    operator wrote hosts ([(name, slots)], or None), or a str saying why it
    cannot run here."""
    sp = split(words)
    if sp is None:
        return "an MPMD mpirun line (':'): not rewritten"
    opts, program = sp
    if not program:
        return "mpirun starts no program"
    plan = Plan()
    addr = {}

    def local_name(h):
        if h in ("localhost", "127.0.0.1"):
            return "localhost"
        if h not in addr:
            addr[h] = "127.0.1.%d" % (len(addr) + 1)
        return addr[h]

    host_lines = []
    for h, slots in hosts or []:
        host_lines.append("%s slots=%d" % (local_name(h), slots))
        plan.hosts.append((h, local_name(h), slots))
    hostfile = os.path.join(tmp, "hostfile")
    plan.hostfile = "\n".join(host_lines) + ("\n" if host_lines else "")
    total_slots = sum(s for _, s in hosts or []) or None
    per_node = None
    np = None
    out = []
    has = set()
    for flag, vals in opts:
        name = flag.lstrip("-")
        has.add(name)
        bad = [v for v in vals if isinstance(v, Unresolved)]
        if name in DROP_FLAGS:
            plan.notes.append("dropped %s %s" % (flag, " ".join(vals)))
            continue
        if name in ARGS2:
            if DROP_MCA.match(str(vals[0])):
                continue
            if bad:
                plan.notes.append("dropped %s %s (not expanded)" % (
                    flag, " ".join(vals)))
                continue
            out += [flag] + vals
            continue
        if name in NP_FLAGS:
            np = _int(vals[0])
            if np is None:
                plan.notes.append("-np %s not expanded: left to the slots" %
                                  vals[0])
                continue
            out += [flag, str(np)]
            continue
        if name in PER_NODE_FLAGS or name == "ppr":
            per_node = _int(vals[0]) if name != "ppr" else _int(
                str(vals[0]).split(":")[0])
            if bad:
                plan.notes.append("dropped %s %s (not expanded)" % (
                    flag, vals[0]))
                continue
            out += [flag] + vals
            continue
        if name in HOSTFILE_FLAGS:
            if not host_lines:
                return "the line names a hostfile (%s) and the job gives " \
                       "no hosts to put in it" % vals[0]
            out += [flag, hostfile]
            continue
        if name in ("H", "host"):
            if bad:
                return "-H %s not expanded" % vals[0]
            items = []
            for item in str(vals[0]).split(","):
                h, _, s = item.partition(":")
                items.append(local_name(h) + (":" + s if s else ""))
                plan.hosts.append((h, local_name(h), _int(s) or 1))
            total_slots = sum(_int(i.partition(":")[2]) or 1 for i in items)
            out += [flag, ",".join(items)]
            continue
        if name == "bind-to":
            out += [flag, "none"]
            continue
        if name in ("map-by", "rank-by"):
            if bad:
                plan.notes.append("dropped %s %s (not expanded)" % (
                    flag, vals[0]))
                continue
            v = re.sub(r":(PE|pe)=\d+", "", str(vals[0]))
            m = re.match(r"ppr:(\d+):node", v)
            if m:
                per_node = int(m.group(1))
            out += [flag, v]
            continue
        if name == "x":
            if bad:
                # Still an -x: Open MPI's check on mixing counts it.
                out += [flag, "RT_UNEXPANDED"]
                plan.notes.append("-x %s not expanded: kept as an -x" %
                                  vals[0])
                continue
            out += [flag] + vals
            continue
        if bad:
            plan.notes.append("dropped %s %s (not expanded)" % (
                flag, " ".join(vals)))
            continue
        out += [flag] + vals
    if "allow-run-as-root" not in has:
        out.insert(0, "--allow-run-as-root")
    if "oversubscribe" not in has:
        out.insert(0, "--oversubscribe")
    out = ["--mca", "plm_rsh_agent", os.path.join(here, "rsh_agent.sh")] + out
    plan.argv = ["/usr/bin/mpirun"] + out + [os.path.join(here,
                                                          "mpi_rank.sh")]
    e = {k: v for k, v in env.items() if not DROP_ENV.match(k)}
    # The image's PATH names its own Open MPI; Debian's is in /usr/bin.
    e["PATH"] = (e["PATH"] + ":" if e.get("PATH") else "") + "/usr/bin:/bin"
    e.setdefault("HOME", "/root")
    e["TMPDIR"] = tmp
    if "OMPI_MCA_orte_default_hostfile" in e:
        if not host_lines:
            return "the env names a hostfile and the job gives no hosts"
        e["OMPI_MCA_orte_default_hostfile"] = hostfile
    plan.env = e
    if not ({"H", "host"} & has or HOSTFILE_FLAGS & has or
            "OMPI_MCA_orte_default_hostfile" in e):
        # No hostfile: mpirun starts every rank on the launcher.
        plan.hosts = []
        total_slots = None
    nhosts = len({h for _, h, _ in plan.hosts}) or None
    if np is not None:
        plan.expect = np
    elif per_node is not None and nhosts:
        plan.expect = per_node * nhosts
    else:
        plan.expect = total_slots
    plan.program = program
    return plan


class Result(ranks.Result):
    def error_lines(self, n=14):
        return [ln for ln in self.lines()
                if not set(ln.strip()) <= set("-")][:n]


def run(plan, tmp, limit=30):
    with open(os.path.join(tmp, "hostfile"), "w") as f:
        f.write(plan.hostfile)
    out = os.path.join(tmp, "ranks")
    os.makedirs(out, exist_ok=True)
    return ranks.launch(plan, tmp, out, limit, 3, Result, "mpirun")


def check(plan, res, claims, world_claim=None):
    """Problems with a run (empty when it did what it should): exit 0, one
    line per rank, the world size the line asks for (and the one topogate
    claims), and every claimed variable with its value in every rank."""
    problems = []
    if res.rc != 0:
        problems.append("mpirun exited %d" % res.rc)
        return problems
    n = len(res.ranks)
    if n == 0:
        return ["no rank printed anything"]
    if res.sizes != {str(n)}:
        problems.append("ranks print world sizes %s, %d ranks ran" % (
            sorted(res.sizes), n))
    if plan.expect is not None and n != plan.expect:
        problems.append("%d ranks ran, the line asks for %d" % (
            n, plan.expect))
    if world_claim is not None and n != world_claim:
        problems.append("%d ranks ran, topogate claims world size %d" % (
            n, world_claim))
    for name, value in sorted(claims.items()):
        missing = [r for r, d in sorted(res.ranks.items())
                   if name not in d["env"]]
        wrong = [r for r, d in sorted(res.ranks.items())
                 if name in d["env"] and d["env"][name] != value]
        if missing:
            problems.append("%s missing in rank(s) %s (host %s)" % (
                name, ",".join(map(str, missing[:8])),
                res.ranks[missing[0]].get("host")))
        if wrong:
            problems.append("%s=%r in rank(s) %s, the launcher has %r" % (
                name, res.ranks[wrong[0]]["env"][name],
                ",".join(map(str, wrong[:8])), value))
    return problems
