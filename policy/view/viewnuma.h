/*
 * viewnuma.h - what the cluster view reads of a NodeResourceTopology
 * (topology.node.k8s.io v1alpha2 or v1alpha1, one per node, named as the
 * node, written by NFD's topology updater or the resource topology
 * exporter): kubelet's Topology Manager policy and scope on that node,
 * and how many GPUs and CPUs each NUMA node holds. Pure readers.
 */
#ifndef TOPOGATE_VIEWNUMA_H
#define TOPOGATE_VIEWNUMA_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* Kubelet refuses more NUMA nodes than this unless told otherwise
 * (topologyManagerPolicyOptions max-allowable-numa-nodes): a node with
 * more zones than this is read as zones not known. */
#define NUMA_ZONES_MAX 8

/* Kubelet's topologyManagerPolicy values (KubeletConfiguration). */
enum numa_policy {
    NUMA_NOT_SAID, /* no object, or one that names no policy we know */
    NUMA_NONE,
    NUMA_BEST_EFFORT,
    NUMA_RESTRICTED,
    NUMA_SINGLE_NODE, /* single-numa-node */
};

/* A node's Topology Manager as a kind holds it; all zero: not said. */
struct node_numa {
    enum numa_policy policy;
    bool pod_scope;    /* topologyManagerScope pod, else container */
    int zones;         /* NUMA nodes with GPUs or CPUs listed, 0 unknown */
    long gpus[NUMA_ZONES_MAX]; /* nvidia.com/gpu per zone, most first */
    long cpus[NUMA_ZONES_MAX]; /* whole CPUs per zone, most first */
};

/*
 * A NodeResourceTopology's facts into *out, none of what changes as pods
 * come and go (a zone's "available"); returns the node it is for (its
 * name, borrowed from nrt), or NULL when it names none.
 */
const char *viewnuma_read(const cJSON *nrt, struct node_numa *out);

bool viewnuma_equal(const struct node_numa *a, const struct node_numa *b);

/* The policy as kubelet's configuration spells it ("single-numa-node"). */
const char *viewnuma_policy_name(enum numa_policy p);

#endif
