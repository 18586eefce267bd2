/*
 * snapshot.c - the policy file (YAML) into an immutable snapshot.
 *
 * The reader is strict: an unknown key, a duplicated key or a value of the
 * wrong type is an error at its line and column, because a typo in a
 * policy that silently does nothing is worse than a refusal to load.
 */
#include "policy/table/snapshot.h"
#include "policy/table/env.h"
#include "policy/table/yamlread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/quantity.h"

/* Set by policy/table/embedded.S from deploy/policy.yaml. */
extern const char policy_embedded[];
extern const char policy_embedded_end[];

static const char *const mode_names[] = {
    [MODE_ENFORCE] = "enforce",
    [MODE_WARN] = "warn",
    [MODE_AUDIT] = "audit",
};

const char *
mode_name(enum mode mode)
{
    return mode_names[mode];
}

int
mode_parse(const char *word, enum mode *out)
{
    for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
        if (strcmp(word, mode_names[i]) == 0) {
            *out = (enum mode)i;
            return 0;
        }
    }
    return -1;
}

static const char *const framework_keys[] = {
    [FRAMEWORK_RAY] = "ray",
    [FRAMEWORK_VOLCANO] = "volcano",
    [FRAMEWORK_LWS] = "leaderWorkerSet",
    [FRAMEWORK_JOBSET] = "jobSet",
    [FRAMEWORK_MPI_V1ALPHA2] = "mpiJobV1alpha2",
    [FRAMEWORK_GANG] = "podGroup",
};

static const char *const framework_levels[] = {
    [FRAMEWORK_OFF] = "off",
    [FRAMEWORK_AUDIT] = "audit",
    [FRAMEWORK_WARN] = "warn",
    [FRAMEWORK_ENFORCE] = "enforce",
};

const char *
framework_key(enum framework fw)
{
    return fw > FRAMEWORK_NONE && fw < FRAMEWORK_N ? framework_keys[fw] : "";
}

const char *
framework_level_name(enum framework_level level)
{
    return framework_levels[level];
}

/* --- reading typed values, each failing with a positioned message ------ */

static int
read_bool(const struct ynode *n, const char *what, bool *out,
          struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SCALAR, what, err) < 0)
        return -1;
    if (n->plain && strcmp(n->scalar, "true") == 0)
        *out = true;
    else if (n->plain && strcmp(n->scalar, "false") == 0)
        *out = false;
    else {
        ynode_error(err, n, "%s must be true or false, not '%s'", what,
                    n->scalar);
        return -1;
    }
    return 0;
}

static int
read_int(const struct ynode *n, const char *what, int min, int max, int *out,
         struct load_error *err)
{
    char *end;
    long v;

    if (yamlread_kind(n, YNODE_SCALAR, what, err) < 0)
        return -1;
    v = strtol(n->scalar, &end, 10);
    if (!n->plain || end == n->scalar || *end != '\0' || v < min || v > max) {
        ynode_error(err, n, "%s must be a whole number from %d to %d, not '%s'",
                    what, min, max, n->scalar);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int
read_mode(const struct ynode *n, enum mode *out, struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SCALAR, "mode", err) < 0)
        return -1;
    if (mode_parse(n->scalar, out) < 0) {
        ynode_error(err, n, "unknown mode '%s' (enforce, warn or audit)",
                    n->scalar);
        return -1;
    }
    return 0;
}

/* A memory quantity such as "144Gi"; its value in bytes goes to *bytes. */
static int
read_quantity(const struct ynode *n, const char *what, char **out,
              uint64_t *bytes, struct load_error *err)
{
    double value;

    if (yamlread_string(n, what, out, err) < 0)
        return -1;
    /* fuzz: past 2^64 bytes the (uint64_t) cast below is undefined. */
    if (quantity_parse(*out, &value) < 0 || value < 1 ||
        value >= 18446744073709551616.0) {
        ynode_error(err, n, "%s must be a quantity such as 64Gi, not '%s'",
                    what, *out);
        return -1;
    }
    if (bytes)
        *bytes = (uint64_t)value;
    return 0;
}

/* The file's value of key, else the embedded policy's (base may be NULL). */
static const struct ynode *
pick(const struct ynode *root, const struct ynode *base, const char *key)
{
    const struct ynode *v = ynode_get(root, key);

    return v || base == NULL ? v : ynode_get(base, key);
}

/* --- sections --------------------------------------------------------- */

static int
read_inject(const struct ynode *n, struct inject *in, struct load_error *err)
{
    static const char *const keys[] = {"efa",         "hostIPC", "shm",
                                       "ipcLock",     "tolerations",
                                       "env",         "zoneAffinity", NULL};
    bool *fields[] = {&in->efa,         &in->host_ipc,    &in->shm,
                      &in->ipc_lock,    &in->tolerations, &in->env,
                      &in->zone_affinity};

    if (yamlread_kind(n, YNODE_MAP, "inject", err) < 0 ||
        yamlread_keys(n, keys, "inject", err) < 0)
        return -1;
    for (size_t i = 0; keys[i]; i++) {
        const struct ynode *v = ynode_get(n, keys[i]);
        if (v && read_bool(v, keys[i], fields[i], err) < 0)
            return -1;
    }
    return 0;
}

/* frameworks: one switch per framework: off, audit, warn or enforce. */
static int
read_frameworks(const struct ynode *n, struct snapshot *s,
                struct load_error *err)
{
    const char *keys[FRAMEWORK_N];

    for (int i = 1; i < FRAMEWORK_N; i++)
        keys[i - 1] = framework_keys[i];
    keys[FRAMEWORK_N - 1] = NULL;
    if (yamlread_kind(n, YNODE_MAP, "frameworks", err) < 0 ||
        yamlread_keys(n, keys, "frameworks", err) < 0)
        return -1;
    for (int i = 1; i < FRAMEWORK_N; i++) {
        const struct ynode *v = ynode_get(n, framework_keys[i]);
        int level = -1;

        if (v == NULL)
            continue;
        if (yamlread_kind(v, YNODE_SCALAR, framework_keys[i], err) < 0)
            return -1;
        for (int l = 0; l <= FRAMEWORK_ENFORCE && v->plain; l++)
            if (strcmp(v->scalar, framework_levels[l]) == 0)
                level = l;
        if (level < 0) {
            ynode_error(err, v,
                        "frameworks.%s must be off, audit, warn or enforce, "
                        "not '%s'",
                        framework_keys[i], v->scalar);
            return -1;
        }
        s->frameworks[i] = (enum framework_level)level;
    }
    return 0;
}

/* A type name that the table must know: read after instanceTypes. */
static int
read_known_type(const struct ynode *n, const struct snapshot *s, char **out,
                struct load_error *err)
{
    if (yamlread_string(n, "instanceType", out, err) < 0)
        return -1;
    if (snapshot_lookup(s, *out) == NULL) {
        ynode_error(err, n, "instanceType '%s' is not in instanceTypes", *out);
        return -1;
    }
    return 0;
}

static int
read_namespaces(const struct ynode *n, struct snapshot *s,
                struct load_error *err)
{
    static const char *const keys[] = {"name",   "mode",         "inject",
                                       "optOut", "instanceType", "gkeNetworks",
                                       NULL};

    if (yamlread_kind(n, YNODE_SEQ, "namespaces", err) < 0)
        return -1;
    if (n->n_items == 0)
        return 0;
    s->namespaces = calloc(n->n_items, sizeof(*s->namespaces));
    if (s->namespaces == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        const struct ynode *item = n->items[i], *v;
        struct namespace_policy *ns = &s->namespaces[s->n_namespaces++];

        /* A namespace inherits what it does not say. */
        ns->mode = s->mode;
        ns->inject = s->inject;
        ns->allow_opt_out = s->allow_opt_out;
        if (yamlread_kind(item, YNODE_MAP, "a namespace", err) < 0 ||
            yamlread_keys(item, keys, "a namespace", err) < 0 ||
            (v = yamlread_need(item, "name", "a namespace", err)) == NULL ||
            yamlread_string(v, "name", &ns->name, err) < 0)
            return -1;
        for (size_t j = 0; j + 1 < s->n_namespaces; j++) {
            if (strcmp(s->namespaces[j].name, ns->name) == 0) {
                ynode_error(err, v, "namespace '%s' listed twice", ns->name);
                return -1;
            }
        }
        if ((v = ynode_get(item, "mode")) && read_mode(v, &ns->mode, err) < 0)
            return -1;
        if ((v = ynode_get(item, "inject")) &&
            read_inject(v, &ns->inject, err) < 0)
            return -1;
        if ((v = ynode_get(item, "optOut")) &&
            read_bool(v, "optOut", &ns->allow_opt_out, err) < 0)
            return -1;
        if ((v = ynode_get(item, "instanceType")) &&
            read_known_type(v, s, &ns->instance_type, err) < 0)
            return -1;
        /* Its own list, even empty, replaces the policy's. */
        if ((v = ynode_get(item, "gkeNetworks"))) {
            ns->gke_networks_set = true;
            if (gkenet_read(v, s, &ns->gke_networks, &ns->n_gke_networks,
                            err) < 0)
                return -1;
        }
    }
    return 0;
}

static int
read_runtimes(const struct ynode *n, struct snapshot *s, struct load_error *err)
{
    static const char *const keys[] = {"name", "instanceType", NULL};

    if (yamlread_kind(n, YNODE_SEQ, "jobs.runtimes", err) < 0)
        return -1;
    if (n->n_items == 0)
        return 0;
    if ((s->runtime_types = calloc(n->n_items, sizeof(*s->runtime_types))) ==
        NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        const struct ynode *item = n->items[i], *v;
        struct runtime_type *r = &s->runtime_types[s->n_runtime_types++];

        if (yamlread_kind(item, YNODE_MAP, "a runtime", err) < 0 ||
            yamlread_keys(item, keys, "a runtime", err) < 0 ||
            (v = yamlread_need(item, "name", "a runtime", err)) == NULL ||
            yamlread_string(v, "name", &r->runtime, err) < 0 ||
            (v = yamlread_need(item, "instanceType", "a runtime", err)) ==
                NULL ||
            read_known_type(v, s, &r->instance_type, err) < 0)
            return -1;
    }
    return 0;
}

/*
 * jobs: {repack, runtimes}: job-level admission (decide_job). Each key
 * the file's map (n, may be NULL) leaves out comes from under, the
 * embedded policy's (may be NULL).
 */
static int
read_jobs(const struct ynode *n, const struct ynode *under, struct snapshot *s,
          struct load_error *err)
{
    static const char *const keys[] = {"repack", "runtimes", NULL};
    const struct ynode *v;

    if (n && (yamlread_kind(n, YNODE_MAP, "jobs", err) < 0 ||
              yamlread_keys(n, keys, "jobs", err) < 0))
        return -1;
    if (under && under->kind != YNODE_MAP)
        under = NULL;
    if ((v = n ? pick(n, under, "repack") : ynode_get(under, "repack")) &&
        read_bool(v, "repack", &s->repack, err) < 0)
        return -1;
    if ((v = n ? pick(n, under, "runtimes") : ynode_get(under, "runtimes")) &&
        read_runtimes(v, s, err) < 0)
        return -1;
    return 0;
}

/* Facts that must hold together, or the table contradicts itself. */
static int
check_type(const struct ynode *n, const struct instance_type *t,
           struct load_error *err)
{
    if ((t->count == 1) != (t->link == LINK_SINGLE)) {
        ynode_error(err, n,
                    "'%s': interconnect 'single' goes with count 1, and only "
                    "with it",
                    t->name);
        return -1;
    }
    if (t->nic_resource && t->nic_annotation) {
        ynode_error(err, n,
                    "'%s': NICs come by nicResource or by nicAnnotation, "
                    "not both",
                    t->name);
        return -1;
    }
    if ((t->nic_resource || t->nic_annotation) && t->efa == 0) {
        ynode_error(err, n,
                    "'%s' names how its NICs attach but has none (efa: 0)",
                    t->name);
        return -1;
    }
    if (t->gke_gpudirect != GPUDIRECT_NONE && t->nic_annotation == NULL) {
        ynode_error(err, n,
                    "'%s': gkeGPUDirect goes with the NICs' nicAnnotation",
                    t->name);
        return -1;
    }
    if (t->nics_need_evidence && type_nic_resource(t) == NULL) {
        ynode_error(err, n,
                    "'%s': nicsNeedEvidence holds back a NIC resource, and "
                    "the row has none (efa: 0 or nicAnnotation)",
                    t->name);
        return -1;
    }
    for (size_t i = 0; i < t->n_env; i++) {
        const char *name = t->env[i].name;
        const char *nic = type_nic_resource(t);

        if (strcmp(name, "FI_EFA_USE_DEVICE_RDMA") == 0 &&
            !t->gpudirect_rdma) {
            ynode_error(err, n,
                        "'%s' has no GPUDirect RDMA: FI_EFA_USE_DEVICE_RDMA "
                        "would break EFA there",
                        t->name);
            return -1;
        }
        /* libfabric's FI_* steer EFA; on other NICs they break NCCL. */
        if (strncmp(name, "FI_", 3) == 0 &&
            (nic == NULL || strcmp(nic, TABLE_NIC_DEFAULT) != 0)) {
            ynode_error(err, n, "'%s' has no EFA: %s is for EFA hosts only",
                        t->name, name);
            return -1;
        }
    }
    return 0;
}

static int
read_type(const struct ynode *n, struct instance_type *t,
          struct load_error *err)
{
    static const char *const keys[] = {
        "name",       "accelerator", "resource",
        "count",      "memory",      "interconnect",
        "nvlinkGBps", "efa",         "gpuDirectRDMA",
        "hostMemory", "shm",         "env",
        "nicResource", "nicAnnotation", "nicsNeedEvidence",
        "gkeGPUDirect", NULL};
    const struct ynode *v;
    const char *what = "an instance type";

    if (yamlread_kind(n, YNODE_MAP, what, err) < 0 ||
        yamlread_keys(n, keys, what, err) < 0)
        return -1;
    if ((v = yamlread_need(n, "name", what, err)) == NULL ||
        yamlread_string(v, "name", &t->name, err) < 0 ||
        (v = yamlread_need(n, "accelerator", what, err)) == NULL ||
        yamlread_string(v, "accelerator", &t->accelerator, err) < 0 ||
        (v = yamlread_need(n, "resource", what, err)) == NULL ||
        yamlread_string(v, "resource", &t->resource, err) < 0 ||
        (v = yamlread_need(n, "count", what, err)) == NULL ||
        read_int(v, "count", 1, 64, &t->count, err) < 0 ||
        (v = yamlread_need(n, "memory", what, err)) == NULL ||
        read_quantity(v, "memory", &t->memory, NULL, err) < 0 ||
        (v = yamlread_need(n, "efa", what, err)) == NULL ||
        read_int(v, "efa", 0, 64, &t->efa, err) < 0 ||
        (v = yamlread_need(n, "gpuDirectRDMA", what, err)) == NULL ||
        read_bool(v, "gpuDirectRDMA", &t->gpudirect_rdma, err) < 0 ||
        (v = yamlread_need(n, "hostMemory", what, err)) == NULL ||
        read_quantity(v, "hostMemory", &t->host_memory, NULL, err) < 0 ||
        (v = yamlread_need(n, "shm", what, err)) == NULL ||
        read_quantity(v, "shm", &t->shm, &t->shm_bytes, err) < 0)
        return -1;
    if ((v = yamlread_need(n, "interconnect", what, err)) == NULL ||
        yamlread_kind(v, YNODE_SCALAR, "interconnect", err) < 0)
        return -1;
    if (link_parse(v->scalar, &t->link) < 0) {
        ynode_error(err, v,
                    "unknown interconnect '%s' (single, pcie, nvlink, "
                    "nvswitch, neuronlink or unknown)",
                    v->scalar);
        return -1;
    }
    if ((v = ynode_get(n, "nicResource")) &&
        yamlread_string(v, "nicResource", &t->nic_resource, err) < 0)
        return -1;
    /* The default is kept as NULL, so the printer leaves it out. */
    if (t->nic_resource && strcmp(t->nic_resource, TABLE_NIC_DEFAULT) == 0) {
        free(t->nic_resource);
        t->nic_resource = NULL;
    }
    if ((v = ynode_get(n, "nicAnnotation")) &&
        yamlread_string(v, "nicAnnotation", &t->nic_annotation, err) < 0)
        return -1;
    if ((v = ynode_get(n, "gkeGPUDirect"))) {
        if (yamlread_kind(v, YNODE_SCALAR, "gkeGPUDirect", err) < 0)
            return -1;
        if (gpudirect_parse(v->scalar, &t->gke_gpudirect) < 0) {
            ynode_error(err, v,
                        "unknown gkeGPUDirect '%s' (tcpx, tcpxo or rdma)",
                        v->scalar);
            return -1;
        }
    }
    if ((v = ynode_get(n, "nicsNeedEvidence")) &&
        read_bool(v, "nicsNeedEvidence", &t->nics_need_evidence, err) < 0)
        return -1;
    if ((v = ynode_get(n, "nvlinkGBps")) &&
        read_int(v, "nvlinkGBps", 0, 100000, &t->nvlink_gbps, err) < 0)
        return -1;
    if ((v = ynode_get(n, "env")) && env_read_row(v, t, err) < 0)
        return -1;
    return check_type(n, t, err);
}

static int
read_types(const struct ynode *n, struct snapshot *s, struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SEQ, "instanceTypes", err) < 0)
        return -1;
    if ((s->types = calloc(n->n_items + 1, sizeof(*s->types))) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        struct instance_type *t = &s->types[s->n_types++];
        if (read_type(n->items[i], t, err) < 0)
            return -1;
        for (size_t j = 0; j + 1 < s->n_types; j++) {
            if (strcmp(s->types[j].name, t->name) == 0) {
                ynode_error(err, n->items[i], "instance type '%s' listed twice",
                            t->name);
                return -1;
            }
        }
    }
    return 0;
}

/* --- overlays: the file's rows over the embedded tables ------------- */

/* The name of a table row, or NULL when it has none to merge by. */
static const char *
row_name(const struct ynode *row)
{
    const struct ynode *v;

    if (row->kind != YNODE_MAP || (v = ynode_get(row, "name")) == NULL ||
        v->kind != YNODE_SCALAR)
        return NULL;
    return v->scalar;
}

static bool
lists_name(const struct ynode *seq, const char *name)
{
    for (size_t i = 0; seq && name && i < seq->n_items; i++) {
        const char *other = row_name(seq->items[i]);
        if (other && strcmp(other, name) == 0)
            return true;
    }
    return false;
}

/*
 * The rows of one table, as a list node whose items are borrowed: the
 * base rows whose name the file does not list, in their order, then the
 * file's rows in its order. out->items and *src are owned by the caller;
 * src says where each row came from. base may be NULL (nothing to merge
 * onto); file may be NULL (the key is not in the file).
 */
static int
merge_rows(const struct ynode *base, const struct ynode *file,
           bool file_embedded, struct ynode *out, struct row_source **src,
           struct load_error *err)
{
    const struct ynode *at = file ? file : base;
    size_t n = 0, cap = (base ? base->n_items : 0) +
                        (file ? file->n_items : 0);

    *out = (struct ynode){.kind = YNODE_SEQ, .line = at->line,
                          .column = at->column};
    if ((out->items = calloc(cap + 1, sizeof(*out->items))) == NULL ||
        (*src = calloc(cap + 1, sizeof(**src))) == NULL) {
        ynode_error(err, at, "out of memory");
        return -1;
    }
    for (size_t i = 0; base && i < base->n_items; i++) {
        if (lists_name(file, row_name(base->items[i])))
            continue;
        (*src)[n] = (struct row_source){true, base->items[i]->line};
        out->items[n++] = base->items[i];
    }
    for (size_t i = 0; file && i < file->n_items; i++) {
        (*src)[n] = (struct row_source){file_embedded, file->items[i]->line};
        out->items[n++] = file->items[i];
    }
    out->n_items = n;
    return 0;
}

/* One table: merged when there is a base, else the file's alone. */
static int
read_table(const struct ynode *root, const struct ynode *base,
           const char *key, bool embedded, struct snapshot *s,
           struct row_source **src, struct load_error *err)
{
    const struct ynode *file = ynode_get(root, key);
    const struct ynode *under = base ? ynode_get(base, key) : NULL;
    struct ynode merged = {0};
    int rc = -1;

    if (file && yamlread_kind(file, YNODE_SEQ, key, err) < 0)
        return -1;
    if (file == NULL && under == NULL) {
        if (strcmp(key, "instanceTypes") == 0) {
            ynode_error(err, root, "the policy needs '%s'", key);
            return -1;
        }
        return 0;
    }
    if (merge_rows(under, file, embedded, &merged, src, err) < 0)
        rc = -1;
    else if (strcmp(key, "instanceTypes") == 0)
        rc = read_types(&merged, s, err);
    else if (strcmp(key, "gpuProducts") == 0)
        rc = products_read(&merged, s, err);
    else
        rc = nodelabels_read(&merged, s, err);
    free(merged.items);
    return rc;
}

static int
read_base(const struct ynode *n, bool *empty, struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SCALAR, "base", err) < 0)
        return -1;
    if (strcmp(n->scalar, "embedded") != 0 && strcmp(n->scalar, "empty") != 0) {
        ynode_error(err, n, "base must be embedded or empty, not '%s'",
                    n->scalar);
        return -1;
    }
    *empty = strcmp(n->scalar, "empty") == 0;
    return 0;
}

static int
read_unknown(const struct ynode *n, enum unknown_action *out,
             struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SCALAR, "unknownInstanceType", err) < 0)
        return -1;
    if (strcmp(n->scalar, "warn") == 0)
        *out = UNKNOWN_WARN;
    else if (strcmp(n->scalar, "deny") == 0)
        *out = UNKNOWN_DENY;
    else {
        ynode_error(err, n,
                    "unknownInstanceType must be warn or deny, not '%s'",
                    n->scalar);
        return -1;
    }
    return 0;
}

/*
 * Top-level fields first, so namespaces inherit them wherever they sit;
 * the table before the sections that name its types. base is the
 * embedded policy the file is read over, or NULL (the embedded policy
 * itself, or a file that says `base: empty`); embedded says that root is
 * the embedded policy.
 */
static int
read_policy(const struct ynode *root, const struct ynode *base, bool embedded,
            struct snapshot *s, struct load_error *err)
{
    static const char *const keys[] = {
        "base",   "mode",       "unknownInstanceType", "optOut",
        "overrideUserValues",   "inject",              "namespaces",
        "jobs",   "instanceTypes",                     "gpuProducts",
        "envProfile",           "envProfiles",         "frameworks",
        "gkeNetworks",          "nodeLabels",          NULL};
    const struct ynode *v, *defaults = NULL;
    bool empty = false;

    if (yamlread_kind(root, YNODE_MAP, "the policy", err) < 0 ||
        yamlread_keys(root, keys, "the policy", err) < 0)
        return -1;
    if ((v = ynode_get(root, "base")) && read_base(v, &empty, err) < 0)
        return -1;
    if (base && base->kind == YNODE_MAP && !embedded)
        defaults = base;
    if (empty || embedded || (base && base->kind != YNODE_MAP))
        base = NULL;
    s->merged = base != NULL;
    if ((v = pick(root, base, "mode")) && read_mode(v, &s->mode, err) < 0)
        return -1;
    if ((v = pick(root, base, "unknownInstanceType")) &&
        read_unknown(v, &s->unknown, err) < 0)
        return -1;
    if ((v = pick(root, base, "optOut")) &&
        read_bool(v, "optOut", &s->allow_opt_out, err) < 0)
        return -1;
    if ((v = pick(root, base, "overrideUserValues")) &&
        read_bool(v, "overrideUserValues", &s->override_user, err) < 0)
        return -1;
    /* inject merges key by key: the embedded switches, then the file's. */
    if (base && (v = ynode_get(base, "inject")) &&
        read_inject(v, &s->inject, err) < 0)
        return -1;
    if ((v = ynode_get(root, "inject")) && read_inject(v, &s->inject, err) < 0)
        return -1;
    /* frameworks merges key by key too. */
    if (base && (v = ynode_get(base, "frameworks")) &&
        read_frameworks(v, s, err) < 0)
        return -1;
    if ((v = ynode_get(root, "frameworks")) && read_frameworks(v, s, err) < 0)
        return -1;
    if (read_table(root, base, "instanceTypes", embedded, s, &s->type_sources,
                   err) < 0)
        return -1;
    /* Profiles after the rows they add to; a file's list replaces. */
    if ((v = pick(root, base, "envProfiles")) &&
        env_profiles_read(v, s, err) < 0)
        return -1;
    if ((v = pick(root, base, "envProfile")) &&
        env_profile_apply(v, s, err) < 0)
        return -1;
    /* After the rows they name; a file's list replaces. */
    if ((v = pick(root, base, "gkeNetworks")) &&
        gkenet_read(v, s, &s->gke_networks, &s->n_gke_networks, err) < 0)
        return -1;
    if ((v = pick(root, base, "namespaces")) && read_namespaces(v, s, err) < 0)
        return -1;
    if ((ynode_get(root, "jobs") || (base && ynode_get(base, "jobs"))) &&
        read_jobs(ynode_get(root, "jobs"),
                  base ? ynode_get(base, "jobs") : NULL, s, err) < 0)
        return -1;
    if (read_table(root, base, "gpuProducts", embedded, s,
                   &s->product_sources, err) < 0)
        return -1;
    /* How nodes are read, not rows to start empty: a `base: empty` file
     * that does not say reads them as the embedded policy does. */
    if (!base && !ynode_get(root, "nodeLabels"))
        base = defaults;
    if (read_table(root, base, "nodeLabels", embedded, s, &s->scheme_sources,
                   err) < 0)
        return -1;
    return 0;
}

static uint64_t
fnv1a(const char *bytes, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)bytes[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static void
snapshot_free(struct snapshot *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_types; i++) {
        struct instance_type *t = &s->types[i];
        env_free_list(t->env, t->n_env);
        free(t->name);
        free(t->accelerator);
        free(t->resource);
        free(t->memory);
        free(t->host_memory);
        free(t->shm);
        free(t->nic_resource);
        free(t->nic_annotation);
    }
    free(s->types);
    env_profiles_free(s);
    products_free(s);
    nodelabels_free(s);
    for (size_t i = 0; i < s->n_namespaces; i++) {
        free(s->namespaces[i].name);
        free(s->namespaces[i].instance_type);
        gkenet_free(s->namespaces[i].gke_networks,
                    s->namespaces[i].n_gke_networks);
    }
    gkenet_free(s->gke_networks, s->n_gke_networks);
    free(s->namespaces);
    for (size_t i = 0; i < s->n_runtime_types; i++) {
        free(s->runtime_types[i].runtime);
        free(s->runtime_types[i].instance_type);
    }
    free(s->runtime_types);
    free(s->type_sources);
    free(s->product_sources);
    free(s->scheme_sources);
    free(s->origin);
    free(s);
}

/* Command-line overrides, applied on every parse: start-up and reload. */
static void
apply_opts(struct snapshot *s, const struct snapshot_opts *o)
{
    if (o && o->force_mode) {
        s->mode = o->mode;
        for (size_t i = 0; i < s->n_namespaces; i++)
            s->namespaces[i].mode = o->mode;
    }
    if (o && o->force_repack)
        s->repack = true;
}

/* Whether a file starts from empty tables: then the embedded is not read. */
static bool
says_empty(const struct ynode *root)
{
    const struct ynode *v;

    return root->kind == YNODE_MAP && (v = ynode_get(root, "base")) &&
           v->kind == YNODE_SCALAR && strcmp(v->scalar, "empty") == 0;
}

static struct snapshot *
parse(const char *bytes, size_t len, const char *origin,
      const struct snapshot_opts *opts, bool embedded, struct load_error *err)
{
    struct snapshot *s = NULL;
    struct ytree *tree, *base = NULL;

    if ((tree = ytree_parse(bytes, len, err)) == NULL)
        return NULL;
    if (tree->n_docs != 1) {
        ynode_error(err, tree->n_docs ? tree->docs[1] : NULL,
                    "a policy is one YAML document, found %zu", tree->n_docs);
        goto fail;
    }
    /* base: empty still takes nodeLabels from it, unless it gives them. */
    if (!embedded && (!says_empty(tree->docs[0]) ||
                      !ynode_get(tree->docs[0], "nodeLabels"))) {
        base = ytree_parse(policy_embedded,
                           (size_t)(policy_embedded_end - policy_embedded),
                           err);
        if (base == NULL || base->n_docs != 1) {
            ynode_error(err, NULL, "the embedded policy does not read");
            goto fail;
        }
    }
    if ((s = calloc(1, sizeof(*s))) == NULL ||
        (s->origin = strdup(origin)) == NULL) {
        ynode_error(err, NULL, "out of memory");
        goto fail;
    }
    s->refs = 1;
    s->digest = fnv1a(bytes, len);
    s->mode = MODE_ENFORCE;
    s->unknown = UNKNOWN_WARN;
    s->allow_opt_out = true;
    s->inject = (struct inject){true, true, true, true, true, true, false};
    for (int i = 1; i < FRAMEWORK_N; i++)
        s->frameworks[i] = FRAMEWORK_WARN;
    if (read_policy(tree->docs[0], base ? base->docs[0] : NULL, embedded, s,
                    err) < 0)
        goto fail;
    apply_opts(s, opts);
    ytree_free(base);
    ytree_free(tree);
    return s;
fail:
    snapshot_free(s);
    ytree_free(base);
    ytree_free(tree);
    return NULL;
}

struct snapshot *
snapshot_parse(const char *bytes, size_t len, const char *origin,
               const struct snapshot_opts *opts, struct load_error *err)
{
    return parse(bytes, len, origin, opts, false, err);
}

struct snapshot *
snapshot_parse_embedded(const struct snapshot_opts *opts,
                        struct load_error *err)
{
    return parse(policy_embedded,
                 (size_t)(policy_embedded_end - policy_embedded), "embedded",
                 opts, true, err);
}

struct snapshot *
snapshot_ref(struct snapshot *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void
snapshot_unref(struct snapshot *s)
{
    if (s == NULL)
        return;
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
        snapshot_free(s);
}

const struct instance_type *
snapshot_lookup(const struct snapshot *s, const char *name)
{
    /* SageMaker HyperPod labels nodes "ml.p4d.24xlarge". */
    if (strncmp(name, "ml.", 3) == 0)
        name += 3;
    for (size_t i = 0; i < s->n_types; i++)
        if (strcmp(s->types[i].name, name) == 0)
            return &s->types[i];
    return NULL;
}

static const struct namespace_policy *
namespace_find(const struct snapshot *s, const char *ns)
{
    for (size_t i = 0; ns && i < s->n_namespaces; i++)
        if (strcmp(s->namespaces[i].name, ns) == 0)
            return &s->namespaces[i];
    return NULL;
}

enum mode
snapshot_mode_for(const struct snapshot *s, const char *ns)
{
    const struct namespace_policy *n = namespace_find(s, ns);
    return n ? n->mode : s->mode;
}

const struct inject *
snapshot_inject_for(const struct snapshot *s, const char *ns)
{
    const struct namespace_policy *n = namespace_find(s, ns);
    return n ? &n->inject : &s->inject;
}

enum mode
snapshot_framework_mode(const struct snapshot *s, const char *ns,
                        enum framework fw)
{
    enum mode m = snapshot_mode_for(s, ns);

    if (fw <= FRAMEWORK_NONE || fw >= FRAMEWORK_N)
        return m;
    /* The modes run enforce < warn < audit in how little they do. */
    if (s->frameworks[fw] == FRAMEWORK_AUDIT)
        return MODE_AUDIT;
    if (s->frameworks[fw] == FRAMEWORK_WARN && m == MODE_ENFORCE)
        return MODE_WARN;
    return m;
}

bool
snapshot_opt_out_for(const struct snapshot *s, const char *ns)
{
    const struct namespace_policy *n = namespace_find(s, ns);
    return n ? n->allow_opt_out : s->allow_opt_out;
}

const char *
snapshot_job_type(const struct snapshot *s, const char *ns, const char *runtime)
{
    const struct namespace_policy *n = namespace_find(s, ns);

    for (size_t i = 0; runtime && i < s->n_runtime_types; i++)
        if (strcmp(s->runtime_types[i].runtime, runtime) == 0)
            return s->runtime_types[i].instance_type;
    return n ? n->instance_type : NULL;
}
