/*
 * expand_internal.h - the per-kind expanders behind expand(), one per
 * row of the table of kinds (kinds.c), all of one shape: each fills e
 * from obj (rt: the runtimes at hand, may be NULL; most kinds read
 * none) and returns 0, or -1 out of memory.
 */
#ifndef TOPOGATE_EXPAND_INTERNAL_H
#define TOPOGATE_EXPAND_INTERNAL_H

#include "policy/kinds/expand.h"

int expand_pod(const cJSON *obj, const struct runtimes *rt,
               struct expansion *e);
/* Deployment, ReplicaSet, StatefulSet. */
int expand_replicated(const cJSON *obj, const struct runtimes *rt,
                      struct expansion *e);
int expand_daemonset(const cJSON *obj, const struct runtimes *rt,
                     struct expansion *e);
int expand_job(const cJSON *obj, const struct runtimes *rt,
               struct expansion *e);
int expand_cronjob(const cJSON *obj, const struct runtimes *rt,
                   struct expansion *e);
int expand_jobset(const cJSON *obj, const struct runtimes *rt,
                  struct expansion *e);
int expand_pytorchjob(const cJSON *obj, const struct runtimes *rt,
                      struct expansion *e);
int expand_mpijob(const cJSON *obj, const struct runtimes *rt,
                  struct expansion *e);
int expand_trainjob(const cJSON *obj, const struct runtimes *rt,
                    struct expansion *e);
int expand_jaxjob(const cJSON *obj, const struct runtimes *rt,
                  struct expansion *e);
int expand_volcano_job(const cJSON *obj, const struct runtimes *rt,
                       struct expansion *e);
int expand_ray(const cJSON *obj, const struct runtimes *rt,
               struct expansion *e);
int expand_lws(const cJSON *obj, const struct runtimes *rt,
               struct expansion *e);
int expand_mpijob_v1alpha2(const cJSON *obj, const struct runtimes *rt,
                           struct expansion *e);
/* Pod templates found anywhere under spec, when one asks for GPUs; 1
 * when none does (the caller skips the object). what: "Kind api". */
int expand_unknown(const cJSON *obj, struct expansion *e, const char *what);

#endif
