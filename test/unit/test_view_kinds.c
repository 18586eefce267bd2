/*
 * test_view_kinds.c - what a kind of node is keyed on (policy/view/view.c):
 * labels that differ on every node (known by name, or found by counting)
 * and node-condition taints do not split kinds; labels that group nodes
 * (pools, zones, 500 node groups) still do; every node is counted past
 * VIEW_KINDS_MAX; a
 * list read into an index of its own replaces the old one whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/view/view.h"
#include "test/unit/check.h"

/* A GPU node of pool `pool` (of 5), number i: the labels of an EKS node
 * with GPU Feature Discovery, one unique to the node when serial, and a
 * not-ready taint when not_ready. */
static cJSON *
node(int i, int pool, bool serial, bool not_ready)
{
    static const char *const types[] = {"p5.48xlarge", "p5.48xlarge",
                                        "p4d.24xlarge", "g5.12xlarge",
                                        "g6e.48xlarge"};
    cJSON *n = cJSON_CreateObject(), *md, *labels, *spec, *taints, *t, *alloc;
    char name[64], v[64];

    cJSON_AddStringToObject(n, "kind", "Node");
    md = cJSON_AddObjectToObject(n, "metadata");
    snprintf(name, sizeof(name), "node-%06d", i);
    cJSON_AddStringToObject(md, "name", name);
    labels = cJSON_AddObjectToObject(md, "labels");
    cJSON_AddStringToObject(labels, "kubernetes.io/hostname", name);
    snprintf(v, sizeof(v), "pool-%d", pool);
    cJSON_AddStringToObject(labels, "eks.amazonaws.com/nodegroup", v);
    cJSON_AddStringToObject(labels, "node.kubernetes.io/instance-type",
                            types[pool % 5]);
    cJSON_AddStringToObject(labels, "topology.kubernetes.io/zone",
                            "us-east-1a");
    snprintf(v, sizeof(v), "%d", 1760000000 + i);
    cJSON_AddStringToObject(labels, "nvidia.com/gfd.timestamp", v);
    if (serial) {
        snprintf(v, sizeof(v), "SN%07d", i);
        cJSON_AddStringToObject(labels, "example.com/node-serial", v);
    }
    spec = cJSON_AddObjectToObject(n, "spec");
    taints = cJSON_AddArrayToObject(spec, "taints");
    t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "key", "nvidia.com/gpu");
    cJSON_AddStringToObject(t, "effect", "NoSchedule");
    cJSON_AddItemToArray(taints, t);
    if (not_ready) {
        t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "key", "node.kubernetes.io/not-ready");
        cJSON_AddStringToObject(t, "effect", "NoExecute");
        cJSON_AddItemToArray(taints, t);
    }
    alloc = cJSON_AddObjectToObject(cJSON_AddObjectToObject(n, "status"),
                                    "allocatable");
    cJSON_AddStringToObject(alloc, "nvidia.com/gpu", pool == 3 ? "4" : "8");
    return n;
}

static int
put(struct view_index *x, cJSON *n)
{
    int rc = view_index_put_node(x, n);

    cJSON_Delete(n);
    return rc;
}

static const char *
label(const struct node_kind *k, const char *key)
{
    for (size_t i = 0; i < k->n_labels; i++)
        if (strcmp(k->labels[i].key, key) == 0)
            return k->labels[i].value;
    return NULL;
}

/* 5,000 GPU nodes of 5 pools, each with a label of its own (and GFD's
 * timestamp, and one in 97 not ready): 5 kinds, as there are pools. */
static void
unique_labels_do_not_split(void)
{
    struct view_index *x = view_index_new();
    struct view *v;

    for (int i = 0; i < 5000; i++)
        CHECK_INT(put(x, node(i, i % 5, true, i % 97 == 0)), 1);
    v = view_build(x);
    CHECK_INT(v->n_nodes, 5000);
    CHECK_INT(v->n_kinds, 5);
    CHECK(!v->too_many);
    CHECK_INT(v->n_per_node, 1);
    CHECK_STR(v->n_per_node ? v->per_node[0] : NULL,
              "example.com/node-serial");
    for (size_t i = 0; i < v->n_kinds; i++) {
        const struct node_kind *k = &v->kinds[i];

        CHECK_INT(k->nodes, 1000);
        CHECK_STR(label(k, "example.com/node-serial"), VIEW_PER_NODE_VALUE);
        CHECK(label(k, "nvidia.com/gfd.timestamp") == NULL);
        CHECK(label(k, "kubernetes.io/hostname") == NULL);
        CHECK_INT(k->n_taints, 1); /* nvidia.com/gpu; not-ready left out */
    }
    view_unref(v);
    /* A new node of a known pool with a new serial joins its kind. */
    CHECK_INT(put(x, node(5000, 2, true, false)), 1);
    v = view_build(x);
    CHECK_INT(v->n_kinds, 5);
    CHECK_INT(v->n_nodes, 5001);
    view_unref(v);
    view_index_free(x);
}

/* A not-ready taint that comes and goes is a heartbeat, not a change. */
static void
condition_taints_come_and_go(void)
{
    struct view_index *x = view_index_new();

    CHECK_INT(put(x, node(1, 0, false, false)), 1);
    CHECK_INT(put(x, node(1, 0, false, true)), 0);
    CHECK_INT(put(x, node(1, 0, false, false)), 0);
    view_index_free(x);
}

/* Labels that group nodes keep splitting them: two zones of 20 nodes. */
static void
grouping_labels_still_split(void)
{
    struct view_index *x = view_index_new();
    struct view *v;

    for (int i = 0; i < 40; i++) {
        cJSON *n = node(i, 0, false, false);
        cJSON *l = cJSON_GetObjectItem(cJSON_GetObjectItem(n, "metadata"),
                                       "labels");
        cJSON_ReplaceItemInObject(
            l, "topology.kubernetes.io/zone",
            cJSON_CreateString(i % 2 ? "us-east-1a" : "us-east-1b"));
        CHECK_INT(put(x, n), 1);
    }
    v = view_build(x);
    CHECK_INT(v->n_kinds, 2);
    CHECK_INT(v->n_per_node, 0);
    view_unref(v);
    view_index_free(x);
}

/* Past VIEW_KINDS_MAX the view falls back, and still counts every node:
 * two labels of 30 values each (900 kinds, neither with more values
 * than a view can use, so neither is dropped). */
static void
too_many_kinds_counts_every_node(void)
{
    struct view_index *x = view_index_new();
    struct view *v;

    for (int i = 0; i < 1800; i++) {
        cJSON *n = node(i, 0, false, false);
        cJSON *l =
            cJSON_GetObjectItem(cJSON_GetObjectItem(n, "metadata"), "labels");
        char a[32], b[32];

        snprintf(a, sizeof(a), "row-%d", i % 30);
        snprintf(b, sizeof(b), "slot-%d", i / 30 % 30);
        cJSON_AddStringToObject(l, "example.com/row", a);
        cJSON_AddStringToObject(l, "example.com/slot", b);
        CHECK_INT(put(x, n), 1);
    }
    v = view_build(x);
    CHECK(v->too_many);
    CHECK_INT(v->n_kinds, VIEW_KINDS_MAX);
    CHECK_INT(v->n_nodes, 1800);
    CHECK_INT(v->n_per_node, 0);
    view_unref(v);
    view_index_free(x);
}

/* 500 node groups of 20 nodes, interleaved as IP-ordered names are, each
 * node with a serial of its own: the serial is found (more values than a
 * view can use), the node groups are not (500), in any order. */
static void
many_pools_are_not_per_node(void)
{
    struct view_index *x = view_index_new();
    struct view *v;

    for (int i = 0; i < 10000; i++) {
        cJSON *n = node(i, 0, true, false);
        char pool[32];

        snprintf(pool, sizeof(pool), "group-%d", i % 500);
        cJSON_ReplaceItemInObject(
            cJSON_GetObjectItem(cJSON_GetObjectItem(n, "metadata"), "labels"),
            "eks.amazonaws.com/nodegroup", cJSON_CreateString(pool));
        CHECK_INT(put(x, n), 1);
    }
    v = view_build(x);
    CHECK(!v->too_many);
    CHECK_INT(v->n_kinds, 500);
    CHECK_INT(v->n_nodes, 10000);
    CHECK_INT(v->n_per_node, 1);
    CHECK_STR(v->n_per_node ? v->per_node[0] : NULL,
              "example.com/node-serial");
    view_unref(v);
    view_index_free(x);
}

/* A list read into an index of its own takes the old one's place. */
static void
take_replaces_whole(void)
{
    struct view_index *x = view_index_new(), *list = view_index_new();
    struct view *v;

    for (int i = 0; i < 5; i++)
        put(x, node(i, i % 5, false, false));
    for (int i = 10; i < 13; i++)
        put(list, node(i, 0, false, false));
    CHECK_INT(view_index_take(x, "Node", list), 0);
    v = view_build(x);
    CHECK_INT(v->n_nodes, 3);
    CHECK_INT(v->n_kinds, 1);
    view_unref(v);
    v = view_build(list); /* holds the old nodes, to be freed */
    CHECK_INT(v->n_nodes, 5);
    view_unref(v);
    CHECK_INT(view_index_take(x, "Pod", list), -1);
    view_index_free(list);
    view_index_free(x);
}

int
main(void)
{
    unique_labels_do_not_split();
    condition_taints_come_and_go();
    grouping_labels_still_split();
    too_many_kinds_counts_every_node();
    many_pools_are_not_per_node();
    take_replaces_whole();
    CHECK_DONE();
}
