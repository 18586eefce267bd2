/* lint.c - see lint.h. */
#include "policy/audit/lint.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/kinds/launch.h"
#include "policy/k8s/match.h"
#include "policy/k8s/pod.h"
#include "policy/k8s/quantity.h"
#include "policy/pod/slowenv.h"

/*
 * Accelerators other than NVIDIA's whose traffic EFA carries: AWS
 * Trainium/Inferentia (aws.amazon.com/neuron, neuroncore, neurondevice:
 * the Neuron device plugin's names) and Intel Gaudi (habana.ai/gaudi, on
 * dl1/dl2q). A pod with one of these and EFA is not "EFA without GPUs".
 */
static const char *const other_accelerators[] = {"aws.amazon.com/neuron",
                                                 "habana.ai/gaudi", NULL};

/* Adds a line unless the same one is there (Master and Worker repeat). */
static int __attribute__((format(printf, 2, 3)))
note(struct lint *l, const char *fmt, ...)
{
    char *line, **lines;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->lines[i], line) == 0) {
            free(line);
            return 0;
        }
    }
    if ((lines = realloc(l->lines, (l->n + 1) * sizeof(*lines))) == NULL) {
        free(line);
        return -1;
    }
    l->lines = lines;
    l->lines[l->n++] = line;
    return 0;
}

/* Extended resources: a domain-prefixed name outside kubernetes.io. */
static bool
is_extended(const char *name)
{
    const char *slash = strchr(name, '/');
    return slash && !strstr(name, "kubernetes.io/") &&
           strncmp(name, "hugepages-", 10) != 0;
}

static int
lint_resources(const cJSON *c, const char *cname, struct lint *l)
{
    const cJSON *res = json_get(c, "resources");
    const cJSON *limits = json_get(res, "limits"), *kv;

    for (int m = 0; m < 2; m++) {
        const cJSON *map = json_get(res, m ? "requests" : "limits");
        /* A list where a map belongs has no names to read. */
        if (!cJSON_IsObject(map))
            continue;
        cJSON_ArrayForEach(kv, map)
        {
            const char *k = kv->string;
            /* workload.c says what the apiserver does with it. */
            if (cJSON_IsNull(kv) &&
                note(l,
                     "container '%s': %s %s is null (`%s:` with no value); "
                     "the apiserver reads it as 0, or drops it from a "
                     "custom resource: give a number",
                     cname, m ? "requests" : "limits", k, k) < 0)
                return -1;
            if (strcmp(k, "nvidia.com") == 0 ||
                (!strchr(k, '/') && strstr(k, "gpu")))
                if (note(l,
                         "container '%s': resource '%s' is not a GPU "
                         "resource; did you mean " RESOURCE_GPU "?",
                         cname, k) < 0)
                    return -1;
            if (m == 1 && is_extended(k) && json_get(limits, k) == NULL &&
                note(l,
                     "container '%s': %s is in requests but not limits; "
                     "extended resources must be set in limits",
                     cname, k) < 0)
                return -1;
        }
    }
    return 0;
}

/* Any of the other accelerators (by name prefix) in an app container. */
static bool
asks_other_accelerator(const cJSON *pod)
{
    const cJSON *c, *kv;

    cJSON_ArrayForEach(c, json_get(json_get(pod, "spec"), "containers"))
    {
        const cJSON *res = json_get(c, "resources");
        for (int m = 0; m < 2; m++)
            cJSON_ArrayForEach(kv, json_get(res, m ? "requests" : "limits"))
            {
                long n;
                for (const char *const *a = other_accelerators; *a; a++)
                    if (strncmp(kv->string, *a, strlen(*a)) == 0 &&
                        quantity_count(kv, &n) == 0 && n > 0)
                        return true;
            }
    }
    return false;
}

/* A number of a resource over the pod's app containers. */
static long
pod_sum(const cJSON *pod, const char *resource)
{
    const cJSON *c;
    long sum = 0, n;

    cJSON_ArrayForEach(c, json_get(json_get(pod, "spec"), "containers"))
    {
        if (pod_count(c, resource, &n) == COUNT_OK)
            sum += n;
    }
    return sum;
}

static const char *
procs_field(const struct job_shape *job)
{
    if (job->per_node_launcher)
        return "torchrun --nproc_per_node";
    switch (job->owner) {
    case OWNER_TRAINJOB:
        return "numProcPerNode";
    case OWNER_MPIJOB:
        return "slotsPerWorker";
    default:
        return "nprocPerNode";
    }
}

/* torchrun / mpirun arguments that disagree with the job's own spec. */
static int
lint_launch(const struct expansion *e, const cJSON *c, const char *cname,
            long gpus, struct lint *l)
{
    long procs = e->job.procs > 0 ? e->job.procs : gpus;
    struct launch ln;

    launch_read(c, &ln);
    if (ln.nnodes > 0 && e->job.nodes > 0 && ln.nnodes != e->job.nodes &&
        note(l,
             "container '%s': the command hard-codes --nnodes %ld but the "
             "job %s %ld pods",
             cname, ln.nnodes, e->job.elastic ? "scales up to" : "has",
             e->job.nodes) < 0)
        return -1;
    if (ln.nproc > 0 && procs > 0 && ln.nproc != procs &&
        note(l,
             "container '%s': the command hard-codes --nproc_per_node %ld "
             "but the pod runs %ld (%s)",
             cname, ln.nproc, procs,
             e->job.procs > 0 ? procs_field(&e->job) : "its GPUs") < 0)
        return -1;
    return 0;
}

/*
 * mpirun -np on the launcher: the job's ranks are workers x slots, or
 * one per worker when each runs a torchrun (slotsPerWorker 1).
 */
static int
lint_launcher(const struct expansion *e, const cJSON *c, struct lint *l)
{
    const char *name = json_string(c, "name");
    long ranks = e->job.per_node_launcher ? e->job.nodes
                                          : e->job.nodes * e->job.procs;
    struct launch ln;

    if (name == NULL)
        name = "?";
    if (lint_resources(c, name, l) < 0)
        return -1;
    launch_read(c, &ln);
    /* Ranks per node that disagree with the slots: mpirun then maps
     * more ranks than a worker has GPUs, or leaves GPUs idle. */
    if (ln.per_node > 0 && e->job.procs > 0 &&
        ln.per_node != (e->job.per_node_launcher ? 1 : e->job.procs) &&
        note(l,
             "container '%s': the command hard-codes %ld ranks per node but "
             "the job has %ld slotsPerWorker",
             name, ln.per_node, e->job.procs) < 0)
        return -1;
    if (ln.np <= 0 || ranks <= 0 || ln.np == ranks)
        return 0;
    if (e->job.per_node_launcher)
        return note(l,
                    "container '%s': the command hard-codes -np %ld but the "
                    "job has %ld Worker replicas, one torchrun each",
                    name, ln.np, e->job.nodes);
    return note(l,
                "container '%s': the command hard-codes -np %ld but the job "
                "has %ld Worker replicas x %ld slotsPerWorker = %ld ranks",
                name, ln.np, e->job.nodes, e->job.procs, ranks);
}

/* slowenv_say: each sentence a mistake. */
static int
note_sentence(void *l, const char *sentence)
{
    return note(l, "%s", sentence);
}

/* The RDMA NIC resource the pod asks for, or NULL. */
static const char *
asked_nics(const cJSON *pod)
{
    const cJSON *c, *r;

    cJSON_ArrayForEach(c, json_get(json_get(pod, "spec"), "containers"))
    {
        cJSON_ArrayForEach(r, json_get(json_get(c, "resources"), "limits"))
        {
            if (r->string && slowenv_is_rdma_resource(r->string))
                return r->string;
        }
    }
    return NULL;
}

/*
 * A label key or value in the pod's nodeSelector or required node
 * affinity that the API refuses (policy/k8s/labelname.h): the apiserver
 * rejects such a nodeSelector, and the scheduler matches no node with
 * such an expression (match.c says which). The webhook never judges the
 * pod the user meant, so audit reports the manifest instead.
 */
static int
lint_placement(const struct pod_group *g, struct lint *l)
{
    struct match m;
    int rc = 0;

    if (match_parse(json_get(g->pod, "spec"), &m) < 0)
        return -1;
    if (m.problem && m.culprit)
        rc = note(l, "%s%spod: %s: '%s'", g->role, g->role[0] ? " " : "",
                  m.problem, m.culprit);
    match_free(&m);
    return rc;
}

static int
lint_pod(const struct expansion *e, const struct pod_group *g, struct lint *l)
{
    const cJSON *spec = json_get(g->pod, "spec"), *c;
    long gpus = pod_sum(g->pod, RESOURCE_GPU);
    long efa = pod_sum(g->pod, RESOURCE_EFA);

    for (int list = 0; list < 2; list++) {
        cJSON_ArrayForEach(
            c, json_get(spec, list ? "initContainers" : "containers"))
        {
            const char *name = json_string(c, "name");
            if (name == NULL)
                name = "?";
            if (lint_resources(c, name, l) < 0)
                return -1;
            if (!list && gpus > 0 && e->job.owner != OWNER_NONE &&
                lint_launch(e, c, name, gpus, l) < 0)
                return -1;
            /* Without the node's type, only what the pod itself shows:
             * its own GPUs, and the NICs it asks for in a multi-pod job. */
            if (!list && gpus > 0) {
                struct fast_paths fp = {
                    gpus, false, e->job.nodes > 1 ? asked_nics(g->pod) : NULL};
                if (slowenv_each(c, &fp, note_sentence, l) < 0)
                    return -1;
            }
        }
    }
    if (lint_placement(g, l) < 0)
        return -1;
    if (efa > 0 && gpus == 0 && !asks_other_accelerator(g->pod) &&
        note(l,
             "%s%spod asks for %ld EFA device%s but no GPU: EFA is for "
             "accelerator traffic (GPU, Neuron, Gaudi)",
             g->role, g->role[0] ? " " : "", efa, efa == 1 ? "" : "s") < 0)
        return -1;
    if (gpus > 0 && e->job.procs > 0 && e->job.procs != gpus &&
        note(l, "%s %ld does not match the %ld " RESOURCE_GPU " per pod",
             procs_field(&e->job), e->job.procs, gpus) < 0)
        return -1;
    return 0;
}

int
lint_expansion(const struct expansion *e, struct lint *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < e->n_groups; i++) {
        /* An MPI launcher runs no ranks itself. */
        if (e->job.owner == OWNER_MPIJOB &&
            strcmp(e->groups[i].role, "Launcher") == 0) {
            const cJSON *c;
            cJSON_ArrayForEach(
                c, json_get(json_get(e->groups[i].pod, "spec"), "containers"))
            {
                if (lint_launcher(e, c, out) < 0)
                    return -1;
            }
            continue;
        }
        if (lint_pod(e, &e->groups[i], out) < 0)
            return -1;
    }
    return 0;
}

void
lint_free(struct lint *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->lines[i]);
    free(l->lines);
    memset(l, 0, sizeof(*l));
}
