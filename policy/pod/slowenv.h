/*
 * slowenv.h - the user's env that keeps NCCL off the fast path: P2P, its
 * shared-memory fallback, or the RDMA NICs, turned off by name.
 *
 * topogate never overrides these (a user may have a reason, such as a
 * driver bug); it says which variable does what, where the path it turns
 * off exists for the pod. Strings are borrowed from the container.
 */
#ifndef TOPOGATE_SLOWENV_H
#define TOPOGATE_SLOWENV_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* What the pod has that NCCL could use. */
struct fast_paths {
    long gpus;         /* GPUs of the pod: P2P between them from 2 */
    bool node_peers;   /* other pods of the job may share its node */
    const char *nics;  /* the RDMA NICs' resource of a multi-pod job, or
                          NULL: none between its pods */
};

/* Receives one sentence; returns 0, or -1 to stop (out of memory). */
typedef int slowenv_say(void *arg, const char *sentence);

/*
 * Calls say once per variable in container c's env that turns off a path
 * of p. 0, or the -1 of say.
 */
int slowenv_each(const cJSON *c, const struct fast_paths *p,
                 slowenv_say *say, void *arg);

/* Whether a resource name is an RDMA NIC's or a shared RDMA plugin's
 * slot (table_rdma_class()). */
bool slowenv_is_rdma_resource(const char *name);

#endif
