/*
 * products.c - the gpuProducts table of the policy: read, looked up by a
 * node's label value, and asked how a node of N such GPUs joins them.
 *
 * The reader is as strict as snapshot.c's: an unknown key, a duplicated
 * label value or overlapping GPU counts are errors at their line, because
 * a table that silently answers two ways is worse than one that refuses
 * to load.
 */
#include "policy/table/products.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/k8s/quantity.h"
#include "policy/table/snapshot.h"
#include "policy/table/yamlread.h"

/* --- what a label value may be ------------------------------------------ */

/*
 * GFD appends "-MIG-<profile>" under the MIG single strategy and "-SHARED"
 * to time-sliced GPUs it does not rename [GFD-README][GFD-RES]: the count
 * beside such a value counts slices, not GPUs.
 */
static bool
names_slices(const char *value)
{
    size_t len = strlen(value), n = strlen("-SHARED");

    return strcasestr(value, "-MIG-") != NULL ||
           (len >= n && strcasecmp(value + len - n, "-SHARED") == 0);
}

/* "8", "2-8" or "2+" into [min, max]; -1 for anything else. */
static int
parse_gpus(const char *text, int *min, int *max)
{
    char *end;
    long a, b;

    /* Digits first: strtol alone would take " 8" and "+8". */
    if (!isdigit((unsigned char)text[0]))
        return -1;
    a = strtol(text, &end, 10);
    if (a < 2 || a > PRODUCT_GPUS_MAX)
        return -1;
    if (*end == '\0') {
        b = a;
    } else if (strcmp(end, "+") == 0) {
        b = PRODUCT_GPUS_MAX;
    } else if (*end == '-') {
        const char *from = end + 1;
        if (!isdigit((unsigned char)from[0]))
            return -1;
        b = strtol(from, &end, 10);
        if (*end != '\0' || b <= a || b > PRODUCT_GPUS_MAX)
            return -1;
    } else {
        return -1;
    }
    *min = (int)a;
    *max = (int)b;
    return 0;
}

/* --- the table ------------------------------------------------------------ */

static int
read_labels(const struct ynode *n, struct gpu_product *p,
            const struct snapshot *s, struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SEQ, "labels", err) < 0)
        return -1;
    if (n->n_items == 0) {
        ynode_error(err, n, "'%s': labels must name at least one value",
                    p->name);
        return -1;
    }
    if ((p->labels = calloc(n->n_items, sizeof(*p->labels))) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        const struct ynode *v = n->items[i];
        const struct gpu_product *other;
        char **label = &p->labels[p->n_labels++];

        if (yamlread_string(v, "a label value", label, err) < 0)
            return -1;
        if (names_slices(*label)) {
            ynode_error(err, v,
                        "label value '%s' names MIG or shared slices, "
                        "which never match a product",
                        *label);
            return -1;
        }
        /* One value, one product: the lookup ignores case. */
        for (size_t j = 0; j + 1 < p->n_labels; j++) {
            if (strcasecmp(p->labels[j], *label) == 0) {
                ynode_error(err, v, "label value '%s' listed twice", *label);
                return -1;
            }
        }
        if ((other = snapshot_product(s, *label)) != NULL && other != p) {
            ynode_error(err, v, "label value '%s' already names '%s'", *label,
                        other->name);
            return -1;
        }
    }
    return 0;
}

static int
read_links(const struct ynode *n, struct gpu_product *p, struct load_error *err)
{
    static const char *const keys[] = {"gpus", "interconnect", NULL};
    const char *what = "a links entry";

    if (yamlread_kind(n, YNODE_SEQ, "links", err) < 0)
        return -1;
    if (n->n_items == 0)
        return 0;
    if ((p->links = calloc(n->n_items, sizeof(*p->links))) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        const struct ynode *item = n->items[i], *v;
        struct product_link *l = &p->links[p->n_links++];

        if (yamlread_kind(item, YNODE_MAP, what, err) < 0 ||
            yamlread_keys(item, keys, what, err) < 0 ||
            (v = yamlread_need(item, "gpus", what, err)) == NULL ||
            yamlread_kind(v, YNODE_SCALAR, "gpus", err) < 0)
            return -1;
        if (parse_gpus(v->scalar, &l->min, &l->max) < 0) {
            ynode_error(err, v,
                        "gpus must be a count from 2 to %d, a range such as "
                        "2-8, or a count and up such as 2+, not '%s'",
                        PRODUCT_GPUS_MAX, v->scalar);
            return -1;
        }
        for (size_t j = 0; j + 1 < p->n_links; j++) {
            if (l->min <= p->links[j].max && p->links[j].min <= l->max) {
                ynode_error(err, v, "'%s': gpus '%s' overlaps an earlier entry",
                            p->name, v->scalar);
                return -1;
            }
        }
        if ((v = yamlread_need(item, "interconnect", what, err)) == NULL ||
            yamlread_kind(v, YNODE_SCALAR, "interconnect", err) < 0)
            return -1;
        if (link_parse(v->scalar, &l->link) < 0 || l->link == LINK_SINGLE) {
            ynode_error(err, v,
                        "interconnect of several GPUs must be pcie, nvlink, "
                        "nvswitch, neuronlink or unknown, not '%s'",
                        v->scalar);
            return -1;
        }
    }
    return 0;
}

static int
read_product(const struct ynode *n, struct gpu_product *p,
             const struct snapshot *s, struct load_error *err)
{
    static const char *const keys[] = {
        "name", "accelerator", "memory", "nvlinkGBps", "labels", "links", NULL};
    const char *what = "a GPU product";
    const struct ynode *v;
    double bytes;

    if (yamlread_kind(n, YNODE_MAP, what, err) < 0 ||
        yamlread_keys(n, keys, what, err) < 0 ||
        (v = yamlread_need(n, "name", what, err)) == NULL ||
        yamlread_string(v, "name", &p->name, err) < 0)
        return -1;
    for (size_t i = 0; i < s->n_products; i++) {
        if (&s->products[i] != p && strcmp(s->products[i].name, p->name) == 0) {
            ynode_error(err, v, "GPU product '%s' listed twice", p->name);
            return -1;
        }
    }
    if ((v = yamlread_need(n, "accelerator", what, err)) == NULL ||
        yamlread_string(v, "accelerator", &p->accelerator, err) < 0)
        return -1;
    if ((v = ynode_get(n, "memory"))) {
        if (yamlread_string(v, "memory", &p->memory, err) < 0)
            return -1;
        if (quantity_parse(p->memory, &bytes) < 0 || bytes < 1) {
            ynode_error(err, v,
                        "memory must be a quantity such as 80Gi, "
                        "not '%s'",
                        p->memory);
            return -1;
        }
    }
    if ((v = ynode_get(n, "nvlinkGBps"))) {
        char *end;
        long gbps;

        if (yamlread_kind(v, YNODE_SCALAR, "nvlinkGBps", err) < 0)
            return -1;
        gbps = strtol(v->scalar, &end, 10);
        if (!v->plain || end == v->scalar || *end != '\0' || gbps < 0 ||
            gbps > 100000) {
            ynode_error(err, v,
                        "nvlinkGBps must be a whole number from 0 to 100000, "
                        "not '%s'",
                        v->scalar);
            return -1;
        }
        p->nvlink_gbps = (int)gbps;
    }
    if ((v = yamlread_need(n, "labels", what, err)) == NULL ||
        read_labels(v, p, s, err) < 0)
        return -1;
    if ((v = ynode_get(n, "links")) && read_links(v, p, err) < 0)
        return -1;
    return 0;
}

int
products_read(const struct ynode *n, struct snapshot *s, struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SEQ, "gpuProducts", err) < 0)
        return -1;
    if (n->n_items == 0)
        return 0;
    if ((s->products = calloc(n->n_items, sizeof(*s->products))) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    /*
     * n_products counts the entry being read, so products_free() frees
     * it on failure; its own labels are checked against each other apart.
     */
    for (size_t i = 0; i < n->n_items; i++)
        if (read_product(n->items[i], &s->products[s->n_products++], s, err) <
            0)
            return -1;
    return 0;
}

void
products_free(struct snapshot *s)
{
    for (size_t i = 0; i < s->n_products; i++) {
        struct gpu_product *p = &s->products[i];

        for (size_t j = 0; j < p->n_labels; j++)
            free(p->labels[j]);
        free(p->labels);
        free(p->links);
        free(p->name);
        free(p->accelerator);
        free(p->memory);
    }
    free(s->products);
    s->products = NULL;
    s->n_products = 0;
}

/* --- lookups ----------------------------------------------------------- */

const struct gpu_product *
snapshot_product(const struct snapshot *s, const char *label_value)
{
    if (label_value == NULL || names_slices(label_value))
        return NULL;
    for (size_t i = 0; i < s->n_products; i++) {
        const struct gpu_product *p = &s->products[i];

        for (size_t j = 0; j < p->n_labels; j++)
            if (p->labels[j] && strcasecmp(p->labels[j], label_value) == 0)
                return p;
    }
    return NULL;
}

bool
product_link(const struct gpu_product *p, int gpu_count, enum interconnect *out)
{
    if (gpu_count < 1)
        return false;
    if (gpu_count == 1) {
        *out = LINK_SINGLE;
        return true;
    }
    for (size_t i = 0; i < p->n_links; i++) {
        const struct product_link *l = &p->links[i];

        if (gpu_count >= l->min && gpu_count <= l->max) {
            if (l->link == LINK_UNKNOWN)
                return false;
            *out = l->link;
            return true;
        }
    }
    return false;
}
