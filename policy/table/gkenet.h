/*
 * gkenet.h - gkeNetworks: the GKE networks a pod on a GPUDirect machine
 * type attaches, as the cluster's own administrator named them (the
 * policy's list, or a namespace's). topogate never makes network names
 * up: with no entry for the type it warns instead of patching.
 *
 * The lists are owned by the snapshot (or its namespace) that read them;
 * what the lookups return is borrowed from it.
 */
#ifndef TOPOGATE_GKENET_H
#define TOPOGATE_GKENET_H

#include <stddef.h>

#include "base/yamltree.h"

struct snapshot;

/* One pod interface and the GKE Network object it attaches. */
struct gke_interface {
    char *name;    /* interfaceName: "eth1" */
    char *network; /* network: "vpc1", "rdma-0", "default" */
};

/* The interfaces of one machine type, first = the default interface. */
struct gke_networks {
    char *instance_type;
    struct gke_interface *ifs;
    size_t n_ifs;
    /* The value of networking.gke.io/interfaces, JSON text: built once
     * at load from ifs, as GoogleCloudPlatform/container-engine-
     * accelerators' manifests write it. */
    char *annotation;
};

/*
 * A gkeNetworks list into *out and *n (freeing what was there): each
 * entry's instanceType a row of s with nicAnnotation, listed once, with
 * interfaces of names and networks of [A-Za-z0-9._-] and no
 * interfaceName twice. 0, or -1 with err (what was read stays in *out
 * for gkenet_free()).
 */
int gkenet_read(const struct ynode *n, const struct snapshot *s,
                struct gke_networks **out, size_t *n_out,
                struct load_error *err);

void gkenet_free(struct gke_networks *list, size_t n);

/*
 * The entry for type in namespace ns: the namespace's own list where it
 * has one (even empty), else the policy's. NULL when none names it.
 */
const struct gke_networks *snapshot_gke_networks(const struct snapshot *s,
                                                 const char *ns,
                                                 const char *type);

#endif
