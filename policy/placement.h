/*
 * placement.h - which instance types a pod can land on, from what it pins:
 * an instance type in its nodeSelector or required node affinity, or
 * Karpenter's (and EKS Auto Mode's) labels that narrow the type.
 *
 * Rows point into the snapshot; names point into the pod.
 */
#ifndef TOPOGATE_PLACEMENT_H
#define TOPOGATE_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "match.h"
#include "snapshot.h"

#define PLACEMENT_MAX 64

/* What the candidates rest on. Only a guess (NONE) can never refuse. */
enum evidence {
    EVIDENCE_NONE,   /* nothing known: a guess at most */
    EVIDENCE_PIN,    /* the pod pins the type itself */
    EVIDENCE_POLICY, /* the policy gives the type (jobs.runtimes, ...) */
    EVIDENCE_NODES,  /* the cluster's nodes the pod can land on */
    EVIDENCE_QUEUE,  /* the flavors of the pod's Kueue queue */
};

struct placement {
    const struct instance_type *types[PLACEMENT_MAX]; /* known candidates */
    size_t n_types;
    bool too_many;       /* more than PLACEMENT_MAX: treat as unknown */
    const char *unknown; /* a candidate name not in the table, or NULL */
    bool pinned;         /* false: nothing constrains the instance type */
    const char *via;     /* "nodeSelector", "node affinity", "Karpenter" */
    enum evidence evidence;
};

/*
 * Fills *p from the pod's parsed placement m; gpus is what the pod asks
 * for, so that Karpenter candidates too small to hold it are left out
 * (unless none is big enough). Never fails.
 */
void placement_read(const struct snapshot *s, const struct match *m, long gpus,
                    struct placement *p);

/* Whether p's candidates are all known and few enough to decide on. */
bool placement_known(const struct placement *p);

const char *evidence_name(enum evidence e);

#endif
