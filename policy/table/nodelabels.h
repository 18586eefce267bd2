/*
 * nodelabels.h - nodeLabels: the providers' label schemes, as data. Each
 * entry names a provider (GPU Feature Discovery, GKE, Karpenter, EKS Auto
 * Mode, AKS, OCI...), where its labels are written down, and which of
 * its node labels name the instance type and which the GPU product. The
 * cluster view reads a kind of node through them (placement_kind()).
 *
 * The entries and the key lists built from them are owned by the
 * snapshot that read them; what the accessors return is borrowed.
 */
#ifndef TOPOGATE_NODELABELS_H
#define TOPOGATE_NODELABELS_H

#include <stddef.h>

#include "base/yamltree.h"

struct snapshot;

/* One provider's scheme (one entry of nodeLabels). */
struct label_scheme {
    char *name;            /* "gpu-feature-discovery", "gke" */
    char *source;          /* where the labels are written down */
    char **instance_type;  /* keys whose value is an instance type */
    size_t n_instance_type;
    char **gpu_product;    /* keys whose value names a gpuProducts row */
    size_t n_gpu_product;
};

/*
 * The merged nodeLabels entries (a list node) into s->schemes, then the
 * keys of all of them, in entry order and each once, into s->type_keys
 * and s->product_keys (NULL-terminated). Every entry has a name of its
 * own, a source and at least one key; every key is a label key the API
 * accepts, listed once in its entry. 0, or -1 with err (what was read
 * stays for nodelabels_free()).
 */
int nodelabels_read(const struct ynode *n, struct snapshot *s,
                    struct load_error *err);

void nodelabels_free(struct snapshot *s);

#endif
