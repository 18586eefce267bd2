/*
 * snapshot.h - a loaded policy: modes, switches and the topology table.
 *
 * A snapshot is immutable once snapshot_parse() returns it. Readers that
 * may outlive a reload take a reference with snapshot_ref() and drop it
 * with snapshot_unref(); the last unref frees it. snapshot_parse() only
 * reads bytes: opening files is the caller's business.
 */
#ifndef TOPOGATE_SNAPSHOT_H
#define TOPOGATE_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/table/gkenet.h"
#include "policy/table/nodelabels.h"
#include "policy/table/products.h"
#include "policy/table/table.h"
#include "base/yamltree.h"

enum mode { MODE_ENFORCE, MODE_WARN, MODE_AUDIT };

/* What to do with a governed pod whose node type cannot be known. */
enum unknown_action { UNKNOWN_WARN, UNKNOWN_DENY };

/* Each injection can be switched off, globally or per namespace. */
struct inject {
    bool efa;
    bool host_ipc;
    bool shm;
    bool ipc_lock;
    bool tolerations;
    bool env;
    /* A multi-node RDMA job whose nodes span zones gets a required pod
     * affinity on the zone instead of a warning (policy/pod/zones.c). Off by
     * default: it can leave pods pending where no zone has room. */
    bool zone_affinity;
};

/*
 * Frameworks whose GPU pods are governed by what they are, without the
 * topogate.io/managed label: each has its switch under `frameworks:` in
 * the policy file (docs/policy-file.md). FRAMEWORK_NONE: not one.
 */
enum framework {
    FRAMEWORK_NONE,
    FRAMEWORK_RAY,     /* KubeRay RayJob, RayCluster */
    FRAMEWORK_VOLCANO, /* batch.volcano.sh Job with its mpi/pytorch plugin */
    FRAMEWORK_LWS,     /* LeaderWorkerSet */
    FRAMEWORK_JOBSET,  /* a JobSet that Trainer did not make */
    FRAMEWORK_MPI_V1ALPHA2, /* kubeflow.org/v1alpha2 MPIJob */
    FRAMEWORK_GANG,    /* a pod of a Kubernetes PodGroup (gang) */
    FRAMEWORK_N,
};

/*
 * How far a framework's pods are governed: off (only where labelled
 * topogate.io/managed), audit (reported, never patched nor refused),
 * warn (the namespace's mode, but never above warn: never refused),
 * enforce (the namespace's mode).
 */
enum framework_level {
    FRAMEWORK_OFF,
    FRAMEWORK_AUDIT,
    FRAMEWORK_WARN,
    FRAMEWORK_ENFORCE,
};

struct namespace_policy {
    char *name;
    enum mode mode;
    struct inject inject;
    bool allow_opt_out;
    char *instance_type; /* where this namespace's jobs run, or NULL */
    /* gkeNetworks of its own (gkenet.h), replacing the policy's. */
    struct gke_networks *gke_networks;
    size_t n_gke_networks;
    bool gke_networks_set;
};

/* jobs.runtimes: the nodes a Trainer runtime's pods are pinned to. */
struct runtime_type {
    char *runtime;
    char *instance_type;
};

/*
 * Where a row of instanceTypes or gpuProducts was read: the embedded
 * policy, or the file at line. A file merges onto the embedded tables by
 * name unless it says `base: empty` (see snapshot_parse()).
 */
struct row_source {
    bool embedded;
    int line;
};

struct snapshot {
    atomic_int refs; /* see snapshot_ref() */
    char *origin; /* file name, or "embedded" */
    uint64_t digest; /* FNV-1a of the source bytes, for the info metric */
    enum mode mode;
    enum unknown_action unknown;
    bool allow_opt_out;  /* honour topogate.io/skip: "true" */
    bool override_user;  /* replace values the user set instead of keeping them */
    struct inject inject;
    struct namespace_policy *namespaces;
    size_t n_namespaces;
    struct instance_type *types;
    size_t n_types;
    bool repack; /* jobs.repack: rewrite fragmented jobs to whole nodes */
    struct runtime_type *runtime_types;
    size_t n_runtime_types;
    struct env_profile *env_profiles; /* envProfiles: see env.h */
    size_t n_env_profiles;
    const struct env_profile *env_profile; /* envProfile's, or NULL: none */
    struct gke_networks *gke_networks; /* gkeNetworks: see gkenet.h */
    size_t n_gke_networks;
    struct gpu_product *products; /* gpuProducts: see products.h */
    size_t n_products;
    struct label_scheme *schemes; /* nodeLabels: see nodelabels.h */
    size_t n_schemes;
    /* The schemes' keys, each once, in entry order; NULL-terminated,
     * borrowed from schemes. */
    const char **type_keys;
    size_t n_type_keys;
    const char **product_keys;
    size_t n_product_keys;
    /* The instanceLabelPrefix labels, sorted by key (owned), and the
     * prefixes (borrowed from schemes). */
    struct attr_key *attr_keys;
    size_t n_attr_keys;
    const char *attr_prefixes[NODELABELS_PREFIXES];
    size_t n_attr_prefixes;
    /* Parallel to types, products and schemes: where each row came from. */
    struct row_source *type_sources;
    struct row_source *product_sources;
    struct row_source *scheme_sources;
    bool merged; /* a file read over the embedded tables */
    enum framework_level frameworks[FRAMEWORK_N]; /* [FRAMEWORK_NONE]
                                                     unused */
};

/*
 * What the command line says over the file (--mode, --repack). Given to
 * every parse, so start-up, reload, audit and -n build the same snapshot
 * and nothing writes into one after it is published.
 */
struct snapshot_opts {
    bool force_mode;
    enum mode mode; /* every mode, global and per namespace */
    bool force_repack;
};

/*
 * Parses a policy document. Returns an owned snapshot (one reference), or
 * NULL with *err filled in. origin names the source in messages; opts
 * may be NULL.
 *
 * The file is an overlay on the embedded policy: its settings override
 * the embedded ones (inject key by key), namespaces and jobs.runtimes
 * replace theirs when given, and instanceTypes, gpuProducts and
 * nodeLabels merge by name: a row of the file replaces the embedded row
 * of that name whole, and a new name is added. The embedded rows the
 * file leaves come first, then the file's rows in its order. `base:
 * empty` at the top starts from the built-in defaults and empty tables
 * instead (instanceTypes is then required; nodeLabels, when it has none,
 * are the embedded ones); snapshot_print() writes it, so what it prints
 * reads back the same.
 */
struct snapshot *snapshot_parse(const char *bytes, size_t len,
                                const char *origin,
                                const struct snapshot_opts *opts,
                                struct load_error *err);

/* The policy compiled into the binary, from deploy/policy.yaml. */
struct snapshot *snapshot_parse_embedded(const struct snapshot_opts *opts,
                                         struct load_error *err);

struct snapshot *snapshot_ref(struct snapshot *s);
void snapshot_unref(struct snapshot *s);

/* Borrowed row for a type name (an "ml." HyperPod prefix is ignored). */
const struct instance_type *snapshot_lookup(const struct snapshot *s,
                                            const char *name);

/* The mode and switches that govern one namespace. */
enum mode snapshot_mode_for(const struct snapshot *s, const char *ns);
const struct inject *snapshot_inject_for(const struct snapshot *s,
                                         const char *ns);

/*
 * The mode for a pod of framework fw (FRAMEWORK_NONE: any other governed
 * pod) in namespace ns: the namespace's, lowered to what the framework's
 * switch says (audit, warn) where that is lower.
 */
enum mode snapshot_framework_mode(const struct snapshot *s, const char *ns,
                                  enum framework fw);

/* The policy file's key of a framework's switch: "ray", "jobSet". */
const char *framework_key(enum framework fw);
const char *framework_level_name(enum framework_level level);

/* Whether topogate.io/skip is honoured in this namespace. */
bool snapshot_opt_out_for(const struct snapshot *s, const char *ns);

/*
 * The instance type the policy gives a job that pins none: by its Trainer
 * runtime (may be NULL), else its namespace's default. NULL when neither.
 */
const char *snapshot_job_type(const struct snapshot *s, const char *ns,
                              const char *runtime);

const char *mode_name(enum mode mode);
int mode_parse(const char *word, enum mode *out);

/* Writes the policy back as YAML that snapshot_parse() reads. Owned. */
char *snapshot_print(const struct snapshot *s);

#endif
