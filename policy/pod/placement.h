/*
 * placement.h - which instance types a pod can land on, from what it pins:
 * an instance type in its nodeSelector or required node affinity, or
 * Karpenter's (and EKS Auto Mode's) labels that narrow the type.
 *
 * Rows point into the snapshot; names point into the pod.
 */
#ifndef TOPOGATE_PLACEMENT_H
#define TOPOGATE_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "policy/k8s/match.h"
#include "policy/table/snapshot.h"
#include "policy/kinds/workload.h"

#define PLACEMENT_MAX 64
#define PLACEMENT_ZONES 8
/* Room for placement_describe(): a label value is at most 63 bytes, a
 * ResourceSlice's string attribute at most 64. */
#define PLACEMENT_WHAT 192
/* Candidate kinds under a Topology Manager policy, kept for warnings. */
#define PLACEMENT_NUMA 8

/* What the candidates rest on. Only a guess (NONE) can never refuse. */
enum evidence {
    EVIDENCE_NONE,   /* nothing known: a guess at most */
    EVIDENCE_PIN,    /* the pod pins the type itself */
    EVIDENCE_POLICY, /* the policy gives the type (jobs.runtimes, ...) */
    EVIDENCE_NODES,  /* the cluster's nodes the pod can land on */
    EVIDENCE_QUEUE,  /* the flavors of the pod's Kueue queue */
    EVIDENCE_CLIQUE, /* a ComputeDomain claim on nvidia.com/gpu.clique nodes */
};

struct view;

/* A kind of node seen as a table row, with its own counts (see below). */
struct placement_row {
    struct instance_type row;
    size_t nodes; /* of this kind in the cluster */
    const struct node_kind *kind; /* the view's kind it was made from */
    char shm[24]; /* row.shm of a row made from a GPU product */
};

/* Zones of candidate nodes (view-owned strings), and whether any of
 * them has RDMA NICs pods ask for. */
struct zone_set {
    const char *names[PLACEMENT_ZONES];
    size_t n;
    bool nics;
};

struct placement {
    const struct instance_type *types[PLACEMENT_MAX]; /* known candidates */
    size_t n_types;
    size_t n_rows;          /* of rows[], below */
    const char *unresolved; /* a candidate kind of node we cannot read */
    bool unresolved_type;   /* ... named by its instance type (else by
                               what the node says of itself, in what) */
    /* "nodes of 8 x 'X' GPUs" where unresolved needs it: see
     * placement_describe(). */
    char what[PLACEMENT_WHAT];
    bool no_node;           /* the view has no node this pod fits (yet) */
    struct zone_set zones;  /* of the candidate nodes */
    bool too_many;          /* more than PLACEMENT_MAX: treat as unknown */
    const char *unknown;    /* a candidate name not in the table, or NULL */
    size_t n_unknown;       /* how many pinned values the table lacks */
    const char *node;       /* a node the pod names (match_named_node) */
    bool by_name;           /* the candidates are the nodes it names */
    bool type_pinned;       /* ... the nodes of the types it pins */
    bool pinned;            /* false: nothing constrains the instance type */
    const char *via;        /* "nodeSelector", "node affinity", "Karpenter" */
    enum evidence evidence;
    /* The view's kinds the pod can land on whose kubelet runs the
     * restricted or single-numa-node Topology Manager, with the name of
     * each as messages give it (placement_numa()); and the fewest GPUs a
     * pod may hold on the single-numa-node ones, 0 when none is. */
    struct {
        const struct node_kind *kind;
        char name[48];
    } numa[PLACEMENT_NUMA];
    size_t n_numa;
    long numa_gpus;
    /* Rows made from the cluster's nodes, types[] point here too; last,
     * so that clearing a placement leaves the big array alone. */
    struct placement_row rows[PLACEMENT_MAX];
};

/* Zeroes p but for rows[] (placement_read() does it). */
void placement_clear(struct placement *p);

/*
 * Fills *p from the pod's parsed placement m; gpus is what the pod asks
 * for, so that Karpenter candidates too small to hold it are left out
 * (unless none is big enough). Never fails.
 */
void placement_read(const struct snapshot *s, const struct match *m, long gpus,
                    struct placement *p);

/*
 * Where a pod that pins no type and that nothing else places can land,
 * when it claims a ComputeDomain (IMEX) channel (w->cd_channel) and every
 * node it can land on carries nvidia.com/gpu.clique (a required node
 * affinity In/Exists on it, or a required podAffinity with it as
 * topologyKey, spec being the pod's spec): GFD puts that label only on
 * GPUs in a multi-node NVLink fabric, so the candidates are the table's
 * GB200/GB300 rows. Leaves p alone otherwise.
 */
/* What a decision on such a pod says it rests on (a warning: 120 chars;
 * the rows are in `topogate tables`). */
#define PLACEMENT_CLIQUE_NOTE                                                  \
    "ComputeDomain claim on nvidia.com/gpu.clique nodes: judged as "           \
    "GB200/GB300 (no instance type pinned)"

void placement_clique(const struct snapshot *s, const struct match *m,
                      const cJSON *spec, const struct workload *w,
                      struct placement *p);

/*
 * Where a pod that pins no type can land, from the cluster view v: the
 * kinds of node whose labels and taints admit it (m, with the tolerations
 * topogate adds) and whose allocatable GPUs and EFA hold w's, narrowed to
 * the flavors of the Kueue queue named queue (may be NULL) in namespace
 * ns. Each candidate is its instance type's row with the node's own GPU
 * and NIC counts, or a row made from its GPU product. A queue with no
 * such node yet gives its flavors' instance types from the table. Leaves
 * p as it is when the view has no GPU node (p->no_node set when it has
 * some but none fits: a node group that scales from zero); rows borrow
 * from s and v.
 */
void placement_from_view(const struct snapshot *s, const struct view *v,
                         const struct match *m, const struct workload *w,
                         const char *ns, const char *queue,
                         struct placement *p);

/*
 * A pod that pins one instance type the table lacks (p->unknown, from
 * placement_read()): when the view has nodes of that type the pod fits,
 * they say what it is (their GPU product and count, placement_kind()),
 * beside the pinned types the table knows. Leaves p alone otherwise.
 */
void placement_pin_from_view(const struct snapshot *s, const struct view *v,
                             const struct match *m, const struct workload *w,
                             const char *ns, const char *queue,
                             struct placement *p);

/*
 * The fewest of resource (an RDMA NIC's, table_rdma_class()) that the
 * nodes the pod can land on advertise in allocatable: the view's kinds
 * that placement_from_view() would take (m, w, the queue), whether the
 * pod pins its type or not; 0 when one of them has none. -1 when the view
 * knows no such node (no view, none yet, too many kinds, resource NULL):
 * then only the table speaks.
 */
long placement_nic_fewest(const struct view *v, const struct match *m,
                          const struct workload *w, const char *ns,
                          const char *queue, const char *resource);

/*
 * The same for the RDMA NICs the nodes publish as DRA devices (DRANET's
 * ResourceSlices, view.h dra_nics): the fewest among the candidates, 0
 * when one has none, -1 when the view knows no such node.
 */
long placement_dra_nics(const struct view *v, const struct match *m,
                        const struct workload *w, const char *ns,
                        const char *queue);

/*
 * The Topology Manager of the view's kinds the pod can land on (as
 * placement_nic_fewest() reads them, whether it pins its type or not),
 * into p->numa, n_numa and numa_gpus; nothing without a view. Call it
 * once the candidates are known: the other steps overwrite them.
 */
void placement_numa(const struct snapshot *s, const struct view *v,
                    const struct match *m, const struct workload *w,
                    const char *ns, const char *queue, struct placement *p);

/*
 * What hardware a kind of node is, as decisions see it: its instance
 * type's row with the node's own counts, else a row made from its GPU
 * product, into *r. Returns the label it was known by, or NULL when it
 * cannot be known (no such row or product; MIG or shared GPUs).
 */
struct node_kind;
const char *placement_kind(const struct snapshot *s, const struct node_kind *k,
                           struct placement_row *r);

/*
 * What a kind of node is, for a message where no row of the table says
 * it: its GPU count and product (by the policy's nodeLabels gpuProduct
 * keys, else its ResourceSlices'), which is all the node itself tells.
 * Into buf, cut to len.
 */
void placement_describe(const struct snapshot *s, const struct node_kind *k,
                        char *buf, size_t len);

/*
 * For a pod with several candidate kinds from the cluster: "it can land
 * on A (2 nodes), B (1 node); pin one with nodeSelector ..." into buf;
 * for one known by a ComputeDomain on gpu.clique nodes, that it is judged
 * as GB200/GB300. False (buf empty) when there is nothing to say.
 */
bool placement_candidates(const struct placement *p, char *buf, size_t len);

/* Whether p's candidates are all known and few enough to decide on. */
bool placement_known(const struct placement *p);

const char *evidence_name(enum evidence e);

#endif
