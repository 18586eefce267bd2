/*
 * mutate.h - the JSON Patch ops that put a pod into the fast shape.
 *
 * Ops are built explicitly, never by diffing, and only where the pod does
 * not already say something: a second pass over the patched pod adds none.
 */
#ifndef TOPOGATE_MUTATE_H
#define TOPOGATE_MUTATE_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "policy/decision.h"
#include "policy/k8s/match.h"
#include "policy/table/snapshot.h"
#include "policy/kinds/workload.h"

#define TARGET_MAX_ENV 16

/* Why no RDMA NIC resource is added to a pod whose nodes have some. */
enum nic_hold {
    NIC_FREE,  /* nothing holds it back */
    NIC_OTHER, /* the pod asks for an RDMA resource under another name */
    NIC_HOST,  /* a hostNetwork pod that reaches the host's RDMA NICs */
    NIC_NODES, /* not every node it can land on advertises t->nic */
    NIC_CLAIM, /* a DRA claim that may be its NICs, and no node says not */
    NIC_UNSEEN, /* nicsNeedEvidence, and no node known that advertises it */
};

/* What every candidate instance type agrees on; -1/NULL where they don't. */
struct target {
    const char *name; /* the type, for messages */
    int gpus;         /* accelerators per node */
    int efa;          /* RDMA NICs per node (EFA on AWS); -1: they differ */
    const char *nic;  /* their resource, or NULL: none to patch */
    enum nic_hold nic_hold; /* nics_narrow() (nics.h): none added, why */
    const char *nic_why;    /* NIC_OTHER: that resource; NIC_HOST: how */
    int efa_held;           /* the count held back (efa is 0 for NIC_NODES
                               and NIC_UNSEEN) */
    bool nics_need_evidence; /* a candidate row's nicsNeedEvidence */
    enum gpudirect gpudirect; /* the GKE stack all candidates share, or
                                 GPUDIRECT_NONE */
    const struct gke_networks *gke_net; /* the policy's networks for the
                                           candidates, or NULL (decide.c) */
    const char *nic_annotation; /* the pod annotation that attaches them
                                   instead (GKE), when all agree; or NULL */
    const char *shm;  /* the smallest /dev/shm size among the candidates */
    uint64_t shm_bytes;
    const struct env_var *env[TARGET_MAX_ENV]; /* same name and value */
    size_t n_env;
};

/* Intersects candidate rows (n >= 1) into what may be patched. */
void target_agree(const struct instance_type *const *types, size_t n,
                  struct target *t);

/*
 * Appends to d the ops (and warnings about values the user set) for a
 * governed pod; m is its parsed placement, for the tolerations it
 * already has. Returns 0, or -1 out of memory.
 */
int mutate_pod(const cJSON *pod, const struct match *m,
               const struct workload *w, const struct target *t,
               const struct inject *in, bool override_user,
               struct decision *d);

/*
 * The RDMA NICs (EFA) the pod of w holds once patched: what the user set,
 * else the share mutate_pod() gives it. libfabric's FI_* env needs some.
 */
long mutate_efa_after(const struct workload *w, const struct target *t,
                      const struct inject *in, bool override);

/*
 * An MPI launcher container c, at JSON pointer cpath of the object under
 * review: the env of t that applies to a worker with efa RDMA NICs, and
 * OMPI_MCA_mca_base_env_list naming it, so that mpirun exports it to
 * ranks it starts over ssh. Variables the command exports with -x are
 * left out. 0, or -1 out of memory.
 */
/* Open MPI's list of variables it exports to every rank. */
#define LAUNCHER_ENV_LIST "OMPI_MCA_mca_base_env_list"

int mutate_launcher_env(const cJSON *c, const char *cpath,
                        const struct target *t, long efa, bool override,
                        struct decision *d);

/*
 * topogate.io/whole-node: raises the pod's main GPU container to the
 * node's count, and w->gpus with it. 0, or -1 out of memory.
 */
int mutate_fill_gpus(const cJSON *pod, struct workload *w,
                     const struct target *t, struct decision *d);

#endif
