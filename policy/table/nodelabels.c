/*
 * nodelabels.c - the nodeLabels section of the policy: read, checked as
 * strictly as the rows (an unknown key, a name twice, a key the API
 * would refuse are errors at their line), and flattened into the two
 * lists placement_kind() walks.
 */
#include "policy/table/nodelabels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/labelname.h"
#include "policy/table/snapshot.h"
#include "policy/table/yamlread.h"

const char *const nodelabels_attrs[NODELABELS_ATTRS] = {
    "family",    "size",     "category",        "generation",
    "gpu-count", "gpu-name", "gpu-manufacturer"};

/* A list of label keys into *out and *n_out (owned by the entry). */
static int
read_keys(const struct ynode *n, const char *what, const char *scheme,
          char ***out, size_t *n_out, struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SEQ, what, err) < 0)
        return -1;
    if ((*out = calloc(n->n_items + 1, sizeof(**out))) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        const struct ynode *v = n->items[i];
        char **key = &(*out)[(*n_out)++];

        if (yamlread_string(v, "a label key", key, err) < 0)
            return -1;
        if (!label_key_valid(*key)) {
            ynode_error(err, v, "'%s': '%s' is not a label key", scheme, *key);
            return -1;
        }
        for (size_t j = 0; j + 1 < *n_out; j++)
            if (strcmp((*out)[j], *key) == 0) {
                ynode_error(err, v, "'%s': %s key '%s' listed twice", scheme,
                            what, *key);
                return -1;
            }
    }
    return 0;
}

/* instanceLabelPrefix: each of its labels a key the API accepts. */
static int
read_prefix(const struct ynode *v, struct label_scheme *l,
            const struct snapshot *s, struct load_error *err)
{
    size_t prefixes = 0;
    char key[320];

    if (yamlread_string(v, "instanceLabelPrefix", &l->attr_prefix, err) < 0)
        return -1;
    for (size_t i = 0; i < NODELABELS_ATTRS; i++) {
        snprintf(key, sizeof(key), "%s%s", l->attr_prefix, nodelabels_attrs[i]);
        if (!label_key_valid(key)) {
            ynode_error(err, v,
                        "'%s': instanceLabelPrefix '%s' makes '%s', not a "
                        "label key",
                        l->name, l->attr_prefix, key);
            return -1;
        }
    }
    for (size_t i = 0; i < s->n_schemes; i++) {
        const char *other = s->schemes[i].attr_prefix;
        if (&s->schemes[i] == l || other == NULL)
            continue;
        prefixes++;
        if (strcmp(other, l->attr_prefix) == 0) {
            ynode_error(err, v, "instanceLabelPrefix '%s' listed twice",
                        l->attr_prefix);
            return -1;
        }
    }
    if (prefixes >= NODELABELS_PREFIXES) {
        ynode_error(err, v, "more than %d instanceLabelPrefix entries",
                    NODELABELS_PREFIXES);
        return -1;
    }
    return 0;
}

static int
read_scheme(const struct ynode *n, struct label_scheme *l,
            const struct snapshot *s, struct load_error *err)
{
    static const char *const keys[] = {
        "name", "source", "instanceType", "gpuProduct", "instanceLabelPrefix",
        NULL};
    const char *what = "a nodeLabels entry";
    const struct ynode *v;

    if (yamlread_kind(n, YNODE_MAP, what, err) < 0 ||
        yamlread_keys(n, keys, what, err) < 0 ||
        (v = yamlread_need(n, "name", what, err)) == NULL ||
        yamlread_string(v, "name", &l->name, err) < 0)
        return -1;
    for (size_t i = 0; i < s->n_schemes; i++)
        if (&s->schemes[i] != l && strcmp(s->schemes[i].name, l->name) == 0) {
            ynode_error(err, v, "nodeLabels '%s' listed twice", l->name);
            return -1;
        }
    if ((v = yamlread_need(n, "source", what, err)) == NULL ||
        yamlread_string(v, "source", &l->source, err) < 0)
        return -1;
    if ((v = ynode_get(n, "instanceType")) &&
        read_keys(v, "instanceType", l->name, &l->instance_type,
                  &l->n_instance_type, err) < 0)
        return -1;
    if ((v = ynode_get(n, "gpuProduct")) &&
        read_keys(v, "gpuProduct", l->name, &l->gpu_product, &l->n_gpu_product,
                  err) < 0)
        return -1;
    if ((v = ynode_get(n, "instanceLabelPrefix")) &&
        read_prefix(v, l, s, err) < 0)
        return -1;
    if (l->n_instance_type + l->n_gpu_product == 0 && !l->attr_prefix) {
        ynode_error(err, n,
                    "'%s': nodeLabels entry names no instanceType or "
                    "gpuProduct key",
                    l->name);
        return -1;
    }
    return 0;
}

/* Each entry's keys of one kind, in order, once: borrowed, NULL-ended. */
static int
flatten(const struct snapshot *s, bool products, const char ***out,
        size_t *n_out)
{
    size_t cap = 0;

    for (size_t i = 0; i < s->n_schemes; i++)
        cap += products ? s->schemes[i].n_gpu_product
                        : s->schemes[i].n_instance_type;
    if ((*out = calloc(cap + 1, sizeof(**out))) == NULL)
        return -1;
    for (size_t i = 0; i < s->n_schemes; i++) {
        const struct label_scheme *l = &s->schemes[i];
        char *const *keys = products ? l->gpu_product : l->instance_type;
        size_t n = products ? l->n_gpu_product : l->n_instance_type;

        for (size_t j = 0; j < n; j++) {
            size_t k = 0;
            while (k < *n_out && strcmp((*out)[k], keys[j]) != 0)
                k++;
            if (k == *n_out)
                (*out)[(*n_out)++] = keys[j];
        }
    }
    return 0;
}

static int
attr_key_cmp(const void *a, const void *b)
{
    return strcmp(((const struct attr_key *)a)->key,
                  ((const struct attr_key *)b)->key);
}

/* Every prefix's labels, sorted by key, into s->attr_keys (owned). */
static int
attr_keys(struct snapshot *s)
{
    size_t n = 0;

    for (size_t i = 0; i < s->n_schemes; i++)
        n += s->schemes[i].attr_prefix ? NODELABELS_ATTRS : 0;
    if ((s->attr_keys = calloc(n + 1, sizeof(*s->attr_keys))) == NULL)
        return -1;
    for (size_t i = 0; i < s->n_schemes; i++) {
        const char *prefix = s->schemes[i].attr_prefix;
        if (prefix == NULL)
            continue;
        s->attr_prefixes[s->n_attr_prefixes++] = prefix;
        for (int a = 0; a < NODELABELS_ATTRS; a++) {
            struct attr_key *k = &s->attr_keys[s->n_attr_keys];
            if (asprintf(&k->key, "%s%s", prefix, nodelabels_attrs[a]) < 0)
                return -1;
            k->attr = a;
            s->n_attr_keys++;
        }
    }
    qsort(s->attr_keys, s->n_attr_keys, sizeof(*s->attr_keys), attr_key_cmp);
    return 0;
}

bool
nodelabels_prefixed(const struct snapshot *s, const char *key)
{
    for (size_t i = 0; i < s->n_attr_prefixes; i++)
        if (strncmp(key, s->attr_prefixes[i], strlen(s->attr_prefixes[i])) == 0)
            return true;
    return false;
}

int
nodelabels_read(const struct ynode *n, struct snapshot *s,
                struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SEQ, "nodeLabels", err) < 0)
        return -1;
    if (n->n_items &&
        (s->schemes = calloc(n->n_items, sizeof(*s->schemes))) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    /* n_schemes counts the entry being read, so nodelabels_free() frees
     * it on failure. */
    for (size_t i = 0; i < n->n_items; i++)
        if (read_scheme(n->items[i], &s->schemes[s->n_schemes++], s, err) < 0)
            return -1;
    if (flatten(s, false, &s->type_keys, &s->n_type_keys) < 0 ||
        flatten(s, true, &s->product_keys, &s->n_product_keys) < 0 ||
        attr_keys(s) < 0) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    return 0;
}

static void
free_keys(char **keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
}

void
nodelabels_free(struct snapshot *s)
{
    for (size_t i = 0; i < s->n_schemes; i++) {
        struct label_scheme *l = &s->schemes[i];

        free(l->name);
        free(l->source);
        free(l->attr_prefix);
        free_keys(l->instance_type, l->n_instance_type);
        free_keys(l->gpu_product, l->n_gpu_product);
    }
    for (size_t i = 0; i < s->n_attr_keys; i++)
        free(s->attr_keys[i].key);
    free(s->attr_keys);
    free(s->schemes);
    free(s->type_keys);
    free(s->product_keys);
    s->schemes = NULL;
    s->type_keys = s->product_keys = NULL;
    s->attr_keys = NULL;
    s->n_schemes = s->n_type_keys = s->n_product_keys = 0;
    s->n_attr_keys = s->n_attr_prefixes = 0;
}
