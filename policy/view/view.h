/*
 * view.h - the cluster view: the kinds of GPU node the cluster has,
 * Kueue's queues and flavors and Trainer's runtimes, as decisions need
 * them.
 *
 * Two layers, like the scheduler's cache and snapshot. A struct
 * view_index is mutable and owned by one thread (the watch thread, or
 * `audit --nodes` reading a file): objects go in as parsed JSON, and
 * only what decisions need is kept. view_build() makes an immutable,
 * refcounted struct view from it, which reviews borrow. Nothing here
 * opens, reads or times anything.
 */
#ifndef TOPOGATE_VIEW_H
#define TOPOGATE_VIEW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "policy/kinds/expand.h"
#include "policy/k8s/match.h"
#include "policy/view/viewnuma.h"

/* More kinds than this and a per-node label we do not know is likely. */
#define VIEW_KINDS_MAX 512
#define VIEW_NICS 4
/*
 * The value a kind holds for a label found to differ from node to node
 * (view.c): the key is there, its value is each node's own. Not a valid
 * label value, so no selector's value equals it: In matches no kind (a
 * pod pinned to one node is no evidence), Exists matches.
 */
#define VIEW_PER_NODE_VALUE "(differs per node)"

/* An RDMA NIC resource a node advertises in allocatable (table.h,
 * table_rdma_class(): NICs, or a shared plugin's slots). */
struct view_nic {
    char *resource; /* "vpc.amazonaws.com/efa", "rdma/ib", ... */
    long count;
};

/* Nodes alike in all that decisions read. Strings owned by the view. */
struct node_kind {
    struct label *labels; /* sorted, per-node labels left out */
    size_t n_labels;
    struct label_set set; /* the same, for match_labels() */
    struct taint *taints;
    size_t n_taints;
    long gpus;       /* allocatable nvidia.com/gpu, else its DRA GPUs */
    long alloc_gpus; /* allocatable nvidia.com/gpu alone */
    char *dra_product; /* GPUs from ResourceSlices: their productName as
                          GFD labels it (viewdra.h), NULL otherwise */
    bool dra;          /* gpus counted from ResourceSlices */
    long dra_nics;     /* RDMA NICs its ResourceSlices publish (DRANET):
                          devices of a claim, no resource of the node */
    long memory_gib; /* allocatable memory, whole GiB */
    struct node_numa numa; /* kubelet's Topology Manager, from the node's
                              NodeResourceTopology (viewnuma.h) */
    struct view_nic nics[VIEW_NICS];
    size_t n_nics;
    size_t nodes; /* how many nodes are of this kind */
};

/* One GPU node by name, for pods that name nodes (match_names_nodes()). */
struct view_node {
    char *name;
    char *hostname; /* its kubernetes.io/hostname label, or NULL */
    const struct node_kind *kind;
};

struct view_flavor {
    char *name;
    struct label *labels; /* spec.nodeLabels, sorted */
    size_t n_labels;
    struct label_set set;
    struct taint *taints; /* spec.nodeTaints */
    size_t n_taints;
};

struct view_cluster_queue {
    char *name;
    char **flavors; /* of the resource groups that cover nvidia.com/gpu */
    size_t n_flavors;
};

struct view_local_queue {
    char *namespace;
    char *name;
    char *cluster_queue;
};

struct view {
    atomic_int refs;
    struct node_kind *kinds;
    size_t n_kinds;
    size_t n_nodes; /* GPU nodes, all of them (too_many or not) */
    bool too_many;  /* past VIEW_KINDS_MAX: the kinds are not all here */
    struct view_node *named; /* the nodes of kinds[], sorted by name */
    size_t n_named;
    char **per_node; /* label keys found to differ per node, sorted */
    size_t n_per_node;
    struct view_flavor *flavors;
    size_t n_flavors;
    struct view_cluster_queue *cluster_queues;
    size_t n_cluster_queues;
    struct view_local_queue *local_queues;
    size_t n_local_queues;
    cJSON *device_classes;  /* DRA DeviceClasses, name -> object */
    cJSON *claim_templates; /* ResourceClaimTemplates, "ns/name" -> object */
    size_t n_slices;        /* ResourceSlices of one node each */
    size_t n_numa;          /* NodeResourceTopologies */
    bool numa_strict;       /* a GPU kind's kubelet is restricted or
                               single-numa-node: placement_numa() looks */
    size_t n_unread;        /* GPU-less nodes not kept (viewindex bound) */
    cJSON *runtime_objects;   /* Trainer's runtimes, an array */
    struct runtimes runtimes; /* the same, for expand() */
};

struct view_index;

struct view_index *view_index_new(void);
void view_index_free(struct view_index *x);

/*
 * A Node, ADDED or MODIFIED: 1 when what decisions read changed, 0 when
 * not (a heartbeat, a status update), -1 out of memory. A node with no
 * GPU, allocatable or from its ResourceSlices, is kept out of the view
 * (the index holds it for slices to come).
 */
int view_index_put_node(struct view_index *x, const cJSON *node);

/* A Node DELETED: 1 when it was in the view, 0 when not. */
int view_index_del_node(struct view_index *x, const cJSON *node);

/* Kueue's objects, Trainer's runtimes and DRA's, by kind
 * ("ResourceFlavor", "ClusterQueue", "LocalQueue", "TrainingRuntime",
 * "ClusterTrainingRuntime", "DeviceClass", "ResourceClaimTemplate",
 * "ResourceSlice", "NodeResourceTopology"); put: 1 changed, 0 same (or
 * not such an object), -1 out of memory. A ResourceSlice gives its node
 * its GPUs where the node has no allocatable nvidia.com/gpu; a
 * NodeResourceTopology its Topology Manager policy and NUMA zones. */
int view_index_put_object(struct view_index *x, const char *kind,
                          const cJSON *obj);
int view_index_del_object(struct view_index *x, const char *kind,
                          const cJSON *obj);

/* A list replaces everything of its kind ("Node" or one of the above):
 * items is the list's array. 0, or -1 out of memory. */
int view_index_replace(struct view_index *x, const char *kind,
                       const cJSON *items);

/* Moves from's objects of kind ("Node" or one of the above) into x in
 * place of x's, which from then holds (to be freed): a list read into an
 * index of its own replaces the old one whole. 0, or -1 for a kind that
 * is not one of these. */
int view_index_take(struct view_index *x, const char *kind,
                    struct view_index *from);

/* Any object: a Node or one of the above, by its "kind". 1 taken, 0 not
 * one of these, -1 out of memory. */
int view_index_put(struct view_index *x, const cJSON *obj);

/* An immutable view of the index as it is (one reference); NULL out of
 * memory. */
struct view *view_build(const struct view_index *x);

struct view *view_ref(struct view *v);
void view_unref(struct view *v);

/* The ClusterQueue's flavors for a LocalQueue; NULL when unknown. */
const struct view_cluster_queue *
view_queue(const struct view *v, const char *ns, const char *local_queue);
const struct view_flavor *view_flavor(const struct view *v, const char *name);

/* The cluster's Trainer runtimes, or NULL when it has none (or v is
 * NULL): a TrainJob names one, and its pods come from it. */
const struct runtimes *view_runtimes(const struct view *v);

/* A DeviceClass by name, a ResourceClaimTemplate by namespace and name
 * (borrowed from the view), or NULL. */
const cJSON *view_device_class(const struct view *v, const char *name);
const cJSON *view_claim_template(const struct view *v, const char *ns,
                                 const char *name);

/* Labels known to differ from node to node and say nothing of hardware:
 * left out of kinds, and not judged by the matcher. */
bool view_per_node_label(const char *key);

/* Taints of a node's condition (not-ready, unschedulable, ...), which come
 * and go: left out of kinds, and never keep a pod off a kind. */
bool view_condition_taint(const char *key);

#define VIEW_HOSTNAME "kubernetes.io/hostname"

#endif
