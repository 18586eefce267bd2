"""The fixes and the forwarding advice topogate prints, applied to an
object as its owner would apply them, for test/runtimes/harness.py.

parse_fix() reads a layout fix ("use spec.trainer.numNodes: 2,
numProcPerNode: 8 (world size 16 kept); set ... limits nvidia.com/gpu: 8";
"not repacked: container 'node' hard-codes '--nnodes 16'"); apply_fix()
writes the object with those numbers, the launcher flags the fix names
("mpirun -np 2, torchrun --nproc_per_node 8") and the hard-coded flags it
names set to match, and nothing else: a flag the fix does not name stays
as the user wrote it, as it would on the cluster. follow_advice() adds the
`-x NAME=V` flags and mca_base_env_list entries topogate's warnings ask for.
"""

import copy
import re

import shellcmd
from k8s import (argv_of, get, gpus_of, processes, quantity, resolve_env,
                 upsert)


class Fix:
    """A layout fix from a message: items {key: int}, world (the claimed
    world size), limits {resource: value}, flags (the hard-coded flags it
    names, as written), text (the `use ...` part)."""

    def __init__(self, text, items, world, limits, flags):
        self.text = text
        self.items = items
        self.world = world
        self.limits = limits
        self.flags = flags


_ITEMS = [
    ("nodes", r"spec\.trainer\.numNodes: (\d+)"),
    ("nproc", r"(?:numProcPerNode|nprocPerNode): (\d+)"),
    ("master", r"Master replicas: (\d+)(?: and no Worker)?"),
    ("workers", r"Worker replicas: (\d+)"),
    ("slots", r"slotsPerWorker: (\d+)"),
    ("maxreplicas", r"elasticPolicy\.maxReplicas: (\d+)"),
    ("np", r"mpirun -np (\d+)"),
    ("tnproc", r"torchrun --nproc_per_node (\d+)"),
]


def parse_fix(texts):
    """The first fix in topogate's texts, None when there is none, or a
    str saying why the fix cannot be applied as data."""
    for t in texts:
        # world None: "each torchrun is a world of its own", no job size.
        m = re.search(r"(?:^|; )use (.+?) \((?:world size (\d+) (?:kept|"
                      r"becomes (\d+)[^)]*)|each torchrun is a world of its "
                      r"own[^)]*)\)", t)
        if not m:
            continue
        items = {}
        for part in m.group(1).split(", "):
            for key, rx in _ITEMS:
                pm = re.fullmatch(rx, part)
                if pm:
                    items[key] = int(pm.group(1))
                    if key == "master" and "no Worker" in part:
                        items["workers"] = 0
                    break
            else:
                return "fix item %r is not one the harness can apply" % part
        world = int(m.group(3) or m.group(2)) if m.group(2) else None
        limits = {}
        lm = re.search(r"; set .*? limits ([^;]+)", t)
        if lm:
            for pair in lm.group(1).split(", "):
                k, _, v = pair.partition(": ")
                limits[k.strip()] = v.strip()
        # A warning carries each part of the fix as its own text.
        flags = []
        for named in re.findall(r"(?:hard-codes|change the command's) "
                                r"((?:'[^']+'(?: and )?)+)", "\n".join(texts)):
            flags += re.findall(r"'([^']+)'", named)
        return Fix(m.group(1), items, world, limits, flags)
    return None


def _set_limits(c, limits):
    res = c.setdefault("resources", {})
    for part in ("limits", "requests"):
        if part in res or part == "limits":
            res.setdefault(part, {})
            for k, v in limits.items():
                res[part][k] = quantity(v) if quantity(v) is not None else v


def _replace_flag(argv, written, value):
    """argv with the hard-coded flag written as `written` ("--nnodes 16",
    "-np 16", "--nproc_per_node=1") set to value, in argv words or in a
    script; unchanged when it is not found."""
    m = re.match(r"^(\S+?)([ =])(\S+)$", written)
    if not m:
        return argv
    flag, sep = m.group(1), m.group(2)
    new = "%s%s%s" % (flag, sep, value)
    out = list(argv)
    for i, w in enumerate(out):
        if sep == " " and w == flag and i + 1 < len(out) and \
                out[i + 1] == m.group(3):
            out[i + 1] = str(value)
            return out
        if written in w:
            out[i] = w.replace(written, new)
            return out
    return out


def _set_launch_flags(argv, np=None, nproc=None):
    """argv with mpirun's -np and torchrun's --nproc_per_node set, where the
    fix names them ("mpirun -np 2, torchrun --nproc_per_node 8"), in argv
    words or in a script."""
    out = [str(w) for w in argv]
    for i, w in enumerate(out):
        if np is not None and shellcmd.base(w) in shellcmd.MPI_NAMES:
            for j in range(i + 1, len(out) - 1):
                if out[j] in ("-np", "-n", "--np", "-c"):
                    out[j + 1] = str(np)
                    break
        if nproc is not None and re.fullmatch(r"--nproc[_-]per[_-]node", w) \
                and i + 1 < len(out):
            out[i + 1] = str(nproc)
        if nproc is not None:
            out[i] = re.sub(r"(--nproc[_-]per[_-]node)([= ])(\S+)",
                            lambda m: m.group(1) + m.group(2) + str(nproc),
                            out[i]) if " " in out[i] or "=" in out[i] \
                else out[i]
        if np is not None and re.search(r"\bmpi(run|exec)\b", out[i]) and \
                " " in out[i]:
            out[i] = re.sub(r"(\bmpi(?:run|exec)\b[^\n;|&]*?\s)"
                            r"(-np|-n|--np|-c)(\s+)(\S+)",
                            lambda m: m.group(1) + m.group(2) + m.group(3) +
                            str(np), out[i], count=1)
    return out


def flag_value(flag, fix, nodes):
    f = flag.split("=")[0].split()[0]
    if f in ("--nnodes",):
        return nodes
    if f in ("--nproc_per_node", "--nproc-per-node"):
        return fix.items.get("tnproc", fix.items.get("nproc"))
    if f in ("-np", "-n", "--np", "-c"):
        return fix.items.get("np", fix.world)
    return None


def apply_fix(obj, fix):
    """obj as its owner would write it after the fix (and the hard-coded
    flags the fix names changed to match), or a str saying why not."""
    o = copy.deepcopy(obj)
    kind = o.get("kind")
    it = fix.items
    spec = o.setdefault("spec", {})
    if kind == "TrainJob":
        tr = spec.setdefault("trainer", {})
        if "nodes" in it:
            tr["numNodes"] = it["nodes"]
        if "nproc" in it:
            tr["numProcPerNode"] = it["nproc"]
        if fix.limits:
            tr["resourcesPerNode"] = {"limits": {
                k: quantity(v) or v for k, v in fix.limits.items()}}
        nodes = it.get("nodes")
        cs = [tr]
    elif kind == "MPIJob":
        rs = spec.get("mpiReplicaSpecs") or {}
        if "workers" in it and "Worker" in rs:
            rs["Worker"]["replicas"] = it["workers"]
        if "slots" in it:
            spec["slotsPerWorker"] = it["slots"]
        for c in get(rs, "Worker", "template", "spec", "containers")[:1] \
                if fix.limits else []:
            _set_limits(c, fix.limits)
        nodes = it.get("workers")
        cs = get(rs, "Launcher", "template", "spec", "containers") or []
    elif kind == "PyTorchJob":
        rs = spec.get("pytorchReplicaSpecs") or {}
        if "master" in it and "Master" in rs:
            rs["Master"]["replicas"] = it["master"]
        if "workers" in it and "Worker" in rs:
            if it["workers"] == 0:
                del rs["Worker"]
            else:
                rs["Worker"]["replicas"] = it["workers"]
        if "nproc" in it:
            spec["nprocPerNode"] = str(it["nproc"])
        if "maxreplicas" in it:
            ep = spec.setdefault("elasticPolicy", {})
            ep["maxReplicas"] = it["maxreplicas"]
            ep["minReplicas"] = min(ep.get("minReplicas", 1),
                                    it["maxreplicas"])
            if "nproc" in it:
                ep["nProcPerNode"] = it["nproc"]
        cs = []
        for r in rs.values():
            for c in get(r, "template", "spec", "containers") or []:
                if fix.limits and gpus_of(c.get("resources")):
                    _set_limits(c, fix.limits)
                cs.append(c)
        nodes = it.get("maxreplicas", it.get("master", 0) + it.get(
            "workers", 0) or None)
    elif kind == "Pod":
        # A pod of a job: its operator writes it again from the fixed job.
        md = o.get("metadata") or {}
        nodes = it.get("nodes", it.get("maxreplicas"))
        if nodes is None and ("master" in it or "workers" in it):
            nodes = it.get("master", 0) + it.get("workers", 0)
        if "np" in it or "slots" in it:
            return "a pod-level MPI fix: the launcher is another pod"
        if nodes is None or "nproc" not in it:
            return "the fix gives no node and process count for this pod"
        cs = o["spec"]["containers"]
        for c in cs:
            env = resolve_env(c.get("env"), md)
            if not any(k.startswith("PET_") for k in env) and \
                    not gpus_of(c.get("resources")):
                continue
            new = [{"name": "PET_NPROC_PER_NODE", "value": str(it["nproc"])}]
            if "PET_NNODES" in env:
                old = env["PET_NNODES"]
                new.append({"name": "PET_NNODES", "value": (
                    "%s:%d" % (old.split(":")[0], nodes) if ":" in old
                    else str(nodes))})
            if "WORLD_SIZE" in env:
                new.append({"name": "WORLD_SIZE", "value": str(fix.world)})
            c["env"] = upsert(c.get("env"), new)
            if fix.limits and gpus_of(c.get("resources")):
                _set_limits(c, fix.limits)
    else:
        return "no fix rule for kind %s" % kind
    if "np" in it or "tnproc" in it:
        for c in cs:
            argv = argv_of(c)
            new = _set_launch_flags(argv, it.get("np"), it.get("tnproc"))
            if new != argv:
                n = len(c.get("command") or [])
                if "command" in c:
                    c["command"] = new[:n]
                if "args" in c or len(new) > n:
                    c["args"] = new[n:]
    for flag in fix.flags:
        v = flag_value(flag, fix, nodes)
        if v is None:
            return "the fix names '%s', which the harness cannot set" % flag
        for c in cs:
            argv = argv_of(c)
            new = _replace_flag(argv, flag, v)
            if new != argv:
                n = len(c.get("command") or [])
                if "command" in c:
                    c["command"] = new[:n]
                if "args" in c or len(new) > n:
                    c["args"] = new[n:]
    return o


# --- the forwarding advice topogate prints ----------------------------------

def _containers(obj):
    """Every container dict of obj's pod templates (or the pod)."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            for c in x.get("containers") or []:
                if isinstance(c, dict):
                    out.append(c)
            for k, v in x.items():
                if k != "containers":
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(obj.get("spec"))
    return out


def _insert_x(c, flag):
    """Adds `-x NAME[=V]` right after mpirun in c's command line, in its
    argv or in its script; False when no mpirun is found."""
    for key in ("command", "args"):
        words = [str(w) for w in c.get(key) or []]
        for i, w in enumerate(words):
            if shellcmd.base(w) in shellcmd.MPI_NAMES:
                c[key] = words[:i + 1] + flag.split(" ", 1) + words[i + 1:]
                return True
            new, n = re.subn(r"((?:^|[\s/])(?:mpirun|mpiexec))(?=\s)",
                             lambda m: m.group(1) + " " + flag, w, count=1)
            if n:
                words[i] = new
                c[key] = words
                return True
    return False


def follow_advice(obj, advice, runtimes):
    """obj with topogate's forwarding advice followed: each `-x NAME=V` added
    to the mpirun line, each NAME=V added to the mca_base_env_list it names;
    and {container: {variable: value}} the ranks must then see. A str says
    why it cannot be followed."""
    o = copy.deepcopy(obj)
    procs = {p.cname: p for p in processes(obj, runtimes)}
    extra = {}
    if o.get("kind") == "TrainJob":
        # Trainer's container `node` takes spec.trainer's command and env.
        tr = o["spec"].setdefault("trainer", {})
        p = procs.get("node")
        if p is None:
            return "the runtime's launcher container is not 'node'", {}
        if "command" not in tr and "args" not in tr:
            tr["command"] = list(p.argv)
        targets = {"node": tr}
    else:
        targets = {}
        for c in _containers(o):
            if c.get("name") in procs and c.get("name") not in targets:
                targets[c.get("name")] = c
    for cname, kind, what in advice:
        if cname is None:
            cname = next((n for n, p in procs.items() if any(
                ln.kind == "mpi" for ln in p.launches)), None)
        c = targets.get(cname)
        if c is None:
            return "no container '%s' runs a launcher" % cname, {}
        env = procs[cname].env
        if kind == "x":
            if not _insert_x(c, what):
                return "no mpirun word in container '%s'" % cname, {}
            items = [what[3:]]
        elif kind == "cmdlist":
            argv = argv_of(c)
            for i, w in enumerate(argv[:-1]):
                if w == "mca_base_env_list":
                    argv[i + 1] += ";" + what
                    break
            else:
                return "no --mca mca_base_env_list in '%s'" % cname, {}
            n = len(c.get("command") or [])
            if "command" in c:
                c["command"] = argv[:n]
            if "args" in c or len(argv) > n:
                c["args"] = argv[n:]
            items = [what]
        else:
            cur = env.get("OMPI_MCA_mca_base_env_list", "")
            c["env"] = upsert(c.get("env"), [{
                "name": "OMPI_MCA_mca_base_env_list",
                "value": (cur + ";" if cur else "") + what}])
            items = what.split(";")
        for it in items:
            n, eq, v = it.partition("=")
            extra.setdefault(cname, {})[n] = v if eq else env.get(n, "")
    return o, extra
