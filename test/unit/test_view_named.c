/*
 * The view's GPU nodes by name (view.h struct view_node): sorted by name,
 * each with its hostname label and its kind; a hostname change is a
 * change, a heartbeat is not; a deleted or GPU-less node leaves.
 */
#include <stdlib.h>

#include "policy/view/view.h"
#include "test/unit/check.h"

/* A Node of name, hostname (NULL: no such label), pool, gpus. */
static cJSON *
node(const char *name, const char *hostname, const char *pool, int gpus)
{
    cJSON *n = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(n, "metadata");
    cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
    cJSON *alloc =
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(n, "status"),
                                "allocatable");
    char count[16];

    cJSON_AddStringToObject(n, "kind", "Node");
    cJSON_AddStringToObject(meta, "name", name);
    if (hostname)
        cJSON_AddStringToObject(labels, VIEW_HOSTNAME, hostname);
    cJSON_AddStringToObject(labels, "pool", pool);
    snprintf(count, sizeof(count), "%d", gpus);
    cJSON_AddStringToObject(alloc, "nvidia.com/gpu", count);
    return n;
}

/* put n (then free it); the index's answer. */
static int
put(struct view_index *x, cJSON *n)
{
    int rc = view_index_put_node(x, n);
    cJSON_Delete(n);
    return rc;
}

int
main(void)
{
    struct view_index *x = view_index_new();
    struct view *v;

    CHECK(x != NULL);
    CHECK_INT(put(x, node("n-b", "host-b", "a100", 8)), 1);
    CHECK_INT(put(x, node("n-a", "host-a", "a100", 8)), 1);
    CHECK_INT(put(x, node("n-c", NULL, "h100", 8)), 1);
    CHECK_INT(put(x, node("n-cpu", "host-cpu", "cpu", 0)), 0);
    /* Same labels, same hostname: nothing decisions read changed. */
    CHECK_INT(put(x, node("n-a", "host-a", "a100", 8)), 0);
    /* The hostname alone changed: the kind is the same, the node not. */
    CHECK_INT(put(x, node("n-a", "host-a2", "a100", 8)), 1);

    v = view_build(x);
    CHECK(v != NULL);
    CHECK_INT(v->n_kinds, 2);
    CHECK_INT(v->n_named, 3);
    CHECK_STR(v->named[0].name, "n-a");
    CHECK_STR(v->named[0].hostname, "host-a2");
    CHECK_STR(v->named[1].name, "n-b");
    CHECK(v->named[2].hostname == NULL);
    /* Nodes alike share their kind; each points into v->kinds. */
    CHECK(v->named[0].kind == v->named[1].kind);
    CHECK(v->named[0].kind != v->named[2].kind);
    CHECK_STR(label_get(&v->named[2].kind->set, "pool"), "h100");
    CHECK_INT(v->named[0].kind->nodes, 2);
    view_unref(v);

    /* A node that loses its GPUs, and a deleted one, leave the view. */
    CHECK_INT(put(x, node("n-b", "host-b", "a100", 0)), 1);
    cJSON *gone = node("n-c", NULL, "h100", 8);
    CHECK_INT(view_index_del_node(x, gone), 1);
    cJSON_Delete(gone);
    v = view_build(x);
    CHECK(v != NULL);
    CHECK_INT(v->n_named, 1);
    CHECK_STR(v->named[0].name, "n-a");
    CHECK_INT(v->n_kinds, 1);
    view_unref(v);
    view_index_free(x);
    CHECK_DONE();
}
