#!/usr/bin/python3
"""Turn the third-party corpus into AdmissionReviews of Pods, and judge
what topogate answered. Used by test/corpus/run.sh.

  extract.py reviews OUT_DIR
      Reads every manifest in $SHARED/corpus/manifests and every file in
      $SHARED/corpus/admissionreviews. Writes OUT_DIR/NNNN.json and prints
      an index, one tab-separated line per item:
        review  NNNN.json  FILE  POD  UID   a Pod CREATE review we built
        raw     NNNN.json  FILE  -    -     a fixture file, sent as it is
        skip    -          FILE  -    WHY   nothing we can send
  extract.py report OUT_DIR INDEX
      After run.sh ran `topogate audit --review -` on each item (leaving
      NNNN.rc, NNNN.out, NNNN.err), prints one line per item and a
      summary; exits 1 when anything crashed or broke the contract:
        review: exit 0, stdout an AdmissionReview whose response.uid is
                the request's;
        raw:    exit 0 or 2, stdout JSON;
        any:    no signal, no timeout, no sanitizer report on stderr.

Pod templates are found where each kind keeps them (Pod; Deployment,
ReplicaSet, StatefulSet, DaemonSet, Job: spec.template; CronJob:
spec.jobTemplate.spec.template; PyTorchJob: pytorchReplicaSpecs.*;
MPIJob: mpiReplicaSpecs.*; JobSet: replicatedJobs[]; (Cluster)
TrainingRuntime: spec.template.spec.replicatedJobs[]; TrainJob: a pod made
from spec.trainer; AppWrapper: components[].template, recursively; any
other kind: every `template` that holds a pod spec). Each pod gets the
labels and env its controller would add where that is cheap (Training
Operator v1 labels, PET_NNODES = total replicas, PET_NPROC_PER_NODE from
nprocPerNode, init-pytorch on workers; mpi-operator and JobSet labels;
Trainer's PET_* env on container `node`).

$SHARED defaults to ../shared beside the repository.
"""

import base64
import copy
import glob
import json
import os
import re
import sys
import uuid

try:
    import yaml
except ImportError:
    sys.exit("extract.py: needs python3-yaml: apt-get install python3-yaml")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHARED = os.environ.get("SHARED") or os.path.join(REPO, "..", "shared")
if not os.path.isdir(SHARED):  # a clone alone: test/data/README.md
    SHARED = os.path.join(REPO, "test", "data")
NS_UUID = uuid.UUID("0c2f6a4e-51d3-4b7e-9a61-3f0e8d2b7c15")
SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer",
                   "UndefinedBehaviorSanitizer", "runtime error:")


class Loader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as strings (JSON has no dates), as
    the API server's YAML decoder does."""


Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def is_dict(x):
    return isinstance(x, dict)


def is_list(x):
    return isinstance(x, list)


def get(d, *path):
    for p in path:
        if is_dict(d) and p in d:
            d = d[p]
        elif is_list(d) and isinstance(p, int) and 0 <= p < len(d):
            d = d[p]
        else:
            return None
    return d


def name_of(doc, default="unnamed"):
    md = get(doc, "metadata")
    n = get(md, "name") or get(md, "generateName")
    return str(n) if n is not None else default


def group_of(doc):
    av = str(doc.get("apiVersion", ""))
    return av.split("/")[0] if "/" in av else ""


def containers_of(spec):
    return [c for c in (spec.get("containers") or []) if is_dict(c)] \
        if is_list(spec.get("containers")) else []


def add_env(container, env):
    """Appends env (skipping names already there), as the controllers do."""
    cur = container.get("env")
    if cur is None:
        cur = container["env"] = []
    if not is_list(cur):
        return
    names = {e.get("name") for e in cur if is_dict(e)}
    for e in env:
        if e["name"] not in names:
            cur.append(e)


# A pod: (label, metadata dict, spec dict). The label says where it came
# from, e.g. "PyTorchJob/fsdp Worker".

def template_pod(tmpl):
    """(metadata, spec) of a PodTemplateSpec, deep-copied, or None."""
    if not is_dict(tmpl) or not is_dict(tmpl.get("spec")):
        return None
    md = tmpl.get("metadata")
    return (copy.deepcopy(md) if is_dict(md) else {},
            copy.deepcopy(tmpl["spec"]))


def labels_of(md):
    if not is_dict(md.get("labels")):
        md["labels"] = {}
    return md["labels"]


def pods_pytorchjob(doc):
    out = []
    spec = get(doc, "spec") or {}
    rs = spec.get("pytorchReplicaSpecs") if is_dict(spec) else None
    if not is_dict(rs):
        return out
    job = name_of(doc)
    total = 0
    for r in rs.values():
        n = get(r, "replicas")
        total = total + n if isinstance(total, int) and isinstance(n, int) \
            else "%s+%s" % (total, n)
    nproc = spec.get("nprocPerNode", "auto")
    elastic = spec.get("elasticPolicy")
    nnodes = str(total)
    if is_dict(elastic) and "minReplicas" in elastic \
            and "maxReplicas" in elastic:
        nnodes = "%s:%s" % (elastic["minReplicas"], elastic["maxReplicas"])
    for rtype, r in rs.items():
        p = template_pod(get(r, "template"))
        if p is None:
            continue
        md, pspec = p
        lab = labels_of(md)
        lab.update({
            "training.kubeflow.org/job-name": job,
            "training.kubeflow.org/operator-name": "pytorchjob-controller",
            "training.kubeflow.org/replica-type": str(rtype).lower(),
            "training.kubeflow.org/replica-index": "0",
        })
        if str(rtype) == "Master":
            lab["training.kubeflow.org/job-role"] = "master"
        md["name"] = "%s-%s-0" % (job, str(rtype).lower())
        for c in containers_of(pspec):
            add_env(c, [{"name": "PYTHONUNBUFFERED", "value": "0"},
                        {"name": "PET_NPROC_PER_NODE", "value": str(nproc)},
                        {"name": "PET_NNODES", "value": nnodes}])
        if str(rtype) == "Worker" and "Master" in rs:
            ic = pspec.get("initContainers")
            if ic is None or is_list(ic):
                pspec["initContainers"] = (ic or []) + [{
                    "name": "init-pytorch", "image": "alpine:3.10",
                    "command": ["sh", "-c", "until nslookup %s-master-0; do "
                                "echo waiting for master; sleep 2; done;"
                                % job],
                    "resources": {
                        "limits": {"cpu": "100m", "memory": "20Mi"},
                        "requests": {"cpu": "50m", "memory": "10Mi"}}}]
        out.append(("PyTorchJob/%s %s" % (job, rtype), md, pspec,
                    ("kubeflow.org/v1", "PyTorchJob", job)))
    return out


def pods_mpijob(doc):
    out = []
    rs = get(doc, "spec", "mpiReplicaSpecs")
    if not is_dict(rs):
        return out
    job = name_of(doc)
    for rtype, r in rs.items():
        p = template_pod(get(r, "template"))
        if p is None:
            continue
        md, pspec = p
        role = str(rtype).lower()
        labels_of(md).update({
            "training.kubeflow.org/job-name": job,
            "training.kubeflow.org/job-role": role,
            "training.kubeflow.org/operator-name": "mpi-operator",
        })
        if role == "worker":
            labels_of(md)["training.kubeflow.org/replica-index"] = "0"
        md["name"] = "%s-%s-0" % (job, role)
        cs = containers_of(pspec)
        if cs:
            add_env(cs[0], [{"name": "K_MPI_JOB_ROLE", "value": role}])
        out.append(("MPIJob/%s %s" % (job, rtype), md, pspec,
                    (str(doc.get("apiVersion")), "MPIJob", job)))
    return out


def jobset_labels(md, jobset, rjob, replicas):
    js = {
        "jobset.sigs.k8s.io/jobset-name": jobset,
        "jobset.sigs.k8s.io/replicatedjob-name": rjob,
        "jobset.sigs.k8s.io/replicatedjob-replicas": str(replicas),
        "jobset.sigs.k8s.io/job-index": "0",
        "jobset.sigs.k8s.io/restart-attempt": "0",
    }
    labels_of(md).update(js)
    ann = md.get("annotations")
    if not is_dict(ann):
        ann = md["annotations"] = {}
    ann.update(js)
    ann["batch.kubernetes.io/job-completion-index"] = "0"


def torch_env(num_nodes, nproc, jobset):
    return [
        {"name": "PET_NNODES", "value": str(num_nodes)},
        {"name": "PET_NPROC_PER_NODE", "value": str(nproc)},
        {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/"
                         "job-completion-index']"}}},
        {"name": "PET_MASTER_ADDR", "value": "%s-node-0-0.%s"
         % (jobset, jobset)},
        {"name": "PET_MASTER_PORT", "value": "29500"},
    ]


def pods_replicated_jobs(rjobs, jobset, kind, torch=None):
    """Pods of JobSet replicatedJobs; torch = (numNodes, nproc) adds
    Trainer's env to container `node` of replicated job `node`."""
    out = []
    if not is_list(rjobs):
        return out
    for i, rj in enumerate(rjobs):
        if not is_dict(rj):
            continue
        p = template_pod(get(rj, "template", "spec", "template"))
        if p is None:
            continue
        md, pspec = p
        rname = str(rj.get("name", i))
        jobset_labels(md, jobset, rname, rj.get("replicas", 1))
        md["generateName"] = "%s-%s-0-0-" % (jobset, rname)
        if torch and rname == "node":
            for c in containers_of(pspec):
                if c.get("name") == "node":
                    add_env(c, torch_env(torch[0], torch[1], jobset))
        out.append(("%s/%s %s" % (kind, jobset, rname), md, pspec,
                    ("batch/v1", "Job", "%s-%s-0" % (jobset, rname))))
    return out


def pods_trainjob(doc):
    """Trainer makes the pod from the runtime; the TrainJob alone gives
    container `node` its image, command, env and resources. The override
    fields of v2.0 (podSpecOverrides), v2.1 (podTemplateOverrides) and
    v2.2+ (runtimePatches) are merged shallowly."""
    spec = get(doc, "spec")
    tr = get(spec, "trainer")
    if not is_dict(tr):
        return []
    job = name_of(doc)
    c = {"name": "node", "image": tr.get("image",
                                         "pytorch/pytorch:2.7.1-cuda12.8-"
                                         "cudnn9-runtime")}
    for k in ("command", "args"):
        if k in tr:
            c[k] = copy.deepcopy(tr[k])
    c["env"] = copy.deepcopy(tr["env"]) if is_list(tr.get("env")) else []
    add_env(c, torch_env(tr.get("numNodes", 1),
                         tr.get("numProcPerNode", "auto"), job))
    if is_dict(tr.get("resourcesPerNode")):
        c["resources"] = copy.deepcopy(tr["resourcesPerNode"])
    pspec = {"containers": [c], "restartPolicy": "OnFailure"}
    md = {}

    def merge_spec(src):
        if not is_dict(src):
            return
        for k, v in src.items():
            if k not in ("containers", "initContainers", "targetJobs"):
                pspec[k] = copy.deepcopy(v)

    def targets_node(o):
        tj = get(o, "targetJobs")
        return not is_list(tj) or any(get(t, "name") == "node" for t in tj)

    for o in get(spec, "podSpecOverrides") or []:
        if is_dict(o) and targets_node(o):
            merge_spec(o)
    for o in get(spec, "podTemplateOverrides") or []:
        if is_dict(o) and targets_node(o):
            merge_spec(o.get("spec"))
            if is_dict(o.get("metadata")):
                md.update(copy.deepcopy(o["metadata"]))
    for patch in get(spec, "runtimePatches") or []:
        tmpl = get(patch, "trainingRuntimeSpec", "template")
        if is_dict(get(tmpl, "metadata")):
            for k in ("labels", "annotations"):
                if is_dict(tmpl["metadata"].get(k)):
                    md.setdefault(k, {}).update(tmpl["metadata"][k])
        for rj in get(tmpl, "spec", "replicatedJobs") or []:
            if get(rj, "name") == "node":
                merge_spec(get(rj, "template", "spec", "template", "spec"))
    jobset_labels(md, job, "node", 1)
    md["generateName"] = "%s-node-0-0-" % job
    return [("TrainJob/%s node" % job, md, pspec,
             ("batch/v1", "Job", job + "-node-0"))]


def pods_generic(doc, kind):
    """Any `template` holding a pod spec, anywhere in the document."""
    out = []

    def walk(x, path):
        if is_dict(x):
            t = x.get("template")
            if is_dict(t) and is_dict(t.get("spec")) and \
                    is_list(t["spec"].get("containers")):
                p = template_pod(t)
                out.append(("%s/%s %s" % (kind, name_of(doc), path or "."),
                            p[0], p[1], None))
            for k, v in x.items():
                walk(v, "%s.%s" % (path, k) if path else str(k))
        elif is_list(x):
            for i, v in enumerate(x):
                walk(v, "%s[%d]" % (path, i))

    walk(doc.get("spec"), "spec")
    return out


def pods_of(doc, depth=0):
    if not is_dict(doc) or depth > 8:
        return []
    kind = str(doc.get("kind", ""))
    group = group_of(doc)
    spec = doc.get("spec")
    name = name_of(doc)
    if kind == "Pod" and group == "":
        md = copy.deepcopy(doc.get("metadata")) if is_dict(
            doc.get("metadata")) else {}
        return [("Pod/%s" % name, md, copy.deepcopy(spec)
                 if is_dict(spec) else {}, None)]
    if group in ("apps", "batch") and kind in (
            "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"):
        p = template_pod(get(spec, "template"))
        if p is None:
            return []
        md, pspec = p
        md.setdefault("generateName", name + "-")
        owner = {"Deployment": ("apps/v1", "ReplicaSet", name + "-0"),
                 "ReplicaSet": ("apps/v1", "ReplicaSet", name),
                 "StatefulSet": ("apps/v1", "StatefulSet", name),
                 "DaemonSet": ("apps/v1", "DaemonSet", name),
                 "Job": ("batch/v1", "Job", name)}[kind]
        if kind == "Job":
            labels_of(md).update({"batch.kubernetes.io/job-name": name,
                                  "job-name": name})
        return [("%s/%s" % (kind, name), md, pspec, owner)]
    if group == "batch" and kind == "CronJob":
        p = template_pod(get(spec, "jobTemplate", "spec", "template"))
        if p is None:
            return []
        md, pspec = p
        md.setdefault("generateName", name + "-0-")
        return [("CronJob/%s" % name, md, pspec,
                 ("batch/v1", "Job", name + "-0"))]
    if group == "kubeflow.org" and kind == "PyTorchJob":
        return pods_pytorchjob(doc)
    if group == "kubeflow.org" and kind == "MPIJob":
        return pods_mpijob(doc)
    if group == "jobset.x-k8s.io" and kind == "JobSet":
        return pods_replicated_jobs(get(spec, "replicatedJobs"), name,
                                    "JobSet")
    if group == "trainer.kubeflow.org" and kind in (
            "TrainingRuntime", "ClusterTrainingRuntime"):
        torch = None
        mlp = get(spec, "mlPolicy")
        if is_dict(get(mlp, "torch")):
            torch = (mlp.get("numNodes", 1),
                     mlp["torch"].get("numProcPerNode", "auto"))
        return pods_replicated_jobs(
            get(spec, "template", "spec", "replicatedJobs"), name, kind,
            torch)
    if group == "trainer.kubeflow.org" and kind == "TrainJob":
        return pods_trainjob(doc)
    if group == "workload.codeflare.dev" and kind == "AppWrapper":
        out = []
        for comp in get(spec, "components") or []:
            out += pods_of(get(comp, "template"), depth + 1)
        return out
    if kind in ("Service", "ConfigMap", "Secret", "Namespace",
                "ServiceAccount", "ClusterRole", "Role", "RoleBinding",
                "ClusterRoleBinding", "PersistentVolumeClaim"):
        return []
    return pods_generic(doc, kind or "?")


def wrap(file, index, label, md, spec, owner, doc_ns):
    md = dict(md)
    ns = md.get("namespace") or doc_ns or "default"
    if not isinstance(ns, str):
        ns = str(ns)
    md["namespace"] = ns
    if not md.get("name") and not md.get("generateName"):
        md["generateName"] = "corpus-"
    if owner:
        md["ownerReferences"] = [{
            "apiVersion": owner[0], "kind": owner[1], "name": str(owner[2]),
            "uid": str(uuid.uuid5(NS_UUID, "owner/%s/%s" % (file, owner))),
            "controller": True, "blockOwnerDeletion": True}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
    uid = str(uuid.uuid5(NS_UUID, "%s#%d" % (file, index)))
    req = {
        "uid": uid,
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
        "requestResource": {"group": "", "version": "v1",
                            "resource": "pods"},
    }
    if md.get("name"):
        req["name"] = md["name"]
    req.update({
        "namespace": ns,
        "operation": "CREATE",
        "userInfo": {"username": "system:serviceaccount:kube-system:"
                                 "job-controller",
                     "groups": ["system:serviceaccounts",
                                "system:serviceaccounts:kube-system",
                                "system:authenticated"]},
        "object": pod,
        "oldObject": None,
        "dryRun": False,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
    })
    return uid, {"apiVersion": "admission.k8s.io/v1",
                 "kind": "AdmissionReview", "request": req}


def clean(s):
    return re.sub(r"[\t\n]", " ", str(s))


def cmd_reviews(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    n = 0
    lines = []

    def emit(kind, fname, file, pod, extra):
        lines.append("\t".join([kind, fname, file, clean(pod),
                                clean(extra)]))

    mdir = os.path.join(SHARED, "corpus", "manifests")
    manifests = sorted(glob.glob(os.path.join(mdir, "*.yaml")) +
                       glob.glob(os.path.join(mdir, "*.yml")) +
                       glob.glob(os.path.join(mdir, "*.json")))
    adir = os.path.join(SHARED, "corpus", "admissionreviews")
    fixtures = sorted(glob.glob(os.path.join(adir, "*")))
    if not manifests:
        sys.exit("extract.py: no manifests in %s (set SHARED)" % mdir)

    def from_yaml(path, rel):
        nonlocal n
        try:
            with open(path, encoding="utf-8") as f:
                docs = list(yaml.load_all(f, Loader=Loader))
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            mark = getattr(e, "problem_mark", None)
            where = "line %d, column %d: " % (mark.line + 1, mark.column + 1) \
                if mark else ""
            what = getattr(e, "problem", None) or str(e).splitlines()[0]
            emit("skip", "-", rel, "-", "not YAML as stored: %s%s"
                 % (where, what))
            return
        found = 0
        for d, doc in enumerate(docs):
            if doc is None:
                continue
            if not is_dict(doc):
                emit("skip", "-", rel, "document %d" % d,
                     "a %s, not an object" % type(doc).__name__)
                continue
            doc_ns = get(doc, "metadata", "namespace")
            for label, md, spec, owner in pods_of(doc):
                n += 1
                found += 1
                uid, rv = wrap(rel, n, label, md, spec, owner, doc_ns)
                fname = "%04d.json" % n
                with open(os.path.join(out_dir, fname), "w") as f:
                    json.dump(rv, f, default=str)
                emit("review", fname, rel, label, uid)
        if not found:
            emit("skip", "-", rel, "-", "no pod template in it")

    for path in manifests:
        from_yaml(path, os.path.relpath(path, SHARED))
    for path in fixtures:
        rel = os.path.relpath(path, SHARED)
        n += 1
        fname = "%04d.json" % n
        with open(path, "rb") as src, \
                open(os.path.join(out_dir, fname), "wb") as dst:
            dst.write(src.read())
        emit("raw", fname, rel, "-", "-")
        if path.endswith((".yaml", ".yml")):
            # A Pod fixture: also send it wrapped as a review.
            from_yaml(path, rel)
    print("\n".join(lines))


def cmd_report(out_dir, index):
    failures = 0
    counts = {"pods": 0, "allowed": 0, "denied": 0, "patched": 0,
              "raw": 0, "skipped": 0}
    with open(index, encoding="utf-8") as f:
        rows = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    for kind, fname, file, pod, extra in rows:
        if kind == "skip":
            counts["skipped"] += 1
            print("skip - %s: %s" % (file, extra))
            continue
        base = os.path.join(out_dir, fname[:-len(".json")])
        try:
            rc = int(open(base + ".rc").read().strip())
        except (OSError, ValueError):
            rc = None
        out = open(base + ".out", "rb").read() if os.path.exists(
            base + ".out") else b""
        err = open(base + ".err", "rb").read().decode(
            errors="replace") if os.path.exists(base + ".err") else ""
        what = "%s %s" % (file, pod) if kind == "review" else file
        bad = []
        if rc is None:
            bad.append("not run")
        elif rc in (124, 137):
            bad.append("timed out (a hang)")
        elif rc > 128:
            bad.append("killed by signal %d" % (rc - 128))
        if any(m in err for m in SANITIZER_MARKS):
            bad.append("sanitizer report on stderr")
        body = None
        try:
            body = json.loads(out.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            bad.append("stdout is not JSON")
        verdict = "?"
        if kind == "review":
            counts["pods"] += 1
            if rc not in (None, 0) and not bad:
                bad.append("exit status %d (want 0)" % rc)
            resp = body.get("response") if is_dict(body) else None
            if body is not None and not is_dict(resp):
                bad.append("no response in the body")
            elif is_dict(resp):
                if resp.get("uid") != extra:
                    bad.append("response.uid %r, want %r"
                               % (resp.get("uid"), extra))
                allowed = resp.get("allowed")
                nops = 0
                if "patch" in resp:
                    try:
                        nops = len(json.loads(base64.b64decode(
                            resp["patch"])))
                    except (ValueError, TypeError):
                        bad.append("the patch is not base64 JSON")
                verdict = "%s, %d patch ops" % (
                    "allowed" if allowed is True else "denied", nops)
                counts["allowed" if allowed is True else "denied"] += 1
                if nops:
                    counts["patched"] += 1
                warnings = resp.get("warnings") or []
                if warnings:
                    verdict += ", %d warnings" % len(warnings)
        else:
            counts["raw"] += 1
            if rc not in (None, 0, 2) and not bad:
                bad.append("exit status %d (want 0 or 2)" % rc)
            verdict = "exit %s" % rc
            if is_dict(body):
                if body.get("kind") == "Status":
                    verdict += ", Status %s: %s" % (body.get("code"),
                                                    body.get("message"))
                elif is_dict(body.get("response")):
                    r = body["response"]
                    verdict += ", allowed" if r.get("allowed") is True \
                        else ", denied"
        if bad:
            failures += 1
            print("not ok - %s: %s" % (what, "; ".join(bad)))
            for line in err.strip().splitlines()[-15:]:
                print("#   " + line)
        else:
            print("ok - %s: %s" % (what, verdict))
    print("# %d pods (%d allowed, %d denied, %d patched), %d fixture files "
          "sent as they are, %d skipped, %d failed"
          % (counts["pods"], counts["allowed"], counts["denied"],
             counts["patched"], counts["raw"], counts["skipped"], failures))
    return 1 if failures else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "reviews":
        cmd_reviews(sys.argv[2])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "report":
        return cmd_report(sys.argv[2], sys.argv[3])
    sys.exit("usage: extract.py reviews OUT_DIR | report OUT_DIR INDEX")


if __name__ == "__main__":
    sys.exit(main())
