"""Objects, topogate and the operators, for test/runtimes.

review()/topogate() send one object to `topogate audit --review -` and
return its answer with the patch applied by python jsonpatch.
processes() says which processes an object starts and with what: for each
container that runs mpirun or torchrun, its command line and its
environment as the container will have it, that is the object's env plus
what the operator that turns the object into pods adds (read from their
sources):

  mpi-operator v2 (kubeflow/mpi-operator pkg/controller/
  mpi_job_controller.go, newLauncherPodTemplate): the Launcher's first
  container gets K_MPI_JOB_ROLE, OMPI_MCA_orte_keep_fqdn_hostnames,
  OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile, OMPI_MCA_plm_rsh_args
  and OMPI_MCA_orte_set_default_slots=slotsPerWorker (default 1), appended
  after the user's; the hostfile has one line per Worker, `NAME slots=S`,
  and the Launcher first when runLauncherAsWorker.
  Trainer v2 (kubeflow/trainer pkg/runtime/framework/plugins/mpi/mpi.go,
  torch/torch.go, jobset/builder.go): the trainer-ancestor job's container
  `node` takes spec.trainer's command, args and env; with an MPI runtime
  the launcher's `node` gets the same OMPI_MCA_* (slots numProcPerNode; a
  runtime's 1 becomes the GPU count), a container of another name gets
  neither; with torch, PET_NNODES, PET_NPROC_PER_NODE (auto), PET_NODE_RANK,
  PET_MASTER_ADDR, PET_MASTER_PORT (29500).
  Training Operator v1 (kubeflow/training-operator pkg/controller.v1/
  pytorch/envvar.go, master.go, elastic.go): PYTHONUNBUFFERED, with a
  Master MASTER_ADDR/PORT, PET_MASTER_ADDR/PORT, WORLD_SIZE, RANK,
  PET_NODE_RANK; PET_NPROC_PER_NODE (nprocPerNode, default auto); PET_NNODES
  (all replicas, or min:max with elasticPolicy, plus PET_RDZV_BACKEND).

A Pod arrives with all of that already in its env: it is taken as it is.
"""

import base64
import copy
import json
import os
import re
import subprocess
import tempfile
import uuid

import jsonpatch

import shellcmd

GPU = "nvidia.com/gpu"
SANITIZER = ("AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
             "runtime error:")
NS = uuid.UUID("6d1b4c9e-3f0a-4f5e-8a47-2c9b1e7d5a13")


def get(d, *path):
    for p in path:
        if isinstance(d, dict) and p in d:
            d = d[p]
        elif isinstance(d, list) and isinstance(p, int) and \
                -len(d) <= p < len(d):
            d = d[p]
        else:
            return None
    return d


def group_version(obj):
    av = str(obj.get("apiVersion", "v1"))
    return av.split("/", 1) if "/" in av else ("", av)


# --- topogate ---------------------------------------------------------------

def review(obj, name):
    g, v = group_version(obj)
    k = str(obj.get("kind"))
    gvk = {"group": g, "version": v, "kind": k}
    gvr = {"group": g, "version": v, "resource": k.lower() + "s"}
    md = obj.get("metadata") or {}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": str(uuid.uuid5(NS, name)), "kind": gvk,
                        "resource": gvr, "requestKind": gvk,
                        "requestResource": gvr,
                        "name": md.get("name", ""),
                        "namespace": md.get("namespace") or "default",
                        "operation": "CREATE",
                        "userInfo": {"username": "runtimes-test"},
                        "object": obj, "oldObject": None, "dryRun": False}}


class Answer:
    """topogate's answer: allowed, message, warnings, ops, and the object
    with the patch applied (or the object itself)."""

    def __init__(self, resp, obj):
        self.resp = resp
        self.allowed = bool(resp.get("allowed"))
        self.message = get(resp, "status", "message") or ""
        self.warnings = list(resp.get("warnings") or [])
        self.ops = []
        if resp.get("patch"):
            self.ops = json.loads(base64.b64decode(resp["patch"]))
        self.patched = jsonpatch.apply_patch(obj, self.ops) if self.ops \
            else copy.deepcopy(obj)

    def texts(self):
        return ([self.message] if self.message else []) + self.warnings


def topogate(binary, body, args, cwd):
    """Runs `BIN audit --review - ARGS` on an AdmissionReview (a dict, or
    the bytes of a golden .in.json); returns an Answer or raises
    RuntimeError with why."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    try:
        p = subprocess.run([binary, "audit", "--review", "-"] + list(args),
                           input=data, capture_output=True, cwd=cwd,
                           timeout=30)
    except subprocess.TimeoutExpired:
        raise RuntimeError("topogate audit --review timed out")
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0 or re.search(SANITIZER, err):
        raise RuntimeError("topogate audit --review exited %d: %s" % (
            p.returncode, err[-400:]))
    resp = json.loads(p.stdout).get("response") or {}
    obj = json.loads(data)["request"]["object"]
    return Answer(resp, obj)


def with_policy(args, policy_top, repo, tmp):
    """The flags of a golden case whose .policy file holds the top of a
    policy: composed with deploy/policy.yaml's instanceTypes, as
    test/golden/run.sh does."""
    if policy_top is None:
        return args
    with open(os.path.join(repo, "deploy", "policy.yaml")) as f:
        table = f.read()
    table = table[table.index("\ninstanceTypes:") + 1:]
    fd, path = tempfile.mkstemp(suffix=".yaml", dir=tmp)
    with os.fdopen(fd, "w") as f:
        f.write(policy_top)
        f.write(table)
    return ["--policy", path] + list(args)


# --- env as the container sees it ------------------------------------------

def _field_ref(path, md):
    m = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if m:
        return (md.get(m.group(1)) or {}).get(m.group(2), "")
    return {"metadata.name": md.get("name") or md.get("generateName", ""),
            "metadata.namespace": md.get("namespace", "default"),
            "status.podIP": "127.0.0.1", "status.hostIP": "127.0.0.1",
            "spec.nodeName": "localhost"}.get(path, "")


def resolve_env(entries, md, start=None):
    """The env a container gets from its env list: later entries win,
    $(VAR) refers to earlier ones ($$ escapes), fieldRef reads the pod's
    metadata; a secret or config map value is unknown (kept as a marker)."""
    env = dict(start or {})
    for e in entries or []:
        if not isinstance(e, dict) or "name" not in e:
            continue
        name = str(e["name"])
        if "value" in e:
            raw = "" if e["value"] is None else str(e["value"])
            env[name] = re.sub(
                r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                lambda m: "$" if m.group(0) == "$$" else env.get(
                    m.group(1), m.group(0)), raw)
        elif get(e, "valueFrom", "fieldRef", "fieldPath"):
            env[name] = _field_ref(e["valueFrom"]["fieldRef"]["fieldPath"], md)
        elif "valueFrom" in e:
            env[name] = "unknown-" + "-".join(sorted(e["valueFrom"]))
        else:
            env[name] = ""
    return env


def upsert(env_list, entries):
    """Trainer's apply.UpsertEnvVars: replace by name, else append."""
    out = [copy.deepcopy(e) for e in env_list or []]
    for e in entries:
        for i, cur in enumerate(out):
            if cur.get("name") == e["name"]:
                out[i] = copy.deepcopy(e)
                break
        else:
            out.append(copy.deepcopy(e))
    return out


def quantity(v):
    try:
        return int(str(v))
    except (TypeError, ValueError):
        return None


def gpus_of(resources):
    r = resources or {}
    n = quantity(get(r, "limits", GPU)) or quantity(get(r, "requests", GPU))
    return n if n and n > 0 else 0


def argv_of(c):
    return [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]


class Process:
    """A container that runs a launcher. label names it; argv is its
    command line; entries its env list (after the operator's additions);
    md the pod metadata for fieldRefs; gpus its nvidia.com/gpu; hosts, for
    mpirun, the hostfile the operator writes: [(name, slots)], the
    launcher's own entry named "localhost", or None when there is none;
    nnodes the job's pod count as the operator sets it (PET_NNODES), or
    None."""

    def __init__(self, label, argv, entries, md, gpus, hosts=None,
                 nnodes=None, own=None):
        self.label = label
        m = re.search(r"container '([^']*)'", label)
        self.cname = m.group(1) if m else None
        self.argv = argv
        self.entries = entries
        self.md = md
        self.gpus = gpus
        self.hosts = hosts
        self.nnodes = nnodes
        self.worker_gpus = gpus
        self.env = resolve_env(entries, md)
        # The env as the object writes it, before the operator's additions:
        # what a patch to the object can change.
        self.own_env = resolve_env(entries if own is None else own, md)
        self.launches = shellcmd.find_launches(argv, self.env)


def _mpijob(obj):
    spec = obj.get("spec") or {}
    rs = spec.get("mpiReplicaSpecs") or {}
    name = get(obj, "metadata", "name") or "mpijob"
    slots = quantity(spec.get("slotsPerWorker"))
    slots = 1 if slots is None else slots
    workers = quantity(get(rs, "Worker", "replicas"))
    workers = 1 if workers is None and "Worker" in rs else (workers or 0)
    hosts = [("%s-worker-%d" % (name, i), slots) for i in range(workers)]
    if spec.get("runLauncherAsWorker"):
        hosts.insert(0, ("localhost", slots))
    ltmpl = get(rs, "Launcher", "template") or {}
    md = ltmpl.get("metadata") or {}
    wgpus = max([gpus_of(c.get("resources")) for c in get(
        rs, "Worker", "template", "spec", "containers") or []] or [0])
    out = []
    for i, c in enumerate(get(ltmpl, "spec", "containers") or []):
        env = list(c.get("env") or [])
        if i == 0:  # the operator changes the first container only
            env += [{"name": "K_MPI_JOB_ROLE", "value": "launcher"},
                    {"name": "OMPI_MCA_orte_keep_fqdn_hostnames",
                     "value": "true"},
                    {"name": "OMPI_MCA_orte_default_hostfile",
                     "value": "/etc/mpi/hostfile"},
                    {"name": "OMPI_MCA_plm_rsh_args",
                     "value": "-o ConnectionAttempts=10"},
                    {"name": "OMPI_MCA_orte_set_default_slots",
                     "value": str(slots)}]
        out.append(Process("Launcher container '%s'" % c.get("name"),
                           argv_of(c), env, md, gpus_of(c.get("resources")),
                           hosts=hosts if i == 0 else None,
                           own=c.get("env") or []))
        out[-1].worker_gpus = wgpus
    return out


def _pytorchjob(obj):
    spec = obj.get("spec") or {}
    rs = spec.get("pytorchReplicaSpecs") or {}
    name = get(obj, "metadata", "name") or "pytorchjob"
    total = sum(quantity(get(r, "replicas")) or 0 for r in rs.values())
    elastic = spec.get("elasticPolicy")
    nproc = spec.get("nprocPerNode")
    if nproc is None and isinstance(elastic, dict) and \
            elastic.get("nProcPerNode") is not None:
        nproc = elastic["nProcPerNode"]
    nproc = "auto" if nproc is None else str(nproc)
    out = []
    for rtype, r in rs.items():
        tmpl = get(r, "template") or {}
        md = tmpl.get("metadata") or {}
        for c in get(tmpl, "spec", "containers") or []:
            env = list(c.get("env") or []) + [
                {"name": "PYTHONUNBUFFERED", "value": "1"}]
            if "Master" in rs:
                rank = 0 if rtype == "Master" else 1
                addr = "%s-master-0" % name
                env += [{"name": "MASTER_PORT", "value": "23456"},
                        {"name": "PET_MASTER_PORT", "value": "23456"},
                        {"name": "MASTER_ADDR", "value": addr},
                        {"name": "PET_MASTER_ADDR", "value": addr},
                        {"name": "WORLD_SIZE", "value": str(
                            total * (quantity(nproc) or 1))},
                        {"name": "RANK", "value": str(rank)},
                        {"name": "PET_NODE_RANK", "value": str(rank)}]
            env.append({"name": "PET_NPROC_PER_NODE", "value": nproc})
            if isinstance(elastic, dict):
                lo = elastic.get("minReplicas", total)
                hi = elastic.get("maxReplicas", total)
                env += [{"name": "PET_NNODES", "value": "%s:%s" % (lo, hi)},
                        {"name": "PET_RDZV_BACKEND", "value": str(
                            elastic.get("rdzvBackend", "c10d"))},
                        {"name": "PET_RDZV_ENDPOINT",
                         "value": "%s-worker-0:23456" % name}]
            else:
                env.append({"name": "PET_NNODES", "value": str(total)})
            nodes = total
            if isinstance(elastic, dict):
                nodes = quantity(elastic.get("maxReplicas")) or total
            out.append(Process("%s container '%s'" % (rtype, c.get("name")),
                               argv_of(c), env, md,
                               gpus_of(c.get("resources")), nnodes=nodes,
                               own=c.get("env") or []))
    return out


def _ancestor(rj):
    return get(rj, "template", "metadata", "labels",
               "trainer.kubeflow.org/trainjob-ancestor-step")


def _trainjob(obj, runtimes):
    spec = obj.get("spec") or {}
    tr = spec.get("trainer") or {}
    name = get(obj, "metadata", "name") or "trainjob"
    rt = runtimes.get(get(spec, "runtimeRef", "name"))
    mlp = get(rt, "spec", "mlPolicy") or {}
    rjobs = get(rt, "spec", "template", "spec", "replicatedJobs") or []
    nnodes = quantity(tr.get("numNodes")) or quantity(mlp.get("numNodes")) or 1
    res = tr.get("resourcesPerNode")
    out = []
    if rt is None:
        # An unknown runtime: Trainer's default torch-distributed shape,
        # the trainer container made from spec.trainer alone.
        rjobs = [{"name": "node", "template": {
            "metadata": {"labels": {
                "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": {"containers": [
                {"name": "node"}]}}}}}]
        mlp = {"torch": {}}
    mpi = mlp.get("mpi")
    if res is None:
        for rj in rjobs:
            for c in get(rj, "template", "spec", "template", "spec",
                         "containers") or []:
                if rj.get("name") == "node" and c.get("name") == "node":
                    res = c.get("resources")
    gpus = gpus_of(res)
    for rj in rjobs:
        trainer_step = _ancestor(rj) == "trainer"
        for c in get(rj, "template", "spec", "template", "spec",
                     "containers") or []:
            c = copy.deepcopy(c)
            if not (c.get("name") == "node" and (trainer_step or (
                    mpi and mpi.get("runLauncherAsNode") and
                    rj.get("name") == "node"))):
                if not argv_of(c):
                    continue
                out.append(Process("%s container '%s'" % (
                    rj.get("name"), c.get("name")), argv_of(c),
                    c.get("env") or [], {}, gpus_of(c.get("resources"))))
                continue
            if trainer_step:
                for k in ("command", "args"):
                    if k in tr:
                        c[k] = tr[k]
            env = upsert(c.get("env"), tr.get("env") or [])
            own = env
            hosts = None
            if mpi and rj.get("name") == "launcher" or (
                    mpi and trainer_step):
                slots = quantity(tr.get("numProcPerNode"))
                if slots is None:
                    slots = quantity(mpi.get("numProcPerNode")) or 1
                    if slots == 1 and gpus > 1:
                        slots = gpus
                env = upsert(env, [
                    {"name": "OMPI_MCA_orte_default_hostfile",
                     "value": "/etc/mpi/hostfile"},
                    {"name": "OMPI_MCA_orte_keep_fqdn_hostnames",
                     "value": "true"},
                    {"name": "OMPI_MCA_orte_set_default_slots",
                     "value": str(slots)},
                    {"name": "OMPI_MCA_plm_rsh_args",
                     "value": "-o ConnectionAttempts=10"}])
                nodes = nnodes
                hosts = []
                if mpi.get("runLauncherAsNode"):
                    hosts.append(("localhost", slots))
                    nodes = max(nnodes - 1, 1)
                hosts += [("%s-node-0-%d.%s" % (name, i, name), slots)
                          for i in range(nodes)]
            elif "torch" in mlp:
                nproc = tr.get("numProcPerNode", "auto")
                if nproc == "auto" and not gpus:
                    # torch.go: no GPU, so the CPUs per node (at least 1).
                    cpu = str(get(res, "limits", "cpu") or get(
                        res, "requests", "cpu") or "1")
                    nproc = max(1, -(-int(cpu[:-1]) // 1000) if cpu.endswith(
                        "m") else int(float(cpu) + 0.999))
                env = upsert(env, [
                    {"name": "PET_NNODES", "value": str(nnodes)},
                    {"name": "PET_NPROC_PER_NODE", "value": str(nproc)},
                    {"name": "PET_NODE_RANK", "value": "0"},
                    {"name": "PET_MASTER_ADDR",
                     "value": "%s-node-0-0.%s" % (name, name)},
                    {"name": "PET_MASTER_PORT", "value": "29500"}])
            out.append(Process("%s container '%s'" % (rj.get("name"),
                                                      c.get("name")),
                               argv_of(c), env, {}, gpus, hosts=hosts,
                               nnodes=nnodes, own=own))
    return out


def _pod(obj):
    md = obj.get("metadata") or {}
    out = []
    nn = None
    for c in get(obj, "spec", "containers") or []:
        env = resolve_env(c.get("env"), md)
        if "PET_NNODES" in env:
            nn = env["PET_NNODES"]
        out.append(Process("container '%s'" % c.get("name"), argv_of(c),
                           c.get("env") or [], md,
                           gpus_of(c.get("resources"))))
    for p in out:
        p.nnodes = nnodes_max(nn)
    return out


def nnodes_max(v):
    if v is None:
        return None
    return quantity(str(v).split(":")[-1])


def processes(obj, runtimes):
    """The launcher processes obj starts (see Process)."""
    kind = obj.get("kind")
    g, _ = group_version(obj)
    if kind == "Pod" and g == "":
        ps = _pod(obj)
    elif kind == "MPIJob":
        ps = _mpijob(obj)
    elif kind == "PyTorchJob":
        ps = _pytorchjob(obj)
    elif kind == "TrainJob":
        ps = _trainjob(obj, runtimes)
    else:
        ps = []
    return [p for p in ps if p.launches]


def injected(before, after):
    """The variables whose value the patch set or changed in one process's
    env, and those its OMPI_MCA_mca_base_env_list names: {name: value}
    (for a bare name in the list, the launcher's value)."""
    out = {n: v for n, v in after.own_env.items()
           if before is None or before.own_env.get(n) != v}
    lst = after.own_env.get("OMPI_MCA_mca_base_env_list")
    if lst and (before is None or before.own_env.get(
            "OMPI_MCA_mca_base_env_list") != lst):
        for item in lst.split(";"):
            if not item:
                continue
            n, eq, v = item.partition("=")
            out[n] = v if eq else after.env.get(n, "")
    out.pop("OMPI_MCA_mca_base_env_list", None)
    return out
