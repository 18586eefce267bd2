/*
 * placement.h - which instance types a pod can land on, from what it pins:
 * nodeSelector, required node affinity, or Karpenter's GPU labels.
 *
 * Rows point into the snapshot; names point into the pod.
 */
#ifndef TOPOGATE_PLACEMENT_H
#define TOPOGATE_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "snapshot.h"

#define PLACEMENT_MAX 64

struct placement {
    const struct instance_type *types[PLACEMENT_MAX]; /* known candidates */
    size_t n_types;
    const char *unknown; /* a candidate name not in the table, or NULL */
    bool pinned;         /* false: nothing constrains the instance type */
    const char *via;     /* "nodeSelector", "node affinity", "Karpenter" */
};

/* Fills *p; never fails. */
void placement_read(const struct snapshot *s, const cJSON *pod,
                    struct placement *p);

#endif
