/*
 * expand_volcano.c - Volcano's batch.volcano.sh Job: one group per task,
 * with what the job controller and its mpi and pytorch plugins add to
 * each pod (volcano-sh/volcano pkg/controllers/job/job_controller_util.go
 * createJobPod; plugins/distributed-framework/mpi/mpi.go and
 * pytorch/pytorch.go OnPodCreate): the labels, the plugin's port on
 * every container, the pytorch plugin's MASTER_ADDR, MASTER_PORT,
 * WORLD_SIZE and RANK, and the mpi plugin's MPI_HOST on the master.
 * Pods are named <job>-<task>-<index> (helpers.go PodNameFmt).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "policy/kinds/expand_internal.h"
#include "policy/kinds/frameworks.h"
#include "policy/kinds/podbuild.h"
#include "policy/k8s/pod.h"

/* Most worker hosts written into MPI_HOST. */
#define HOSTS_MAX 1024

/* A plugin's flags: --master, --worker, --port (each plugin's addFlags). */
struct plugin {
    bool on;
    char master[64], worker[64];
    long port;
};

static void
read_plugin(const cJSON *plugins, const char *name, long port, struct plugin *p)
{
    const cJSON *args = json_get(plugins, name), *a;

    memset(p, 0, sizeof(*p));
    p->on = cJSON_IsArray(args);
    snprintf(p->master, sizeof(p->master), "master");
    snprintf(p->worker, sizeof(p->worker), "worker");
    p->port = port;
    cJSON_ArrayForEach(a, args)
    {
        const char *s = cJSON_IsString(a) ? a->valuestring : "";
        if (strncmp(s, "--master=", 9) == 0)
            snprintf(p->master, sizeof(p->master), "%s", s + 9);
        else if (strncmp(s, "--worker=", 9) == 0)
            snprintf(p->worker, sizeof(p->worker), "%s", s + 9);
        else if (strncmp(s, "--port=", 7) == 0 && atol(s + 7) > 0)
            p->port = atol(s + 7);
    }
}

static const cJSON *
task_named(const cJSON *tasks, const char *name)
{
    const cJSON *t;

    cJSON_ArrayForEach(t, tasks)
    {
        const char *n = json_string(t, "name");
        if (n && strcmp(n, name) == 0)
            return t;
    }
    return NULL;
}

/* The plugin's port on each container, unless one has its number. */
static int
open_port(cJSON *pod, const char *name, long port)
{
    cJSON *c;

    cJSON_ArrayForEach(c, json_get(json_get(pod, "spec"), "containers"))
    {
        cJSON *ports = (cJSON *)json_get(c, "ports"), *p, *q;
        bool has = false;

        cJSON_ArrayForEach(q, ports)
        {
            const cJSON *n = json_get(q, "containerPort");
            has = has || (cJSON_IsNumber(n) && (long)n->valuedouble == port);
        }
        if (has)
            continue;
        if (ports == NULL &&
            (ports = cJSON_AddArrayToObject(c, "ports")) == NULL)
            return -1;
        if ((p = cJSON_CreateObject()) == NULL ||
            !cJSON_AddStringToObject(p, "name", name) ||
            !cJSON_AddNumberToObject(p, "containerPort", (double)port)) {
            cJSON_Delete(p);
            return -1;
        }
        cJSON_AddItemToArray(ports, p);
    }
    return 0;
}

static int
pytorch_env(cJSON *pod, const struct plugin *p, const char *job,
            const cJSON *tasks, const char *task)
{
    long total = podbuild_long(task_named(tasks, p->master), "replicas", 0) +
                 podbuild_long(task_named(tasks, p->worker), "replicas", 0);
    char addr[300], port[24], world[24];

    snprintf(addr, sizeof(addr), "%s-%s-0.%s", job, p->master, job);
    snprintf(port, sizeof(port), "%ld", p->port);
    snprintf(world, sizeof(world), "%ld", total);
    if (open_port(pod, VOLCANO_PYTORCH_PORT, p->port) < 0 ||
        podbuild_env_all(pod, "MASTER_ADDR", addr) < 0 ||
        podbuild_env_all(pod, "MASTER_PORT", port) < 0 ||
        podbuild_env_all(pod, "WORLD_SIZE", world) < 0)
        return -1;
    /* The first pod of the task: the master is rank 0, a worker 1. */
    if (strcmp(task, p->master) == 0)
        return podbuild_env_all(pod, "RANK", "0");
    if (strcmp(task, p->worker) == 0)
        return podbuild_env_all(pod, "RANK", "1");
    return 0;
}

static int
mpi_env(cJSON *pod, const struct plugin *p, const char *job, const cJSON *tasks,
        const char *task)
{
    long workers = podbuild_long(task_named(tasks, p->worker), "replicas", 0);
    struct strbuf hosts = {0};
    int rc;

    if (open_port(pod, VOLCANO_MPI_PORT, p->port) < 0)
        return -1;
    if (strcmp(task, p->master) != 0 || task_named(tasks, p->worker) == NULL)
        return 0;
    /* Bounded: a manifest may ask for any number of workers, and the
     * list only tells the master's reader there are several. */
    for (long i = 0; i < workers && i < HOSTS_MAX; i++)
        strbuf_printf(&hosts, "%s%s-%s-%ld.%s", i ? "," : "", job, p->worker, i,
                      job);
    rc = hosts.failed
             ? -1
             : podbuild_env_all(pod, "MPI_HOST", hosts.buf ? hosts.buf : "");
    strbuf_free(&hosts);
    return rc;
}

int
expand_volcano_job(const cJSON *obj, const struct runtimes *rt,
                   struct expansion *e)
{
    const cJSON *spec = json_get(obj, "spec"), *task;
    const cJSON *tasks = json_get(spec, "tasks");
    struct plugin torch, mpi;

    (void)rt;
    read_plugin(json_get(spec, "plugins"), "pytorch", 23456, &torch);
    read_plugin(json_get(spec, "plugins"), "mpi", 22, &mpi);
    cJSON_ArrayForEach(task, tasks)
    {
        const char *name = json_string(task, "name");
        const char *labels[] = {"volcano.sh/job-name", e->name,
                                "volcano.sh/task-spec", name ? name : "", NULL};
        cJSON *pod;

        if (podbuild_group_with(e, name ? name : "",
                                podbuild_long(task, "replicas", 1),
                                json_get(task, "template"), labels) < 0)
            return -1;
        pod = e->groups[e->n_groups - 1].pod;
        if (torch.on &&
            pytorch_env(pod, &torch, e->name, tasks, name ? name : "") < 0)
            return -1;
        if (mpi.on && mpi_env(pod, &mpi, e->name, tasks, name ? name : "") < 0)
            return -1;
    }
    if (e->n_groups == 0)
        return podbuild_note(e, "no spec.tasks");
    return 0;
}
