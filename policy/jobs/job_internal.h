/*
 * job_internal.h - what job.c shares with job_launcher.c: the verdict on
 * a job's pods, and how one of its pods is read and placed.
 */
#ifndef TOPOGATE_JOB_INTERNAL_H
#define TOPOGATE_JOB_INTERNAL_H

#include <stdbool.h>

#include "policy/decide.h"
#include "policy/kinds/expand.h"
#include "policy/judge.h"
#include "policy/pod/placement.h"
#include "policy/pod/zones.h"

/* The worst finding over the job's GPU pods, and the pod it came from. */
struct verdict_of_job {
    struct finding worst;
    struct workload w; /* of the worst pod */
    bool any_gpu;
    bool pinned;              /* some GPU pod lands on a known type */
    const char *unknown;      /* a pinned type not in the table */
    const char *unresolved;   /* nodes no row describes: what, below */
    char what[PLACEMENT_WHAT]; /* their placement_describe() */
    bool skip;                /* a pod template asks to opt out */
    enum evidence evidence;   /* what the worst pod's candidates rest on */
    struct placement_row row; /* worst.type, when made from the view */
    struct zone_set zones;    /* of a GPU pod's candidates spanning zones */
    const cJSON *zones_spec;  /* that pod's spec */
    long zones_pods;
    struct workload null_w; /* of the first pod with a null count */
    struct workload claim_w; /* of the first GPU-less pod with a DRA
                                claim the view cannot read */
    bool repacked;          /* to whole nodes of worst.type */
};

/* The job's shape overrides what the pod alone can tell. */
void job_workload(const struct expansion *e, const cJSON *pod,
                  struct workload *w);

/*
 * The pod's candidates: what it pins; else the type the policy gives the
 * job's runtime or namespace (the admin's word); else the cluster view.
 * May add a nodeSelector to pod. 0, or -1 out of memory.
 */
int place_job_pod(const struct snapshot *s, const struct admission *req,
                  const struct expansion *e, cJSON *pod,
                  const struct workload *w, struct placement *p);

/*
 * The env of the nodes where an MPI job's ranks run, for the process
 * that starts them (job_launcher.c): an MPIJob's Launcher, a TrainJob's
 * trainer on an MPI runtime. At CREATE of a job not denied; in audit
 * mode a warning. 0, or -1 out of memory.
 */
int job_launcher_env(const struct snapshot *s, const struct admission *req,
                     const struct expansion *e, const struct verdict_of_job *v,
                     enum mode mode, struct decision *d);

#endif
