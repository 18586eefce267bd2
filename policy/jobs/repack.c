/*
 * repack.c - see repack.h. Safe means: the world size divides into whole
 * nodes, every GPU pod has one GPU container, the job is not elastic, and
 * no command line hard-codes a shape (torchrun --nnodes/--nproc_per_node,
 * mpirun -np, a world size) that the new layout would contradict.
 */
#include "policy/jobs/repack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/labels.h"
#include "policy/kinds/launch.h"
#include "policy/k8s/pod.h"
#include "base/strbuf.h"

/* A GPU container of the job object, found through its pod template. */
struct site {
    const cJSON *resources; /* may be NULL */
    char path[160];         /* JSON pointer of that resources object */
};

/* The GPU container of one replica spec; -1 when more than one. */
static int
find_sites(const cJSON *replica, const char *prefix, struct site *out,
           size_t *n, size_t max)
{
    const cJSON *c;
    int i = 0, found = 0;

    cJSON_ArrayForEach(
        c,
        json_get(json_get(json_get(replica, "template"), "spec"), "containers"))
    {
        long gpus = 0;
        if (pod_count(c, RESOURCE_GPU, &gpus) == COUNT_OK && gpus > 0) {
            if (++found > 1 || *n == max)
                return -1;
            out[*n].resources = json_get(c, "resources");
            snprintf(out[*n].path, sizeof(out[*n].path),
                     "%s/template/spec/containers/%d/resources", prefix, i);
            (*n)++;
        }
        i++;
    }
    return 0;
}

/* Any container of any template with a hard-coded launch shape. */
static bool
hardcoded(const struct expansion *e, char *why, size_t len)
{
    for (size_t g = 0; g < e->n_groups; g++) {
        const cJSON *spec = json_get(e->groups[g].pod, "spec"), *c;
        cJSON_ArrayForEach(c, json_get(spec, "containers"))
        {
            struct launch l;
            launch_read(c, &l);
            if (launch_hardcoded(&l)) {
                snprintf(why, len,
                         "container '%s' hard-codes %s in its command",
                         json_string(c, "name") ? json_string(c, "name") : "?",
                         l.written);
                return true;
            }
        }
    }
    return false;
}

/* The same JSON type as the value it replaces: 8 or "8". */
static cJSON *
count_like(const cJSON *old, long v)
{
    char buf[24];

    if (cJSON_IsNumber(old))
        return cJSON_CreateNumber((double)v);
    snprintf(buf, sizeof(buf), "%ld", v);
    return cJSON_CreateString(buf);
}

/* limits (and requests, where they name it) of one resource. */
static int
set_resource(struct decision *d, const struct site *s, const char *resource,
             long v)
{
    static const char *const maps[] = {"limits", "requests"};
    /* New counts take the GPU count's JSON type: 8 or "8". */
    const cJSON *like =
        json_get(json_get(s->resources, "limits"), RESOURCE_GPU);
    char prefix[200];

    for (int i = 0; i < 2; i++) {
        const cJSON *map = json_get(s->resources, maps[i]);
        const cJSON *old = json_get(map, resource);
        cJSON *m;

        if (i == 1 && old == NULL)
            continue;
        snprintf(prefix, sizeof(prefix), "%s/%s", s->path, maps[i]);
        if (cJSON_IsObject(map)) {
            if (decision_add_at(d, count_like(old ? old : like, v), prefix,
                                resource) < 0)
                return -1;
            continue;
        }
        /* No limits yet: the op creates the map (and resources). */
        if ((m = cJSON_CreateObject()) == NULL ||
            !cJSON_AddItemToObject(m, resource, count_like(like, v))) {
            cJSON_Delete(m);
            return -1;
        }
        if (s->resources == NULL) {
            cJSON *r = cJSON_CreateObject();
            if (r == NULL || !cJSON_AddItemToObject(r, maps[i], m)) {
                cJSON_Delete(r);
                cJSON_Delete(m);
                return -1;
            }
            return decision_add(d, s->path, r);
        }
        if (decision_add_at(d, m, s->path, maps[i]) < 0)
            return -1;
    }
    return 0;
}

struct plan {
    const char *kind;
    long nodes; /* pods after the repack */
    struct site sites[4];
    size_t n_sites;
    struct strbuf changes; /* "numNodes 16->2, ..." */
};

static int
set_field(struct decision *d, struct plan *p, const char *path,
          const char *name, const cJSON *old, long was, long v)
{
    strbuf_printf(&p->changes, "%s%s %ld->%ld", p->changes.len ? ", " : "",
                  name, was, v);
    return decision_add(d, path, count_like(old, v));
}

static int
plan_trainjob(const cJSON *job, struct plan *p, struct decision *d,
              const struct expansion *e, const struct instance_type *t)
{
    const cJSON *trainer = json_get(json_get(job, "spec"), "trainer");
    const cJSON *nproc = json_get(trainer, "numProcPerNode");

    p->n_sites = 1;
    p->sites[0].resources = json_get(trainer, "resourcesPerNode");
    snprintf(p->sites[0].path, sizeof(p->sites[0].path),
             "/spec/trainer/resourcesPerNode");
    if (set_field(d, p, "/spec/trainer/numNodes", "numNodes",
                  json_get(trainer, "numNodes"), e->job.nodes, p->nodes) < 0)
        return -1;
    /* "auto" already means one process per GPU. */
    if (cJSON_IsNumber(nproc) || (cJSON_IsString(nproc) && e->job.procs > 0))
        return set_field(d, p, "/spec/trainer/numProcPerNode", "numProcPerNode",
                         nproc, e->job.procs, t->count);
    return 0;
}

static int
plan_pytorchjob(const cJSON *job, struct plan *p, struct decision *d,
                const struct expansion *e, const struct instance_type *t,
                char *why, size_t len)
{
    const cJSON *spec = json_get(job, "spec");
    const cJSON *specs = json_get(spec, "pytorchReplicaSpecs");
    const cJSON *worker = json_get(specs, "Worker");
    long masters = e->job.has_master ? 1 : 0;

    if (e->job.elastic) {
        snprintf(why, len,
                 "elasticPolicy lets it scale between replica counts");
        return 0;
    }
    if (find_sites(json_get(specs, "Master"),
                   "/spec/pytorchReplicaSpecs/Master", p->sites, &p->n_sites,
                   4) < 0 ||
        find_sites(worker, "/spec/pytorchReplicaSpecs/Worker", p->sites,
                   &p->n_sites, 4) < 0) {
        snprintf(why, len, "a pod has more than one GPU container");
        return 0;
    }
    if (worker == NULL || p->nodes - masters < 0) {
        snprintf(why, len, "it has no Worker replicas to resize");
        return 0;
    }
    /* Removing the Worker spec is the user's edit: patches only add. */
    if (p->nodes - masters == 0) {
        snprintf(why, len, "it fits the Master alone");
        return 0;
    }
    if (set_field(d, p, "/spec/pytorchReplicaSpecs/Worker/replicas",
                  "Worker replicas", json_get(worker, "replicas"),
                  e->job.nodes - masters, p->nodes - masters) < 0)
        return -1;
    if (e->job.procs > 0) {
        char buf[24];
        snprintf(buf, sizeof(buf), "%d", t->count);
        strbuf_printf(&p->changes, ", nprocPerNode %ld->%d", e->job.procs,
                      t->count);
        if (decision_add(d, "/spec/nprocPerNode", cJSON_CreateString(buf)) < 0)
            return -1;
    }
    return 1;
}

static int
plan_mpijob(const cJSON *job, struct plan *p, struct decision *d,
            const struct expansion *e, const struct instance_type *t, char *why,
            size_t len)
{
    const cJSON *spec = json_get(job, "spec");
    const cJSON *worker = json_get(json_get(spec, "mpiReplicaSpecs"), "Worker");

    if (cJSON_IsTrue(json_get(spec, "runLauncherAsWorker"))) {
        snprintf(why, len, "its launcher runs as a worker too");
        return 0;
    }
    /* Its ranks per pod are torchrun's, in a command we do not rewrite. */
    if (e->job.per_node_launcher) {
        snprintf(why, len, "its launcher runs one torchrun per worker");
        return 0;
    }
    if (find_sites(worker, "/spec/mpiReplicaSpecs/Worker", p->sites,
                   &p->n_sites, 4) < 0) {
        snprintf(why, len, "a pod has more than one GPU container");
        return 0;
    }
    if (set_field(d, p, "/spec/mpiReplicaSpecs/Worker/replicas",
                  "Worker replicas", json_get(worker, "replicas"), e->job.nodes,
                  p->nodes) < 0 ||
        set_field(d, p, "/spec/slotsPerWorker", "slotsPerWorker",
                  json_get(spec, "slotsPerWorker"), e->job.procs, t->count) < 0)
        return -1;
    return 1;
}

static int
annotate(const cJSON *job, struct decision *d, const char *text)
{
    const cJSON *ann = json_get(json_get(job, "metadata"), "annotations");
    cJSON *v;

    if (cJSON_IsObject(ann))
        return decision_add_at(d, cJSON_CreateString(text),
                               "/metadata/annotations", ANNOTATION_REPACKED);
    if ((v = cJSON_CreateObject()) == NULL ||
        !cJSON_AddStringToObject(v, ANNOTATION_REPACKED, text)) {
        cJSON_Delete(v);
        return -1;
    }
    return decision_add(d, "/metadata/annotations", v);
}

int
repack_job(const cJSON *job, const struct expansion *e, long gpus, long world,
           const struct instance_type *t, int nics, struct decision *d,
           char *why, size_t why_len)
{
    struct plan p = {.kind = e->kind};
    int rc;
    char *changes;

    if (world % t->count != 0) {
        snprintf(why, why_len,
                 "world size %ld does not divide into %d-GPU nodes", world,
                 t->count);
        return 0;
    }
    if (hardcoded(e, why, why_len))
        return 0;
    p.nodes = world / t->count;
    switch (e->job.owner) {
    case OWNER_TRAINJOB:
        rc = plan_trainjob(job, &p, d, e, t) < 0 ? -1 : 1;
        break;
    case OWNER_PYTORCHJOB:
        rc = plan_pytorchjob(job, &p, d, e, t, why, why_len);
        break;
    case OWNER_MPIJOB:
        rc = plan_mpijob(job, &p, d, e, t, why, why_len);
        break;
    default:
        rc = 0;
        snprintf(why, why_len, "not a job kind topogate repacks");
    }
    for (size_t i = 0; rc == 1 && i < p.n_sites; i++) {
        if (set_resource(d, &p.sites[i], RESOURCE_GPU, t->count) < 0 ||
            (nics > 0 &&
             set_resource(d, &p.sites[i], type_nic_resource(t), nics) < 0))
            rc = -1;
    }
    if (rc == 1) {
        strbuf_printf(&p.changes, ", %s %ld->%d", RESOURCE_GPU, gpus, t->count);
        if (nics > 0)
            strbuf_printf(&p.changes, ", %s %d", type_nic_resource(t), nics);
        strbuf_printf(&p.changes, " (%s, world size %ld)", t->name, world);
    }
    changes = strbuf_take(&p.changes);
    if (rc == 1 &&
        (changes == NULL || annotate(job, d, changes) < 0 ||
         decision_warn(d,
                       "topogate repacked this job to %ld x %d GPUs on %s "
                       "(world size %ld): see annotation " ANNOTATION_REPACKED,
                       p.nodes, t->count, t->name, world) < 0))
        rc = -1;
    free(changes);
    return rc;
}
