/*
 * gkenet.c - the policy's gkeNetworks: which GKE networks a pod on a
 * GPUDirect machine type attaches, by interface.
 *
 * A pod names them in two annotations, networking.gke.io/default-interface
 * and networking.gke.io/interfaces, a JSON list of {interfaceName,
 * network} (GoogleCloudPlatform/container-engine-accelerators
 * gpudirect-tcpx/nccl-test-latest.yaml, gpudirect-tcpxo/
 * nccl-test-latest.yaml, gpudirect-rdma/nccl-test.yaml). The network
 * names are the cluster's own (GKE Network objects), so they come only
 * from here.
 */
#include "policy/table/gkenet.h"

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "policy/table/snapshot.h"
#include "policy/table/yamlread.h"

/* Names that need no escaping in JSON or YAML, as GKE's are. */
static bool
name_ok(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789._-",
                    *s))
            return false;
    return true;
}

static int
read_name(const struct ynode *n, const char *what, char **out,
          struct load_error *err)
{
    if (yamlread_string(n, what, out, err) < 0)
        return -1;
    if (!name_ok(*out)) {
        ynode_error(err, n,
                    "%s must be letters, digits, '.', '_' or '-', not '%s'",
                    what, *out);
        return -1;
    }
    return 0;
}

static int
read_interfaces(const struct ynode *n, struct gke_networks *g,
                struct load_error *err)
{
    static const char *const keys[] = {"interfaceName", "network", NULL};
    struct strbuf sb = {0};

    if (yamlread_kind(n, YNODE_SEQ, "interfaces", err) < 0)
        return -1;
    if (n->n_items == 0) {
        ynode_error(err, n, "'%s': interfaces needs at least one",
                    g->instance_type);
        return -1;
    }
    if ((g->ifs = calloc(n->n_items, sizeof(*g->ifs))) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        const struct ynode *item = n->items[i], *v;
        struct gke_interface *f = &g->ifs[g->n_ifs++];

        if (yamlread_kind(item, YNODE_MAP, "an interface", err) < 0 ||
            yamlread_keys(item, keys, "an interface", err) < 0 ||
            (v = yamlread_need(item, "interfaceName", "an interface", err)) ==
                NULL ||
            read_name(v, "interfaceName", &f->name, err) < 0 ||
            (v = yamlread_need(item, "network", "an interface", err)) == NULL ||
            read_name(v, "network", &f->network, err) < 0)
            goto fail;
        for (size_t j = 0; j + 1 < g->n_ifs; j++) {
            if (strcmp(g->ifs[j].name, f->name) == 0) {
                ynode_error(err, item, "'%s': interfaceName '%s' twice",
                            g->instance_type, f->name);
                goto fail;
            }
        }
        strbuf_printf(&sb, "%s{\"interfaceName\":\"%s\",\"network\":\"%s\"}",
                      i ? "," : "[", f->name, f->network);
    }
    strbuf_puts(&sb, "]");
    if ((g->annotation = strbuf_take(&sb)) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    return 0;
fail:
    strbuf_free(&sb);
    return -1;
}

int
gkenet_read(const struct ynode *n, const struct snapshot *s,
            struct gke_networks **out, size_t *n_out, struct load_error *err)
{
    static const char *const keys[] = {"instanceType", "interfaces", NULL};

    gkenet_free(*out, *n_out);
    *out = NULL;
    *n_out = 0;
    if (yamlread_kind(n, YNODE_SEQ, "gkeNetworks", err) < 0)
        return -1;
    if (n->n_items == 0)
        return 0;
    if ((*out = calloc(n->n_items, sizeof(**out))) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n->n_items; i++) {
        const struct ynode *item = n->items[i], *v;
        struct gke_networks *g = &(*out)[(*n_out)++];
        const struct instance_type *t;

        if (yamlread_kind(item, YNODE_MAP, "a gkeNetworks entry", err) < 0 ||
            yamlread_keys(item, keys, "a gkeNetworks entry", err) < 0 ||
            (v = yamlread_need(item, "instanceType", "a gkeNetworks entry",
                               err)) == NULL ||
            yamlread_string(v, "instanceType", &g->instance_type, err) < 0)
            return -1;
        t = snapshot_lookup(s, g->instance_type);
        if (t == NULL || t->nic_annotation == NULL) {
            ynode_error(err, v,
                        "instanceType '%s' is not a row whose NICs come by "
                        "nicAnnotation",
                        g->instance_type);
            return -1;
        }
        for (size_t j = 0; j + 1 < *n_out; j++) {
            if (strcmp((*out)[j].instance_type, g->instance_type) == 0) {
                ynode_error(err, v, "instanceType '%s' listed twice",
                            g->instance_type);
                return -1;
            }
        }
        if ((v = yamlread_need(item, "interfaces", "a gkeNetworks entry",
                               err)) == NULL ||
            read_interfaces(v, g, err) < 0)
            return -1;
    }
    return 0;
}

void
gkenet_free(struct gke_networks *list, size_t n)
{
    for (size_t i = 0; list && i < n; i++) {
        for (size_t j = 0; j < list[i].n_ifs; j++) {
            free(list[i].ifs[j].name);
            free(list[i].ifs[j].network);
        }
        free(list[i].ifs);
        free(list[i].instance_type);
        free(list[i].annotation);
    }
    free(list);
}

const struct gke_networks *
snapshot_gke_networks(const struct snapshot *s, const char *ns,
                      const char *type)
{
    const struct gke_networks *list = s->gke_networks;
    size_t n = s->n_gke_networks;

    for (size_t i = 0; ns && i < s->n_namespaces; i++) {
        if (strcmp(s->namespaces[i].name, ns) == 0 &&
            s->namespaces[i].gke_networks_set) {
            list = s->namespaces[i].gke_networks;
            n = s->namespaces[i].n_gke_networks;
        }
    }
    for (size_t i = 0; type && i < n; i++)
        if (strcmp(list[i].instance_type, type) == 0)
            return &list[i];
    return NULL;
}
