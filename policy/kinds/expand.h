/*
 * expand.h - the pods a workload object would create, as its controller
 * would create them (labels, env, init containers), so that decide()
 * sees in an audit what the webhook sees in the cluster.
 *
 * Kinds: the rows of the table of kinds (kinds.c), each with its
 * expander; TrainJob in all three Trainer override shapes, joined with
 * its runtime when the runtime is at hand. Any other kind is read
 * through its pod templates where one asks for GPUs.
 */
#ifndef TOPOGATE_EXPAND_H
#define TOPOGATE_EXPAND_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "policy/kinds/workload.h"

/* One kind of pod a workload creates: a PyTorchJob's Workers, say. */
struct pod_group {
    char *role;    /* "Worker", "Master", "Launcher", a replicated job's
                      name, or "" for kinds with one template */
    long replicas; /* pods like this one; -1: one per node (DaemonSet) */
    cJSON *pod;    /* owned: the Pod as the controller would create it */
};

/* The shape of a Kubeflow job, read from the job's own fields. */
struct job_shape {
    enum owner owner; /* OWNER_NONE for other kinds */
    long nodes;       /* training pods in the job; 0 when unknown */
    long procs;       /* processes per pod when a number; 0 when "auto" */
    bool elastic;     /* PyTorchJob elasticPolicy: nodes is the maximum */
    bool has_master;  /* PyTorchJob with a Master replica */
    bool per_node_launcher; /* MPIJob, slotsPerWorker 1: mpirun starts one
                               torchrun per worker, which starts procs */
    bool groups_alone; /* ... and that torchrun has no --nnodes: each
                          forms a world of its own */
    const char *runtime; /* TrainJob runtimeRef.name, borrowed, or NULL */
    bool runtime_missing; /* TrainJob: that runtime is not at hand */
};

struct expansion {
    const char *kind; /* borrowed from the object; "" when missing */
    const char *name;
    const char *namespace; /* "" when the object names none */
    bool skipped;     /* not expanded: note says why */
    char *note;       /* why skipped, or a remark (runtime not found) */
    struct pod_group *groups;
    size_t n_groups;
    struct job_shape job;
};

/* TrainingRuntime and ClusterTrainingRuntime objects at hand, borrowed. */
struct runtimes {
    const cJSON **items;
    size_t n;
};

/*
 * Fills *out (zeroed first); rt may be NULL. Returns 0, or -1 when
 * memory runs out (out must still be freed). Borrowed strings in *out
 * point into obj.
 */
int expand(const cJSON *obj, const struct runtimes *rt, struct expansion *out);

void expansion_free(struct expansion *e);

/*
 * Whether the pods of now differ from those of was only as Kueue changes
 * them when it starts a job or ungates a pod: node selector keys and
 * tolerations added, scheduling gates changed, pod labels and
 * annotations added. Containers, counts and shape are the same. An
 * UPDATE like this (suspend true -> false with it) is Kueue's to make.
 */
bool expand_narrows(const struct expansion *was, const struct expansion *now);

/* The object's API group, into buf: "apps/v1" -> "apps"; "v1" -> "". */
const char *expand_api_group(const cJSON *obj, char *buf, size_t len);

/* True for TrainingRuntime and ClusterTrainingRuntime. */
bool expand_is_runtime(const cJSON *obj);

#endif
