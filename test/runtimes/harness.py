#!/usr/bin/python3
"""test/runtimes/harness.py BIN: the real launchers run what topogate's
patches produce, on this machine's CPUs. Called by test/runtimes/run.sh
(run that: `test/runtimes/run.sh build/topogate`); needs Debian's
openmpi-bin (Open MPI 4.1) and python3-torch (1.13), python3-jsonpatch and
python3-yaml, under /usr/bin/python3.

What it proves. For every golden case (test/golden/cases) and every corpus
manifest ($SHARED/corpus/manifests) whose object runs mpirun or torchrun,
topogate answers the object as `serve` would (`audit --review -`), the
patch is applied, and the launcher line of the patched object runs for real
with the env its container will have (its own, the patch's, the
operator's: k8s.py says which, from the operators' sources):

  mpi    the launcher's mpirun line (mpi.py says what is kept and what is
         changed) must exit 0 (Open MPI 4 aborts when `-x` meets
         OMPI_MCA_mca_base_env_list: help topic orterun:conflict-env-set),
         start as many ranks as the line and hostfile ask for, and every
         variable the patch adds to the launcher (and each one its
         mca_base_env_list names) must reach every rank with its value,
         ranks on other hosts included (they are started the way sshd
         starts them: rsh_agent.sh).
  torch  torch's own parser reads each torchrun line in its env
         (torchrun_config.py): where topogate patched the object, it must
         start one rank per GPU of the pod unless topogate's answer says
         it does not (a hard-coded --nnodes likewise); one node of each
         distinct shape is started for real (torchlaunch.py: gloo,
         127.0.0.1) and every worker must join a group of that size and see
         the variables the patch added.
  fix    where topogate prints a layout fix ("use ..., numProcPerNode: 8
         (world size 16 kept)"), the fix is applied as the user would
         (fixes.apply_fix: the numbers it gives, the hard-coded flags it
         names), topogate must admit the result, and the job, run as
         above, must have the world size the fix claims.
  advice where topogate adds no env and says instead "add -x NAME=V to
         its mpirun line" (or to its mca_base_env_list), the advice is
         followed (fixes.follow_advice) and the launcher must then run
         with NAME=V in every rank.

Self-tests first show the harness can fail: `-x FOO` with
OMPI_MCA_mca_base_env_list must be caught, a variable mpirun does not
forward must be missing in the remote ranks, a torchrun line that leaves
GPUs idle without a word from topogate must be caught.

Output: `ok - ...` / `not ok - ...` lines with `#   ` detail, `ok - ...
# skip WHY` where a line cannot run here, then `# runtimes: N passed, M
failed, K skipped`; exit 1 on any failure. SHARED overrides ../shared
(test/data when neither is there). ONLY=GLOB takes only the golden cases
whose names match it.
"""

import copy
import fnmatch
import glob
import json
import os
import re
import shutil
import sys
import tempfile
import time

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in the tree
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import fixes  # noqa: E402
import k8s  # noqa: E402
import mpi  # noqa: E402
import shellcmd  # noqa: E402
import torchlaunch  # noqa: E402

LAUNCH_WORDS = re.compile(r"mpirun|mpiexec|orterun|torchrun|"
                          r"torch\.distributed\.(run|launch)")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def known_failures():
    """known-failures.txt: what prefix -> why (see its header)."""
    rows = {}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "known-failures.txt")
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                what, _, why = line.partition(" | ")
                rows[what.strip()] = why.strip()
    return rows


class Report:
    def __init__(self):
        self.passed = self.failed = self.skipped = self.todo = 0
        self.known = known_failures()
        self.known_seen = set()

    def _known(self, what):
        for prefix, why in self.known.items():
            if what.startswith(prefix + ":") or what == prefix:
                self.known_seen.add(prefix)
                return why
        return None

    def known_unseen(self):
        """A row no run reported: the failure went away, or the case did."""
        for prefix in sorted(set(self.known) - self.known_seen):
            self.failed += 1
            print("not ok - %s # listed in known-failures.txt but no run "
                  "failed that way: remove its row" % prefix, flush=True)

    def ok(self, what):
        why = self._known(what)
        if why is not None:
            self.failed += 1
            print("not ok - %s # listed in known-failures.txt but passes: "
                  "remove its row" % what, flush=True)
            return
        self.passed += 1
        print("ok - " + what, flush=True)

    def not_ok(self, what, detail=()):
        why = self._known(what)
        if why is not None:
            self.todo += 1
            print("not ok - %s # TODO %s" % (what, why), flush=True)
            return
        self.failed += 1
        print("not ok - " + what, flush=True)
        for line in detail:
            print("#   " + line, flush=True)

    def skip(self, what, why):
        self.skipped += 1
        print("ok - %s # skip %s" % (what, why), flush=True)

    def line(self, what, problems, detail=()):
        if problems:
            self.not_ok(what + ": " + "; ".join(problems), detail)
        else:
            self.ok(what)


def names(d):
    return " ".join(sorted(d)) if d else "none"


# --- cases -------------------------------------------------------------------

class Case:
    """One object to send to topogate: name, the review body (a dict, or
    the golden .in.json bytes), topogate's flags, the runtimes a TrainJob
    may name."""

    def __init__(self, name, obj, body, args, runtimes):
        self.name = name
        self.obj = obj
        self.body = body
        self.args = args
        self.runtimes = runtimes


def runtimes_in(paths):
    out = {}
    for p in paths:
        try:
            with open(os.path.join(REPO, p)) as f:
                docs = list(yaml.safe_load_all(f))
        except (OSError, yaml.YAMLError):
            continue
        for d in docs:
            if isinstance(d, dict) and d.get("kind") in (
                    "ClusterTrainingRuntime", "TrainingRuntime"):
                out[k8s.get(d, "metadata", "name")] = d
    return out


def golden_cases(tmp):
    cdir = os.path.join(REPO, "test", "golden", "cases")
    out = []
    for path in sorted(glob.glob(os.path.join(cdir, "*.in.json"))):
        name = os.path.basename(path)[:-len(".in.json")]
        if os.environ.get("ONLY") and not fnmatch.fnmatch(
                name, os.environ["ONLY"]):
            continue
        with open(path, "rb") as f:
            data = f.read()
        try:
            obj = json.loads(data)["request"]["object"]
        except (ValueError, KeyError, TypeError, RecursionError):
            continue  # the malformed-* cases
        if not isinstance(obj, dict):
            continue
        args = []
        if os.path.exists(os.path.join(cdir, name + ".args")):
            with open(os.path.join(cdir, name + ".args")) as f:
                args = f.read().split()
        rts = runtimes_in([args[i + 1] for i, a in enumerate(args[:-1])
                           if a == "--nodes"])
        text = json.dumps(obj)
        rt = rts.get(k8s.get(obj, "spec", "runtimeRef", "name"))
        if not LAUNCH_WORDS.search(text + (json.dumps(rt) if rt else "")):
            continue
        policy = None
        if os.path.exists(os.path.join(cdir, name + ".policy")):
            with open(os.path.join(cdir, name + ".policy")) as f:
                policy = f.read()
        args = k8s.with_policy(args, policy, REPO, tmp)
        out.append(Case(name, obj, data, args, rts))
    return out


def pin_p4d(doc):
    """An MPIJob as its owners would run it on whole p4d.24xlarge nodes:
    the same Launcher, Workers pinned there with 8 GPUs and 4 EFA each,
    slotsPerWorker 8. This gets topogate's job-level env onto a real
    launcher line."""
    o = copy.deepcopy(doc)
    w = k8s.get(o, "spec", "mpiReplicaSpecs", "Worker", "template", "spec")
    if not isinstance(w, dict) or not w.get("containers"):
        return None
    w["nodeSelector"] = {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    c = w["containers"][0]
    c["resources"] = {"limits": {k8s.GPU: 8, "vpc.amazonaws.com/efa": 4}}
    o["spec"]["slotsPerWorker"] = 8
    return o


def corpus_cases(shared, tmp):
    """Job objects and pods of the corpus manifests that run a launcher."""
    os.environ["SHARED"] = shared
    sys.path.insert(0, os.path.join(REPO, "test", "corpus"))
    import extract
    mdir = os.path.join(shared, "corpus", "manifests")
    docs = []
    for path in sorted(glob.glob(os.path.join(mdir, "*.yaml"))):
        rel = os.path.basename(path)
        try:
            with open(path, encoding="utf-8") as f:
                ds = list(yaml.load_all(f, Loader=extract.Loader))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue  # not YAML as stored: test/corpus says so
        docs += [(rel, i, d) for i, d in enumerate(ds) if isinstance(d, dict)]
    runtimes = {k8s.get(d, "metadata", "name"): d for _, _, d in docs
                if d.get("kind") in ("ClusterTrainingRuntime",
                                     "TrainingRuntime")}
    out = []
    n = 0
    for rel, i, d in docs:
        text = json.dumps(d, default=str)
        rt = runtimes.get(k8s.get(d, "spec", "runtimeRef", "name"))
        if not LAUNCH_WORDS.search(text + (json.dumps(rt, default=str)
                                           if rt else "")):
            continue
        d = json.loads(json.dumps(d, default=str))
        base = "corpus %s#%d %s/%s" % (rel, i, d.get("kind"),
                                       k8s.get(d, "metadata", "name"))
        args = []
        if rt is not None:
            rpath = os.path.join(tmp, "runtime-%d.yaml" % len(out))
            with open(rpath, "w") as f:
                yaml.safe_dump(json.loads(json.dumps(rt, default=str)), f)
            args = ["--nodes", rpath]
        if d.get("kind") in ("MPIJob", "PyTorchJob", "TrainJob"):
            out.append(Case(base, d, k8s.review(d, base), args, runtimes))
            if d.get("kind") == "MPIJob":
                pinned = pin_p4d(d)
                if pinned:
                    out.append(Case(base + " on p4d", pinned,
                                    k8s.review(pinned, base + "p4d"), [],
                                    runtimes))
        for label, md, spec, owner in extract.pods_of(d):
            if d.get("kind") == "MPIJob":
                # The operator's launcher pod has env extract.py does not
                # add; the MPIJob itself is run above, with that env.
                continue
            n += 1
            _, rv = extract.wrap(rel, n, label, md, spec, owner,
                                 k8s.get(d, "metadata", "namespace"))
            pod = rv["request"]["object"]
            env_guess = k8s.resolve_env([], {})
            if not any(shellcmd.find_launches(k8s.argv_of(c), env_guess)
                       for c in pod["spec"].get("containers") or []):
                continue
            out.append(Case("corpus %s#%d pod %s" % (rel, i, label), pod,
                            rv, [], runtimes))
    return out


# --- running one case ------------------------------------------------------

class Torch:
    """A torchrun line waiting for torch's parser: what it belongs to and
    what must hold of it."""

    def __init__(self, what, item, claims, gpus=0, texts=(), nnodes=None,
                 words=(), fix=None, agents=None, claimed=False):
        self.what = what
        self.item = item
        self.claims = claims
        self.gpus = gpus
        self.texts = list(texts)
        self.nnodes = nnodes
        self.words = [str(w) for w in words]
        self.fix = fix
        self.agents = agents
        # topogate patched this object: it claims the node's fast shape,
        # one rank per GPU, unless its answer says otherwise.
        self.claimed = claimed


def speaks(texts, words):
    return any(w in t for t in texts for w in words)


NOT_FOR_RANKS = ("its ranks see only what it names",
                 "adds no env for its ranks", "cannot add env for its ranks")
NPROC_WORDS = ("nproc", "process", "idle", "PET_NPROC_PER_NODE",
               "numProcPerNode", "slots")
NNODES_WORDS = ("--nnodes", "PET_NNODES", "numNodes")


def match_before(before, p):
    for b in before:
        if b.label == p.label:
            return b
    return None


def host_guess(proc, words):
    """A pod that runs mpirun names no hosts: two, with the pod's GPUs (or
    the line's -N) as slots, stand for them."""
    sp = mpi.split(words)
    slots = proc.gpus or 1
    if sp:
        for flag, vals in sp[0]:
            if flag.lstrip("-") in mpi.PER_NODE_FLAGS and vals and \
                    re.fullmatch(r"\d+", str(vals[0])):
                slots = int(vals[0])
    return [("worker-0", slots), ("worker-1", slots)]


def rank_claims(p, claims, texts):
    """The injected variables topogate claims for the ranks: all of them,
    unless its answer says the ranks see only what a list the user keeps
    names, or that it adds no env for them. Returns (claims, the rest)."""
    if not speaks(texts, NOT_FOR_RANKS):
        return claims, {}
    listed = set()
    for item in (p.env.get("OMPI_MCA_mca_base_env_list") or "").split(";"):
        if item:
            listed.add(item.partition("=")[0])
    kept = {n: v for n, v in claims.items() if n in listed}
    return kept, {n: v for n, v in claims.items() if n not in listed}


def run_object(rep, what, obj, patched, runtimes, texts, tmp, torch_jobs,
               fix=None, extra=None, claimed=False):
    """Runs every launcher of the patched object; queues its torchrun
    lines. extra: {container name: {variable: value}} the ranks must see
    besides what the patch injects. Returns how many launchers it found."""
    before = k8s.processes(obj, runtimes) if obj is not None else []
    after = k8s.processes(patched, runtimes)
    world_claim = fix.world if fix else None
    found = 0
    for p in after:
        claims = k8s.injected(match_before(before, p), p)
        claims = {n: v for n, v in claims.items() if NAME.match(n)}
        if extra is None:
            claims, rest = rank_claims(p, claims, texts)
        else:
            rest = {}
            claims.update(extra.get(p.cname, {}))
        for ln in p.launches:
            found += 1
            label = "%s: %s (%s)" % (what, p.label, ln.where)
            env = dict(p.env, **ln.env_add)
            nul = sorted(k for k, v in env.items() if "\0" in str(v))
            if nul:
                # execve() takes NUL-terminated strings: no process can
                # be given this env, on the node or here.
                rep.skip(("mpi " if ln.kind == "mpi" else "torch ") + label,
                         "env %s holds NUL, which no process env can"
                         % ", ".join(nul))
                continue
            if ln.kind == "mpi":
                hosts = p.hosts
                guessed = False
                if hosts is None and obj is not None and \
                        obj.get("kind") == "Pod":
                    hosts = host_guess(p, ln.words)
                    guessed = True
                run_mpi(rep, label, ln, env, hosts, guessed, claims, rest,
                        world_claim, fix, p, texts, tmp, torch_jobs)
            else:
                item = torchlaunch.config_items(ln, p.env, p.gpus)
                if isinstance(item, str):
                    rep.skip("torch " + label, item)
                    continue
                torch_jobs.append(Torch(
                    "torch " + label, item, claims, gpus=p.gpus,
                    texts=texts, nnodes=p.nnodes, words=ln.words, fix=fix,
                    claimed=claimed))
    return found


def run_mpi(rep, label, ln, env, hosts, guessed, claims, rest, world_claim,
            fix, p, texts, tmp, torch_jobs):
    rdir = tempfile.mkdtemp(dir=tmp, prefix="mpi.")
    plan = mpi.local_run(ln.words, env, hosts, HERE, rdir)
    if isinstance(plan, str):
        rep.skip("mpi " + label, plan)
        return None
    prog = shellcmd.program_launch(plan.program, env)
    # With one torchrun per node under mpirun, the world is torchrun's:
    # the ranks mpirun starts are its agents.
    res = mpi.run(plan, rdir)
    problems = mpi.check(plan, res, claims,
                         None if prog else world_claim)
    shape = "%d ranks" % len(res.ranks) + (
        " on %d hosts" % len({h for _, h, _ in plan.hosts}) if plan.hosts
        else " on the launcher")
    if guessed:
        shape += " (hosts guessed: the pod names none)"
    detail = ["mpirun " + " ".join(plan.argv[1:-1])] + [
        "env: %s=%s" % (k, plan.env[k]) for k in sorted(plan.env)
        if k.startswith("OMPI_MCA_mca_base_env_list")] + [
        "note: " + n for n in plan.notes]
    if problems and res.rc != 0:
        detail += res.error_lines()
    line = "mpi %s: %s; injected %s%s" % (
        label, shape, names(claims),
        " reach every rank" if claims and not problems else "")
    if rest:
        line += " (%s: launcher only, as topogate says)" % names(rest)
    rep.line(line, problems, detail)
    if prog and res.ranks:
        r0 = res.ranks[min(res.ranks)]["env"]
        rank_prog = shellcmd.program_launch(plan.program, r0)
        item = torchlaunch.config_items(rank_prog, r0, p.worker_gpus) \
            if rank_prog else "no torchrun"
        if isinstance(item, str):
            rep.skip("torch %s: torchrun under mpirun" % label, item)
        else:
            torch_jobs.append(Torch(
                "torch %s: torchrun under mpirun, in rank 0's env" % label,
                item, {}, gpus=p.worker_gpus, texts=texts,
                words=rank_prog.words, fix=fix, agents=len(res.ranks)))
    return res


ADVICE = [
    ("x", re.compile(r"^container '([^']+)': add (-x \S+) to its mpirun "
                     r"line$")),
    ("cmdlist", re.compile(r"^container '([^']+)': add (\S+) to its "
                           r"mca_base_env_list$")),
    ("envlist", re.compile(r"^(?:container '([^']+)': )?add to "
                           r"OMPI_MCA_mca_base_env_list: (\S+)$")),
]


def advice_of(texts):
    """[(container or None, kind, what to add)] from topogate's warnings
    that say how to forward the variables it did not add."""
    out = []
    for t in texts:
        for kind, rx in ADVICE:
            m = rx.match(t.replace("audit: ", "", 1))
            if m:
                out.append((m.group(1), kind, m.group(2)))
    return out


def judge(rep, case, binary, tmp, torch_jobs):
    try:
        ans = k8s.topogate(binary, case.body, case.args, REPO)
    except (RuntimeError, ValueError) as e:
        if "exited 2:" in str(e) and case.name.startswith("malformed-"):
            return  # not a readable review: test/golden checks those
        rep.not_ok("%s: topogate" % case.name, [str(e)])
        return
    texts = ans.texts()
    if ans.allowed:
        if not run_object(rep, case.name, case.obj, ans.patched,
                          case.runtimes, texts, tmp, torch_jobs,
                          claimed=bool(ans.ops)):
            rep.skip(case.name, "no launcher line the harness can read")
        advice = advice_of(texts)
        if advice:
            advised, extra = fixes.follow_advice(ans.patched, advice,
                                               case.runtimes)
            what = "advice %s: %s" % (case.name, "; ".join(
                "%s: add %s" % (c or "launcher env", a) for c, _, a in advice))
            if isinstance(advised, str):
                rep.skip(what, advised)
            elif not run_object(rep, what, case.obj, advised, case.runtimes,
                                texts, tmp, torch_jobs, extra=extra):
                rep.skip(what, "no launcher line the harness can read")
    fix = fixes.parse_fix(texts)
    if fix is None:
        if not ans.allowed:
            rep.skip(case.name, "denied, and the message gives no layout "
                                "to run")
        return
    what = "fix %s: \"%s\"" % (case.name, fix if isinstance(fix, str)
                               else fix.text)
    if isinstance(fix, str):
        rep.skip(what, fix)
        return
    fixed = fixes.apply_fix(case.obj, fix)
    if isinstance(fixed, str):
        rep.skip(what, fixed)
        return
    try:
        ans2 = k8s.topogate(binary, k8s.review(fixed, case.name + "/fix"),
                            case.args, REPO)
    except (RuntimeError, ValueError) as e:
        rep.not_ok(what + ": topogate on the fixed object", [str(e)])
        return
    if not ans2.allowed:
        rep.not_ok(what + ": topogate refuses its own fix",
                   [ans2.message[:400]])
        return
    if not run_object(rep, what, fixed, ans2.patched, case.runtimes,
                      ans2.texts(), tmp, torch_jobs, fix=fix):
        rep.skip(what, "no launcher line the harness can read")


# --- torch: the parser's verdicts, then one node of each shape -------------

def judge_torch(rep, jobs, tmp):
    try:
        cfgs = torchlaunch.configs([j.item for j in jobs], HERE)
    except RuntimeError as e:
        rep.not_ok("torchrun_config.py", [str(e)])
        return
    launched = {}
    for j, cfg in zip(jobs, cfgs):
        if "error" in cfg:
            err = "; ".join(cfg["error"])
            if "unrecognized arguments" in err:
                rep.skip(j.what, "torch 1.13's torchrun does not know it: "
                         + err)
            else:
                rep.not_ok(j.what + ": torchrun refuses the line", [err])
            continue
        problems = []
        nodes, nproc = cfg["max_nodes"], cfg["nproc"]
        lo = cfg["min_nodes"]
        shape = "%s x %d" % (nodes if lo == nodes else "%d:%d" % (lo, nodes),
                             nproc)
        if j.fix:
            want = j.fix.items.get("tnproc", j.fix.items.get("nproc"))
            if want is not None and nproc != want:
                problems.append("torchrun starts %d per node, the fix says "
                                "%d" % (nproc, want))
            if j.fix.world is None and not (j.agents and nodes == 1):
                problems.append("the fix says each torchrun is a world of "
                                "its own; it is a world of %d x %d"
                                % (nodes, nproc))
            elif j.fix.world is None:
                pass  # each agent alone, as claimed; nproc checked above
            elif j.agents and nodes == 1 and j.agents > 1:
                world = nproc
                problems.append(
                    "each of the %d torchrun agents forms its own world of "
                    "%d (no --nnodes): world size %d, the fix claims %d" % (
                        j.agents, nproc, world, j.fix.world))
            elif nodes * nproc != j.fix.world:
                problems.append("world size %d x %d = %d, the fix claims %d"
                                % (nodes, nproc, nodes * nproc, j.fix.world))
        elif j.agents and nodes == 1 and j.agents > 1:
            shape += " (%d agents under mpirun, each its own world of %d: " \
                "no --nnodes)" % (j.agents, nproc)
        elif j.claimed:
            if j.gpus and nproc != j.gpus and not speaks(j.texts,
                                                         NPROC_WORDS):
                problems.append(
                    "torchrun starts %d per node on %d GPUs and topogate "
                    "says nothing about it" % (nproc, j.gpus))
            literal = any(re.match(r"--nnodes", w) for w in j.words)
            if j.nnodes and literal and nodes != j.nnodes and not speaks(
                    j.texts, NNODES_WORDS):
                problems.append(
                    "the command sets --nnodes to %d, the job has %d pods, "
                    "and topogate says nothing about it" % (nodes, j.nnodes))
        # One node of each distinct per-node size and rendezvous is
        # started: a worker costs a torch import (seconds on 2 CPUs).
        key = (nproc, cfg["rdzv_backend"] == "static" and not cfg[
            "standalone"])
        started = ""
        if not problems and nproc > 0 and j.agents is None:
            if key not in launched:
                plan = torchlaunch.local_run(j.item, cfg, HERE)
                t0 = time.time()
                res = torchlaunch.run(plan, tmp)
                lp = torchlaunch.check(plan, res, j.claims)
                launched[key] = j.what
                detail = ["note: " + n for n in plan.notes]
                if lp and res.rc != 0:
                    detail += res.error_lines()
                problems += ["started here: " + p for p in lp]
                started = "; started here (%.0f s): %d workers, world %d" % (
                    time.time() - t0, len(res.ranks), nproc)
                if j.claims:
                    started += ", injected %s seen by each" % names(j.claims)
                rep.line("%s: %s%s" % (j.what, shape, started), problems,
                         detail)
                continue
            started = "; one node of this shape started with %s" % (
                launched[key].split(":")[0])
        what = "%s: %s%s" % (j.what, shape, started)
        if j.claims and not started:
            what += "; injected %s" % names(j.claims)
        rep.line(what, problems)


# --- self-tests: the harness can fail ---------------------------------------

def self_tests(rep, tmp, torch_jobs):
    hosts = [("worker-0", 1), ("worker-1", 1)]
    hf = {"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile"}
    cases = [
        ("-x FOO with OMPI_MCA_mca_base_env_list=BAR", ["-x", "FOO", "prog"],
         dict(hf, FOO="1", BAR="2", OMPI_MCA_mca_base_env_list="BAR"),
         {"BAR": "2"}, "does not support mixing"),
        ("BAR set on the launcher, not forwarded", ["prog"],
         dict(hf, BAR="2"), {"BAR": "2"}, "BAR missing"),
    ]
    for what, words, env, claims, want in cases:
        rdir = tempfile.mkdtemp(dir=tmp, prefix="self.")
        plan = mpi.local_run(words, env, hosts, HERE, rdir)
        res = mpi.run(plan, rdir)
        problems = mpi.check(plan, res, claims)
        seen = "\n".join(problems + res.error_lines(40))
        if problems and want in seen:
            line = next((ln for ln in seen.splitlines() if want in ln), want)
            rep.ok("self-test: %s is caught (%s)" % (what, line.strip()))
        else:
            rep.not_ok("self-test: %s is not caught" % what,
                       problems + res.error_lines())
    rdir = tempfile.mkdtemp(dir=tmp, prefix="self.")
    plan = mpi.local_run(["prog"], dict(
        hf, BAR="2", OMPI_MCA_mca_base_env_list="BAR"), hosts, HERE, rdir)
    res = mpi.run(plan, rdir)
    rep.line("self-test: OMPI_MCA_mca_base_env_list alone forwards BAR to "
             "both hosts", mpi.check(plan, res, {"BAR": "2"}),
             res.error_lines())
    item = {"entry": "run", "argv": ["--nproc_per_node=1", "train.py"],
            "env": {"PET_NNODES": "1"}, "gpus": 8}
    torch_jobs.append(Torch("self-test: torchrun --nproc_per_node=1 on 8 "
                            "GPUs with no word from topogate", item, {},
                            gpus=8, texts=[], claimed=True))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: harness.py BIN")
    binary = os.path.abspath(sys.argv[1])
    shared = os.environ.get("SHARED") or os.path.join(REPO, "..", "shared")
    if not os.path.isdir(shared):
        shared = os.path.join(REPO, "test", "data")
    tmp = tempfile.mkdtemp(prefix="topogate-runtimes.")
    rep = Report()
    t0 = time.time()
    try:
        torch_jobs = []
        self_tests(rep, tmp, torch_jobs)
        for case in golden_cases(tmp):
            judge(rep, case, binary, tmp, torch_jobs)
        if os.environ.get("ONLY"):
            pass
        elif os.path.isdir(os.path.join(shared, "corpus", "manifests")):
            for case in corpus_cases(shared, tmp):
                judge(rep, case, binary, tmp, torch_jobs)
        else:
            print("# skipped: corpus launch shapes (no %s/corpus/manifests)"
                  % shared)
        # The self-test's line is judged first; it must fail.
        self_torch, torch_jobs = torch_jobs[:1], torch_jobs[1:]
        judge_self_torch(rep, self_torch)
        judge_torch(rep, torch_jobs, tmp)
        if not os.environ.get("ONLY"):
            rep.known_unseen()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("# runtimes: %d passed, %d failed, %d skipped, %d known failures "
          "(TODO) (%.0f s)" % (rep.passed, rep.failed, rep.skipped, rep.todo,
                               time.time() - t0))
    return 1 if rep.failed else 0


def judge_self_torch(rep, jobs):
    inner = Report()
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        judge_torch(inner, jobs, tempfile.gettempdir())
    if inner.failed == 1 and "says nothing" in buf.getvalue():
        rep.ok(jobs[0].what + " is caught")
    else:
        rep.not_ok(jobs[0].what + " is not caught",
                   buf.getvalue().splitlines())


if __name__ == "__main__":
    sys.exit(main())
