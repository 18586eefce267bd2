/*
 * nodelabels.h - nodeLabels: the providers' label schemes, as data. Each
 * entry names a provider (GPU Feature Discovery, GKE, Karpenter, EKS Auto
 * Mode, AKS, OCI...), where its labels are written down, and which of
 * its node labels name the instance type and which the GPU product. The
 * cluster view reads a kind of node through them (placement_kind()).
 *
 * Merged by name onto the embedded entries like the tables; a `base:
 * empty` file without the key takes the embedded entries (snapshot.c).
 * The entries and the key lists built from them are owned by the
 * snapshot that read them; what the accessors return is borrowed.
 */
#ifndef TOPOGATE_NODELABELS_H
#define TOPOGATE_NODELABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/yamltree.h"

struct snapshot;

/*
 * A Karpenter-style prefix (instanceLabelPrefix) stands for one label per
 * attribute below, <prefix>family and so on, whose values Karpenter
 * derives from an AWS type's name (karpenter-provider-aws
 * pkg/apis/v1/labels.go [KRP-LBL]; EKS Auto Mode writes the same under
 * eks.amazonaws.com/ [EKS-AUTO]). placement.c gives AWS GPU rows these
 * labels, so that a pod's Karpenter requirements pick rows.
 */
#define NODELABELS_ATTRS 7
#define NODELABELS_PREFIXES 4 /* at most, over all entries */
extern const char *const nodelabels_attrs[NODELABELS_ATTRS];

/* One label of a prefix: its key and which of nodelabels_attrs it is. */
struct attr_key {
    char *key;
    int attr;
};

/* One provider's scheme (one entry of nodeLabels). */
struct label_scheme {
    char *name;           /* "gpu-feature-discovery", "gke" */
    char *source;         /* where the labels are written down */
    char **instance_type; /* keys whose value is an instance type */
    size_t n_instance_type;
    char **gpu_product; /* keys whose value names a gpuProducts row */
    size_t n_gpu_product;
    char *attr_prefix; /* instanceLabelPrefix, or NULL */
};

/*
 * The merged nodeLabels entries (a list node) into s->schemes, then the
 * keys of all of them, in entry order and each once, into s->type_keys
 * and s->product_keys (NULL-terminated), and the prefixes' labels, sorted
 * by key, into s->attr_keys. Every entry has a name of its own, a source
 * and at least one key or prefix; every key (and every prefix's label) is
 * a label key the API accepts, listed once in its entry; no prefix twice,
 * at most NODELABELS_PREFIXES. 0, or -1 with err (what was read
 * stays for nodelabels_free()).
 */
int nodelabels_read(const struct ynode *n, struct snapshot *s,
                    struct load_error *err);

void nodelabels_free(struct snapshot *s);

/* Whether key is one of the policy's prefixed labels (<prefix>...). */
bool nodelabels_prefixed(const struct snapshot *s, const char *key);

#endif
