#!/usr/bin/python3
"""Write the golden AdmissionReview inputs: test/golden/cases/<case>.in.json.

The .in.json files are the test data and are reviewed as such; this script
is how they were first written, kept so that a change to a shape every case
shares (a label the Job controller adds, say) is made once. Running it
rewrites every .in.json and .args file it knows; read `git diff` after.
It never touches .out.json or .patch.json (`make golden-update` does).

The pods look like what kube-apiserver sends to a mutating webhook on Pod
CREATE: defaulted (requests copied from limits, terminationMessagePath,
tolerations from DefaultTolerationSeconds, the service-account token volume
from the ServiceAccount plugin), with the labels, annotations, env and init
containers that the controllers set, as read in their sources:

  Trainer v2 TrainJob -> JobSet -> Job -> Pod: kubeflow/trainer
    pkg/runtime/framework/plugins/torch/torch.go (PET_* env, port 29500);
    kubernetes-sigs/jobset pkg/controllers/jobset_controller.go
    labelAndAnnotateObject (jobset.sigs.k8s.io/* labels and annotations);
    the Job controller (batch.kubernetes.io/* labels, completion index,
    hostname, job-tracking finalizer).
  Training Operator v1 PyTorchJob: kubeflow/training-operator
    pkg/controller.v1/pytorch/envvar.go, master.go, elastic.go,
    initcontainer.go (init-pytorch); common/pod.go (labels).
  MPIJob v2beta1: kubeflow/mpi-operator pkg/controller/mpi_job_controller.go
    newWorker / newLauncherPodTemplate (labels, K_MPI_JOB_ROLE, ssh volume).

No managedFields (they are large and nothing reads them) except in the
one case that checks they are skipped.

Usage: test/golden/make-cases.py   (from anywhere)
"""

import copy
import hashlib
import json
import os
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
NS_UUID = uuid.UUID("6f1c1d2e-8a4b-4c3d-9e5f-0a1b2c3d4e5f")

# --------------------------------------------------------------- identities


def uid(*parts):
    return str(uuid.uuid5(NS_UUID, "/".join(parts)))


def sa_user(namespace, name):
    return {
        "username": "system:serviceaccount:%s:%s" % (namespace, name),
        "uid": uid("sa", namespace, name),
        "groups": ["system:serviceaccounts",
                   "system:serviceaccounts:" + namespace,
                   "system:authenticated"],
    }


JOB_CONTROLLER = sa_user("kube-system", "job-controller")
RS_CONTROLLER = sa_user("kube-system", "replicaset-controller")
TRAINING_OPERATOR = sa_user("kubeflow", "training-operator")
MPI_OPERATOR = sa_user("mpi-operator", "mpi-operator")
HUMAN = {
    "username": "arn:aws:sts::123456789012:assumed-role/ml-engineer/dana",
    "uid": "aws-iam-authenticator:123456789012:AROAEXAMPLEID0000001",
    "groups": ["system:authenticated"],
    "extra": {
        "accessKeyId": ["ASIAEXAMPLEKEY000001"],
        "arn": ["arn:aws:sts::123456789012:assumed-role/ml-engineer/dana"],
        "canonicalArn": ["arn:aws:iam::123456789012:role/ml-engineer"],
        "principalId": ["AROAEXAMPLEID0000001"],
        "sessionName": ["dana"],
    },
}

# ---------------------------------------------------------- pod defaulting

DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
     "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
     "effect": "NoExecute", "tolerationSeconds": 300},
]

# Go struct field order of PodSpec and Container: the order the apiserver
# serialises them in.
POD_SPEC_ORDER = [
    "volumes", "initContainers", "containers", "ephemeralContainers",
    "restartPolicy", "terminationGracePeriodSeconds",
    "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
    "serviceAccountName", "serviceAccount", "automountServiceAccountToken",
    "nodeName", "hostNetwork", "hostPID", "hostIPC",
    "shareProcessNamespace", "securityContext", "imagePullSecrets",
    "hostname", "subdomain", "affinity", "schedulerName", "tolerations",
    "hostAliases", "priorityClassName", "priority", "dnsConfig",
    "readinessGates", "runtimeClassName", "enableServiceLinks",
    "preemptionPolicy", "overhead", "topologySpreadConstraints",
    "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates",
    "resourceClaims", "resources",
]
CONTAINER_ORDER = [
    "name", "image", "command", "args", "workingDir", "ports", "envFrom",
    "env", "resources", "resizePolicy", "restartPolicy", "volumeMounts",
    "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe",
    "lifecycle", "terminationMessagePath", "terminationMessagePolicy",
    "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
]
META_ORDER = ["name", "generateName", "namespace", "labels", "annotations",
              "ownerReferences", "finalizers"]


def ordered(d, order):
    out = {k: d[k] for k in order if k in d}
    for k in d:
        if k not in out:
            raise SystemExit("field %r not in the serialisation order" % k)
    return out


def api_volume(suffix):
    return {
        "name": "kube-api-access-" + suffix,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607,
                                         "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt",
                               "items": [{"key": "ca.crt",
                                          "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": "metadata.namespace"}}]}},
            ],
        },
    }


def api_mount(suffix):
    return {"name": "kube-api-access-" + suffix, "readOnly": True,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}


def gpu_resources(gpu, cpu="90", memory="900Gi", efa=None, limits_extra=None,
                  requests=True):
    """Resources as the apiserver has them after defaulting: every limit
    also appears in requests (SetDefaults_Pod copies them)."""
    limits = {}
    if gpu is not None:
        limits["nvidia.com/gpu"] = str(gpu)
    if efa is not None:
        limits["vpc.amazonaws.com/efa"] = str(efa)
    if limits_extra:
        limits.update(limits_extra)
    req = {"cpu": cpu, "memory": memory}
    if requests:
        req.update(limits)
    out = {}
    if limits:
        out["limits"] = limits
    out["requests"] = req
    return out


def container(name, image, sa_suffix, **kw):
    c = {"name": name, "image": image}
    c.update(kw)
    c.setdefault("volumeMounts", [])
    c["volumeMounts"] = c["volumeMounts"] + [api_mount(sa_suffix)]
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("imagePullPolicy", "IfNotPresent")
    if "ports" in c:
        for p in c["ports"]:
            p.setdefault("protocol", "TCP")
    return ordered(c, CONTAINER_ORDER)


def replicaset_meta(rs, ns):
    """The metadata of a pod of ReplicaSet rs ("APP-HASH"): generateName,
    pod-template-hash and the controller's ownerReference as the
    ReplicaSet controller sets them, and the template's label app: APP."""
    app, template_hash = rs.rsplit("-", 1)
    return {"generateName": rs + "-", "namespace": ns,
            "labels": {"app": app, "pod-template-hash": template_hash},
            "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                "uid": uid("rs", rs), "controller": True,
                "blockOwnerDeletion": True}]}


def pod_object(meta, spec, sa_suffix, service_account="default"):
    spec = dict(spec)
    spec["volumes"] = spec.get("volumes", []) + [api_volume(sa_suffix)]
    spec.setdefault("restartPolicy", "OnFailure")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("serviceAccountName", service_account)
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec["tolerations"] = spec.get("tolerations", []) + DEFAULT_TOLERATIONS
    spec.setdefault("priority", 0)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    for k in ("initContainers", "containers"):
        if k in spec:
            spec[k] = [ordered(c, CONTAINER_ORDER) for c in spec[k]]
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": ordered(meta, META_ORDER),
        "spec": ordered(spec, POD_SPEC_ORDER),
        "status": {},
    }


def review(case, obj, user, operation="CREATE", dry_run=False,
           old_object=None):
    meta = obj["metadata"]
    req = {
        "uid": uid("review", case),
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
        "requestResource": {"group": "", "version": "v1",
                            "resource": "pods"},
    }
    if meta.get("name"):
        req["name"] = meta["name"]
    req["namespace"] = meta["namespace"]
    req["operation"] = operation
    req["userInfo"] = user
    req["object"] = obj
    req["oldObject"] = old_object
    req["dryRun"] = dry_run
    opts = {"kind": "CreateOptions" if operation == "CREATE"
            else "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
    if dry_run:
        opts["dryRun"] = ["All"]
    if operation == "UPDATE":
        opts["fieldManager"] = "kubectl-label"
    req["options"] = opts
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
            "request": req}


def suffix_for(case):
    # The 5-character random suffix of the token volume.
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = hashlib.sha256(case.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in h[:5])


# ------------------------------------------------------ TrainJob (Trainer v2)

TRAINER_IMAGE = "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"


def trainjob_pod(case, job="llama3-8b-sft", ns="ml-training", index=3,
                 nnodes=16, nproc="1", gpu=1, node_selector=None,
                 affinity=None, efa=None, memory="900Gi", cpu="90",
                 limits_extra=None, requests=True, user_env=None,
                 env_from=None, extra_containers=None, init_containers=None,
                 volumes=None, mounts=None, security_context=None,
                 tolerations=None, annotations=None, labels=None,
                 spec_extra=None, container_claims=None,
                 resource_claims=None, image=TRAINER_IMAGE, args=None,
                 rjob="node", rjob_replicas=1, trainer=True):
    """A pod of replicated job `node` of the JobSet that Trainer v2 makes
    for TrainJob `job` (JobSet name = TrainJob name, one Job `<job>-node-0`
    with completions = parallelism = numNodes, Indexed). trainer=False
    makes a plain JobSet pod instead: replicated job `rjob`, no PET_* env,
    and user_env is all the env there is."""
    sfx = suffix_for(case)
    jobname = "%s-%s-0" % (job, rjob)
    job_uid = uid("job", ns, jobname)
    job_key = hashlib.sha1(("%s/%s" % (ns, jobname)).encode()).hexdigest()
    js = {
        "jobset.sigs.k8s.io/global-replicas": str(rjob_replicas),
        "jobset.sigs.k8s.io/job-global-index": "0",
        "jobset.sigs.k8s.io/job-index": "0",
        "jobset.sigs.k8s.io/job-key": job_key,
        "jobset.sigs.k8s.io/jobset-name": job,
        "jobset.sigs.k8s.io/replicatedjob-name": rjob,
        "jobset.sigs.k8s.io/replicatedjob-replicas": str(rjob_replicas),
        "jobset.sigs.k8s.io/restart-attempt": "0",
    }
    lab = {
        "batch.kubernetes.io/controller-uid": job_uid,
        "batch.kubernetes.io/job-completion-index": str(index),
        "batch.kubernetes.io/job-name": jobname,
        "controller-uid": job_uid,
        "job-name": jobname,
    }
    lab.update(js)
    if labels:
        lab.update(labels)
    ann = {"batch.kubernetes.io/job-completion-index": str(index)}
    ann.update(js)
    if annotations:
        ann.update(annotations)
    meta = {
        "generateName": "%s-%d-" % (jobname, index),
        "namespace": ns,
        "labels": dict(sorted(lab.items())),
        "annotations": dict(sorted(ann.items())),
        "ownerReferences": [{
            "apiVersion": "batch/v1", "kind": "Job", "name": jobname,
            "uid": job_uid, "controller": True, "blockOwnerDeletion": True,
        }],
        "finalizers": ["batch.kubernetes.io/job-tracking"],
    }
    env = list(user_env or [])
    env += [] if not trainer else [
        {"name": "PET_NNODES", "value": str(nnodes)},
        {"name": "PET_NPROC_PER_NODE", "value": str(nproc)},
        {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {
            "apiVersion": "v1",
            "fieldPath": "metadata.annotations['batch.kubernetes.io/"
                         "job-completion-index']"}}},
        {"name": "PET_MASTER_ADDR", "value": "%s-node-0-0.%s" % (job, job)},
        {"name": "PET_MASTER_PORT", "value": "29500"},
    ]
    res = gpu_resources(gpu, cpu=cpu, memory=memory, efa=efa,
                        limits_extra=limits_extra, requests=requests)
    if container_claims:
        res["claims"] = container_claims
    ckw = dict(
        command=["torchrun"] if trainer else ["python3"],
        args=args or ["/workspace/train.py", "--config",
                      "/workspace/configs/%s.yaml" % job],
        env=env,
        resources=res,
        volumeMounts=list(mounts or []),
    )
    if trainer:
        ckw["ports"] = [{"containerPort": 29500}]
    if env_from:
        ckw["envFrom"] = env_from
    if security_context:
        ckw["securityContext"] = security_context
    node = container("node" if trainer else "jax", image, sfx, **ckw)
    containers = [node] + [container(c.pop("name"), c.pop("image"), sfx, **c)
                           for c in copy.deepcopy(extra_containers or [])]
    spec = {
        "volumes": list(volumes or []),
        "containers": containers,
        "hostname": "%s-%d" % (jobname, index),
        "subdomain": job,
    }
    if init_containers:
        spec["initContainers"] = [
            container(c.pop("name"), c.pop("image"), sfx, **c)
            for c in copy.deepcopy(init_containers)]
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if affinity is not None:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    if resource_claims:
        spec["resourceClaims"] = resource_claims
    if spec_extra:
        spec.update(spec_extra)
    return pod_object(meta, spec, sfx)


def it(t):
    return {"node.kubernetes.io/instance-type": t}


# ------------------------------------------- PyTorchJob (Training Operator v1)

PT_IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/llm/train:2.5.1-cu124"


def pytorchjob_pod(case, job="llama3-70b-pretrain", ns="ml-training",
                   rtype="worker", index=3, masters=1, workers=15,
                   nproc="1", gpu=1, node_selector=None, efa=None,
                   cpu="90", memory="900Gi", sidecar=False, elastic=None,
                   legacy_env=False, limits_extra=None, image=PT_IMAGE):
    """A pod that the Training Operator v1 (release-1.9) creates for
    PyTorchJob `job`. elastic = (min, max) adds the elastic env instead
    of PET_NNODES = total replicas. legacy_env models an operator before
    v1.7: no PET_* env at all."""
    sfx = suffix_for(case)
    name = "%s-%s-%d" % (job, rtype, index)
    lab = {
        "training.kubeflow.org/job-name": job,
        "training.kubeflow.org/operator-name": "pytorchjob-controller",
        "training.kubeflow.org/replica-index": str(index),
        "training.kubeflow.org/replica-type": rtype,
    }
    if rtype == "master":
        lab["training.kubeflow.org/job-role"] = "master"
    meta = {
        "name": name,
        "namespace": ns,
        "labels": dict(sorted(lab.items())),
        "ownerReferences": [{
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "name": job, "uid": uid("pytorchjob", ns, job),
            "controller": True, "blockOwnerDeletion": True,
        }],
    }
    total = masters + workers
    rank = index + 1 if rtype == "worker" and masters else index
    master = "%s-master-0" % job
    env = [{"name": "PYTHONUNBUFFERED", "value": "0"}]
    if masters and not legacy_env:
        try:
            world = total * int(nproc)
        except ValueError:
            world = total
        env += [
            {"name": "MASTER_PORT", "value": "23456"},
            {"name": "PET_MASTER_PORT", "value": "23456"},
            {"name": "MASTER_ADDR", "value": master},
            {"name": "PET_MASTER_ADDR", "value": master},
            {"name": "WORLD_SIZE", "value": str(world)},
            {"name": "RANK", "value": str(rank)},
            {"name": "PET_NPROC_PER_NODE", "value": str(nproc)},
            {"name": "PET_NODE_RANK", "value": str(rank)},
        ]
    if elastic:
        env += [
            {"name": "PET_RDZV_ENDPOINT", "value": "%s-worker-0:23456" % job},
            {"name": "PET_RDZV_BACKEND", "value": "c10d"},
            {"name": "PET_NNODES", "value": "%d:%d" % elastic},
            {"name": "PET_MAX_RESTARTS", "value": "3"},
            {"name": "PET_NPROC_PER_NODE", "value": str(nproc)},
        ]
    elif not legacy_env:
        env.append({"name": "PET_NNODES", "value": str(total)})
    containers = [container(
        "pytorch", image, sfx,
        command=["torchrun"],
        args=["/workspace/train.py", "--config", "/etc/train/config.yaml"],
        ports=[{"containerPort": 23456, "name": "pytorchjob-port"}],
        env=env,
        resources=gpu_resources(gpu, cpu=cpu, memory=memory, efa=efa,
                                limits_extra=limits_extra),
        volumeMounts=[{"name": "train-config", "mountPath": "/etc/train"}],
    )]
    if sidecar:
        containers.append(container(
            "log-shipper",
            "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.0",
            sfx,
            env=env[:1] + [{"name": "LOG_GROUP",
                            "value": "/ml-training/" + job}],
            resources={"limits": {"cpu": "200m", "memory": "256Mi"},
                       "requests": {"cpu": "100m", "memory": "128Mi"}},
        ))
    spec = {
        "volumes": [{"name": "train-config", "configMap": {
            "name": job + "-config", "defaultMode": 420}}],
        "containers": containers,
        "serviceAccountName": "training-runner",
    }
    if rtype == "worker" and masters and not legacy_env:
        spec["initContainers"] = [container(
            "init-pytorch", "alpine:3.10", sfx,
            command=["sh", "-c", "until nslookup %s; do echo waiting for "
                     "master; sleep 2; done;" % master],
            resources={"limits": {"cpu": "100m", "memory": "20Mi"},
                       "requests": {"cpu": "50m", "memory": "10Mi"}},
        )]
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return pod_object(meta, spec, sfx)


# ------------------------------------------------------------ MPIJob v2beta1

MPI_IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:latest"


def mpijob_worker_pod(case, job="nccl-tests", ns="hpc", index=3, gpu=1,
                      efa=None, node_selector=None):
    sfx = suffix_for(case)
    name = "%s-worker-%d" % (job, index)
    lab = {
        "training.kubeflow.org/job-name": job,
        "training.kubeflow.org/job-role": "worker",
        "training.kubeflow.org/operator-name": "mpi-operator",
        "training.kubeflow.org/replica-index": str(index),
    }
    match = {
        "training.kubeflow.org/job-name": job,
        "training.kubeflow.org/operator-name": "mpi-operator",
    }
    meta = {
        "name": name, "namespace": ns, "labels": lab,
        "ownerReferences": [{
            "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "name": job, "uid": uid("mpijob", ns, job),
            "controller": True, "blockOwnerDeletion": True,
        }],
    }
    spec = {
        "volumes": [{"name": "ssh-auth", "secret": {
            "secretName": job + "-ssh", "defaultMode": 384,
            "items": [
                {"key": "ssh-privatekey", "path": "id_rsa"},
                {"key": "ssh-publickey", "path": "id_rsa.pub"},
                {"key": "ssh-publickey", "path": "authorized_keys"}]}}],
        "containers": [container(
            "worker", MPI_IMAGE, sfx,
            command=["/usr/sbin/sshd", "-De"],
            env=[{"name": "K_MPI_JOB_ROLE", "value": "worker"}],
            resources=gpu_resources(gpu, cpu="8", memory="64Gi", efa=efa),
            volumeMounts=[{"name": "ssh-auth", "mountPath": "/root/.ssh"}],
        )],
        "restartPolicy": "Never",
        "hostname": name,
        "subdomain": job,
        "affinity": {"podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {
                    "labelSelector": {"matchLabels": dict(
                        match, **{"training.kubeflow.org/job-role":
                                  "launcher"})},
                    "topologyKey": "kubernetes.io/hostname"}},
                {"weight": 100, "podAffinityTerm": {
                    "labelSelector": {"matchLabels": dict(
                        match, **{"training.kubeflow.org/job-role":
                                  "worker"})},
                    "topologyKey": "kubernetes.io/hostname"}},
            ]}},
        "dnsConfig": {"searches": ["%s.%s.svc.cluster.local" % (job, ns)]},
    }
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return pod_object(meta, spec, sfx)


def mpijob_launcher_pod(case, job="nccl-tests", ns="hpc", workers=16):
    sfx = suffix_for(case)
    jobname = job + "-launcher"
    job_uid = uid("job", ns, jobname)
    lab = {
        "batch.kubernetes.io/controller-uid": job_uid,
        "batch.kubernetes.io/job-name": jobname,
        "controller-uid": job_uid,
        "job-name": jobname,
        "training.kubeflow.org/job-name": job,
        "training.kubeflow.org/job-role": "launcher",
        "training.kubeflow.org/operator-name": "mpi-operator",
    }
    meta = {
        "generateName": jobname + "-",
        "namespace": ns,
        "labels": lab,
        "ownerReferences": [{
            "apiVersion": "batch/v1", "kind": "Job", "name": jobname,
            "uid": job_uid, "controller": True, "blockOwnerDeletion": True,
        }],
        "finalizers": ["batch.kubernetes.io/job-tracking"],
    }
    spec = {
        "volumes": [
            {"name": "mpi-job-config", "configMap": {
                "name": job + "-config", "defaultMode": 420,
                "items": [
                    {"key": "hostfile", "path": "hostfile", "mode": 292},
                    {"key": "discover_hosts.sh",
                     "path": "discover_hosts.sh", "mode": 365}]}},
            {"name": "ssh-auth", "secret": {
                "secretName": job + "-ssh", "defaultMode": 384,
                "items": [
                    {"key": "ssh-privatekey", "path": "id_rsa"},
                    {"key": "ssh-publickey", "path": "id_rsa.pub"},
                    {"key": "ssh-publickey", "path": "authorized_keys"}]}},
        ],
        "containers": [container(
            "launcher", MPI_IMAGE, sfx,
            command=["mpirun"],
            args=["-np", str(workers), "-x", "FI_PROVIDER=efa",
                  "-x", "NCCL_DEBUG=INFO", "--mca", "pml", "^cm",
                  "/opt/nccl-tests/build/all_reduce_perf",
                  "-b", "8", "-e", "2G", "-f", "2", "-g", "1"],
            env=[
                {"name": "K_MPI_JOB_ROLE", "value": "launcher"},
                {"name": "OMPI_MCA_orte_keep_fqdn_hostnames",
                 "value": "true"},
                {"name": "OMPI_MCA_orte_default_hostfile",
                 "value": "/etc/mpi/hostfile"},
                {"name": "OMPI_MCA_plm_rsh_args",
                 "value": "-o ConnectionAttempts=10"},
                {"name": "OMPI_MCA_orte_set_default_slots", "value": "1"},
                {"name": "NVIDIA_VISIBLE_DEVICES"},
                {"name": "NVIDIA_DRIVER_CAPABILITIES"},
            ],
            resources={"requests": {"cpu": "1", "memory": "1Gi"}},
            volumeMounts=[
                {"name": "mpi-job-config", "mountPath": "/etc/mpi"},
                {"name": "ssh-auth", "mountPath": "/root/.ssh"}],
        )],
        "hostname": jobname,
        "subdomain": job,
        "affinity": {"podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {
                        "training.kubeflow.org/job-name": job,
                        "training.kubeflow.org/job-role": "worker",
                        "training.kubeflow.org/operator-name":
                            "mpi-operator"}},
                    "topologyKey": "topology.kubernetes.io/zone"}}]}},
    }
    return pod_object(meta, spec, sfx)


# --------------------------------------------------------------- the cases

P4D = it("p4d.24xlarge")
CASE = {}
ARGS = {}
POLICY = {}

# The top of a policy file for a case that needs one (<case>.policy):
# run.sh appends the instanceTypes table of deploy/policy.yaml to it and
# passes the result as --policy.
POLICY_HEAD = """\
# Golden-test policy: everything above instanceTypes; run.sh appends the
# instanceTypes table of deploy/policy.yaml.
mode: enforce
unknownInstanceType: warn
optOut: true
overrideUserValues: false
inject:
  efa: true
  hostIPC: true
  shm: true
  ipcLock: true
  tolerations: true
  env: true
namespaces: []
jobs: {}
"""


# The opt-in env profile of images older than aws-ofi-nccl 1.7 / libfabric
# 1.18 (deploy/policy.yaml envProfiles): the cases that show how env is
# injected, kept and forwarded to MPI ranks turn it on, since the default
# injects no variable.
LEGACY_EFA = "envProfile: legacy-efa\n"


def policy(**changes):
    text = POLICY_HEAD
    for key, value in changes.items():
        lines = text.splitlines(keepends=True)
        i = next(i for i, l in enumerate(lines) if l.startswith(key + ":"))
        lines[i] = "%s: %s\n" % (key, value) if "\n" not in value \
            else "%s:\n%s" % (key, value)
        text = "".join(lines)
    return text


def case(name, args=None, policy=None):
    def reg(fn):
        CASE[name] = fn
        if args:
            ARGS[name] = args
        if policy:
            POLICY[name] = policy
        return fn
    return reg


def tj(name, **kw):
    return review(name, trainjob_pod(name, **kw), JOB_CONTROLLER)


def tj_16x1(name, **kw):
    kw.setdefault("node_selector", P4D)
    kw.setdefault("cpu", "10")
    kw.setdefault("memory", "100Gi")
    return tj(name, nnodes=16, nproc="1", gpu=1, **kw)


def tj_2x8(name, **kw):
    kw.setdefault("node_selector", P4D)
    kw.setdefault("index", 1)
    return tj(name, nnodes=2, nproc="8", gpu=8, **kw)


# Fragmented layouts and the modes.

@case("p4d-16x1-trainjob-enforce-deny")
def _(n):
    return tj_16x1(n)


# A command that fixes the shape beats the spec the fix changes: torchrun's
# --nproc_per_node beats PET_NPROC_PER_NODE, so the refusal names it.
@case("p4d-16x1-hardcoded-nproc-deny")
def _(n):
    return tj_16x1(n, args=["--nproc_per_node=1", "/workspace/train.py"])


@case("p4d-16x1-hardcoded-nproc-warn", args="--mode warn")
def _(n):
    return tj_16x1(n, args=["--nproc_per_node=1", "/workspace/train.py"])


@case("p4d-16x1-pytorchjob-enforce-deny")
def _(n):
    return review(n, pytorchjob_pod(n, node_selector=P4D, cpu="10",
                                    memory="100Gi"), TRAINING_OPERATOR)


@case("p4d-16x1-trainjob-warn", args="--mode warn")
def _(n):
    return tj_16x1(n)


@case("p4d-16x1-trainjob-audit", args="--mode audit")
def _(n):
    return tj_16x1(n)


@case("p4d-16x1-trainjob-dryrun-deny")
def _(n):
    return review(n, trainjob_pod(n, nnodes=16, nproc="1", gpu=1,
                                  cpu="10", memory="100Gi",
                                  node_selector=P4D),
                  JOB_CONTROLLER, dry_run=True)


@case("p4d-12x1-trainjob-nearest-layout-deny")
def _(n):
    return tj(n, nnodes=12, nproc="1", gpu=1, cpu="10", memory="100Gi",
              node_selector=P4D)


@case("p4d-too-many-gpus-deny")
def _(n):
    return tj(n, nnodes=1, nproc="16", gpu=16, index=0, node_selector=P4D)


@case("p4d-too-many-gpus-warn", args="--mode warn")
def _(n):
    return tj(n, nnodes=1, nproc="16", gpu=16, index=0, node_selector=P4D)


@case("p4d-too-many-efa-deny")
def _(n):
    return tj_2x8(n, efa=8)


@case("elastic-pet-nnodes-min-max-deny")
def _(n):
    return review(n, pytorchjob_pod(
        n, job="gpt-neox-elastic", masters=0, workers=2, index=1,
        nproc="1", gpu=1, elastic=(1, 4), cpu="10", memory="100Gi",
        node_selector=P4D),
        TRAINING_OPERATOR)


@case("nproc-auto-2gpu-deny")
def _(n):
    return tj(n, nnodes=4, nproc="auto", gpu=2, cpu="20", memory="200Gi",
              node_selector=P4D)


@case("mpijob-worker-1gpu-deny")
def _(n):
    return review(n, mpijob_worker_pod(n, node_selector=P4D), MPI_OPERATOR)


# Whole-node pods: patched.

@case("p4d-2x8-trainjob-whole-node-mutate")
def _(n):
    return tj_2x8(n)


# As the apiserver sends a pod its controller applied: managedFields,
# whose keys hold quotes, brackets and braces. Stripped before parsing
# (webhook/jsonstrip.c); the answer must be the case above's.
@case("p4d-2x8-trainjob-managed-fields-mutate")
def _(n):
    r = tj_2x8(n)
    meta = r["request"]["object"]["metadata"]
    meta["managedFields"] = [{
        "manager": "kube-controller-manager",
        "operation": "Update",
        "apiVersion": "v1",
        "time": "2026-03-14T09:26:53Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {".": {},
                                        "f:jobset.sigs.k8s.io/jobset-name": {}},
                           "f:ownerReferences": {
                               ".": {}, 'k:{"uid":"' + uid("job", n) + '"}': {}}},
            "f:spec": {"f:containers": {
                'k:{"name":"node"}': {".": {}, "f:env": {
                    'k:{"name":"PET_NNODES"}': {".": {}, "f:name": {},
                                               "f:value": {}}},
                    "f:resources": {"f:limits": {"f:nvidia.com/gpu": {}}}}},
                "f:nodeSelector": {}}},
    }]
    return r


@case("p4d-2x8-pytorchjob-worker-mutate")
def _(n):
    return review(n, pytorchjob_pod(
        n, job="llama3-8b-sft", rtype="worker", index=0, masters=1,
        workers=1, nproc="8", gpu=8, node_selector=P4D, sidecar=True),
        TRAINING_OPERATOR)


@case("p4d-2x8-pytorchjob-master-mutate")
def _(n):
    return review(n, pytorchjob_pod(
        n, job="llama3-8b-sft", rtype="master", index=0, masters=1,
        workers=1, nproc="8", gpu=8, node_selector=P4D),
        TRAINING_OPERATOR)


@case("p5-whole-node-mutate")
def _(n):
    return tj(n, job="mixtral-8x7b", nnodes=4, nproc="8", gpu=8, index=2,
              cpu="180", memory="1800Gi",
              node_selector=it("p5.48xlarge"))


# A job of one pod sends nothing off the node: no EFA share, no FI_* env
# (the name is from before; test/fuzz/make-seeds.py seeds from it).
@case("p5-4gpu-single-pod-efa-share")
def _(n):
    return tj(n, job="llama3-8b-lora", nnodes=1, nproc="4", gpu=4, index=0,
              cpu="90", memory="900Gi", node_selector=it("p5.48xlarge"))


@case("one-pod-job-user-efa-kept-no-fi-env")
def _(n):
    # The user's EFA devices are theirs to keep; FI_* configures nothing.
    return tj(n, job="llama3-8b-lora", nnodes=1, nproc="8", gpu=8, index=0,
              efa=4, node_selector=P4D)


@case("p3dn-whole-node-no-gdr-env")
def _(n):
    return tj(n, job="bert-large", nnodes=2, nproc="8", gpu=8, index=0,
              cpu="90", memory="700Gi", node_selector=it("p3dn.24xlarge"))


@case("g5-48xl-8x1-pcie-split-warn")
def _(n):
    return tj(n, job="sd-finetune", nnodes=8, nproc="1", gpu=1, index=5,
              cpu="20", memory="80Gi", node_selector=it("g5.48xlarge"))


@case("g5-12xl-whole-node-mutate")
def _(n):
    return tj(n, job="sd-finetune", nnodes=2, nproc="4", gpu=4, index=1,
              cpu="44", memory="170Gi", node_selector=it("g5.12xlarge"))


# Rows added from Karpenter's instance-types.md and the g4 offer table
# (issue 45, point 4): a 2-pod job of whole nodes on each. What each gets
# follows its row: EFA where it has some (none on g4, g7e.2/4xlarge,
# g7.2/4xlarge), /dev/shm host / 8 capped at the memory limit.
NEW_ROWS = [("g5.24xlarge", 4, "170Gi"), ("g6.24xlarge", 4, "170Gi"),
            ("g6e.24xlarge", 4, "350Gi"), ("g7e.2xlarge", 1, "28Gi"),
            ("g7e.4xlarge", 1, "56Gi"), ("g7e.8xlarge", 1, "110Gi"),
            ("g7e.12xlarge", 2, "230Gi"), ("g7e.24xlarge", 4, "460Gi"),
            ("g7.2xlarge", 1, "12Gi"), ("g7.4xlarge", 1, "28Gi"),
            ("g7.8xlarge", 1, "56Gi"), ("g7.12xlarge", 2, "84Gi"),
            ("g7.24xlarge", 4, "170Gi"), ("g7.48xlarge", 8, "350Gi"),
            ("g4-standard-48", 1, "84Gi"), ("g4-standard-96", 2, "170Gi"),
            ("g4-standard-192", 4, "350Gi"),
            ("g4-standard-384", 8, "700Gi")]


def new_row_case(itype, gpus, memory):
    @case("row-%s-whole-node-mutate" % itype.replace(".", "-"))
    def _(n):
        return tj(n, job="row-check", nnodes=2, nproc=str(gpus), gpu=gpus,
                  index=1, cpu="4", memory=memory,
                  node_selector=it(itype))


for _t, _g, _m in NEW_ROWS:
    new_row_case(_t, _g, _m)


# Rows added from Oracle's shape table and Google's A4X Max table
# (issue 45, point 4), where a row changes the decision: a job of
# 2-GPU pods pinned to the B200 shape, an NVSwitch board, is refused (it
# was an unknown type); whole nodes get /dev/shm and the rest their row
# says: no VF without a view on OCI (nicsNeedEvidence), no NIC resource on
# the GB200/GB300 shapes (hostNetwork), the GPUDirect warnings on
# a4x-maxgpu-4g-metal.
@case("row-new-bm-gpu-b200-8-4x2-split-deny")
def _(n):
    return tj(n, job="row-check", nnodes=4, nproc="2", gpu=2, index=1,
              cpu="4", memory="100Gi", node_selector=it("BM.GPU.B200.8"))


NEW_ROWS_WHOLE = [("BM.GPU.H200.8", 8, "700Gi"), ("BM.GPU.B200.8", 8, "700Gi"),
                  ("BM.GPU.GB200.4", 4, "400Gi"),
                  ("BM.GPU.GB300.4", 4, "400Gi"),
                  ("a4x-maxgpu-4g-metal", 4, "400Gi")]


def new_row_whole_case(itype, gpus, memory):
    @case("row-new-%s-whole-node" % itype.replace(".", "-").lower())
    def _(n):
        return tj(n, job="row-check", nnodes=2, nproc=str(gpus), gpu=gpus,
                  index=1, cpu="4", memory=memory,
                  node_selector=it(itype))


for _t, _g, _m in NEW_ROWS_WHOLE:
    new_row_whole_case(_t, _g, _m)


@case("g5-xlarge-single-gpu-mutate")
def _(n):
    return tj(n, job="bert-base", nnodes=4, nproc="1", gpu=1, index=2,
              cpu="3", memory="12Gi", node_selector=it("g5.xlarge"))


@case("mpijob-worker-8gpu-whole-node-mutate")
def _(n):
    return review(n, mpijob_worker_pod(n, index=1, gpu=8, node_selector=P4D),
                  MPI_OPERATOR)


@case("p4d-two-gpu-containers-sum-whole-node")
def _(n):
    # Two GPU containers of 4 each: the pod has 8, the whole node.
    return tj(n, job="rlhf-ppo", nnodes=2, nproc="4", gpu=4, index=1,
              cpu="40", memory="400Gi", node_selector=P4D,
              extra_containers=[{
                  "name": "reward-model",
                  "image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/"
                           "llm/reward-server:0.4.2",
                  "ports": [{"containerPort": 8000, "name": "http"}],
                  "resources": gpu_resources(4, cpu="40", memory="400Gi"),
              }])


# GB200: ComputeDomain (IMEX) claims make 1-of-4 GPU pods NVLink-connected.

GB200 = {"node.kubernetes.io/instance-type": "p6e-gb200.36xlarge",
         "kubernetes.io/arch": "arm64"}
CD_CLAIM = [{"name": "compute-domain-channel",
             "resourceClaimTemplateName": "llama-405b-compute-domain-channel"}]


@case("gb200-computedomain-podclaim-allow")
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="1", gpu=1, index=6,
              cpu="30", memory="200Gi", node_selector=GB200,
              resource_claims=CD_CLAIM)


@case("gb200-computedomain-containerclaim-allow")
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="1", gpu=1, index=6,
              cpu="30", memory="200Gi", node_selector=GB200,
              resource_claims=CD_CLAIM,
              container_claims=[{"name": "compute-domain-channel"}])


@case("gb200-no-claim-fragmented-deny")
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="1", gpu=1, index=6,
              cpu="30", memory="200Gi", node_selector=GB200)


RDMA_CLAIM = [{"name": "rdma", "resourceClaimTemplateName": "default-rdma"}]


# NICs as DRA devices (AWS's EFA DRA driver, DRANET): a claim other than
# a channel may be the pod's NICs, and such nodes have no EFA resource.
# Without nodes that advertise it, none is added; with them, it is.
@case("dra-rdma-claim-no-efa-added")
def _(n):
    return tj_2x8(n, resource_claims=RDMA_CLAIM)


@case("view-dra-rdma-claim-nodes-have-efa-added",
      args="--nodes test/nodes/eks-p4d-p5-g5.yaml")
def _(n):
    return tj_2x8(n, resource_claims=RDMA_CLAIM)


# GPUs as DRA devices (issue 46): test/nodes/dra-h100-slices.yaml is two
# HGX H100 nodes known only by the NVIDIA DRA driver's ResourceSlices,
# dra-h100-plugin.yaml the same nodes by the device plugin and GFD. A
# claim's GPUs come from its ResourceClaimTemplate in the view (same
# namespace); test/dra/run.sh compares the decisions on the two views.

DRA_NODES = "--nodes test/nodes/dra-h100-slices.yaml"
PLUGIN_NODES = "--nodes test/nodes/dra-h100-plugin.yaml"


def dra_claim(template):
    return dict(gpu=None, resource_claims=[
        {"name": "gpu", "resourceClaimTemplateName": template}],
        container_claims=[{"name": "gpu"}])


def tj_4x1(name, **kw):
    kw.setdefault("cpu", "20")
    kw.setdefault("memory", "200Gi")
    kw.setdefault("nproc", "1")
    return tj(name, job="llama3-8b-dra", nnodes=4, index=1, **kw)


@case("view-dra-4x1-claim-deny", args=DRA_NODES)
def _(n):
    return tj_4x1(n, **dra_claim("single-gpu"))


@case("view-dra-plugin-4x1-gpu-deny", args=PLUGIN_NODES)
def _(n):
    return tj_4x1(n, gpu=1)


@case("view-dra-4x1-gpu-limit-deny", args=DRA_NODES)
def _(n):
    # nvidia.com/gpu served by the driver's class (extendedResourceName).
    return tj_4x1(n, gpu=1)


@case("view-dra-claim-template-not-in-view-warn", args=DRA_NODES)
def _(n):
    return tj_4x1(n, **dra_claim("gpus-of-another-namespace"))


@case("dra-claim-no-view-warn")
def _(n):
    return tj_4x1(n, **dra_claim("single-gpu"))


@case("view-dra-claim-all-gpus-allow", args=DRA_NODES)
def _(n):
    return tj_4x1(n, nproc="8", **dra_claim("all-gpus"))


@case("view-dra-claim-eight-gpus-allow", args=DRA_NODES)
def _(n):
    return tj_4x1(n, nproc="8", **dra_claim("eight-gpus"))


@case("view-dra-plugin-eight-gpus-allow", args=PLUGIN_NODES)
def _(n):
    return tj_4x1(n, nproc="8", gpu=8)


@case("view-dra-claim-first-available-warn", args=DRA_NODES)
def _(n):
    return tj_4x1(n, **dra_claim("gpu-first-available"))


@case("view-dra-claim-narrowed-class-warn", args=DRA_NODES)
def _(n):
    return tj_4x1(n, **dra_claim("one-h100"))


@case("view-dra-claim-beside-unknown-claim-warn", args=DRA_NODES)
def _(n):
    # One GPU known, and a claim whose template the view lacks: it may
    # hold the rest of the node.
    kw = dra_claim("single-gpu")
    kw["resource_claims"].append({"name": "more",
                                  "resourceClaimTemplateName": "more-gpus"})
    kw["container_claims"].append({"name": "more"})
    return tj_4x1(n, **kw)


@case("view-dra-claim-mig-ungoverned", args=DRA_NODES)
def _(n):
    return tj_4x1(n, **dra_claim("one-mig"))


# A claim the view cannot read is warned on a training pod only: claims
# are read for pods a training operator, a framework's marks or
# topogate.io/managed name (claims_read), and any other pod is not
# governed, nothing said. The cases above are TrainJob pods; these are
# a pod nobody owns and a Deployment's inference pod, each with one GPU
# claim of a template the view lacks (no view at all).
def claim_only_pod(case, meta, user, restart="Always"):
    sfx = suffix_for(case)
    res = gpu_resources(None, cpu="10", memory="100Gi")
    res["claims"] = [{"name": "gpu"}]
    spec = {"containers": [container(
                "vllm", "vllm/vllm-openai:v0.6.3", sfx,
                args=["--model", "meta-llama/Meta-Llama-3-8B-Instruct"],
                ports=[{"containerPort": 8000, "name": "http"}],
                resources=res)],
            "restartPolicy": restart,
            "resourceClaims": [{"name": "gpu",
                                "resourceClaimTemplateName": "single-gpu"}]}
    return review(case, pod_object(meta, spec, sfx), user)


@case("dra-claim-plain-pod-ungoverned")
def _(n):
    return claim_only_pod(n, {"name": "vllm-scratch", "namespace": "inference",
                              "labels": {"app": "vllm-scratch"}},
                          HUMAN, restart="Never")


@case("dra-claim-deployment-pod-ungoverned")
def _(n):
    return claim_only_pod(n, replicaset_meta("vllm-llama3-8b-dra-6f8c9d7b5c",
                                             "inference"), RS_CONTROLLER)


@case("view-dra-efa-claim-p4d-deny", args="--nodes test/nodes/eks-dranet-p4d.yaml")
def _(n):
    # kubernetes-sigs/dranet examples/aws_eks_examples/gpu-efa: one GPU
    # and one EFA per pod from DRA, on a p4d whose 8 GPUs are NVSwitch.
    return tj(n, job="nccl-test-dra", ns="default", nnodes=2, nproc="1",
              index=1, cpu="20", memory="200Gi", gpu=None,
              resource_claims=[{"name": "gpu-efa",
                                "resourceClaimTemplateName":
                                    "gpu-efa-aligned"}],
              container_claims=[{"name": "gpu-efa"}])


@case("view-dra-efa-nodes-gpu-claim-only-allow",
      args="--nodes test/nodes/eks-dranet-p4d.yaml")
def _(n):
    # Whole nodes by claim, but no claim asks for the nodes' DRA NICs.
    return tj(n, job="nccl-test-dra", ns="default", nnodes=2, nproc="8",
              index=1, cpu="90", memory="900Gi", gpu=None,
              resource_claims=[{"name": "gpu",
                                "resourceClaimTemplateName":
                                    "eight-gpus-no-efa"}],
              container_claims=[{"name": "gpu"}])


@case("gb200-rdma-claim-only-fragmented-deny")
def _(n):
    # A DRA claim that is not a ComputeDomain channel (a DRANET NIC, as in
    # GKE's a4x samples) does not join the pods over NVLink.
    return tj(n, job="llama-405b", nnodes=8, nproc="1", gpu=1, index=6,
              cpu="30", memory="200Gi", node_selector=GB200,
              resource_claims=RDMA_CLAIM)


@case("gb200-whole-node-no-channel-warn")
def _(n):
    # Whole nodes, but no ComputeDomain: NVLink between the nodes unused.
    return tj(n, job="llama-405b", nnodes=8, nproc="4", gpu=4, efa=4,
              index=6, cpu="120", memory="800Gi", node_selector=GB200,
              resource_claims=RDMA_CLAIM)


@case("gb200-whole-node-channel-mutate")
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="4", gpu=4, efa=4,
              index=6, cpu="120", memory="800Gi", node_selector=GB200,
              resource_claims=CD_CLAIM + RDMA_CLAIM)


# Node facts the table cannot know (issue 45 point 5): the view's GB200
# nodes carry GFD's driver label; below R595 GPUDirect RDMA over EFA needs
# NVreg_GrdmaPciTopoCheckOverride=1, and R595's release notes, as
# NVIDIA/aicr quotes them, call R595 incompatible with P6e-GB200 EFA
# (policy/pod/nodefacts.c has the sources).
GB200_DRIVERS = "--nodes test/nodes/eks-p6e-gb200-drivers.yaml"
GPU_TAINT_OK = [{"key": "nvidia.com/gpu", "operator": "Exists",
                 "effect": "NoSchedule"}]


@case("view-gb200-driver-r580-override-warn", args=GB200_DRIVERS)
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="4", gpu=4, index=6,
              cpu="120", memory="800Gi", resource_claims=CD_CLAIM,
              node_selector={"karpenter.sh/nodepool": "gb200-r580"},
              tolerations=GPU_TAINT_OK)


@case("view-gb200-driver-r595-efa-warn", args=GB200_DRIVERS)
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="4", gpu=4, index=6,
              cpu="120", memory="800Gi", resource_claims=CD_CLAIM,
              node_selector={"karpenter.sh/nodepool": "gb200-r595"},
              tolerations=GPU_TAINT_OK)


# A job of one pod keeps its traffic in the node: no NIC fact is told.
@case("view-gb200-driver-one-pod-silent", args=GB200_DRIVERS)
def _(n):
    return tj(n, job="llama-405b", nnodes=1, nproc="4", gpu=4, index=0,
              cpu="120", memory="800Gi", resource_claims=CD_CLAIM,
              node_selector={"karpenter.sh/nodepool": "gb200-r580"},
              tolerations=GPU_TAINT_OK)


# IMEX channels from a node daemon, without DRA: the job's env says so
# (NVIDIA_IMEX_CHANNELS, NCCL_MNNVL_ENABLE=1), and that is the evidence.

@case("gb200-whole-node-mnnvl-env-mutate")
def _(n):
    return tj(n, job="llama-405b", nnodes=18, nproc="4", gpu=4, efa=4,
              index=6, cpu="120", memory="800Gi", node_selector=GB200,
              user_env=[{"name": "NCCL_MNNVL_ENABLE", "value": "1"}])


@case("gb200-imex-channels-env-1gpu-allow")
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="1", gpu=1, index=6,
              cpu="30", memory="200Gi", node_selector=GB200,
              user_env=[{"name": "NVIDIA_IMEX_CHANNELS", "value": "0"}])


# An MPIJob worker carries no job size (mpi-operator sets none on it):
# the warning says "multi-pod", never a count it cannot read.
@case("gb200-mpijob-worker-whole-node-no-channel-warn")
def _(n):
    return review(n, mpijob_worker_pod(n, index=17, gpu=4, efa=4,
                                       node_selector=GB200), MPI_OPERATOR)


# No type pinned: a ComputeDomain channel claim on nodes that carry
# nvidia.com/gpu.clique (NVIDIA's and CoreWeave's samples: a required
# podAffinity with it as topologyKey) is a GB200/GB300 NVLink domain.

ARM64 = {"kubernetes.io/arch": "arm64"}


def clique_pod_affinity(label="llama-405b", required=True):
    term = {"labelSelector": {"matchLabels": {"app": label}},
            "topologyKey": "nvidia.com/gpu.clique"}
    if required:
        return {"podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return {"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": term}]}}


@case("clique-computedomain-whole-node-mutate")
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="4", gpu=4, index=6,
              cpu="120", memory="800Gi", node_selector=ARM64,
              affinity=clique_pod_affinity(), resource_claims=CD_CLAIM)


@case("clique-computedomain-1gpu-allow")
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="1", gpu=1, index=6,
              cpu="30", memory="200Gi", node_selector=ARM64,
              affinity=clique_pod_affinity(), resource_claims=CD_CLAIM)


@case("clique-computedomain-8gpu-unschedulable-deny")
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="8", gpu=8, index=6,
              cpu="120", memory="800Gi", node_selector=ARM64,
              affinity=clique_pod_affinity(), resource_claims=CD_CLAIM)


@case("clique-node-affinity-exists-computedomain-mutate")
def _(n):
    return tj(n, job="llama-405b", nnodes=8, nproc="4", gpu=4, index=6,
              cpu="120", memory="800Gi", node_selector=None,
              affinity=required_affinity({"matchExpressions": [
                  {"key": "nvidia.com/gpu.clique", "operator": "Exists"}]}),
              resource_claims=CD_CLAIM)


@case("clique-no-computedomain-unpinned-warn")
def _(n):
    # The clique alone: no claim, so nothing says the pods use the fabric;
    # judged as any unpinned pod.
    return tj(n, job="llama-405b", nnodes=8, nproc="1", gpu=1, index=6,
              cpu="30", memory="200Gi", node_selector=ARM64,
              affinity=clique_pod_affinity())


@case("clique-preferred-affinity-unpinned-warn")
def _(n):
    # A preferred podAffinity lets the pod land on any node.
    return tj(n, job="llama-405b", nnodes=8, nproc="1", gpu=1, index=6,
              cpu="30", memory="200Gi", node_selector=ARM64,
              affinity=clique_pod_affinity(required=False),
              resource_claims=CD_CLAIM)


# Instance type: unknown, unpinned, Karpenter, affinity, other labels.

@case("unknown-instance-type-warn")
def _(n):
    return tj_16x1(n, node_selector=it("p9.mega"))


@case("unpinned-gpu-pod-warn")
def _(n):
    return tj(n, nnodes=16, nproc="1", gpu=1, cpu="10", memory="100Gi")


KARPENTER_8 = {"karpenter.k8s.aws/instance-gpu-count": "8",
               "karpenter.sh/capacity-type": "on-demand"}


@case("karpenter-gpu-count-8-split-deny")
def _(n):
    return tj_16x1(n, node_selector=KARPENTER_8)


@case("karpenter-gpu-count-8-whole-node-agreed-patch")
def _(n):
    return tj_2x8(n, node_selector=KARPENTER_8, memory="700Gi")


def required_affinity(*terms):
    return {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": list(terms)}}}


@case("affinity-in-p5-p5e-whole-node")
def _(n):
    return tj(n, job="mixtral-8x7b", nnodes=4, nproc="8", gpu=8, index=2,
              cpu="180", memory="1800Gi",
              affinity=required_affinity({"matchExpressions": [
                  {"key": "node.kubernetes.io/instance-type",
                   "operator": "In",
                   "values": ["p5.48xlarge", "p5e.48xlarge"]}]}))


@case("affinity-in-p4d-g5-split-strictest-deny")
def _(n):
    # p4d says fragmented (deny), g5.48xlarge says PCIe split (warn).
    return tj(n, nnodes=16, nproc="1", gpu=1, cpu="20", memory="80Gi",
              affinity=required_affinity({"matchExpressions": [
                  {"key": "node.kubernetes.io/instance-type",
                   "operator": "In",
                   "values": ["p4d.24xlarge", "g5.48xlarge"]}]}))


@case("affinity-term-without-type-unpinned")
def _(n):
    # nodeSelectorTerms are ORed: the second term lets the pod land on any
    # on-demand node, so the instance type is not pinned.
    return tj_2x8(n, node_selector=None, affinity=required_affinity(
        {"matchExpressions": [
            {"key": "node.kubernetes.io/instance-type", "operator": "In",
             "values": ["p4d.24xlarge"]}]},
        {"matchExpressions": [
            {"key": "karpenter.sh/capacity-type", "operator": "In",
             "values": ["on-demand"]}]}))


@case("beta-instance-type-label")
def _(n):
    return tj_2x8(n, node_selector={
        "beta.kubernetes.io/instance-type": "p4d.24xlarge"})


@case("hyperpod-ml-prefix")
def _(n):
    return review(n, pytorchjob_pod(
        n, job="llama3-8b-fsdp", rtype="worker", index=0, masters=1,
        workers=1, nproc="8", gpu=8,
        node_selector=it("ml.p4d.24xlarge")), TRAINING_OPERATOR)


# HyperPod's CLI gives a multi-node job vpc.amazonaws.com/efa: 1
# (aws/sagemaker-hyperpod-cli#318); the pod keeps it and is told the
# CLI's --efa flags (#345) for the node's 32.
@case("hyperpod-p5-efa-1-of-32-warn")
def _(n):
    return review(n, pytorchjob_pod(
        n, job="llama3-70b-fsdp", rtype="worker", index=0, masters=1,
        workers=1, nproc="8", gpu=8, efa=1,
        node_selector=it("ml.p5.48xlarge")), TRAINING_OPERATOR)


# envProfile legacy-efa (off by default): FI_PROVIDER on every EFA row,
# FI_EFA_USE_DEVICE_RDMA only where the row has GPUDirect RDMA.

@case("env-profile-legacy-efa-p4d-2x8-mutate", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return tj_2x8(n)


@case("env-profile-legacy-efa-g5-12xl-no-device-rdma",
      policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return tj(n, job="sd-finetune", nnodes=2, nproc="4", gpu=4, index=1,
              cpu="44", memory="170Gi", node_selector=it("g5.12xlarge"))


# Values the user set are kept.

@case("user-env-kept-warning", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return tj_2x8(n, user_env=[{"name": "FI_EFA_USE_DEVICE_RDMA", "value": "0"},
                               {"name": "NCCL_DEBUG", "value": "INFO"}])


@case("user-env-same-value-silent", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return tj_2x8(n, user_env=[{"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"},
                               {"name": "FI_PROVIDER", "value": "efa"}])


# The user's env that turns NCCL's fast paths off: kept, and named in a
# warning with the path it turns off (policy/pod/slowenv.c).

@case("user-env-p2p-disable-warn")
def _(n):
    return tj_2x8(n, user_env=[{"name": "NCCL_P2P_DISABLE", "value": "1"},
                               {"name": "NCCL_P2P_LEVEL", "value": "LOC"}])


@case("user-env-nccl-net-socket-warn")
def _(n):
    return tj_2x8(n, user_env=[{"name": "NCCL_NET", "value": "Socket"},
                               {"name": "NCCL_SHM_DISABLE", "value": "1"}])


@case("user-env-p2p-disable-zero-silent")
def _(n):
    # NCCL_P2P_DISABLE=0 leaves P2P on; NCCL_IB_DISABLE does not touch EFA.
    return tj_2x8(n, user_env=[{"name": "NCCL_P2P_DISABLE", "value": "0"},
                               {"name": "NCCL_IB_DISABLE", "value": "1"}])


@case("user-hostipc-false-kept")
def _(n):
    # A real apiserver omits hostIPC: false (omitempty); a review built
    # from a manifest can carry it.
    return tj_2x8(n, spec_extra={"hostIPC": False})


@case("devshm-hostpath-kept")
def _(n):
    return tj_2x8(n, volumes=[{"name": "shmem", "hostPath": {
        "path": "/dev/shm", "type": ""}}],
        mounts=[{"name": "shmem", "mountPath": "/dev/shm"}])


@case("devshm-emptydir-sizelimit-kept")
def _(n):
    return tj_2x8(n, volumes=[{"name": "dshm", "emptyDir": {
        "medium": "Memory", "sizeLimit": "128Mi"}}],
        mounts=[{"name": "dshm", "mountPath": "/dev/shm"}])


@case("ipc-lock-already-present")
def _(n):
    return tj_2x8(n, security_context={"capabilities": {"add": ["IPC_LOCK"]}})


@case("toleration-already-present")
def _(n):
    return tj_2x8(n, tolerations=[{"key": "nvidia.com/gpu",
                                   "operator": "Exists",
                                   "effect": "NoSchedule"}])


@case("envfrom-no-env-warning", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return tj_2x8(n, env_from=[{"configMapRef": {"name": "nccl-tuning"}}])


@case("shm-capped-by-memory-limit")
def _(n):
    return tj_2x8(n, cpu="32", memory="64Gi",
                  limits_extra={"cpu": "32", "memory": "64Gi"})


@case("requests-mirror-efa")
def _(n):
    # requests name nvidia.com/gpu (as the apiserver defaults them): the
    # EFA request must follow the EFA limit.
    return tj_2x8(n)


@case("gpu-limits-only-no-requests")
def _(n):
    # Only limits name the GPU (a manifest, not defaulted): the EFA goes
    # into limits only.
    return tj_2x8(n, requests=False)


@case("efa-zero-kept-warning")
def _(n):
    return tj_2x8(n, efa=0)


# Which pods are governed.

@case("skip-annotation-optout")
def _(n):
    return tj_16x1(n, annotations={"topogate.io/skip": "true"})


@case("managed-label-plain-pod")
def _(n):
    sfx = suffix_for(n)
    meta = {"name": "nccl-allreduce-g5", "namespace": "perf-lab",
            "labels": {"app": "nccl-tests", "topogate.io/managed": "true"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                            "{}\n"}}
    spec = {
        "containers": [container(
            "nccl", "public.ecr.aws/hpc-cloud/nccl-tests:latest", sfx,
            command=["/opt/nccl-tests/build/all_reduce_perf"],
            args=["-b", "8", "-e", "4G", "-f", "2", "-g", "8"],
            resources=gpu_resources(8, cpu="180", memory="700Gi"))],
        "restartPolicy": "Never",
        "nodeSelector": it("g5.48xlarge"),
    }
    return review(n, pod_object(meta, spec, sfx), HUMAN)


@case("gpu-deployment-pod-not-training-ignored")
def _(n):
    sfx = suffix_for(n)
    meta = replicaset_meta("vllm-llama3-8b-7d9f8b6c5d", "inference")
    spec = {
        "containers": [container(
            "vllm", "vllm/vllm-openai:v0.6.3", sfx,
            args=["--model", "meta-llama/Meta-Llama-3-8B-Instruct"],
            ports=[{"containerPort": 8000, "name": "http"}],
            resources=gpu_resources(1, cpu="10", memory="100Gi"))],
        "restartPolicy": "Always",
        "nodeSelector": P4D,
    }
    return review(n, pod_object(meta, spec, sfx), RS_CONTROLLER)


@case("non-gpu-pod-ignored")
def _(n):
    sfx = suffix_for(n)
    meta = replicaset_meta("web-5c8d7f9b6d", "default")
    spec = {
        "containers": [container(
            "nginx", "nginx:1.27", sfx,
            ports=[{"containerPort": 80}],
            resources={"limits": {"memory": "128Mi"},
                       "requests": {"cpu": "100m", "memory": "128Mi"}})],
        "restartPolicy": "Always",
    }
    return review(n, pod_object(meta, spec, sfx), RS_CONTROLLER)


@case("jobset-plain-gpu-not-trainjob-ignored")
def _(n):
    # A JobSet pod that Trainer did not make: replicated job `workers`,
    # container `jax`, no PET_* env.
    return tj(n, job="maxtext-train", rjob="workers", rjob_replicas=4,
              trainer=False, index=0, gpu=1, cpu="10", memory="100Gi",
              node_selector=P4D, image="ghcr.io/example/maxtext:2024.10",
              args=["-m", "MaxText.train", "MaxText/configs/base.yml"],
              user_env=[{"name": "JAX_COORDINATOR_ADDRESS",
                         "value": "maxtext-train-workers-0-0.maxtext-train"
                                  ":1234"}])


@case("mpijob-launcher-no-gpu-ignored")
def _(n):
    return review(n, mpijob_launcher_pod(n), JOB_CONTROLLER)


@case("no-job-size-one-pod-allow")
def _(n):
    # A Training Operator before v1.7 sets no PET_* env; a worker-only job
    # gets no init container and no master env either.
    return review(n, pytorchjob_pod(
        n, job="resnet50-imagenet", rtype="worker", index=0, masters=0,
        workers=1, nproc="1", gpu=1, node_selector=P4D, legacy_env=True,
        cpu="10", memory="100Gi"), TRAINING_OPERATOR)


@case("trn1-neuron-pod-ignored")
def _(n):
    return review(n, pytorchjob_pod(
        n, job="llama2-7b-neuron", rtype="worker", index=1, masters=0,
        workers=4, nproc="32", gpu=None, cpu="120", memory="400Gi",
        node_selector=it("trn1.32xlarge"),
        limits_extra={"aws.amazon.com/neuron": "16",
                      "vpc.amazonaws.com/efa": "8"}), TRAINING_OPERATOR)


@case("gaudi-efa-pod-ignored")
def _(n):
    # Intel Gaudi with EFA (dl1.24xlarge): not a GPU pod, left alone; audit
    # does not call its EFA "EFA without GPUs" (issue 13 item 9).
    return review(n, pytorchjob_pod(
        n, job="llama2-7b-gaudi", rtype="worker", index=1, masters=0,
        workers=2, nproc="8", gpu=None, cpu="90", memory="700Gi",
        node_selector=it("dl1.24xlarge"),
        limits_extra={"habana.ai/gaudi": "8",
                      "vpc.amazonaws.com/efa": "4"}), TRAINING_OPERATOR)


@case("gpu-zero-ignored")
def _(n):
    return tj(n, job="osu-latency", nnodes=2, nproc="1", gpu=0, efa=1,
              cpu="4", memory="16Gi", node_selector=P4D)


@case("gpu-count-not-integer-warn")
def _(n):
    return tj(n, nnodes=16, nproc="1", gpu="1.5", cpu="10", memory="100Gi",
              node_selector=P4D)


@case("gpu-count-negative-warn")
def _(n):
    # The apiserver refuses it too; the warning says what is wrong.
    return tj(n, nnodes=16, nproc="1", gpu="-1", cpu="10", memory="100Gi",
              node_selector=P4D)


@case("gpu-count-padded-reads-as-count-deny")
def _(n):
    # Quantity.UnmarshalJSON trims white space: " 1" is 1 to the apiserver.
    # A raw manifest can hold it (audit reads those); the OpenAPI pattern
    # k8s-validate checks does not allow the spaces.
    NOVALIDATE.add(n)
    return tj(n, nnodes=16, nproc="1", gpu=" 1", cpu="10", memory="100Gi",
              node_selector=P4D)


# Null quantities: YAML `nvidia.com/gpu:` with nothing after it. The
# apiserver reads null as 0 in a Pod and drops it from a custom resource
# (policy/kinds/workload.c says where): topogate reads it as absent, so the
# request counts, and says so. Reviews built from manifests carry the
# null itself, which k8s-validate refuses: .novalidate.

def null_quantity(r, resource="nvidia.com/gpu", request=None):
    """Turns the first container's limit of resource into a null; its
    request becomes `request`, or goes when None."""
    res = r["request"]["object"]["spec"]["containers"][0]["resources"]
    res["limits"][resource] = None
    if request is None:
        res["requests"].pop(resource, None)
    else:
        res["requests"][resource] = request
    return r


@case("null-gpu-limit-reads-request-16x1-deny")
def _(n):
    NOVALIDATE.add(n)
    return null_quantity(tj_16x1(n), request="1")


@case("null-gpu-limit-reads-request-2x8-audit", args="--mode audit")
def _(n):
    NOVALIDATE.add(n)
    return null_quantity(tj_2x8(n), request="8")


@case("null-gpu-limit-alone-allow")
def _(n):
    NOVALIDATE.add(n)
    return null_quantity(tj_2x8(n))


@case("null-efa-limit-reads-request-audit", args="--mode audit")
def _(n):
    NOVALIDATE.add(n)
    return null_quantity(tj_2x8(n, efa=4), resource="vpc.amazonaws.com/efa",
                         request="4")


# Containers that are not ours to touch.

@case("native-sidecar-untouched")
def _(n):
    return tj_2x8(n, init_containers=[{
        "name": "log-forwarder",
        "image": "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.0",
        "restartPolicy": "Always",
        "resources": {"limits": {"cpu": "200m", "memory": "256Mi"},
                      "requests": {"cpu": "100m", "memory": "128Mi"}},
    }])


@case("gpu-init-container-untouched")
def _(n):
    return tj_2x8(n, init_containers=[{
        "name": "gpu-burnin",
        "image": "nvcr.io/nvidia/cloud-native/dcgm:3.3.5-1-ubuntu22.04",
        "command": ["dcgmi", "diag", "-r", "1"],
        "resources": gpu_resources(8, cpu="4", memory="8Gi"),
    }])


def tj_after_helpers(n, helpers):
    """tj_2x8 with its GPU container after that many that hold none."""
    r = tj_2x8(n)
    spec = r["request"]["object"]["spec"]
    sfx = suffix_for(n)
    spec["containers"] = [container(
        "helper-%d" % i, "busybox:1.36", sfx,
        command=["sleep", "infinity"],
        resources={"limits": {"cpu": "10m", "memory": "16Mi"},
                   "requests": {"cpu": "10m", "memory": "16Mi"}},
    ) for i in range(helpers)] + spec["containers"]
    return r


# The GPU container tenth, after nine that hold none: its ops name
# /spec/containers/9.
@case("gpu-container-after-nine-sidecars-mutate")
def _(n):
    return tj_after_helpers(n, 9)


@case("whole-node-annotation-fills-gpu")
def _(n):
    return tj(n, job="llama3-8b-eval", nnodes=1, nproc="auto", gpu=1,
              index=0, cpu="90", memory="900Gi", node_selector=P4D,
              annotations={"topogate.io/whole-node": "true"})


# The opt-in raises the GPUs, not the processes: a number of them leaves
# the rest idle, and the user is told.
@case("whole-node-annotation-nproc-1-idle-warning")
def _(n):
    return tj(n, job="llama3-8b-eval", nnodes=1, nproc="1", gpu=1,
              index=0, cpu="90", memory="900Gi", node_selector=P4D,
              annotations={"topogate.io/whole-node": "true"})


# Policy files: per-namespace overrides, switches, and --mode over them.

NS_WARN = policy(namespaces="  - name: research\n    mode: warn\n")


@case("policy-namespace-warn-override", policy=NS_WARN)
def _(n):
    return tj_16x1(n, ns="research")


@case("policy-mode-flag-overrides-namespace", args="--mode enforce",
      policy=NS_WARN)
def _(n):
    return tj_16x1(n, ns="research")


@case("policy-optout-disabled-skip-ignored", policy=policy(optOut="false"))
def _(n):
    return tj_16x1(n, annotations={"topogate.io/skip": "true"})


# Opting out restricted to the namespaces that may: off everywhere, on
# for the pod's namespace; and the reverse.
@case("policy-optout-namespace-allowed",
      policy=policy(optOut="false",
                    namespaces="  - name: ml-training\n    optOut: true\n"))
def _(n):
    return tj_16x1(n, annotations={"topogate.io/skip": "true"})


@case("policy-optout-namespace-refused",
      policy=policy(namespaces="  - name: ml-training\n    optOut: false\n"))
def _(n):
    return tj_16x1(n, annotations={"topogate.io/skip": "true"})


@case("policy-unknown-type-deny", policy=policy(unknownInstanceType="deny"))
def _(n):
    return tj_16x1(n, node_selector=it("p9.mega"))


@case("policy-namespace-inject-off", policy=policy(
    namespaces="  - name: restricted-ml\n"
               "    inject: {hostIPC: false, ipcLock: false}\n"))
def _(n):
    # Pod Security "baseline" forbids hostIPC and IPC_LOCK: this namespace
    # gets the rest of the patch without them.
    return tj_2x8(n, ns="restricted-ml")


@case("policy-override-user-values",
      policy=policy(overrideUserValues="true") + LEGACY_EFA)
def _(n):
    return tj_2x8(n, user_env=[{"name": "FI_EFA_USE_DEVICE_RDMA", "value": "0"}])


# Not a pod CREATE.

@case("update-operation-ignored")
def _(n):
    old = trainjob_pod(n, nnodes=16, nproc="1", gpu=1, cpu="10",
                       memory="100Gi", node_selector=P4D)
    old["metadata"]["name"] = "llama3-8b-sft-node-0-3-x7k2p"
    old["metadata"]["uid"] = uid("pod", n)
    old["metadata"]["resourceVersion"] = "48213377"
    old["metadata"]["creationTimestamp"] = "2026-03-14T09:26:53Z"
    old["metadata"] = ordered(old["metadata"], [
        "name", "generateName", "namespace", "uid", "resourceVersion",
        "creationTimestamp", "labels", "annotations", "ownerReferences",
        "finalizers"])
    old["spec"]["nodeName"] = "ip-10-0-12-34.us-west-2.compute.internal"
    old["spec"] = ordered(old["spec"], POD_SPEC_ORDER)
    new = copy.deepcopy(old)
    new["metadata"]["labels"]["team"] = "foundation-models"
    return review(n, new, HUMAN, operation="UPDATE", old_object=old)


# A gated pod (Kueue's topology gate) is judged at CREATE with what it
# says; the later UPDATE that removes the gate and narrows its node
# selector (kueue pkg/controller/tas/topology_ungater.go) is not ours.

GATE = [{"name": "kueue.x-k8s.io/topology"}]


@case("gated-pod-create-judged-deny")
def _(n):
    return tj_16x1(n, spec_extra={"schedulingGates": GATE},
                   labels={"kueue.x-k8s.io/queue-name": "research"})


@case("gated-pod-ungate-update-narrows-ignored")
def _(n):
    old = trainjob_pod(n, nnodes=16, nproc="1", gpu=1, cpu="10",
                       memory="100Gi", node_selector=P4D,
                       spec_extra={"schedulingGates": GATE},
                       labels={"kueue.x-k8s.io/queue-name": "research"})
    old["metadata"]["name"] = "llama3-8b-sft-node-0-3-q9v4d"
    old["metadata"]["uid"] = uid("pod", n)
    old["metadata"]["resourceVersion"] = "48213377"
    old["metadata"]["creationTimestamp"] = "2026-03-14T09:26:53Z"
    old["metadata"] = ordered(old["metadata"], [
        "name", "generateName", "namespace", "uid", "resourceVersion",
        "creationTimestamp", "labels", "annotations", "ownerReferences",
        "finalizers"])
    new = copy.deepcopy(old)
    del new["spec"]["schedulingGates"]
    new["spec"]["nodeSelector"]["kubernetes.io/hostname"] = \
        "ip-10-0-12-34.us-west-2.compute.internal"
    r = review(n, new, KUEUE, operation="UPDATE", old_object=old)
    r["request"]["options"]["fieldManager"] = "kueue-tas-ungater"
    return r


@case("non-pod-kind-ignored")
def _(n):
    obj = {"kind": "ConfigMap", "apiVersion": "v1",
           "metadata": {"name": "nccl-tuning", "namespace": "ml-training"},
           "data": {"NCCL_DEBUG": "INFO", "NCCL_P2P_LEVEL": "PIX"}}
    r = review(n, trainjob_pod(n), HUMAN)
    req = r["request"]
    req["kind"] = {"group": "", "version": "v1", "kind": "ConfigMap"}
    req["resource"] = {"group": "", "version": "v1",
                       "resource": "configmaps"}
    req["requestKind"] = dict(req["kind"])
    req["requestResource"] = dict(req["resource"])
    req["name"] = "nccl-tuning"
    req["object"] = obj
    # keep the request's field order
    r["request"] = {k: req[k] for k in (
        "uid", "kind", "resource", "requestKind", "requestResource", "name",
        "namespace", "operation", "userInfo", "object", "oldObject",
        "dryRun", "options")}
    return r


# Malformed envelopes: raw bytes, not necessarily JSON.

def raw(text):
    return ("raw", text)


def envelope(n, request, api_version="admission.k8s.io/v1"):
    env = {}
    if api_version is not None:
        env["apiVersion"] = api_version
    env["kind"] = "AdmissionReview"
    if request is not None:
        env["request"] = request
    return env


def small_request(n):
    r = tj(n, job="smoke", nnodes=2, nproc="8", gpu=8, index=0,
           node_selector=P4D)
    return r["request"]


@case("malformed-json")
def _(n):
    full = json.dumps(small_request(n))
    return raw('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",'
               '"request":' + full[:200] + "\n")


@case("malformed-missing-request")
def _(n):
    return envelope(n, None)


@case("malformed-missing-uid")
def _(n):
    req = small_request(n)
    del req["uid"]
    return envelope(n, req)


@case("malformed-request-not-object")
def _(n):
    return envelope(n, [small_request(n)])


@case("malformed-uid-not-string")
def _(n):
    req = small_request(n)
    req["uid"] = 4217
    return envelope(n, req)


@case("malformed-missing-object")
def _(n):
    req = small_request(n)
    del req["object"]
    del req["oldObject"]
    return envelope(n, req)


@case("malformed-v1beta1-apiversion")
def _(n):
    return envelope(n, small_request(n), "admission.k8s.io/v1beta1")


@case("malformed-missing-apiversion")
def _(n):
    return envelope(n, small_request(n), None)


@case("malformed-deep-nesting")
def _(n):
    req = small_request(n)
    req["object"]["spec"]["containers"] = ["NEST"]
    text = json.dumps(envelope(n, req), separators=(",", ":"))
    return raw(text.replace('["NEST"]', "[" * 2000 + "]" * 2000) + "\n")


# Kubelet's Topology Manager (issue 45 point 5), as NFD's
# NodeResourceTopology objects show it: policy/pod/numafit.c says how
# kubelet admits. On single-numa-node p4d nodes (two NUMA nodes of 4 GPUs)
# a pod of 8 GPUs fails at the node, so whole-node pods are warned and a
# split is not refused (its fix could not run). On restricted ones (scope
# pod) a Guaranteed pod whose whole CPUs fit one NUMA node and whose GPUs
# need two may fail, with the static CPU manager.
NUMA_SINGLE = "--nodes test/nodes/eks-p4d-single-numa.yaml"
NUMA_RESTRICTED = "--nodes test/nodes/eks-p4d-restricted.yaml"


def guaranteed(cpu, memory="400Gi"):
    return dict(cpu=cpu, memory=memory,
                limits_extra={"cpu": cpu, "memory": memory})


@case("view-numa-single-2x8-refused-warn", args=NUMA_SINGLE)
def _(n):
    return tj_2x8(n)


@case("view-numa-single-16x1-split-warn", args=NUMA_SINGLE)
def _(n):
    return tj_16x1(n)


# Four GPUs fit one pod of one NUMA node: the fix runs, the split is
# refused as anywhere.
@case("view-numa-single-4x1-deny", args=NUMA_SINGLE)
def _(n):
    return tj(n, nnodes=4, nproc="1", gpu=1, node_selector=P4D, cpu="10",
              memory="100Gi")


@case("view-numa-single-2x4-fits-warn", args=NUMA_SINGLE)
def _(n):
    return tj(n, nnodes=2, nproc="4", gpu=4, node_selector=P4D, index=1,
              **guaranteed("40"))


@case("view-numa-single-2x4-cpus-refused-warn", args=NUMA_SINGLE)
def _(n):
    return tj(n, nnodes=2, nproc="4", gpu=4, node_selector=P4D, index=1,
              **guaranteed("60"))


@case("view-numa-restricted-2x8-cpus-one-node-warn", args=NUMA_RESTRICTED)
def _(n):
    return tj_2x8(n, **guaranteed("16"))


@case("view-numa-restricted-2x8-cpus-span-mutate", args=NUMA_RESTRICTED)
def _(n):
    return tj_2x8(n, **guaranteed("90"))


@case("view-numa-restricted-2x8-burstable-mutate", args=NUMA_RESTRICTED)
def _(n):
    return tj_2x8(n, cpu="16", memory="400Gi")


# restricted admits a whole-node pod whose CPUs allow it: refused.
@case("view-numa-restricted-16x1-deny", args=NUMA_RESTRICTED)
def _(n):
    return tj_16x1(n)


# ------------------------------------------- job-level admission (jobs)
#
# The jobs themselves, as `kubectl apply` sends them: TrainJob in the three
# Trainer API shapes, PyTorchJob (Master + Worker, elastic), MPIJob v2beta1.
# ../shared/k8s/crds holds the v2.2+ TrainJob schema only, so the v2.0
# (podSpecOverrides) and v2.1 (podTemplateOverrides) objects are marked
# <case>.novalidate: k8s-validate would reject their override field.

JOB_KINDS = {
    "TrainJob": ("trainer.kubeflow.org", "v1alpha1", "trainjobs"),
    "PyTorchJob": ("kubeflow.org", "v1", "pytorchjobs"),
    "MPIJob": ("kubeflow.org", "v2beta1", "mpijobs"),
}
NOVALIDATE = set()


def job_review(case, obj, operation="CREATE", old_object=None):
    group, version, resource = JOB_KINDS[obj["kind"]]
    # An MPIJob is kubeflow.org/v1 (Training Operator 1.x) or v2beta1.
    version = obj["apiVersion"].split("/")[1]
    gvk = {"group": group, "version": version, "kind": obj["kind"]}
    gvr = {"group": group, "version": version, "resource": resource}
    meta = obj["metadata"]
    req = {
        "uid": uid("review", case),
        "kind": gvk, "resource": gvr,
        "requestKind": gvk, "requestResource": gvr,
        "name": meta["name"], "namespace": meta["namespace"],
        "operation": operation, "userInfo": HUMAN,
        "object": obj, "oldObject": old_object, "dryRun": False,
        "options": {"kind": "CreateOptions" if operation == "CREATE"
                    else "UpdateOptions", "apiVersion": "meta.k8s.io/v1",
                    "fieldManager": "kubectl-client-side-apply"},
    }
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
            "request": req}


def job_meta(name, ns="ml-training"):
    return {"name": name, "namespace": ns,
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                            "{}"}}


def trainjob(name="llama3-8b-sft", nodes=16, nproc=1, gpu=1, pin=P4D,
             shape="patches", command=None, runtime="torch-distributed",
             ns="ml-training", efa=None):
    limits = {"nvidia.com/gpu": gpu}
    if efa is not None:
        limits["vpc.amazonaws.com/efa"] = efa
    trainer = {"image": TRAINER_IMAGE, "numNodes": nodes,
               "resourcesPerNode": {"limits": limits}}
    if nproc is not None:
        trainer["numProcPerNode"] = nproc
    if command:
        trainer["command"] = command
    spec = {"runtimeRef": {"apiGroup": "trainer.kubeflow.org",
                           "kind": "ClusterTrainingRuntime",
                           "name": runtime},
            "trainer": trainer}
    pod_spec = {"nodeSelector": pin} if pin else None
    if pod_spec and shape == "patches":
        spec["runtimePatches"] = [{
            "manager": "platform.example.com/gpu-pools",
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                {"name": "node", "template": {"spec": {"template": {
                    "spec": pod_spec}}}}]}}}}]
    elif pod_spec and shape == "podSpecOverrides":
        spec["podSpecOverrides"] = [dict(targetJobs=[{"name": "node"}],
                                         **pod_spec)]
    elif pod_spec and shape == "podTemplateOverrides":
        spec["podTemplateOverrides"] = [{"targetJobs": [{"name": "node"}],
                                         "spec": pod_spec}]
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob", "metadata": job_meta(name, ns),
            "spec": spec}


def replica(gpu, pin=P4D, replicas=1, command=None, claims=None,
            name="pytorch", efa=None):
    limits = {"nvidia.com/gpu": gpu}
    if efa is not None:
        limits["vpc.amazonaws.com/efa"] = efa
    c = {"name": name, "image": TRAINER_IMAGE,
         "resources": {"limits": limits}}
    if command:
        c["command"] = command
    spec = {"containers": [c]}
    if pin:
        spec["nodeSelector"] = pin
    if claims:
        spec["resourceClaims"] = claims
    return {"replicas": replicas, "restartPolicy": "OnFailure",
            "template": {"spec": spec}}


def pytorchjob(name="llama3-70b-pretrain", workers=15, master=True, gpu=1,
               nproc="1", elastic=None, pin=P4D, command=None, claims=None):
    specs = {}
    if master:
        specs["Master"] = replica(gpu, pin, 1, command, claims)
    specs["Worker"] = replica(gpu, pin, workers, command, claims)
    spec = {"pytorchReplicaSpecs": specs}
    if nproc is not None:
        spec["nprocPerNode"] = nproc
    if elastic:
        spec["elasticPolicy"] = elastic
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": job_meta(name), "spec": spec}


def mpijob(name="nccl-tests", workers=16, slots=1, gpu=1, launcher_cmd=None,
           efa=None, launcher_env=None, pin=P4D):
    launcher = replica(0, pin=None, name="launcher",
                       command=launcher_cmd or ["mpirun", "all_reduce_perf",
                                                "-b", "8", "-e", "8G"])
    del launcher["template"]["spec"]["containers"][0]["resources"]
    if launcher_env:
        launcher["template"]["spec"]["containers"][0]["env"] = launcher_env
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": job_meta(name, "hpc"),
            "spec": {"slotsPerWorker": slots,
                     "mpiReplicaSpecs": {
                         "Launcher": launcher,
                         "Worker": replica(gpu, pin, workers, efa=efa,
                                           name="worker")}}}


REPACK = policy(jobs="  repack: true\n")


@case("job-trainjob-v22-runtimepatches-16x1-deny")
def _(n):
    return job_review(n, trainjob())


@case("job-trainjob-v21-podtemplateoverrides-16x1-deny")
def _(n):
    NOVALIDATE.add(n)
    return job_review(n, trainjob(shape="podTemplateOverrides"))


@case("job-trainjob-v20-podspecoverrides-16x1-deny")
def _(n):
    NOVALIDATE.add(n)
    return job_review(n, trainjob(shape="podSpecOverrides", nproc="1"))


@case("job-trainjob-16x1-warn", args="--mode warn")
def _(n):
    return job_review(n, trainjob())


@case("job-trainjob-16x1-audit", args="--mode audit", policy=REPACK)
def _(n):
    return job_review(n, trainjob())


@case("job-trainjob-2x8-whole-node-allow")
def _(n):
    return job_review(n, trainjob(nodes=2, nproc=8, gpu=8, efa=4))


@case("job-trainjob-16x1-repack", policy=REPACK)
def _(n):
    return job_review(n, trainjob())


# serve --repack (and audit --repack) without a policy file; warn mode
# repacks too, since warn mutates.
# The nodes it can land on include g5.12xlarge, which has no EFA: the
# repack asks for none, as the fix does, or the job would never schedule.
@case("job-trainjob-16x1-view-repack-no-efa", args="--repack --nodes test/nodes/eks-p4d-p5-g5.yaml")
def _(n):
    return job_review(n, trainjob(pin=None))


@case("job-trainjob-16x1-repack-flag-warn", args="--repack --mode warn")
def _(n):
    return job_review(n, trainjob())


@case("job-trainjob-auto-nproc-repack", policy=REPACK)
def _(n):
    return job_review(n, trainjob(nodes=8, nproc=None, gpu=2))


@case("job-trainjob-hardcoded-torchrun-not-repacked", policy=REPACK)
def _(n):
    return job_review(n, trainjob(command=[
        "torchrun", "--nnodes", "16", "--nproc_per_node", "1", "train.py"]))


@case("job-trainjob-world-not-divisible-not-repacked", policy=REPACK)
def _(n):
    return job_review(n, trainjob(nodes=12))


@case("job-trainjob-runtime-map-deny",
      policy=policy(jobs="  runtimes:\n    - name: torch-distributed\n"
                         "      instanceType: p4d.24xlarge\n"))
def _(n):
    return job_review(n, trainjob(pin=None))


@case("job-trainjob-namespace-default-deny",
      policy=policy(namespaces="  - name: ml-training\n"
                               "    instanceType: p5.48xlarge\n"))
def _(n):
    return job_review(n, trainjob(pin=None))


@case("job-trainjob-unpinned-warn")
def _(n):
    return job_review(n, trainjob(pin=None))


# Other clouds: the NIC resource of the table, or none where GKE attaches
# the NICs by a pod annotation.

@case("gke-a3-mega-2x8-nics-by-annotation-warn")
def _(n):
    return tj_2x8(n, node_selector=it("a3-megagpu-8g"))


# GKE GPUDirect (issue 45 point 3): a whole-node pod of a multi-pod job
# needs the interface annotations naming the cluster's networks, and for
# TCPX/TCPXO the receive data path manager sidecar with its NRI device
# annotation, for RDMA the gIB plugin mount and its NCCL env. The pieces
# and the network names are those of GoogleCloudPlatform/container-engine-
# accelerators gpudirect-tcpx/nccl-test-latest.yaml, gpudirect-tcpxo/
# nccl-test-latest.yaml and gpudirect-rdma/nccl-test.yaml, nccl-test-a4.yaml.
# Lacking: warned. With the policy's gkeNetworks: the annotations patched.
# Complete: silent.
GKE_TCPX_IFS = [("eth0", "default")] + [
    ("eth%d" % i, "vpc%d" % i) for i in range(1, 5)]
GKE_TCPXO_IFS = [("eth0", "default")] + [
    ("eth%d" % i, "vpc%d" % i) for i in range(1, 9)]
GKE_RDMA_IFS = [("eth0", "default")] + [
    ("eth%d" % (i + 2), "rdma-%d" % i) for i in range(8)]


def gke_networks_yaml(rows):
    out = "gkeNetworks:\n"
    for t, ifs in rows:
        out += "  - instanceType: %s\n    interfaces:\n" % t
        for i, net in ifs:
            out += "      - {interfaceName: %s, network: %s}\n" % (i, net)
    return out


GKE_NETS = POLICY_HEAD + gke_networks_yaml([
    ("a3-highgpu-8g", GKE_TCPX_IFS), ("a3-megagpu-8g", GKE_TCPXO_IFS),
    ("a3-ultragpu-8g", GKE_RDMA_IFS), ("a4-highgpu-8g", GKE_RDMA_IFS)])


def gke_if_annotations(ifs):
    text = "[\n" + ",\n".join(
        '  {"interfaceName":"%s","network":"%s"}' % f for f in ifs) + "\n]\n"
    return {"networking.gke.io/default-interface": "eth0",
            "networking.gke.io/interfaces": text}


GKE_NRI_DEVICES = "".join("- path: /dev/nvidia%d\n" % i for i in range(8)) + \
    "- path: /dev/nvidiactl\n- path: /dev/nvidia-uvm\n"
GKE_LIBS = {"name": "libraries",
            "hostPath": {"path": "/home/kubernetes/bin/nvidia/lib64",
                         "type": ""}}


def gke_rxdm(stack):
    """The pod pieces of a TCPX or TCPXO manifest: the sidecar, its NRI
    annotation, the volumes."""
    if stack == "tcpx":
        name, image = "tcpx-daemon", ("us-docker.pkg.dev/gce-ai-infra/"
                                      "gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12")
        devices = GKE_NRI_DEVICES
        args = ["/tcpgpudmarxd/build/app/tcpgpudmarxd", "--gpu_nic_preset",
                "a3vm", "--gpu_shmem_type", "fd", "--uds_path", "/run/tcpx"]
        caps = ["NET_ADMIN"]
    else:
        name, image = "tcpxo-daemon", ("us-docker.pkg.dev/gce-ai-infra/"
                                       "gpudirect-tcpxo/tcpgpudmarxd-dev:"
                                       "v1.0.21")
        devices = GKE_NRI_DEVICES + "- path: /dev/dmabuf_import_helper\n"
        args = ["/fts/entrypoint_rxdm_container.sh", "--num_hops=2"]
        caps = ["NET_ADMIN", "NET_BIND_SERVICE"]
    sidecar = {"name": name, "image": image, "command": ["/bin/sh", "-c"],
               "args": [" ".join(args)],
               "securityContext": {"capabilities": {"add": caps}},
               "volumeMounts": [{"name": "libraries",
                                 "mountPath": "/usr/local/nvidia/lib64"}],
               "resources": {}}
    return {"annotations": {"devices.gke.io/container." + name: devices},
            "extra_containers": [sidecar], "volumes": [GKE_LIBS]}


GKE_GIB = {"volumes": [{"name": "gib", "hostPath": {
               "path": "/home/kubernetes/bin/gib", "type": ""}}],
           "mounts": [{"name": "gib", "mountPath": "/usr/local/gib"}]}
GKE_GIB_ARGS = ["-c", "source /usr/local/gib/scripts/set_nccl_env.sh && "
                "exec torchrun /workspace/train.py"]


def gke_pod(n, t, ifs=None, rxdm=None, gib=False, gib_env=False, **kw):
    ann = dict(gke_if_annotations(ifs)) if ifs else {}
    if rxdm:
        pieces = gke_rxdm(rxdm)
        ann.update(pieces["annotations"])
        kw["extra_containers"] = pieces["extra_containers"]
        kw["volumes"] = pieces["volumes"]
    if gib:
        kw["volumes"] = GKE_GIB["volumes"]
        kw["mounts"] = GKE_GIB["mounts"]
    if gib_env:
        kw["args"] = GKE_GIB_ARGS
    return tj_2x8(n, node_selector=it(t), annotations=ann or None, **kw)


@case("gke-a3-high-2x8-tcpx-lacking-warn")
def _(n):
    return gke_pod(n, "a3-highgpu-8g")


@case("gke-a3-high-2x8-tcpx-policy-networks-patch", policy=GKE_NETS)
def _(n):
    return gke_pod(n, "a3-highgpu-8g", rxdm="tcpx")


@case("gke-a3-high-2x8-tcpx-complete-silent")
def _(n):
    return gke_pod(n, "a3-highgpu-8g", ifs=GKE_TCPX_IFS, rxdm="tcpx")


@case("gke-a3-high-2x8-tcpx-sidecar-no-nri-warn")
def _(n):
    pod = gke_pod(n, "a3-highgpu-8g", ifs=GKE_TCPX_IFS, rxdm="tcpx")
    del pod["request"]["object"]["metadata"]["annotations"][
        "devices.gke.io/container.tcpx-daemon"]
    return pod


@case("gke-a3-mega-2x8-tcpxo-policy-networks-patch", policy=GKE_NETS)
def _(n):
    return gke_pod(n, "a3-megagpu-8g", rxdm="tcpxo")


@case("gke-a3-mega-2x8-tcpxo-complete-silent")
def _(n):
    return gke_pod(n, "a3-megagpu-8g", ifs=GKE_TCPXO_IFS, rxdm="tcpxo")


@case("gke-a3-ultra-2x8-rdma-lacking-warn")
def _(n):
    return gke_pod(n, "a3-ultragpu-8g")


@case("gke-a3-ultra-2x8-rdma-policy-networks-patch", policy=GKE_NETS)
def _(n):
    return gke_pod(n, "a3-ultragpu-8g", gib=True, gib_env=True)


@case("gke-a3-ultra-2x8-rdma-complete-silent")
def _(n):
    return gke_pod(n, "a3-ultragpu-8g", ifs=GKE_RDMA_IFS, gib=True,
                   gib_env=True)


@case("gke-a4-2x8-rdma-lacking-warn")
def _(n):
    return gke_pod(n, "a4-highgpu-8g", gib=True)


@case("gke-a4-2x8-rdma-policy-networks-patch", policy=GKE_NETS)
def _(n):
    return gke_pod(n, "a4-highgpu-8g", gib=True, gib_env=True)


@case("gke-a4-2x8-rdma-complete-silent")
def _(n):
    return gke_pod(n, "a4-highgpu-8g", ifs=GKE_RDMA_IFS, gib=True,
                   gib_env=True)


# No type pinned: the view's GKE nodes (test/nodes/gke-a3-mega.yaml) say
# that nvidia-h100-mega-80gb is a3-megagpu-8g, and so TCPXO.
@case("view-gke-accelerator-a3-mega-2x8-tcpxo-lacking-warn",
      args="--nodes test/nodes/gke-a3-mega.yaml")
def _(n):
    return tj_2x8(n, node_selector={
        "cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists",
                      "effect": "NoSchedule"}])


# Managed RDMA: a DRA claim of mrdma.google.com devices attaches the NICs
# (gpudirect-rdma/nccl-test-managed-rdma.yaml): no interface annotation.
@case("gke-a4-2x8-rdma-dra-claim-no-interfaces-needed")
def _(n):
    return gke_pod(n, "a4-highgpu-8g", gib=True, gib_env=True,
                   resource_claims=[{"name": "rdma",
                                     "resourceClaimTemplateName":
                                         "nccl-test-all-mrdma"}],
                   container_claims=[{"name": "rdma"}])


# A namespace whose own gkeNetworks is empty gets no networks patched.
@case("gke-a4-2x8-namespace-no-networks-warn", policy=GKE_NETS.replace(
    "namespaces: []\n", "namespaces:\n  - name: ml-training\n"
    "    gkeNetworks: []\n"))
def _(n):
    return gke_pod(n, "a4-highgpu-8g", gib=True, gib_env=True)


# A split pod on a GPUDirect type is judged as fragmented; the GPUDirect
# pieces are told only to whole-node pods.
@case("gke-a3-mega-16x1-split-not-told-gpudirect", args="--mode warn")
def _(n):
    return tj_16x1(n, node_selector=it("a3-megagpu-8g"))


@case("aks-nd-h100-v5-2x8-rdma-ib-mutate")
def _(n):
    return tj_2x8(n, node_selector=it("Standard_ND96isr_H100_v5"))


# With a cluster view (--nodes FILE, as `serve --nodes` and `audit
# --nodes` read it; test/nodes/ has the clusters): pods and jobs that pin
# no instance type, judged on the nodes they can land on.

EKS_VIEW = "--nodes test/nodes/eks-p4d-p5-g5.yaml"
ONPREM_VIEW = "--nodes test/nodes/onprem-gfd-h100.yaml"
P4D_GROUP = {"eks.amazonaws.com/nodegroup": "p4d-workers"}


@case("view-nodegroup-16x1-trainjob-deny", args=EKS_VIEW)
def _(n):
    return tj_16x1(n, node_selector=P4D_GROUP)


@case("view-nodegroup-2x8-trainjob-mutate", args=EKS_VIEW)
def _(n):
    return tj_2x8(n, node_selector=P4D_GROUP)


@case("view-nodegroup-16x1-trainjob-warn", args=EKS_VIEW + " --mode warn")
def _(n):
    return tj_16x1(n, node_selector=P4D_GROUP)


# Taints under node.kubernetes.io/: only the node-condition ones are
# transient (policy/pod/placement_view.c); an admin's keeps pods off.

@case("view-admin-taint-keeps-pods-off-unknown",
      args="--nodes test/nodes/eks-p4d-sla-taint.yaml")
def _(n):
    return tj_16x1(n, node_selector=P4D_GROUP)


@case("view-not-ready-taint-still-counts-deny",
      args="--nodes test/nodes/eks-p4d-notready-taint.yaml")
def _(n):
    return tj_16x1(n, node_selector=P4D_GROUP)


@case("view-no-selector-candidates-deny", args=EKS_VIEW)
def _(n):
    return tj_16x1(n, node_selector={})


@case("view-nodegroup-not-in-cluster-unpinned-warn", args=EKS_VIEW)
def _(n):
    # A node group that scales from zero has no nodes yet: no evidence.
    return tj_16x1(n, node_selector={"eks.amazonaws.com/nodegroup":
                                     "h100-spot"})


@case("view-nodegroup-pcie-4x1-warn", args=EKS_VIEW)
def _(n):
    return tj(n, nnodes=4, nproc="1", gpu=1, cpu="10", memory="100Gi",
              node_selector={"eks.amazonaws.com/nodegroup": "g5-dev"})


@case("view-kueue-queue-p5-deny", args=EKS_VIEW)
def _(n):
    return tj_16x1(n, ns="ml", node_selector={},
                   labels={"kueue.x-k8s.io/queue-name": "research-queue"})


@case("view-affinity-zone-notin-p5-only-deny", args=EKS_VIEW)
def _(n):
    return tj_16x1(n, node_selector={}, affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "NotIn",
                 "values": ["us-east-1a"]}]}]}}})


@case("view-gfd-product-16x1-deny", args=ONPREM_VIEW)
def _(n):
    return tj_16x1(n, node_selector={"nvidia.com/gpu.product":
                                     "NVIDIA-H100-80GB-HBM3"})


@case("view-gfd-product-2x8-rdma-ib-mutate", args=ONPREM_VIEW)
def _(n):
    return tj_2x8(n, node_selector={"rack": "r12"})


@case("view-pin-wins-over-nodes", args=EKS_VIEW)
def _(n):
    return tj_2x8(n, node_selector=it("p5.48xlarge"))


# Pods that name their node (issue 44 point 1): spec.nodeName (the
# scheduler's NodeName filter), a kubernetes.io/hostname selector, or a
# matchFields term on metadata.name (what the DaemonSet controller writes,
# pkg/controller/daemon/util ReplaceDaemonSetPodNodeNameNodeAffinity):
# each is the kind of that node in the view, never "pin one type".
P4D_NODE = "ip-10-0-1-11.ec2.internal"
P5_NODE = "ip-10-0-2-21.ec2.internal"


def name_terms(*names):
    return {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [nm]}]}
                for nm in names]}}}


@case("view-nodename-p4d-2x8-mutate", args=EKS_VIEW)
def _(n):
    return tj_2x8(n, node_selector={}, spec_extra={"nodeName": P4D_NODE})


@case("view-nodename-p4d-16x1-deny", args=EKS_VIEW)
def _(n):
    return tj_16x1(n, node_selector={}, spec_extra={"nodeName": P4D_NODE})


@case("view-hostname-selector-p4d-16x1-deny", args=EKS_VIEW)
def _(n):
    return tj_16x1(n, node_selector={"kubernetes.io/hostname": P4D_NODE})


@case("view-matchfields-p4d-2x8-mutate", args=EKS_VIEW)
def _(n):
    return tj_2x8(n, node_selector={}, affinity=name_terms(P4D_NODE))


@case("view-matchfields-p4d-p5-16x1-deny", args=EKS_VIEW)
def _(n):
    # Two named nodes of two types: both listed, no "pin one type".
    return tj_16x1(n, node_selector={},
                   affinity=name_terms(P4D_NODE, P5_NODE))


@case("view-nodename-cpu-node-unknown", args=EKS_VIEW)
def _(n):
    return tj_16x1(n, node_selector={},
                   spec_extra={"nodeName": "ip-10-0-0-5.ec2.internal"})


@case("nodename-without-view-unknown")
def _(n):
    return tj_16x1(n, node_selector={}, spec_extra={"nodeName": P4D_NODE})


# A pinned type the table lacks, on nodes GPU Feature Discovery describes
# (issue 44 point 7): the view's nodes of that type say what it is.
TYPED_VIEW = "--nodes test/nodes/onprem-gfd-h100-typed.yaml"


@case("view-unknown-type-pin-gfd-h100-16x1-deny", args=TYPED_VIEW)
def _(n):
    return tj_16x1(n, node_selector=it("hgx-h100-8x"))


@case("view-unknown-type-pin-gfd-h100-2x8-mutate", args=TYPED_VIEW)
def _(n):
    return tj_2x8(n, node_selector=it("hgx-h100-8x"))


@case("view-unknown-type-pin-no-such-node-unknown", args=TYPED_VIEW)
def _(n):
    return tj_16x1(n, node_selector=it("hgx-b200-8x"))


@case("view-unknown-product-says-what-nodes-say", args=TYPED_VIEW)
def _(n):
    return tj_16x1(n, node_selector={"rack": "r7"})


# NIC resources (issue 43 point 2): one is added only where every node the
# pod can land on advertises it in allocatable, with their fewest, not the
# table's count; never beside an RDMA resource the pod asks for under
# another name, nor on a hostNetwork pod that reaches the host's RDMA
# NICs; and a shared plugin's slots are no NIC count.
NO_EFA_VIEW = "--nodes test/nodes/eks-p5-no-efa-allocatable.yaml"
EFA16_VIEW = "--nodes test/nodes/eks-automode-p5-efa16.yaml"
AKS_SHARED_VIEW = "--nodes test/nodes/aks-nd-h100-v5-shared-ib.yaml"
GFD_SHARED_VIEW = "--nodes test/nodes/onprem-gfd-h100-shared-ib.yaml"
AKS_SKU_GPU = [{"key": "sku", "operator": "Equal", "value": "gpu",
                "effect": "NoSchedule"}]


@case("oci-sriov-rdma-vf-asked-no-rdma-vf-added")
def _(n):
    # A cluster on the VFs' older name: the table's nvidia.com/rdma-vf
    # beside the pod's sriov_rdma_vf would ask every node for two NIC
    # resources.
    return tj_2x8(n, node_selector=it("BM.GPU.H100.8"),
                  limits_extra={"nvidia.com/sriov_rdma_vf": "16"})


# OCI OKE with the Network Operator: nvidia.com/rdma-vf, 16 VFs on the
# dual-port BM.GPU.H100.8 (oracle-quickstart/oci-hpc-oke docs/using-rdma-
# network-interfaces-in-manifests.md). The pod that asks for them itself,
# as that page's manifest does, is left as it is. The operator is a preview
# option, off by default (terraform/schema.yaml), so the rows say
# nicsNeedEvidence (issue 45): with no view, or a view of the default
# hostNetwork nodes, no VF is added and a warning says what to do; a view
# whose nodes advertise the VFs gets them added.
OKE_VF_VIEW = "--nodes test/nodes/oke-h100-rdma-vf.yaml"
OKE_HOST_VIEW = "--nodes test/nodes/oke-h100-hostnetwork.yaml"


@case("oci-h100-2x8-no-view-no-rdma-vf-warn")
def _(n):
    return tj_2x8(n, node_selector=it("BM.GPU.H100.8"))


@case("view-oci-h100-2x8-vf-nodes-rdma-vf-added", args=OKE_VF_VIEW)
def _(n):
    return tj_2x8(n, node_selector=it("BM.GPU.H100.8"),
                  tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists",
                                "effect": "NoSchedule"}])


@case("view-oci-h100-2x8-hostnetwork-nodes-none-added", args=OKE_HOST_VIEW)
def _(n):
    return tj_2x8(n, node_selector=it("BM.GPU.H100.8"),
                  tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists",
                                "effect": "NoSchedule"}])


@case("oci-rdma-vf-16-asked-kept")
def _(n):
    return tj_2x8(n, node_selector=it("BM.GPU.H100.8"),
                  limits_extra={"nvidia.com/rdma-vf": "16"})


# rdma/ib: 1, as CoreWeave CKS's docs have pods ask for it ("used as a
# boolean", docs.coreweave.com .../use-gpudirect-rdma), on nodes known by
# their GFD product that advertise rdma/ib: 8 (test/nodes, not CoreWeave's
# own allocatable, which no source gives): the pod's count is kept, and the
# warning names the nodes' count.
@case("view-gfd-rdma-ib-1-asked-kept-warn", args=ONPREM_VIEW)
def _(n):
    return tj_2x8(n, node_selector={"rack": "r12"},
                  limits_extra={"rdma/ib": "1"})


@case("aks-shared-ib-asked-no-rdma-ib-added")
def _(n):
    return tj_2x8(n, node_selector=it("Standard_ND96isr_H100_v5"),
                  limits_extra={"rdma/shared_ib": "1"})


@case("oci-hostnetwork-privileged-rdma-nothing-added")
def _(n):
    # As oci-hpc-oke's nccl-tests MPIJobs run (shared/corpus/manifests/
    # ocihpc-kueue-h100-rdma-mpijob.yaml): the host's network, a
    # privileged container and /dev/infiniband from the host.
    pod = trainjob_pod(
        n, nnodes=2, nproc="8", gpu=8, index=1,
        node_selector=it("BM.GPU.H100.8"),
        volumes=[{"name": "devinf",
                  "hostPath": {"path": "/dev/infiniband", "type": ""}}],
        mounts=[{"name": "devinf", "mountPath": "/dev/infiniband"}],
        security_context={"privileged": True,
                          "capabilities": {"add": ["IPC_LOCK"]}},
        spec_extra={"hostNetwork": True,
                    "dnsPolicy": "ClusterFirstWithHostNet"})
    # The apiserver defaults hostPort to containerPort on the host network.
    for c in pod["spec"]["containers"]:
        for port in c.get("ports", []):
            port["hostPort"] = port["containerPort"]
            c["ports"] = [dict(sorted(port.items()))]
    return review(n, pod, JOB_CONTROLLER)


@case("view-p5-nodes-without-efa-none-added", args=NO_EFA_VIEW)
def _(n):
    return tj_2x8(n, node_selector=it("p5.48xlarge"))


@case("view-p5-pinned-efa-follows-fewest-nodes", args=EFA16_VIEW)
def _(n):
    # Both NodePools are p5.48xlarge: 16 EFA on two nodes, 32 on one.
    return tj_2x8(n, node_selector=it("p5.48xlarge"))


@case("view-p5-nodepools-efa-differ-fewest", args=EFA16_VIEW)
def _(n):
    # No type pinned (eks.amazonaws.com/instance-family would narrow it):
    # the view's two kinds of p5 node, which differ only in EFA.
    return tj_2x8(n, node_selector={"eks.amazonaws.com/compute-type":
                                    "auto"})


@case("view-p5-nodepool-efa16-mutate", args=EFA16_VIEW)
def _(n):
    return tj_2x8(n, node_selector={"karpenter.sh/nodepool":
                                    "gpu-p5-efa16"})


@case("view-aks-shared-ib-nodes-no-rdma-ib-added", args=AKS_SHARED_VIEW)
def _(n):
    return tj_2x8(n, node_selector=it("Standard_ND96isr_H100_v5"),
                  tolerations=AKS_SKU_GPU)


@case("view-gfd-shared-ib-slots-not-a-limit", args=GFD_SHARED_VIEW)
def _(n):
    return tj_2x8(n, node_selector={"rack": "r12"})


# A node group whose nodes span two zones: EFA does not cross them.
ZONES_VIEW = "--nodes test/nodes/eks-p5-two-zones.yaml"
RUNTIMES_VIEW = "--nodes test/golden/runtimes/mpi-runtimes.yaml"


# A TrainJob on an MPI runtime the cluster has: its ranks start over ssh
# from the launcher's mpirun, so the nodes' env goes into
# spec.trainer.env (which Trainer copies into the launcher's "node"
# container) and into OMPI_MCA_mca_base_env_list, which Open MPI exports.

def mpi_trainjob(runtime="mpi-p5", nodes=2, gpu=None, env=None, nproc=None):
    trainer = {"numNodes": nodes}
    if nproc is not None:
        trainer["numProcPerNode"] = nproc
    if gpu is not None:
        trainer["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": gpu}}
    if env is not None:
        trainer["env"] = env
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob", "metadata": job_meta("nccl-all-reduce", "hpc"),
            "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org",
                                    "kind": "ClusterTrainingRuntime",
                                    "name": runtime},
                     "trainer": trainer}}


@case("job-trainjob-mpi-runtime-launcher-env-mutate", args=RUNTIMES_VIEW, policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    # mpirun exports NCCL_P2P_LEVEL with -x itself: left out of the list.
    return job_review(n, mpi_trainjob())


@case("job-trainjob-mpi-runtime-launcher-env-audit",
      args=RUNTIMES_VIEW + " --mode audit", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return job_review(n, mpi_trainjob())


@case("job-trainjob-mpi-runtime-user-env-kept", args=RUNTIMES_VIEW, policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return job_review(n, mpi_trainjob(env=[
        {"name": "FI_PROVIDER", "value": "efa"},
        {"name": "FI_EFA_USE_DEVICE_RDMA", "value": "0"},
        {"name": "NCCL_DEBUG", "value": "INFO"}]))


@case("job-trainjob-mpi-runtime-1gpu-deny", args=RUNTIMES_VIEW)
def _(n):
    return job_review(n, mpi_trainjob(nodes=16, gpu=1, nproc=1))


@case("job-trainjob-mpi-launcher-container-not-node-warn", args=RUNTIMES_VIEW)
def _(n):
    return job_review(n, mpi_trainjob(runtime="mpi-p5-launcher-container"))


@case("job-trainjob-mpi-runtime-no-trainer-mutate", args=RUNTIMES_VIEW, policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    # Only the runtime's name: spec.trainer is made to hold the env.
    job = mpi_trainjob(runtime="mpi-p4d-2")
    del job["spec"]["trainer"]
    return job_review(n, job)


@case("job-trainjob-mpi-runtime-not-in-view-unknown", args=RUNTIMES_VIEW)
def _(n):
    # A runtime the cluster does not have: judged as before, from the
    # TrainJob alone.
    return job_review(n, mpi_trainjob(runtime="mpi-elsewhere", gpu=8))
P5_GROUP = {"eks.amazonaws.com/nodegroup": "p5-workers"}


@case("view-zones-nodegroup-spans-two-zones-warn", args=ZONES_VIEW)
def _(n):
    return tj_2x8(n, node_selector=P5_GROUP)


@case("view-zones-zone-pinned-silent", args=ZONES_VIEW)
def _(n):
    return tj_2x8(n, node_selector=dict(P5_GROUP, **{
        "topology.kubernetes.io/zone": "us-east-1b"}))


@case("view-zones-pod-affinity-on-zone-silent", args=ZONES_VIEW)
def _(n):
    return tj_2x8(n, node_selector=P5_GROUP, affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {
                "jobset.sigs.k8s.io/jobset-name": "llama3-8b-sft"}},
            "topologyKey": "topology.kubernetes.io/zone"}]}})


@case("view-zones-one-pod-job-silent", args=ZONES_VIEW)
def _(n):
    return tj(n, nnodes=1, nproc="8", gpu=8, index=0, node_selector=P5_GROUP)


# The policy's alternative: a required pod affinity on the zone.
ZONE_AFFINITY = POLICY_HEAD.replace("  env: true\n",
                                    "  env: true\n  zoneAffinity: true\n")


@case("view-zones-affinity-patch", args=ZONES_VIEW, policy=ZONE_AFFINITY)
def _(n):
    return tj_2x8(n, node_selector=P5_GROUP)


@case("view-zones-affinity-patch-pytorchjob", args=ZONES_VIEW,
      policy=ZONE_AFFINITY)
def _(n):
    return review(n, pytorchjob_pod(n, node_selector=P5_GROUP, gpu=8,
                                    nproc="8", masters=1, workers=1),
                  TRAINING_OPERATOR)


def claim_pytorchjob(template):
    """A PyTorchJob of 4 pods (Master + 3 Workers) whose GPUs are one DRA
    claim per pod, from ResourceClaimTemplate `template`."""
    job = pytorchjob(name="llama3-8b-dra", workers=3, gpu=1, pin=None,
                     claims=[{"name": "gpu",
                              "resourceClaimTemplateName": template}])
    for r in job["spec"]["pytorchReplicaSpecs"].values():
        c = r["template"]["spec"]["containers"][0]
        c["resources"] = {"claims": [{"name": "gpu"}]}
    return job


@case("job-view-dra-mpijob-4x1-claim-deny", args=DRA_NODES)
def _(n):
    # mpi-operator v2beta1: 4 workers of one claimed GPU each.
    job = mpijob(name="nccl-tests-dra", workers=4, gpu=1, pin=None)
    job["metadata"]["namespace"] = "ml-training"
    w = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    w["resourceClaims"] = [{"name": "gpu",
                            "resourceClaimTemplateName": "single-gpu"}]
    w["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    return job_review(n, job)


@case("job-view-dra-pytorchjob-4x1-claim-deny", args=DRA_NODES)
def _(n):
    return job_review(n, claim_pytorchjob("single-gpu"))


# A TrainJob whose runtime's node pods claim their GPU (DRA): the job
# names no GPU; the runtime in the view (test/golden/runtimes/dra-h100,
# with the DRA-only nodes) says each of its 4 pods claims one through
# single-gpu. Judged as its pods are, the fix in claim terms.
DRA_RUNTIME_VIEW = "--nodes test/golden/runtimes/dra-h100"


def dra_runtime_trainjob(nodes=4):
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob", "metadata": job_meta("llama3-8b-dra"),
            "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org",
                                    "kind": "ClusterTrainingRuntime",
                                    "name": "torch-distributed-dra"},
                     "trainer": {"numNodes": nodes, "numProcPerNode": 1}}}


@case("job-view-dra-trainjob-runtime-claim-4x1-deny", args=DRA_RUNTIME_VIEW)
def _(n):
    return job_review(n, dra_runtime_trainjob())


@case("job-view-dra-trainjob-runtime-claim-4x1-audit",
      args=DRA_RUNTIME_VIEW + " --mode audit")
def _(n):
    return job_review(n, dra_runtime_trainjob())


@case("view-dra-trainjob-runtime-claim-pod-4x1-deny", args=DRA_RUNTIME_VIEW)
def _(n):
    # One of that job's pods, as JobSet makes it from the runtime.
    return tj_4x1(n, **dra_claim("single-gpu"))


@case("job-view-dra-pytorchjob-4x1-claim-repack-deny", args=DRA_NODES,
      policy=REPACK)
def _(n):
    # jobs.repack writes nvidia.com/gpu limits: not for claims.
    return job_review(n, claim_pytorchjob("single-gpu"))


@case("job-dra-pytorchjob-claim-no-view-warn")
def _(n):
    return job_review(n, claim_pytorchjob("single-gpu"))


@case("job-view-dra-pytorchjob-all-gpus-allow", args=DRA_NODES)
def _(n):
    return job_review(n, claim_pytorchjob("all-gpus"))


@case("job-view-zones-trainjob-warn", args=ZONES_VIEW)
def _(n):
    return job_review(n, trainjob(nodes=2, nproc=8, gpu=8, pin=P5_GROUP))


@case("job-view-trainjob-nodegroup-16x1-deny", args=EKS_VIEW)
def _(n):
    return job_review(n, trainjob(pin=P4D_GROUP))


@case("job-trainjob-unknown-type-warn")
def _(n):
    return job_review(n, trainjob(pin=it("g5.8xlarge")))


@case("job-view-unknown-product-says-what-nodes-say", args=TYPED_VIEW)
def _(n):
    return job_review(n, trainjob(pin={"rack": "r7"}))


@case("job-view-unknown-type-pin-gfd-h100-deny", args=TYPED_VIEW)
def _(n):
    return job_review(n, trainjob(pin=it("hgx-h100-8x")))


@case("job-pytorchjob-master-worker-16x1-deny")
def _(n):
    return job_review(n, pytorchjob())


@case("job-pytorchjob-master-worker-repack", policy=REPACK)
def _(n):
    return job_review(n, pytorchjob())


@case("job-pytorchjob-elastic-deny")
def _(n):
    return job_review(n, pytorchjob(
        master=False, workers=4, nproc="1",
        elastic={"minReplicas": 2, "maxReplicas": 16,
                 "rdzvBackend": "c10d"}))


@case("job-pytorchjob-elastic-not-repacked", policy=REPACK)
def _(n):
    return job_review(n, pytorchjob(
        master=False, workers=4, nproc="1",
        elastic={"minReplicas": 2, "maxReplicas": 16,
                 "rdzvBackend": "c10d"}))


@case("job-mpijob-16x1-deny")
def _(n):
    return job_review(n, mpijob())


@case("job-mpijob-repack", policy=REPACK)
def _(n):
    return job_review(n, mpijob())


@case("job-mpijob-hardcoded-np-not-repacked", policy=REPACK)
def _(n):
    return job_review(n, mpijob(launcher_cmd=[
        "mpirun", "-np", "16", "all_reduce_perf", "-b", "8", "-e", "8G"]))


@case("job-gb200-computedomain-allow")
def _(n):
    return job_review(n, pytorchjob(
        name="llama-405b", workers=7, gpu=1, nproc="1", pin=GB200,
        claims=CD_CLAIM))


@case("job-gb200-no-computedomain-deny")
def _(n):
    return job_review(n, pytorchjob(
        name="llama-405b", workers=7, gpu=1, nproc="1", pin=GB200))


@case("job-gb200-whole-node-no-computedomain-warn")
def _(n):
    return job_review(n, pytorchjob(
        name="llama-405b", workers=7, gpu=4, nproc="4", pin=GB200))


@case("job-update-spec-unchanged-not-judged")
def _(n):
    old = trainjob()
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"team": "research"}
    return job_review(n, new, operation="UPDATE", old_object=old)


@case("job-update-numnodes-changed-deny")
def _(n):
    old = trainjob(nodes=2, nproc=8, gpu=8, efa=4)
    new = trainjob(nodes=16, nproc=1, gpu=1)
    return job_review(n, new, operation="UPDATE", old_object=old)


@case("job-pytorchjob-null-gpu-limit-deny")
def _(n):
    # As a manifest has it: the apiserver would drop the null from the
    # custom resource, and then refuse the pods (request, no limit).
    NOVALIDATE.add(n)
    job = pytorchjob()
    for rs in job["spec"]["pytorchReplicaSpecs"].values():
        res = rs["template"]["spec"]["containers"][0]["resources"]
        res["limits"]["nvidia.com/gpu"] = None
        res["requests"] = {"nvidia.com/gpu": 1}
    return job_review(n, job)


# Fixes that keep the user's intent: a job smaller than a node is offered
# one pod of its own size (never fragmented), not a bigger world; a
# PyTorchJob that fits its Master is told so, never "Worker replicas: 0".

@case("job-trainjob-4x1-one-pod-fix-deny")
def _(n):
    return job_review(n, trainjob(nodes=4, nproc=1, gpu=1))


@case("job-pytorchjob-4x1-master-only-fix-deny")
def _(n):
    return job_review(n, pytorchjob(workers=3, gpu=1, nproc="1"))


@case("job-pytorchjob-8x1-master-only-not-repacked", policy=REPACK)
def _(n):
    return job_review(n, pytorchjob(workers=7, gpu=1, nproc="1"))


# MPI launchers (mpi-operator v2): mpirun starts the ranks over ssh, so
# they see none of the worker container's env; the nodes' env goes into
# the Launcher, named in OMPI_MCA_mca_base_env_list (policy/pod/mutate.c)
# where the mpirun line has no -x; with -x (Open MPI 4 aborts on both) the
# answer adds nothing and warns with the -x flags to add instead.

@case("job-mpijob-2x8-launcher-env-patch", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return job_review(n, mpijob(workers=2, slots=8, gpu=8, efa=4))


@case("job-mpijob-2x8-launcher-env-audit", args="--mode audit", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return job_review(n, mpijob(workers=2, slots=8, gpu=8, efa=4))


@case("job-mpijob-launcher-x-flags-left-to-command", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    # -x FI_PROVIDER=efa on the command line: the user's to say, and no
    # env list beside it (mpirun 4.1 would abort); -x flags advised.
    return job_review(n, mpijob(workers=2, slots=8, gpu=8, efa=4,
                                launcher_cmd=[
                                    "mpirun", "-np", "16", "-x",
                                    "FI_PROVIDER=efa", "-x", "NCCL_DEBUG=INFO",
                                    "all_reduce_perf", "-b", "8", "-e", "8G"]))


@case("job-mpijob-launcher-mca-env-list-on-command-warn", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    # --mca on the command line beats OMPI_MCA_* in the environment.
    return job_review(n, mpijob(workers=2, slots=8, gpu=8, efa=4,
                                launcher_cmd=[
                                    "mpirun", "--mca", "mca_base_env_list",
                                    "NCCL_DEBUG=INFO", "all_reduce_perf"]))


@case("job-mpijob-launcher-user-var-forwarded-by-name", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    # The user's NCCL_P2P_LEVEL in the launcher is kept, and the list
    # forwards it by name, with the user's value.
    return job_review(n, mpijob(workers=2, slots=8, gpu=8, efa=4,
                                launcher_env=[{"name": "NCCL_P2P_LEVEL",
                                               "value": "PIX"}]))


@case("job-mpijob-launcher-user-env-list-kept", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return job_review(n, mpijob(workers=2, slots=8, gpu=8, efa=4,
                                launcher_env=[{
                                    "name": "OMPI_MCA_mca_base_env_list",
                                    "value": "NCCL_DEBUG=INFO"}]))


# One torchrun per worker under mpirun: slotsPerWorker 1, -np = workers,
# --nproc_per_node = the GPUs. Right as it is; a fix keeps its shape
# (more slots would pack the torchruns onto the first worker).

TORCHRUN_PER_NODE = ["mpirun", "-np", "2", "--map-by", "ppr:1:node",
                     "torchrun", "--nproc_per_node", "8", "train.py"]


@case("job-mpijob-torchrun-per-node-2x8-patch", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return job_review(n, mpijob(name="llama3-8b-mpi", workers=2, slots=1,
                                gpu=8, efa=4, launcher_cmd=TORCHRUN_PER_NODE))


@case("job-mpijob-torchrun-per-node-4x4-deny")
def _(n):
    return job_review(n, mpijob(name="llama3-8b-mpi", workers=4, slots=1,
                                gpu=4, launcher_cmd=[
                                    "mpirun", "-np", "4", "bash", "-c",
                                    "torchrun --nproc_per_node=4 train.py"]))


# One slot per worker on 2-GPU workers: mpirun starts 2 ranks, not 4,
# and a GPU of each worker idles. The fix says so, with both world sizes.
@case("job-mpijob-2x2-one-slot-idle-gpus-deny")
def _(n):
    return job_review(n, mpijob(name="bert-mpi", workers=2, slots=1, gpu=2))


# The same, written as people do: the torchruns join one world of
# workers x nproc through --nnodes and the MPI rank as the node's rank.
@case("job-mpijob-torchrun-per-node-joined-4x4-deny")
def _(n):
    return job_review(n, mpijob(name="llama3-8b-mpi", workers=4, slots=1,
                                gpu=4, launcher_cmd=[
                                    "mpirun", "-np", "4", "bash", "-c",
                                    "torchrun --nnodes=$OMPI_COMM_WORLD_SIZE "
                                    "--node_rank=$OMPI_COMM_WORLD_RANK "
                                    "--master_addr=llama3-8b-mpi-worker-0 "
                                    "--master_port=29500 "
                                    "--nproc_per_node=4 train.py"]))


@case("job-mpijob-torchrun-per-node-not-repacked", policy=REPACK)
def _(n):
    return job_review(n, mpijob(name="llama3-8b-mpi", workers=4, slots=1,
                                gpu=4, launcher_cmd=[
                                    "bash", "-c",
                                    "mpirun -np $WORKERS torchrun "
                                    "--nproc_per_node=$GPUS train.py"]))


# Kueue starts a job by UPDATE: suspend goes false and the flavor's
# nodeLabels are merged into the pod templates' nodeSelector, with its
# tolerations and the kueue.x-k8s.io/podset label (kueue v0.19.2
# pkg/podset/podset.go Merge; jobs/kubeflow/kubeflowjob, jobs/mpijob,
# jobs/trainjob). Never refused: its pods are judged when created.

KUEUE = sa_user("kueue-system", "kueue-controller-manager")
KUEUE_FLAVOR = {"tolerations": [{"key": "nvidia.com/gpu", "operator":
                                 "Exists", "effect": "NoSchedule"}],
                "labels": {"kueue.x-k8s.io/podset": "worker"}}


def kueue_review(case, new, old):
    r = job_review(case, new, operation="UPDATE", old_object=old)
    r["request"]["userInfo"] = KUEUE
    r["request"]["options"]["fieldManager"] = "kueue-admission"
    return r


def kueue_merge(template, selector):
    """What Kueue's podset Merge does to one pod template."""
    meta = template.setdefault("metadata", {})
    meta.setdefault("labels", {}).update(KUEUE_FLAVOR["labels"])
    spec = template["spec"]
    spec.setdefault("nodeSelector", {}).update(selector)
    spec["tolerations"] = spec.get("tolerations", []) + \
        copy.deepcopy(KUEUE_FLAVOR["tolerations"])


def queued(job):
    job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "research"}
    return job


@case("job-kueue-unsuspend-pytorchjob-16x1-not-judged")
def _(n):
    old = queued(pytorchjob(pin=None))
    old["spec"]["runPolicy"] = {"suspend": True}
    new = copy.deepcopy(old)
    new["spec"]["runPolicy"]["suspend"] = False
    for rs in new["spec"]["pytorchReplicaSpecs"].values():
        kueue_merge(rs["template"], P4D)
    return kueue_review(n, new, old)


@case("job-kueue-unsuspend-mpijob-16x1-not-judged")
def _(n):
    old = queued(mpijob())
    for rs in old["spec"]["mpiReplicaSpecs"].values():
        rs["template"]["spec"].pop("nodeSelector", None)
    old["spec"]["runPolicy"] = {"suspend": True}
    new = copy.deepcopy(old)
    new["spec"]["runPolicy"]["suspend"] = False
    kueue_merge(new["spec"]["mpiReplicaSpecs"]["Worker"]["template"], P4D)
    return kueue_review(n, new, old)


@case("job-kueue-unsuspend-trainjob-runtimepatches-16x1-not-judged")
def _(n):
    # Kueue's webhook added its runtimePatches entry at CREATE; on
    # admission it writes the flavor into it, then unsuspends.
    old = queued(trainjob(pin=None))
    old["spec"]["suspend"] = True
    old["spec"]["runtimePatches"] = [{"manager": "kueue.x-k8s.io/manager"}]
    new = copy.deepcopy(old)
    new["spec"]["suspend"] = False
    template = {"spec": {}}
    kueue_merge(template, P4D)
    new["spec"]["runtimePatches"][0]["trainingRuntimeSpec"] = {
        "template": {"spec": {"replicatedJobs": [{
            "name": "node", "template": {"spec": {"template": template}}}]}}}
    return kueue_review(n, new, old)


@case("job-kueue-unsuspend-only-pinned-16x1-not-judged")
def _(n):
    # A flavor without nodeLabels: the UPDATE only unsuspends a job that
    # was refused-worthy all along (judged at its CREATE).
    old = queued(pytorchjob())
    old["spec"]["runPolicy"] = {"suspend": True}
    new = copy.deepcopy(old)
    new["spec"]["runPolicy"]["suspend"] = False
    return kueue_review(n, new, old)


@case("job-kueue-update-changes-gpus-judged-deny")
def _(n):
    # Not Kueue's shape of UPDATE: the containers change too.
    old = queued(pytorchjob(pin=None, gpu=8, nproc="8", workers=1))
    old["spec"]["runPolicy"] = {"suspend": True}
    new = queued(pytorchjob(gpu=1))
    new["spec"]["runPolicy"] = {"suspend": False}
    return kueue_review(n, new, old)


@case("job-kueue-update-selector-replaced-judged-deny")
def _(n):
    # A selector that changes a key Kueue did not add is not a narrowing.
    old = queued(pytorchjob(pin=it("p5.48xlarge")))
    new = queued(pytorchjob(pin=P4D))
    return kueue_review(n, new, old)


# --------------------------------------- issue 13 item 8: more kinds

def mpijob_v1_worker_pod(case, job="horovod-resnet", ns="hpc", index=3,
                         gpu=1, node_selector=P4D):
    """A worker of Training Operator v1's own MPIJob (kubeflow.org/v1):
    GenLabels (operator-name mpijob-controller, job-name) plus
    replica-type and replica-index, a sleep command, and the kubexec.sh
    ConfigMap its ranks start through (pkg/controller.v1/mpi
    mpijob_controller.go newWorker)."""
    sfx = suffix_for(case)
    name = "%s-worker-%d" % (job, index)
    meta = {
        "name": name, "namespace": ns,
        "labels": {
            "training.kubeflow.org/job-name": job,
            "training.kubeflow.org/operator-name": "mpijob-controller",
            "training.kubeflow.org/replica-index": str(index),
            "training.kubeflow.org/replica-type": "worker",
        },
        "ownerReferences": [{
            "apiVersion": "kubeflow.org/v1", "kind": "MPIJob",
            "name": job, "uid": uid("mpijob", ns, job),
            "controller": True, "blockOwnerDeletion": True,
        }],
    }
    spec = {
        "volumes": [{"name": "mpi-job-config", "configMap": {
            "name": job + "-config", "defaultMode": 420,
            "items": [{"key": "kubexec.sh", "path": "kubexec.sh",
                       "mode": 365}]}}],
        "containers": [container(
            "worker", MPI_IMAGE, sfx,
            command=["sleep"], args=["365d"],
            resources=gpu_resources(gpu, cpu="8", memory="64Gi"),
            volumeMounts=[{"name": "mpi-job-config",
                           "mountPath": "/etc/mpi"}],
        )],
        "restartPolicy": "Never",
    }
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return pod_object(meta, spec, sfx)


def trainer_mpi_pod(case, job="nccl-all-reduce", rjob="node", gpu=8,
                    slots=None, node_selector=None, efa=None, ns="hpc"):
    """A pod of a TrainJob on an MPI runtime (MPI, DeepSpeed): no PET_*
    env. The MPI plugin mounts its ssh Secret into the container "node"
    of launcher and node pods, and gives the launcher's the OpenMPI env
    (kubeflow/trainer pkg/runtime/framework/plugins/mpi/mpi.go)."""
    pod = trainjob_pod(case, job=job, ns=ns, index=0, gpu=gpu, efa=efa,
                       cpu="90", memory="900Gi", node_selector=node_selector,
                       rjob=rjob, trainer=False, args=["-De"],
                       volumes=[{"name": "mpi-ssh-auth", "secret": {
                           "secretName": job + "-mpi-ssh-auth",
                           "defaultMode": 416, "items": [
                               {"key": "ssh-privatekey", "path": "id_rsa"},
                               {"key": "ssh-publickey",
                                "path": "id_rsa.pub"},
                               {"key": "ssh-publickey",
                                "path": "authorized_keys"}]}}],
                       mounts=[{"name": "mpi-ssh-auth",
                                "mountPath": "/root/.ssh"}],
                       user_env=[] if slots is None else [
                           {"name": "OMPI_MCA_orte_default_hostfile",
                            "value": "/etc/mpi/hostfile"},
                           {"name": "OMPI_MCA_orte_keep_fqdn_hostnames",
                            "value": "true"},
                           {"name": "OMPI_MCA_orte_set_default_slots",
                            "value": str(slots)},
                           {"name": "OMPI_MCA_plm_rsh_args",
                            "value": "-o ConnectionAttempts=10"}])
    c = pod["spec"]["containers"][0]
    c["name"] = "node"
    c["command"] = ["/usr/sbin/sshd"]
    if gpu is None:
        c["resources"] = {"requests": {"cpu": "2", "memory": "4Gi"}}
    return pod


P5 = it("p5.48xlarge")


@case("mpijob-v1-worker-1gpu-deny")
def _(n):
    # Training Operator 1.x's MPIJob: governed as mpi-operator's is.
    return review(n, mpijob_v1_worker_pod(n), TRAINING_OPERATOR)


@case("mpijob-v1-worker-8gpu-mutate")
def _(n):
    return review(n, mpijob_v1_worker_pod(n, gpu=8, index=1),
                  TRAINING_OPERATOR)


@case("job-mpijob-v1-16x1-deny")
def _(n):
    # Refused where kubectl shows it, as audit now says too (it used to
    # skip kubeflow.org/v1 as "an older MPI operator API").
    job = mpijob(name="horovod-resnet")
    job["apiVersion"] = "kubeflow.org/v1"
    return job_review(n, job)


@case("trainer-mpi-node-8gpu-mutate")
def _(n):
    return review(n, trainer_mpi_pod(n, node_selector=P5, efa=32),
                  JOB_CONTROLLER)


@case("trainer-mpi-node-1gpu-deny")
def _(n):
    return review(n, trainer_mpi_pod(n, gpu=1, node_selector=P4D),
                  JOB_CONTROLLER)


@case("trainer-mpi-launcher-no-gpu-ignored")
def _(n):
    return review(n, trainer_mpi_pod(n, rjob="launcher", gpu=None, slots=8,
                                     node_selector=P5), JOB_CONTROLLER)


@case("trainer-deepspeed-launcher-as-node-8gpu-mutate", policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    # runLauncherAsNode (the deepspeed-distributed runtime): the launcher
    # runs ranks on its GPUs too.
    return review(n, trainer_mpi_pod(n, job="deepspeed-llama",
                                     rjob="launcher", gpu=8, slots=8,
                                     node_selector=P4D, efa=4),
                  JOB_CONTROLLER)


@case("trainer-deepspeed-launcher-as-node-2gpu-deny")
def _(n):
    return review(n, trainer_mpi_pod(n, job="deepspeed-llama",
                                     rjob="launcher", gpu=2, slots=2,
                                     node_selector=P4D), JOB_CONTROLLER)


def volcano_pod(case, task="worker", gpu=8, managed=True, job="imagenet",
                ns="ml"):
    """A pod of a Volcano batch.volcano.sh Job: its labels and the
    PodGroup annotation the Volcano job controller sets."""
    sfx = suffix_for(case)
    lab = {"volcano.sh/job-name": job, "volcano.sh/job-namespace": ns,
           "volcano.sh/queue-name": "default", "volcano.sh/task-spec": task}
    if managed:
        lab["topogate.io/managed"] = "true"
    meta = {
        "name": "%s-%s-0" % (job, task), "namespace": ns, "labels": lab,
        "annotations": {"scheduling.k8s.io/group-name": job,
                        "volcano.sh/job-name": job,
                        "volcano.sh/task-spec": task},
        "ownerReferences": [{
            "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "name": job, "uid": uid("vcjob", ns, job),
            "controller": True, "blockOwnerDeletion": True}],
    }
    spec = {"containers": [container(
                "train", TRAINER_IMAGE, sfx, command=["python3", "train.py"],
                resources=gpu_resources(gpu))],
            "nodeSelector": P4D, "schedulerName": "volcano"}
    return pod_object(meta, spec, sfx)


def jaxjob_pod(case, job="jax-mnist", ns="ml", index=3, replicas=8, gpu=1,
               managed=True):
    """A Worker of Training Operator v1's JAXJob: the common labels
    (operator jaxjob-controller) and the coordinator env of
    pkg/controller.v1/jax/envvar.go setPodEnv (NUM_PROCESSES = replicas)."""
    sfx = suffix_for(case)
    name = "%s-worker-%d" % (job, index)
    lab = {"training.kubeflow.org/job-name": job,
           "training.kubeflow.org/operator-name": "jaxjob-controller",
           "training.kubeflow.org/replica-index": str(index),
           "training.kubeflow.org/replica-type": "worker"}
    if managed:
        lab["topogate.io/managed"] = "true"
    meta = {"name": name, "namespace": ns, "labels": lab,
            "ownerReferences": [{
                "apiVersion": "kubeflow.org/v1", "kind": "JAXJob",
                "name": job, "uid": uid("jaxjob", ns, job),
                "controller": True, "blockOwnerDeletion": True}]}
    spec = {"containers": [container(
                "jax", "docker.io/kubeflow/jaxjob-dist-spmd-mnist:latest", sfx,
                ports=[{"name": "jaxjob-port", "containerPort": 6666}],
                env=[{"name": "PYTHONUNBUFFERED", "value": "1"},
                     {"name": "COORDINATOR_PORT", "value": "6666"},
                     {"name": "COORDINATOR_ADDRESS",
                      "value": "%s-worker-0" % job},
                     {"name": "NUM_PROCESSES", "value": str(replicas)},
                     {"name": "PROCESS_ID", "value": str(index)}],
                resources=gpu_resources(gpu, cpu="10", memory="100Gi"))],
            "nodeSelector": P4D, "hostname": name, "subdomain": job}
    return pod_object(meta, spec, sfx)


@case("jaxjob-managed-8x1-deny")
def _(n):
    # Opted in with topogate.io/managed; NUM_PROCESSES gives the job size.
    return review(n, jaxjob_pod(n), TRAINING_OPERATOR)


@case("jaxjob-unmanaged-8x1-not-governed")
def _(n):
    return review(n, jaxjob_pod(n, managed=False), TRAINING_OPERATOR)


@case("volcano-managed-8gpu-mutate")
def _(n):
    # Governed because the policy opts it in (topogate.io/managed).
    return review(n, volcano_pod(n), JOB_CONTROLLER)


@case("volcano-unmanaged-1gpu-not-governed")
def _(n):
    return review(n, volcano_pod(n, gpu=1, managed=False), JOB_CONTROLLER)


# ============================================================ frameworks
# Issue 46 point 5: GPU pods governed by what they are, without the
# topogate.io/managed label: Ray, Volcano's mpi and pytorch plugins,
# LeaderWorkerSet, plain JobSet, mpi-operator v0.2's v1alpha2 MPIJob and
# Kubernetes' gang (PodGroup). Each framework has a switch under
# `frameworks:` in the policy (default warn: never refused); the labels,
# annotations and env are the controllers' own, cited next to each
# builder and in policy/kinds/frameworks.c.


def frameworks_policy(**levels):
    """POLICY_HEAD with a frameworks block: frameworks_policy(jobSet="off")."""
    return POLICY_HEAD + "frameworks:\n" + "".join(
        "  %s: %s\n" % kv for kv in sorted(levels.items()))


# The JobSet case above was written when plain JobSets were not
# governed: with the switch off it reads as it did.
POLICY["jobset-plain-gpu-not-trainjob-ignored"] = frameworks_policy(
    jobSet="off")


# The controllers that create these pods.
KUBERAY = sa_user("ray-system", "kuberay-operator")
VOLCANO = sa_user("volcano-system", "volcano-controllers")
STS_CONTROLLER = sa_user("kube-system", "statefulset-controller")
LWS_CONTROLLER = sa_user("lws-system", "lws-controller-manager")
JOB_KINDS["RayCluster"] = ("ray.io", "v1", "rayclusters")
JOB_KINDS["RayJob"] = ("ray.io", "v1", "rayjobs")
RAY_IMAGE = "rayproject/ray:2.41.0-py312-gpu"


def ray_pod(case, cluster="ray-train", group="gpu", gpu=1, ns="ml",
            node_type="worker"):
    """A KubeRay pod: the labels of labelPod and a few of the env vars of
    setContainerEnvVars (ray-project/kuberay ray-operator/controllers/ray/
    common/pod.go; utils/constant.go). None says the cluster's size."""
    sfx = suffix_for(case)
    name = "%s-%s-worker-%s" % (cluster, group, sfx)
    meta = {
        "name": name, "namespace": ns,
        "labels": {"app.kubernetes.io/created-by": "kuberay-operator",
                   "app.kubernetes.io/name": "kuberay",
                   "ray.io/cluster": cluster, "ray.io/group": group,
                   "ray.io/identifier": "%s-%s" % (cluster, node_type),
                   "ray.io/is-ray-node": "yes",
                   "ray.io/node-type": node_type},
        "ownerReferences": [{
            "apiVersion": "ray.io/v1", "kind": "RayCluster", "name": cluster,
            "uid": uid("raycluster", ns, cluster), "controller": True,
            "blockOwnerDeletion": True}],
    }
    env = [{"name": "RAY_CLUSTER_NAME",
            "valueFrom": {"fieldRef": {
                "apiVersion": "v1",
                "fieldPath": "metadata.labels['ray.io/cluster']"}}},
           {"name": "RAY_NODE_TYPE_NAME",
            "valueFrom": {"fieldRef": {
                "apiVersion": "v1",
                "fieldPath": "metadata.labels['ray.io/group']"}}},
           {"name": "RAY_ADDRESS",
            "value": "%s-head-svc.%s.svc.cluster.local:6379" % (cluster, ns)},
           {"name": "RAY_USAGE_STATS_KUBERAY_IN_USE", "value": "1"}]
    spec = {"containers": [container(
                "ray-worker", RAY_IMAGE, sfx,
                command=["/bin/bash", "-lc", "--"],
                args=["ulimit -n 65536; ray start --block "
                      "--address=%s-head-svc.%s.svc.cluster.local:6379 "
                      "--num-gpus=%d" % (cluster, ns, gpu)],
                env=env, resources=gpu_resources(gpu, cpu="10",
                                                 memory="100Gi"))],
            "nodeSelector": P4D}
    return pod_object(meta, spec, sfx)


def ray_group_template(gpu, pin=P4D):
    return {"spec": {"nodeSelector": pin, "containers": [{
        "name": "ray-worker", "image": RAY_IMAGE,
        "resources": {"limits": {"nvidia.com/gpu": gpu, "cpu": "10",
                                 "memory": "100Gi"}}}]}}


def raycluster_spec(workers=4, gpu=1):
    return {"rayVersion": "2.41.0",
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {
                "containers": [{"name": "ray-head", "image": RAY_IMAGE}]}}},
            "workerGroupSpecs": [{
                "groupName": "gpu", "replicas": workers,
                "minReplicas": workers, "maxReplicas": workers,
                "rayStartParams": {},
                "template": ray_group_template(gpu)}]}


@case("framework-ray-worker-1gpu-no-size-warn-mutate")
def _(n):
    # A Ray pod says nothing of its cluster's size: governed (warn, the
    # default of frameworks.ray), patched, no layout finding.
    return review(n, ray_pod(n), KUBERAY)


@case("job-framework-raycluster-4x1-warn")
def _(n):
    return job_review(n, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
                          "metadata": job_meta("ray-train", "ml"),
                          "spec": raycluster_spec()})


@case("job-framework-raycluster-rayservice-4x1-allow")
def _(n):
    # KubeRay's RayService makes this RayCluster (label
    # ray.io/originated-from-crd: RayService, rayservice_controller.go
    # constructRayClusterForRayService): serving replicas, no job size.
    meta = job_meta("llm-serve-raycluster-x7k2p", "ml")
    meta["labels"] = {"ray.io/originated-from-cr-name": "llm-serve",
                      "ray.io/originated-from-crd": "RayService"}
    return job_review(n, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
                          "metadata": meta, "spec": raycluster_spec()})


@case("job-framework-rayjob-4x1-enforce-deny",
      policy=frameworks_policy(ray="enforce"))
def _(n):
    return job_review(n, {"apiVersion": "ray.io/v1", "kind": "RayJob",
                          "metadata": job_meta("ray-sft", "ml"),
                          "spec": {"entrypoint": "python train.py",
                                   "rayClusterSpec": raycluster_spec()}})


@case("job-framework-raycluster-4x1-off-ignored",
      policy=frameworks_policy(ray="off"))
def _(n):
    return job_review(n, {"apiVersion": "ray.io/v1", "kind": "RayCluster",
                          "metadata": job_meta("ray-train", "ml"),
                          "spec": raycluster_spec()})


def volcano_plugin_pod(case, plugin, task="worker", index=0, gpu=1,
                       workers=3, masters=1, job="llama-ft", ns="ml",
                       managed=False):
    """A pod of a Volcano Job with the pytorch or mpi plugin: what
    createJobPod and the plugin's OnPodCreate add (volcano-sh/volcano
    pkg/controllers/job/job_controller_util.go; plugins/
    distributed-framework/pytorch/pytorch.go: port pytorchjob-port
    23456, MASTER_ADDR, MASTER_PORT, WORLD_SIZE = master + worker
    replicas, RANK; mpi/mpi.go: port mpijob-port 22, MPI_HOST on the
    master's containers)."""
    sfx = suffix_for(case)
    name = "%s-%s-%d" % (job, task, index)
    lab = {"volcano.sh/job-name": job, "volcano.sh/job-namespace": ns,
           "volcano.sh/queue-name": "default", "volcano.sh/task-index":
           str(index), "volcano.sh/task-spec": task}
    if managed:
        lab["topogate.io/managed"] = "true"
    meta = {"name": name, "namespace": ns, "labels": lab,
            "annotations": {"scheduling.k8s.io/group-name":
                            "%s-%s" % (job, uid("vcjob", ns, job)),
                            "volcano.sh/job-name": job,
                            "volcano.sh/task-index": str(index),
                            "volcano.sh/task-spec": task},
            "ownerReferences": [{
                "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                "name": job, "uid": uid("vcjob", ns, job),
                "controller": True, "blockOwnerDeletion": True}]}
    if plugin == "pytorch":
        ports = [{"name": "pytorchjob-port", "containerPort": 23456}]
        env = [{"name": "MASTER_ADDR", "value": "%s-master-0.%s" % (job, job)},
               {"name": "MASTER_PORT", "value": "23456"},
               {"name": "WORLD_SIZE", "value": str(masters + workers)},
               {"name": "RANK", "value": str(index + 1 if task == "worker"
                                             else 0)}]
        command = ["torchrun", "--nnodes=%d" % (masters + workers),
                   "--nproc_per_node=%d" % (gpu or 1), "train.py"]
    else:
        ports = [{"name": "mpijob-port", "containerPort": 22}]
        env = []
        if task == "master":
            env = [{"name": "MPI_HOST", "value": ",".join(
                "%s-worker-%d.%s" % (job, i, job) for i in range(workers))}]
            command = ["/bin/sh", "-c", "mpirun --host ${MPI_HOST} "
                       "python train.py"]
        else:
            command = ["/bin/sh", "-c", "/usr/sbin/sshd -D"]
    spec = {"containers": [container(
                "train", TRAINER_IMAGE, sfx, command=command, ports=ports,
                env=env, resources=gpu_resources(gpu, cpu="10",
                                                 memory="100Gi"))],
            "nodeSelector": P4D, "schedulerName": "volcano",
            "hostname": name, "subdomain": job}
    return pod_object(meta, spec, sfx)


@case("framework-volcano-pytorch-4x1-warn")
def _(n):
    return review(n, volcano_plugin_pod(n, "pytorch"), VOLCANO)


@case("framework-volcano-pytorch-managed-4x1-deny")
def _(n):
    # Opted in by the label: the namespace's mode (enforce), as before.
    return review(n, volcano_plugin_pod(n, "pytorch", managed=True), VOLCANO)


@case("framework-volcano-mpi-worker-1gpu-warn")
def _(n):
    return review(n, volcano_plugin_pod(n, "mpi"), VOLCANO)


@case("framework-volcano-mpi-master-no-gpu-ignored")
def _(n):
    return review(n, volcano_plugin_pod(n, "mpi", task="master", gpu=None),
                  VOLCANO)


def lws_pod(case, size=4, gpu=1, worker_index=1, ns="ml", lws="vllm-70b",
            node_selector=None):
    """A pod of a LeaderWorkerSet group: the labels, the size annotation
    and the env the LWS controller and pod webhook set (kubernetes-sigs/
    lws api/leaderworkerset/v1/leaderworkerset_types.go; pkg/webhooks/
    pod_webhook.go; pkg/utils/pod/pod_utils.go AddLWSVariables)."""
    sfx = suffix_for(case)
    name = "%s-0-%d" % (lws, worker_index) if worker_index else "%s-0" % lws
    meta = {
        "name": name, "namespace": ns,
        "labels": {"leaderworkerset.sigs.k8s.io/group-index": "0",
                   "leaderworkerset.sigs.k8s.io/group-key":
                   hashlib.sha1(("%s-0" % lws).encode()).hexdigest(),
                   "leaderworkerset.sigs.k8s.io/name": lws,
                   "leaderworkerset.sigs.k8s.io/worker-index":
                   str(worker_index)},
        "annotations": {"leaderworkerset.sigs.k8s.io/leader-name":
                        "%s-0" % lws,
                        "leaderworkerset.sigs.k8s.io/size": str(size)},
        "ownerReferences": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "name": "%s-0" % lws, "uid": uid("sts", ns, lws),
            "controller": True, "blockOwnerDeletion": True}],
    }
    env = [{"name": "LWS_LEADER_ADDRESS",
            "value": "%s-0.%s.%s" % (lws, lws, ns)},
           {"name": "LWS_GROUP_SIZE", "value": str(size)},
           {"name": "LWS_WORKER_INDEX", "value": str(worker_index)}]
    spec = {"containers": [container(
                "vllm", "vllm/vllm-openai:v0.8.5", sfx,
                command=["/bin/sh", "-c",
                         "ray start --address=$LWS_LEADER_ADDRESS:6379 "
                         "--block"],
                env=env, resources=gpu_resources(gpu, cpu="10",
                                                 memory="100Gi"))],
            "nodeSelector": node_selector or P4D,
            "hostname": name, "subdomain": lws}
    return pod_object(meta, spec, sfx)


@case("framework-lws-4x1-warn")
def _(n):
    return review(n, lws_pod(n), STS_CONTROLLER)


@case("framework-lws-4x1-view-warn", args=EKS_VIEW)
def _(n):
    # No instance type pinned: the cluster view proves the node group's
    # nodes are 8-GPU NVSwitch hosts.
    return review(n, lws_pod(n, node_selector=P4D_GROUP), STS_CONTROLLER)


@case("framework-lws-4x1-audit-no-patch",
      policy=frameworks_policy(leaderWorkerSet="audit"))
def _(n):
    # audit: reported, never patched (a namespace on Pod Security
    # baseline refuses hostIPC and IPC_LOCK).
    return review(n, lws_pod(n), STS_CONTROLLER)


@case("framework-lws-2x8-whole-node-mutate")
def _(n):
    return review(n, lws_pod(n, size=2, gpu=8), STS_CONTROLLER)


@case("framework-jobset-plain-4x1-warn")
def _(n):
    # The JobSet of jobset-plain-gpu-not-trainjob-ignored, switch at its
    # default: 4 Jobs of 1-GPU pods (global-replicas), at least 4 pods.
    return tj(n, job="maxtext-train", rjob="workers", rjob_replicas=4,
              trainer=False, index=0, gpu=1, cpu="10", memory="100Gi",
              node_selector=P4D, image="ghcr.io/example/maxtext:2024.10",
              args=["-m", "MaxText.train", "MaxText/configs/base.yml"])


@case("framework-jobset-plain-4x1-enforce-deny",
      policy=frameworks_policy(jobSet="enforce"))
def _(n):
    return tj(n, job="maxtext-train", rjob="workers", rjob_replicas=4,
              trainer=False, index=0, gpu=1, cpu="10", memory="100Gi",
              node_selector=P4D, image="ghcr.io/example/maxtext:2024.10",
              args=["-m", "MaxText.train", "MaxText/configs/base.yml"])


@case("framework-jobset-dra-4x1-claim-warn",
      args="--nodes test/nodes/dra-h100-slices.yaml")
def _(n):
    # The plain JobSet above, its GPUs a DRA claim each, on the DRA-only
    # H100 nodes: the framework switch's default severity, warn.
    return tj(n, job="maxtext-train", ns="ml-training", rjob="workers",
              rjob_replicas=4, trainer=False, index=0, cpu="10",
              memory="100Gi", image="ghcr.io/example/maxtext:2024.10",
              args=["-m", "MaxText.train", "MaxText/configs/base.yml"],
              gpu=None,
              resource_claims=[{"name": "gpu",
                                "resourceClaimTemplateName": "single-gpu"}],
              container_claims=[{"name": "gpu"}])


def mpi_v1alpha2_pod(case, role="worker", gpu=1, job="nccl-tests", ns="ml",
                     index=0):
    """A pod of mpi-operator v0.2's kubeflow.org/v1alpha2 MPIJob: the
    labels of newWorker/newLauncher (kubeflow/mpi-operator pkg/controllers/
    v1alpha2/mpi_job_controller.go at 8943cf73); workers are a
    StatefulSet, the launcher a Job."""
    sfx = suffix_for(case)
    name = "%s-%s-%d" % (job, role, index)
    owner = ({"apiVersion": "apps/v1", "kind": "StatefulSet",
              "name": "%s-worker" % job} if role == "worker" else
             {"apiVersion": "batch/v1", "kind": "Job",
              "name": "%s-launcher" % job})
    owner.update({"uid": uid("owner", ns, job, role), "controller": True,
                  "blockOwnerDeletion": True})
    meta = {"name": name, "namespace": ns,
            "labels": {"group_name": "kubeflow.org", "mpi_job_name": job,
                       "mpi_role_type": role},
            "ownerReferences": [owner]}
    spec = {"containers": [container(
                role, "mpioperator/tensorflow-benchmarks:latest", sfx,
                command=["sleep", "365d"] if role == "worker" else
                ["mpirun", "-np", "4", "python", "bench.py"],
                resources=gpu_resources(gpu, cpu="10", memory="100Gi"))],
            "nodeSelector": P4D}
    return pod_object(meta, spec, sfx)


@case("framework-mpijob-v1alpha2-worker-1gpu-warn")
def _(n):
    return review(n, mpi_v1alpha2_pod(n), STS_CONTROLLER)


@case("framework-mpijob-v1alpha2-launcher-ignored")
def _(n):
    return review(n, mpi_v1alpha2_pod(n, role="launcher", gpu=None),
                  JOB_CONTROLLER)


# The gang fields come last in PodSpec (1.35 workloadRef, 1.36
# schedulingGroup).
POD_SPEC_ORDER.extend(["workloadRef", "schedulingGroup"])


def gang_pod(case, field="schedulingGroup", gpu=1, ns="ml", index=0,
             claim=None):
    """A pod of a Kubernetes gang (KEP-4671): spec.schedulingGroup (1.36
    OpenAPI, PodSchedulingGroup.podGroupName) or spec.workloadRef (1.35:
    name, podGroup). Its size is the PodGroup's, not on the pod. claim:
    a ResourceClaimTemplate its container claims, as "gpu"."""
    sfx = suffix_for(case)
    name = "train-%d" % index
    meta = {"name": name, "namespace": ns,
            "labels": {"app": "train"}}
    res = gpu_resources(gpu, cpu="10", memory="100Gi")
    if claim:
        res["claims"] = [{"name": "gpu"}]
    spec = {"containers": [container(
                "train", TRAINER_IMAGE, sfx,
                command=["torchrun", "--nnodes=4", "train.py"],
                resources=res)],
            "nodeSelector": P4D}
    if claim:
        spec["resourceClaims"] = [{"name": "gpu",
                                   "resourceClaimTemplateName": claim}]
    if field == "schedulingGroup":
        spec["schedulingGroup"] = {"podGroupName": "train-workers"}
    else:
        spec["workloadRef"] = {"name": "train", "podGroup": "workers"}
    return pod_object(meta, spec, sfx)


@case("framework-gang-schedulinggroup-1gpu-warn")
def _(n):
    return review(n, gang_pod(n), HUMAN)


@case("framework-gang-workloadref-1gpu-warn")
def _(n):
    return review(n, gang_pod(n, field="workloadRef"), HUMAN)


# workloadRef is Kubernetes 1.35's field: the 1.36 schema has not got it.
NOVALIDATE.add("framework-gang-workloadref-1gpu-warn")


# A gang's pod is a framework's: its claim the view cannot read is
# warned as a TrainJob pod's is (dra-claim-no-view-warn), unlike a pod
# no framework names (dra-claim-plain-pod-ungoverned).
@case("framework-gang-dra-claim-no-view-warn")
def _(n):
    return review(n, gang_pod(n, gpu=None, claim="single-gpu"), HUMAN)


@case("framework-gang-schedulinggroup-off-ignored",
      policy=frameworks_policy(podGroup="off"))
def _(n):
    return review(n, gang_pod(n), HUMAN)

# ------------------------------------------------ issue 44.6: NUL in strings
# The apiserver stores env values and annotations holding U+0000 (JSON
# "\u0000"); topogate answered them with HTTP 400, so in enforce mode
# (failurePolicy Fail) such a pod could never be created. They are read
# whole (json/jsonread.h): the answer is the one the same pod gets without
# the NUL, and a value compares as the apiserver's Go code compares it.

NUL_ENV = [{"name": "RUN_NOTE", "value": "a\x00b"},
           {"name": "RECORD_SEP", "value": "\x00"}]
NUL_ANNOTATIONS = {"example.com/note": "line\x00end"}


# As p4d-2x8-trainjob-whole-node-mutate, with NULs in env and an
# annotation: the same patch.
@case("nul-env-annotation-2x8-mutate")
def _(n):
    return tj_2x8(n, user_env=NUL_ENV, annotations=NUL_ANNOTATIONS)


# A pod that asks for no GPU: allowed untouched, as any such pod.
@case("nul-env-annotation-no-gpu-allowed")
def _(n):
    return tj(n, job="tokenize", nnodes=2, nproc="1", gpu=0,
              node_selector=P4D, user_env=NUL_ENV,
              annotations=NUL_ANNOTATIONS)


# "true\u0000" is not "true": no opt-in, as for any other value (compare
# whole-node-annotation-fills-gpu, which is filled).
@case("nul-whole-node-annotation-not-true")
def _(n):
    return tj(n, job="llama3-8b-eval", nnodes=1, nproc="auto", gpu=1,
              index=0, cpu="90", memory="900Gi", node_selector=P4D,
              annotations={"topogate.io/whole-node": "true\x00"})


# The job's size with a NUL after it is no count (strconv.Atoi refuses
# "16\x00"): read whole, not cut to "16", which would deny this pod as
# p4d-16x1-trainjob-enforce-deny is denied.
@case("nul-in-pet-nnodes-not-a-count")
def _(n):
    r = tj_16x1(n)
    for e in r["request"]["object"]["spec"]["containers"][0]["env"]:
        if e["name"] == "PET_NNODES":
            e["value"] = "16\x00"
    return r


# Warn mode keeps the user's own FI_EFA_USE_DEVICE_RDMA, NUL and all
# (legacy-efa profile on): the patch adds the others and leaves it.
@case("nul-user-env-kept-warn", args="--mode warn",
      policy=POLICY_HEAD + LEGACY_EFA)
def _(n):
    return tj_2x8(n, user_env=[{"name": "FI_EFA_USE_DEVICE_RDMA",
                                "value": "1\x00"}])


# --------------------------------------------------------------- writing

# A PyTorchJob of 16 1-GPU pods on single-numa-node p4d nodes: not
# refused and not repacked, as whole-node pods cannot run there.
@case("job-view-numa-single-pytorchjob-16x1-warn", args=NUMA_SINGLE)
def _(n):
    return job_review(n, pytorchjob())


# Whole-node pods there: kubectl apply shows what kubelet will refuse.
@case("job-view-numa-single-pytorchjob-2x8-warn", args=NUMA_SINGLE)
def _(n):
    return job_review(n, pytorchjob(workers=1, gpu=8, nproc="8"))


def main():
    os.makedirs(CASES, exist_ok=True)
    for name, fn in CASE.items():
        out = fn(name)
        path = os.path.join(CASES, name + ".in.json")
        if isinstance(out, tuple) and out[0] == "raw":
            text = out[1]
        else:
            text = json.dumps(out, indent=2, ensure_ascii=False) + "\n"
        with open(path, "w") as f:
            f.write(text)
        args_path = os.path.join(CASES, name + ".args")
        if name in ARGS:
            with open(args_path, "w") as f:
                f.write(ARGS[name] + "\n")
        elif os.path.exists(args_path):
            os.remove(args_path)
        novalidate = os.path.join(CASES, name + ".novalidate")
        if name in NOVALIDATE:
            open(novalidate, "w").close()
        elif os.path.exists(novalidate) and name.startswith("job-"):
            os.remove(novalidate)
        policy_path = os.path.join(CASES, name + ".policy")
        if name in POLICY:
            with open(policy_path, "w") as f:
                f.write(POLICY[name])
        elif os.path.exists(policy_path):
            os.remove(policy_path)
    print("%d cases in %s" % (len(CASE), os.path.relpath(CASES)))


if __name__ == "__main__":
    main()
