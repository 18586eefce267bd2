/*
 * expand_internal.h - the per-kind expanders behind expand(). Each fills
 * e from obj and returns 0, or -1 out of memory.
 */
#ifndef TOPOGATE_EXPAND_INTERNAL_H
#define TOPOGATE_EXPAND_INTERNAL_H

#include "expand.h"

int expand_pytorchjob(const cJSON *obj, struct expansion *e);
int expand_mpijob(const cJSON *obj, struct expansion *e);
int expand_trainjob(const cJSON *obj, const struct runtimes *rt,
                    struct expansion *e);

#endif
