/*
 * expand_kubeflow.c - PyTorchJob (Training Operator v1) and MPIJob
 * (mpi-operator v2beta1) into pods, with the labels and env their
 * controllers add (docs/facts/kubeflow-pods.md#training-operator-v1 and
 * docs/facts/kubeflow-pods.md#mpi-operator-v2).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "policy/kinds/expand_internal.h"
#include "policy/k8s/labels.h"
#include "policy/kinds/launch.h"
#include "policy/k8s/pod.h"
#include "policy/kinds/podbuild.h"

#define PYTORCH_PORT "23456"

static const cJSON *
replica_spec(const cJSON *obj, const char *map, const char *type)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    return cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(spec, map), type);
}

/* A new pod for one replica type, with the operators' common labels. */
static cJSON *
replica_pod(const cJSON *rs, const struct expansion *e, const char *operator)
{
    cJSON *pod =
        podbuild_from_template(cJSON_GetObjectItemCaseSensitive(rs, "template"),
                               e->namespace, e->name);

    if (pod == NULL || podbuild_label(pod, LABEL_OPERATOR, operator) < 0 ||
        podbuild_label(pod, LABEL_JOB_NAME, e->name) < 0 ||
        podbuild_label(pod, LABEL_REPLICA_INDEX, "0") < 0) {
        cJSON_Delete(pod);
        return NULL;
    }
    return pod;
}

/* Workers wait for the master's DNS name before starting. */
static int
add_init_pytorch(cJSON *pod, const char *master)
{
    cJSON *spec = podbuild_object(pod, "spec");
    cJSON *inits = cJSON_GetObjectItemCaseSensitive(spec, "initContainers");
    cJSON *c = cJSON_CreateObject();
    char script[400];

    snprintf(script, sizeof(script),
             "until nslookup %s; do echo waiting for master; sleep 2; done",
             master);
    if (!cJSON_IsArray(inits)) {
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "initContainers");
        inits = cJSON_AddArrayToObject(spec, "initContainers");
    }
    if (c == NULL || inits == NULL || !cJSON_AddItemToArray(inits, c)) {
        cJSON_Delete(c);
        return -1;
    }
    const char *cmd[] = {"sh", "-c", script};
    cJSON *command = cJSON_CreateStringArray(cmd, 3);
    if (command == NULL || !cJSON_AddItemToObject(c, "command", command)) {
        cJSON_Delete(command);
        return -1;
    }
    return cJSON_AddStringToObject(c, "name", "init-pytorch") &&
                   cJSON_AddStringToObject(c, "image", "alpine:3.10")
               ? 0
               : -1;
}

/* The env the PyTorchJob controller gives every container. */
static int
pytorch_env(cJSON *pod, const struct expansion *e, const char *nproc,
            const char *nnodes, long world, int rank)
{
    char master[300], buf[24];
    const struct job_shape *j = &e->job;

    if (podbuild_env_all(pod, "PYTHONUNBUFFERED", "1") < 0)
        return -1;
    if (j->has_master) {
        snprintf(master, sizeof(master), "%s-master-0", e->name);
        snprintf(buf, sizeof(buf), "%ld", world);
        if (podbuild_env_all(pod, "MASTER_PORT", PYTORCH_PORT) < 0 ||
            podbuild_env_all(pod, "PET_MASTER_PORT", PYTORCH_PORT) < 0 ||
            podbuild_env_all(pod, "MASTER_ADDR", master) < 0 ||
            podbuild_env_all(pod, "PET_MASTER_ADDR", master) < 0 ||
            podbuild_env_all(pod, "WORLD_SIZE", buf) < 0)
            return -1;
        snprintf(buf, sizeof(buf), "%d", rank);
        if (podbuild_env_all(pod, "RANK", buf) < 0 ||
            podbuild_env_all(pod, "PET_NODE_RANK", buf) < 0)
            return -1;
    }
    return podbuild_env_all(pod, "PET_NPROC_PER_NODE", nproc) < 0 ||
                   podbuild_env_all(pod, "PET_NNODES", nnodes) < 0
               ? -1
               : 0;
}

int
expand_pytorchjob(const cJSON *obj, const struct runtimes *rt,
                  struct expansion *e)
{
    static const char *const types[] = {"Master", "Worker"};
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    const cJSON *elastic =
        cJSON_GetObjectItemCaseSensitive(spec, "elasticPolicy");
    const char *nproc = json_string(spec, "nprocPerNode");
    const cJSON *master = replica_spec(obj, "pytorchReplicaSpecs", "Master");
    const cJSON *worker = replica_spec(obj, "pytorchReplicaSpecs", "Worker");
    long replicas[2] = {master ? podbuild_long(master, "replicas", 1) : 0,
                        worker ? podbuild_long(worker, "replicas", 1) : 0};
    long total = replicas[0] + replicas[1];
    char nnodes[48];

    (void)rt;
    e->job.owner = OWNER_PYTORCHJOB;
    e->job.has_master = master != NULL;
    e->job.procs = podbuild_count(spec, "nprocPerNode");
    e->job.nodes = total;
    snprintf(nnodes, sizeof(nnodes), "%ld", total);
    if (cJSON_IsObject(elastic)) {
        long max = podbuild_long(elastic, "maxReplicas", total);
        long min = podbuild_long(elastic, "minReplicas", max);
        snprintf(nnodes, sizeof(nnodes), "%ld:%ld", min, max);
        e->job.elastic = true;
        e->job.nodes = max;
    }
    if (nproc == NULL)
        nproc = "auto"; /* the operator's default */
    if (master == NULL && worker == NULL)
        return podbuild_note(e, "no Master or Worker in "
                                "spec.pytorchReplicaSpecs");
    for (int i = 0; i < 2; i++) {
        const cJSON *rs = i == 0 ? master : worker;
        char type_lower[8];
        cJSON *pod;

        if (rs == NULL)
            continue;
        snprintf(type_lower, sizeof(type_lower), "%s",
                 i == 0 ? "master" : "worker");
        pod = replica_pod(rs, e, "pytorchjob-controller");
        if (pod == NULL ||
            podbuild_label(pod, LABEL_REPLICA_TYPE, type_lower) < 0 ||
            (i == 0 && podbuild_label(pod, LABEL_JOB_ROLE, "master") < 0) ||
            pytorch_env(pod, e, nproc, nnodes,
                        total * (e->job.procs ? e->job.procs : 1), i) < 0) {
            cJSON_Delete(pod);
            return -1;
        }
        if (i == 1 && master) {
            char name[300];
            snprintf(name, sizeof(name), "%s-master-0", e->name);
            if (add_init_pytorch(pod, name) < 0) {
                cJSON_Delete(pod);
                return -1;
            }
        }
        if (podbuild_group(e, types[i], replicas[i], pod) < 0)
            return -1;
    }
    return 0;
}

/*
 * Whether a container starts one process group per node under mpirun:
 * by what it does, not by a word. It runs torchrun, or its rank is used
 * as the node's rank (NODE_RANK=$OMPI_COMM_WORLD_RANK, --node_rank
 * $OMPI_COMM_WORLD_RANK), or it passes a per-node process count on
 * (--nproc_per_node $GPUS_PER_NODE, in its args, a script's args or env).
 */
static bool
starts_group_per_node(const cJSON *c)
{
    static const char *const signs[] = {
        "torchrun",         "torch.distributed.run", "OMPI_COMM_WORLD_RANK",
        "--nproc_per_node", "--nproc-per-node",
    };

    for (size_t i = 0; i < sizeof(signs) / sizeof(signs[0]); i++)
        if (launch_mentions(c, signs[i]))
            return true;
    return false;
}

/*
 * A torchrun on the line with no --nnodes (nor PET_NNODES or a
 * rendezvous endpoint) is its own world of --nproc_per_node: torchrun's
 * default is one node (torch/distributed/run.py, --nnodes "1:1").
 */
static bool
torchrun_alone(const cJSON *c)
{
    static const char *const joins[] = {
        "--nnodes", "PET_NNODES", "--rdzv_endpoint", "--rdzv-endpoint",
        "PET_RDZV_ENDPOINT",
    };

    if (!launch_mentions(c, "torchrun") &&
        !launch_mentions(c, "torch.distributed.run"))
        return false;
    for (size_t i = 0; i < sizeof(joins) / sizeof(joins[0]); i++)
        if (launch_mentions(c, joins[i]))
            return false;
    return true;
}

/*
 * One process group per worker under mpirun (slotsPerWorker: 1, -np =
 * workers, a torchrun or a script that starts the node's processes): a
 * common layout, right as it is. Its processes per pod are the
 * --nproc_per_node literal found, "auto" (0) otherwise. The sign may be
 * on the launcher's line or in the workers' own script and env.
 */
static void
read_per_node_launcher(const cJSON *launcher, const cJSON *worker,
                       struct job_shape *job)
{
    const cJSON *const specs[] = {launcher, worker};
    const cJSON *c;

    if (job->procs != 1)
        return;
    for (int i = 0; i < 2; i++)
        cJSON_ArrayForEach(c, json_get(json_get(json_get(specs[i], "template"),
                                                "spec"),
                                       "containers"))
        {
            struct launch ln;
            if (!starts_group_per_node(c))
                continue;
            launch_read(c, &ln);
            job->per_node_launcher = true;
            job->groups_alone = torchrun_alone(c);
            job->procs = ln.nproc > 0 ? ln.nproc : 0;
            return;
        }
}

/*
 * Training Operator v1's own MPIJob (kubeflow.org/v1, what 1.x serves):
 * GenLabels plus replica-type, and on the launcher's first container the
 * kubectl-exec agent and hostfile its ranks start through
 * (pkg/controller.v1/mpi/mpijob_controller.go newWorker, newLauncher;
 * mpijob.go defaultReplicaLabels).
 */
static int
mpijob_v1_pod(cJSON *pod, int launcher)
{
    cJSON *first = cJSON_GetArrayItem(
        json_get(json_get(pod, "spec"), "containers"), 0);

    if (podbuild_label(pod, LABEL_REPLICA_TYPE,
                       launcher ? "launcher" : "worker") < 0)
        return -1;
    if (!launcher || first == NULL)
        return 0;
    return podbuild_env(first, "OMPI_MCA_plm_rsh_agent",
                        "/etc/mpi/kubexec.sh") < 0 ||
                   podbuild_env(first, "OMPI_MCA_orte_default_hostfile",
                                "/etc/mpi/hostfile") < 0
               ? -1
               : 0;
}

int
expand_mpijob(const cJSON *obj, const struct runtimes *rt, struct expansion *e)
{
    static const char *const types[] = {"Launcher", "Worker"};
    static const char *const roles[] = {"launcher", "worker"};
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    const cJSON *worker = replica_spec(obj, "mpiReplicaSpecs", "Worker");
    const cJSON *as_worker =
        cJSON_GetObjectItemCaseSensitive(spec, "runLauncherAsWorker");
    const char *api = json_string(obj, "apiVersion");
    bool v1 = api && strcmp(api, "kubeflow.org/v1") == 0;

    (void)rt;
    e->job.owner = OWNER_MPIJOB;
    e->job.procs = podbuild_long(spec, "slotsPerWorker", 1);
    e->job.nodes = worker ? podbuild_long(worker, "replicas", 1) : 0;
    if (cJSON_IsTrue(as_worker) && !v1)
        e->job.nodes++;
    read_per_node_launcher(replica_spec(obj, "mpiReplicaSpecs", "Launcher"),
                           worker, &e->job);
    for (int i = 0; i < 2; i++) {
        const cJSON *rs = replica_spec(obj, "mpiReplicaSpecs", types[i]);
        cJSON *pod;

        if (rs == NULL)
            continue;
        pod = replica_pod(rs, e, v1 ? "mpijob-controller" : "mpi-operator");
        if (pod == NULL ||
            (v1 ? mpijob_v1_pod(pod, i == 0)
                : podbuild_label(pod, LABEL_JOB_ROLE, roles[i])) < 0) {
            cJSON_Delete(pod);
            return -1;
        }
        if (podbuild_group(e, types[i],
                           i == 0 ? 1 : podbuild_long(rs, "replicas", 1),
                           pod) < 0)
            return -1;
    }
    if (e->n_groups == 0)
        return podbuild_note(e, "no Launcher or Worker in "
                                "spec.mpiReplicaSpecs");
    return 0;
}
