/*
 * workload.h - who made this pod, and the shape of the job it belongs to,
 * read from the labels and env the training operators set.
 *
 * struct workload borrows from the pod.
 */
#ifndef TOPOGATE_WORKLOAD_H
#define TOPOGATE_WORKLOAD_H

#include <stdbool.h>

#include <cjson/cJSON.h>

enum owner {
    OWNER_NONE,       /* not a training pod topogate governs */
    OWNER_PYTORCHJOB, /* Training Operator v1 */
    OWNER_MPIJOB,     /* Training Operator v1 or mpi-operator v2beta1 */
    OWNER_TRAINJOB,   /* Trainer v2, through JobSet */
    OWNER_MANAGED,    /* any pod labelled topogate.io/managed: "true" */
};

struct workload {
    enum owner owner;
    bool has_master;      /* PyTorchJob with a Master replica */
    bool launcher;        /* MPIJob launcher: not a worker */
    long gpus;            /* effective nvidia.com/gpu of the pod */
    long efa;             /* vpc.amazonaws.com/efa over app containers */
    bool efa_named;       /* some container names EFA, even as 0 */
    bool any_gpu;         /* some container asks for a GPU */
    const char *bad_container; /* a container whose GPU/EFA count is */
    const cJSON *bad_value;    /* not a whole number, and that value */
    const char *bad_resource;
    long pods;            /* pods in the job; 1 when it cannot be read */
    bool pods_known;
    bool elastic;         /* PET_NNODES is "min:max" */
    long procs;           /* processes per pod */
    bool has_claims;      /* a DRA resource claim, either field shape */
};

/* Fills *w from a Pod object; never fails. */
void workload_read(const cJSON *pod, struct workload *w);

/* World size: pods x processes per pod. */
long workload_world(const struct workload *w);

const char *owner_name(enum owner owner);

#endif
