/*
 * kinds.h - the table of workload kinds: one row per kind, saying how
 * its pods are known at admission, how audit expands the object, and in
 * what words a fix names its fields. Adding a kind is one row in kinds.c
 * plus its expander (README.md), the way Kueue registers a job
 * integration (kubernetes-sigs/kueue pkg/controller/jobframework
 * integrationmanager.go, RegisterIntegration).
 *
 * The table and every string in it are static: callers borrow them.
 */
#ifndef TOPOGATE_KINDS_H
#define TOPOGATE_KINDS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "policy/kinds/expand.h"
#include "policy/kinds/workload.h"

/*
 * A mark a controller sets on every pod it creates: a label (value NULL:
 * any value), and where the label alone is not enough, a container of
 * that name that has env or mounts the volume mount, or a container
 * port of that name on any container; or, with no label, a field of
 * the pod's spec that only that kind of pod has.
 */
struct kind_mark {
    const char *label;
    const char *value;
    const char *container; /* NULL: the label alone */
    const char *env;       /* NULL, or an env the container has ... */
    const char *mount;     /* ... or NULL, or a volume it mounts */
    const char *port;      /* NULL, or a port name some container has */
    const char *field;     /* label NULL: a member of spec, or NULL */
    bool mpi; /* pods mpirun starts over ssh, with no PET_* (struct
                 workload trainer_mpi) */
};

/*
 * How a fix names the fields of the kind's object, in the order
 * advice.c tries them; NULL where the kind has no such field.
 */
struct kind_fix {
    const char *nodes;   /* the field counting the pods: "Worker
                            replicas"; NULL: plain pods ("use 2 pods x 8
                            GPUs", "request nvidia.com/gpu: 8 per pod") */
    const char *procs;   /* processes per pod: "nprocPerNode" */
    const char *limits;  /* where a pod's GPUs are set, after worker or
                            head: "container limits" */
    const char *worker;  /* the pods' replica type: "Worker" */
    const char *head;    /* a replica of one beside them, counted as a
                            node where the pod says so: "Master" */
    const char *elastic; /* an elastic job's most pods */
    bool sizeless;       /* its pods carry no job size (mpi-operator's
                            workers): the fix asks for whole nodes */
    const char *pods;    /* the pods in that sentence: "Workers" */
    const char *np;      /* one launcher per node: its ranks, "mpirun -np" */
    const char *nproc;   /* ... and its processes per pod, "torchrun
                            --nproc_per_node" */
};

/* One kind of workload object and the pods its controller makes. */
struct kind {
    const char *name;      /* as reports and docs say it */
    const char *groups[2]; /* API groups serving it, "" the core group;
                              groups[1] NULL where one does */
    const char *kind;
    const char *api;       /* the one apiVersion read, or NULL: any */
    const char *other_api; /* with api: why another one is skipped */

    /* At pod admission. */
    enum owner owner; /* what workload_read() makes of its pods:
                         OWNER_FRAMEWORK for frameworks governed by what
                         their pods are (framework below says how far);
                         OWNER_MANAGED for kinds governed only where a
                         pod is labelled topogate.io/managed: "true";
                         OWNER_NONE for kinds with no pods of their own */
    struct kind_mark marks[2]; /* either one; label NULL: unused */
    const char *count_env; /* an env that says how many pods the job
                              has, read where PET_NNODES (read first, on
                              every pod) says nothing; NULL: none */
    /* A framework governed by what its pods are (owner OWNER_FRAMEWORK):
     * the policy switch that says how far, and what its pods say about
     * the job where PET_NNODES does not (frameworks.c): w->pods and
     * pods_known, w->launcher. */
    enum framework framework;
    void (*read)(const cJSON *pod, struct workload *w);
    /* Judged whole when the object itself is admitted or audited
     * (decide_job()): job_kind() reads it. */
    bool job_level;

    /* In audit: expand() calls expand, or, where it is NULL, skips the
     * object with not_expanded as its note (skip), or reads it as a
     * kind it does not know (!skip). */
    int (*expand)(const cJSON *obj, const struct runtimes *rt,
                  struct expansion *e);
    const char *not_expanded; /* why there is no expander */
    bool skip;

    /* In a fix. */
    const struct kind_fix *fix;
};

extern const struct kind kinds[];
extern const size_t kinds_n;

/*
 * The row for an object of group, apiVersion api (may be NULL) and
 * kind, or NULL. Where a row has group and kind but reads another
 * apiVersion, *near (may be NULL) gets the first such row.
 */
const struct kind *kinds_object(const char *group, const char *api,
                                const char *kind, const struct kind **near);

/* Whether pod carries mark m. */
bool kinds_marked(const struct kind_mark *m, const cJSON *pod);

/*
 * The first row, in table order, whose marks pod carries, or NULL; *mark
 * (may be NULL) gets the mark. Governed rows come first, then the
 * frameworks.
 */
const struct kind *kinds_pod(const cJSON *pod, const struct kind_mark **mark);

/* The count_env of the first row that has one and whose marks pod
 * carries, or NULL. */
const char *kinds_count_env(const cJSON *pod);

/* The words of a fix for pods of owner: its first row's, or plain pods'. */
const struct kind_fix *kinds_fix(enum owner owner);

/* The words of a fix for w's pods: its framework row's, else its owner's. */
const struct kind_fix *kinds_fix_for(const struct workload *w);

/* Whether some row of group and kind, any apiVersion, is job_level. */
bool kinds_job(const char *group, const char *kind);

#endif
