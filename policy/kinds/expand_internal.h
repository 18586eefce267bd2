/*
 * expand_internal.h - the per-kind expanders behind expand(). Each fills
 * e from obj and returns 0, or -1 out of memory.
 */
#ifndef TOPOGATE_EXPAND_INTERNAL_H
#define TOPOGATE_EXPAND_INTERNAL_H

#include "policy/kinds/expand.h"

int expand_pytorchjob(const cJSON *obj, struct expansion *e);
int expand_mpijob(const cJSON *obj, struct expansion *e);
int expand_trainjob(const cJSON *obj, const struct runtimes *rt,
                    struct expansion *e);
int expand_jaxjob(const cJSON *obj, struct expansion *e);
int expand_volcano_job(const cJSON *obj, struct expansion *e);
int expand_ray(const cJSON *obj, struct expansion *e);
/* Pod templates found anywhere under spec, when one asks for GPUs; 1
 * when none does (the caller skips the object). what: "Kind api". */
int expand_unknown(const cJSON *obj, struct expansion *e, const char *what);

#endif
