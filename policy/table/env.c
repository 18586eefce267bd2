/*
 * env.c - the env lists of the policy file and its opt-in env profiles.
 *
 * A variable is injected only where a current source says the images it
 * is for need it, so each one carries `versions` (the images) and
 * `source` (where that is written), and `topogate tables` prints both.
 * Variables that only old images need sit in a profile that no default
 * turns on (DESIGN.md, "env only where a current source says ...").
 */
#include "policy/table/env.h"
#include "policy/table/yamlread.h"

#include <stdlib.h>
#include <string.h>

static const char *const rows_names[] = {
    [ENV_ROWS_ALL] = "all",
    [ENV_ROWS_EFA] = "efa",
    [ENV_ROWS_EFA_GDR] = "efa-gdr",
};

const char *
env_rows_name(enum env_rows rows)
{
    return rows_names[rows];
}

bool
env_rows_fit(enum env_rows rows, const struct instance_type *t)
{
    const char *nic = type_nic_resource(t);
    bool efa = nic && strcmp(nic, TABLE_NIC_DEFAULT) == 0;

    switch (rows) {
    case ENV_ROWS_ALL:
        return true;
    case ENV_ROWS_EFA:
        return efa;
    case ENV_ROWS_EFA_GDR:
        return efa && t->gpudirect_rdma;
    }
    return false;
}

static int
read_rows(const struct ynode *n, enum env_rows *out, struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SCALAR, "rows", err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(rows_names) / sizeof(rows_names[0]); i++) {
        if (strcmp(n->scalar, rows_names[i]) == 0) {
            *out = (enum env_rows)i;
            return 0;
        }
    }
    ynode_error(err, n, "rows must be all, efa or efa-gdr, not '%s'",
                n->scalar);
    return -1;
}

/*
 * libfabric's FI_* steer EFA and break NCCL on other NICs, and device
 * RDMA without GPUDirect RDMA breaks EFA: a profile says so in rows.
 */
static int
check_rows(const struct ynode *n, const struct env_var *e,
           struct load_error *err)
{
    if (strcmp(e->name, "FI_EFA_USE_DEVICE_RDMA") == 0 &&
        e->rows != ENV_ROWS_EFA_GDR) {
        ynode_error(err, n,
                    "FI_EFA_USE_DEVICE_RDMA goes only to rows with EFA and "
                    "GPUDirect RDMA (rows: efa-gdr)");
        return -1;
    }
    if (strncmp(e->name, "FI_", 3) == 0 && e->rows == ENV_ROWS_ALL) {
        ynode_error(err, n, "%s is for EFA rows only (rows: efa or efa-gdr)",
                    e->name);
        return -1;
    }
    return 0;
}

/* One entry; profile says whether it is a profile's (then rows is read). */
static int
read_var(const struct ynode *item, bool profile, struct env_var *e,
         struct load_error *err)
{
    static const char *const row_keys[] = {"name",     "value",  "why",
                                           "versions", "source", NULL};
    static const char *const profile_keys[] = {
        "name", "value", "why", "versions", "source", "rows", NULL};
    static const char *const texts[] = {"name", "why", "versions", "source"};
    char **fields[] = {&e->name, &e->why, &e->versions, &e->source};
    const char *what = "an env entry";
    const struct ynode *v;

    if (yamlread_kind(item, YNODE_MAP, what, err) < 0 ||
        yamlread_keys(item, profile ? profile_keys : row_keys, what, err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        if ((v = yamlread_need(item, texts[i], what, err)) == NULL ||
            yamlread_string(v, texts[i], fields[i], err) < 0)
            return -1;
    }
    /* An empty value is a real value: keep it possible. */
    if ((v = yamlread_need(item, "value", what, err)) == NULL ||
        yamlread_kind(v, YNODE_SCALAR, "value", err) < 0)
        return -1;
    if ((e->value = strdup(v->scalar)) == NULL) {
        ynode_error(err, v, "out of memory");
        return -1;
    }
    if (!profile)
        return 0;
    if ((v = yamlread_need(item, "rows", what, err)) == NULL ||
        read_rows(v, &e->rows, err) < 0)
        return -1;
    return check_rows(item, e, err);
}

/* A list of entries into *env (owned, *n of them so far). 0 or -1. */
static int
read_list(const struct ynode *n, bool profile, struct env_var **env,
          size_t *count, struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SEQ, "env", err) < 0)
        return -1;
    if (n->n_items == 0)
        return 0;
    if (n->n_items > TABLE_MAX_ENV) {
        ynode_error(err, n, "env has %zu entries, more than %d", n->n_items,
                    TABLE_MAX_ENV);
        return -1;
    }
    if ((*env = calloc(n->n_items, sizeof(**env))) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        struct env_var *e = &(*env)[(*count)++];

        if (read_var(n->items[i], profile, e, err) < 0)
            return -1;
        for (size_t j = 0; j + 1 < *count; j++) {
            if (strcmp((*env)[j].name, e->name) == 0) {
                ynode_error(err, n->items[i], "env '%s' listed twice",
                            e->name);
                return -1;
            }
        }
    }
    return 0;
}

int
env_read_row(const struct ynode *n, struct instance_type *t,
             struct load_error *err)
{
    return read_list(n, false, &t->env, &t->n_env, err);
}

int
env_profiles_read(const struct ynode *n, struct snapshot *s,
                  struct load_error *err)
{
    static const char *const keys[] = {"name", "env", NULL};
    const char *what = "an env profile";

    if (yamlread_kind(n, YNODE_SEQ, "envProfiles", err) < 0)
        return -1;
    if (n->n_items == 0)
        return 0;
    if ((s->env_profiles = calloc(n->n_items, sizeof(*s->env_profiles))) ==
        NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        const struct ynode *item = n->items[i], *v;
        struct env_profile *p = &s->env_profiles[s->n_env_profiles++];

        if (yamlread_kind(item, YNODE_MAP, what, err) < 0 ||
            yamlread_keys(item, keys, what, err) < 0 ||
            (v = yamlread_need(item, "name", what, err)) == NULL ||
            yamlread_string(v, "name", &p->name, err) < 0)
            return -1;
        if (strcmp(p->name, "none") == 0) {
            ynode_error(err, v, "'none' is no profile's name: it turns "
                                "profiles off");
            return -1;
        }
        for (size_t j = 0; j + 1 < s->n_env_profiles; j++) {
            if (strcmp(s->env_profiles[j].name, p->name) == 0) {
                ynode_error(err, v, "env profile '%s' listed twice",
                            p->name);
                return -1;
            }
        }
        if ((v = yamlread_need(item, "env", what, err)) == NULL ||
            read_list(v, true, &p->env, &p->n_env, err) < 0)
            return -1;
    }
    return 0;
}

static bool
row_sets(const struct instance_type *t, const char *name)
{
    for (size_t i = 0; i < t->n_env; i++)
        if (strcmp(t->env[i].name, name) == 0)
            return true;
    return false;
}

/* A copy of profile p's variable e at the end of t->env. 0 or -1. */
static int
add_var(struct instance_type *t, const struct env_profile *p,
        const struct env_var *e)
{
    struct env_var *grown = realloc(t->env, (t->n_env + 1) * sizeof(*grown));
    struct env_var *to;

    if (grown == NULL)
        return -1;
    t->env = grown;
    to = &t->env[t->n_env++];
    *to = (struct env_var){.rows = e->rows, .profile = p->name};
    to->name = strdup(e->name);
    to->value = strdup(e->value);
    to->why = strdup(e->why);
    to->versions = strdup(e->versions);
    to->source = strdup(e->source);
    return to->name && to->value && to->why && to->versions && to->source
               ? 0
               : -1;
}

int
env_profile_apply(const struct ynode *n, struct snapshot *s,
                  struct load_error *err)
{
    const struct env_profile *p = NULL;

    if (yamlread_kind(n, YNODE_SCALAR, "envProfile", err) < 0)
        return -1;
    if (strcmp(n->scalar, "none") == 0)
        return 0;
    for (size_t i = 0; i < s->n_env_profiles && p == NULL; i++)
        if (strcmp(s->env_profiles[i].name, n->scalar) == 0)
            p = &s->env_profiles[i];
    if (p == NULL) {
        ynode_error(err, n, "envProfile '%s' is not in envProfiles (or say "
                            "none)",
                    n->scalar);
        return -1;
    }
    s->env_profile = p;
    for (size_t i = 0; i < s->n_types; i++) {
        struct instance_type *t = &s->types[i];

        for (size_t j = 0; j < p->n_env; j++) {
            if (!env_rows_fit(p->env[j].rows, t) ||
                row_sets(t, p->env[j].name))
                continue;
            if (t->n_env >= TABLE_MAX_ENV) {
                ynode_error(err, n,
                            "'%s' would get more than %d env variables "
                            "with envProfile '%s'",
                            t->name, TABLE_MAX_ENV, p->name);
                return -1;
            }
            if (add_var(t, p, &p->env[j]) < 0) {
                ynode_error(err, n, "out of memory");
                return -1;
            }
        }
    }
    return 0;
}

void
env_free_list(struct env_var *env, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(env[i].name);
        free(env[i].value);
        free(env[i].why);
        free(env[i].versions);
        free(env[i].source);
    }
    free(env);
}

void
env_profiles_free(struct snapshot *s)
{
    for (size_t i = 0; i < s->n_env_profiles; i++) {
        free(s->env_profiles[i].name);
        env_free_list(s->env_profiles[i].env, s->env_profiles[i].n_env);
    }
    free(s->env_profiles);
}
