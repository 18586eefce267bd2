/*
 * lint.h - the mistakes people make in GPU training manifests, found in
 * the pods a workload expands to: resource names, requests without
 * limits, EFA without GPUs, process counts that disagree with the GPUs,
 * launch lines that disagree with the spec.
 */
#ifndef TOPOGATE_LINT_H
#define TOPOGATE_LINT_H

#include <stddef.h>

#include "policy/kinds/expand.h"

struct lint {
    char **lines; /* one sentence each, owned */
    size_t n;
};

/* Fills *out (zeroed first). 0, or -1 out of memory (free it anyway). */
int lint_expansion(const struct expansion *e, struct lint *out);

void lint_free(struct lint *l);

#endif
