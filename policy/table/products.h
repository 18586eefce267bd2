/*
 * products.h - the GPU-product table: what a node is when all we know is
 * the name of its GPUs (GFD nvidia.com/gpu.product, GKE
 * cloud.google.com/gke-accelerator, Karpenter or EKS Auto Mode
 * instance-gpu-name) and how many it has.
 *
 * Products are owned by the snapshot that loaded them (policy key
 * gpuProducts); everything handed out here borrows from it and lives as
 * long as the caller's reference to the snapshot.
 */
#ifndef TOPOGATE_PRODUCTS_H
#define TOPOGATE_PRODUCTS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/table/table.h"
#include "base/yamltree.h"

struct snapshot;

/* One `links` entry: GPU counts from min to max share an interconnect. */
struct product_link {
    int min;                /* at least 2: one GPU is always single */
    int max;                /* PRODUCT_GPUS_MAX for "min and up" */
    enum interconnect link; /* LINK_UNKNOWN: the product does not say */
};

#define PRODUCT_GPUS_MAX 1024

struct gpu_product {
    char *name;        /* "H100-SXM": the table's own name */
    char *accelerator; /* "H100", as in instanceTypes */
    char *memory;      /* per GPU, a quantity; NULL if the name says none */
    int nvlink_gbps;   /* per GPU, bidirectional; 0 without NVLink */
    char **labels;     /* the label values that name it */
    size_t n_labels;
    struct product_link *links; /* by GPU count; counts not listed: unknown */
    size_t n_links;
};

/*
 * The product a node label value names: an exact match, ignoring case, on
 * any entry's labels; NULL when none does. A GFD value for MIG slices
 * ("...-MIG-1g.5gb") or shared GPUs ("...-SHARED") names no product: the
 * node's "GPUs" are then slices, and its count no physical GPU count.
 */
const struct gpu_product *snapshot_product(const struct snapshot *s,
                                           const char *label_value);

/*
 * How a node with gpu_count of this product's GPUs joins them. One GPU is
 * single, whatever the product. False, *out untouched, when the product
 * alone does not say for that count (see the table's comments: a VM slice
 * of an 8-GPU board, PCIe cards with optional NVLink bridges, ...).
 */
bool product_link(const struct gpu_product *p, int gpu_count,
                  enum interconnect *out);

/*
 * The loader's side, called from snapshot.c: products_read() reads the
 * gpuProducts list into s, or fails with a positioned message (what it
 * read so far stays in s for products_free()); products_free() frees what
 * s holds. snapshot_print.c writes the table back.
 */
int products_read(const struct ynode *n, struct snapshot *s,
                  struct load_error *err);
void products_free(struct snapshot *s);

#endif
