/*
 * workload.h - who made this pod, and the shape of the job it belongs to,
 * read from the labels and env the training operators set.
 *
 * struct workload borrows from the pod.
 */
#ifndef TOPOGATE_WORKLOAD_H
#define TOPOGATE_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "policy/decision.h"
#include "policy/table/snapshot.h"

struct kind; /* kinds.h */

/* Trainer v2's MPI plugin: its launcher replicated job, and the ssh
 * Secret volume it mounts into the "node" containers of launcher and
 * nodes (kubeflow/trainer pkg/constants). */
#define TRAINER_LAUNCHER "launcher"
#define TRAINER_MPI_SSH_VOLUME "mpi-ssh-auth"


enum owner {
    OWNER_NONE,       /* not a training pod topogate governs */
    OWNER_PYTORCHJOB, /* Training Operator v1 */
    OWNER_MPIJOB,     /* Training Operator v1 or mpi-operator v2beta1 */
    OWNER_TRAINJOB,   /* Trainer v2, through JobSet */
    OWNER_MANAGED,    /* any pod labelled topogate.io/managed: "true" */
    OWNER_FRAMEWORK,  /* a pod of a framework governed by what it is
                         (kinds.c rows with a framework), not labelled:
                         the policy's frameworks switch says how far */
};

struct workload {
    enum owner owner;
    const struct kind *kind; /* the framework row whose marks the pod
                                carries, or NULL */
    enum framework framework; /* kind's framework; FRAMEWORK_NONE */
    bool has_master;      /* PyTorchJob with a Master replica */
    bool launcher;        /* MPIJob launcher: not a worker */
    long gpus;            /* effective nvidia.com/gpu of the pod */
    long efa;             /* vpc.amazonaws.com/efa over app containers */
    bool efa_named;       /* some container names EFA, even as 0 */
    bool any_gpu;         /* some container asks for a GPU */
    const char *bad_container; /* a container whose GPU/EFA count is */
    const cJSON *bad_value;    /* not a whole number, and that value */
    const char *bad_resource;
    const char *null_container; /* a container whose GPU/EFA count is */
    const char *null_resource;  /* null, that resource, the map that */
    const char *null_map;       /* holds the null ("limits"), and the */
    const cJSON *null_other;    /* value read instead, or NULL */
    long pods;            /* pods in the job; 1 when it cannot be read */
    bool pods_known;
    bool elastic;         /* PET_NNODES is "min:max" */
    long procs;           /* processes per pod */
    bool per_node_launcher; /* MPIJob: one torchrun per worker (expand.h) */
    bool groups_alone;    /* ... each a world of its own (expand.h) */
    bool has_claims;      /* a DRA resource claim, either field shape */
    /* GPUs from DRA claims, read through the cluster view's templates and
     * classes (policy/pod/claims.c); strings borrowed from the view. */
    long claim_gpus;            /* whole GPUs counted into gpus */
    bool claim_all;             /* a GPU request of allocationMode All */
    const char *claim_template; /* the GPU request's template ... */
    const char *claim_request;  /* ... and request, for the fix */
    int claim_requests;         /* GPU requests across the claims */
    bool claim_weak;            /* counted, but no evidence: claim_why */
    const char *claim_unknown;  /* a claim whose devices the view cannot */
    char claim_why[160];        /* tell, and why (claim_unknown or weak) */
    const char *claim_nics;     /* a template that claims DRA NICs */
    bool procs_from_gpus;       /* procs is gpus: no nproc said otherwise */
    bool cd_channel;      /* one of them is a ComputeDomain IMEX channel */
    char launch_fixed[128]; /* the shape flags the GPU container's
                               command hard-codes, quoted as written
                               ("'--nproc_per_node 1'"), or "": the fix
                               must name them */
    bool imex_env;        /* its env asks for IMEX channels a node daemon
                             gives (NVIDIA_IMEX_CHANNELS, NCCL_MNNVL_ENABLE) */
    bool trainer_mpi;     /* Trainer v2 MPI runtime (MPI, DeepSpeed):
                             OpenMPI env and ssh, no PET_* */
    bool starts_ranks;    /* its mpirun starts ranks on other pods, which
                             take their env from it (mutate.c) */
};


/* Fills *w from a Pod object; never fails. */
void workload_read(const cJSON *pod, struct workload *w);

/*
 * The warnings for a null GPU/EFA count (w->null_container set): what
 * topogate read instead and what the apiserver does with it. 0, or -1
 * out of memory.
 */
int workload_warn_null(const struct workload *w, struct decision *d);

/* Whether the pod asks for a GPU at all: a count, even one not readable. */
bool workload_asks_gpu(const cJSON *pod);

/* World size: pods x processes per pod. */
long workload_world(const struct workload *w);

const char *owner_name(enum owner owner);

/*
 * Whether an entry of a pod's spec.resourceClaims is a ComputeDomain's
 * IMEX channel, by its names (workload.c says why names are all there is).
 */
bool workload_channel_claim(const cJSON *claim);

#endif
