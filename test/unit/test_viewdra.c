/*
 * What the view reads of DRA (policy/view/viewdra.h): DeviceClass
 * selectors against test/unit/cases/dra-classes.json; GFD's form of an
 * NVML name; and a node whose GPUs are ResourceSlice devices, whichever
 * comes first, the node or its slices, with stale pool generations and
 * MIG devices left out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/view/view.h"
#include "policy/view/viewdra.h"
#include "test/unit/check.h"

#define CASES "test/unit/cases/dra-classes.json"

static void
classes(void)
{
    FILE *f = fopen(CASES, "rb");
    static char text[1 << 16];
    size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    cJSON *cases, *c;

    if (f)
        fclose(f);
    text[n] = '\0';
    CHECK((cases = cJSON_Parse(text)) != NULL);
    CHECK(cJSON_GetArraySize(cases) > 10);
    cJSON_ArrayForEach(c, cases)
    {
        cJSON *dc = cJSON_CreateObject(), *e;
        cJSON *sel = cJSON_AddArrayToObject(cJSON_AddObjectToObject(dc, "spec"),
                                            "selectors");
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(c, "expressions"))
        {
            cJSON *s = cJSON_CreateObject();
            cJSON_AddStringToObject(cJSON_AddObjectToObject(s, "cel"),
                                    "expression", e->valuestring);
            cJSON_AddItemToArray(sel, s);
        }
        const char *got = viewdra_class_name(viewdra_class(dc));
        const char *want = cJSON_GetStringValue(cJSON_GetObjectItem(c, "want"));
        if (strcmp(got, want) != 0)
            fprintf(stderr, "case '%s'\n",
                    cJSON_GetStringValue(cJSON_GetObjectItem(c, "comment")));
        CHECK_STR(got, want);
        cJSON_Delete(dc);
    }
    cJSON_Delete(cases);
}

static void
gfd_product(void)
{
    char out[64];

    viewdra_gfd_product("NVIDIA H100 80GB HBM3", out, sizeof(out));
    CHECK_STR(out, "NVIDIA-H100-80GB-HBM3");
    viewdra_gfd_product("NVIDIA A100-SXM4-40GB", out, sizeof(out));
    CHECK_STR(out, "NVIDIA-A100-SXM4-40GB");
    viewdra_gfd_product("  Tesla  T4 (rev a1) ", out, sizeof(out));
    CHECK_STR(out, "Tesla-T4-rev-a1");
    viewdra_gfd_product("NVIDIA H100 80GB HBM3", out, 8);
    CHECK_STR(out, "NVIDIA");
}

static cJSON *
node(const char *name, int gpus)
{
    cJSON *n = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(n, "metadata");
    cJSON *alloc = cJSON_AddObjectToObject(cJSON_AddObjectToObject(n, "status"),
                                           "allocatable");
    char count[16];

    cJSON_AddStringToObject(n, "kind", "Node");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "labels"), "rack",
                            "r1");
    cJSON_AddStringToObject(alloc, "cpu", "96");
    snprintf(count, sizeof(count), "%d", gpus);
    if (gpus)
        cJSON_AddStringToObject(alloc, "nvidia.com/gpu", count);
    return n;
}

/* A slice of node's pool at generation, gpus whole GPUs of product and
 * migs MIG devices. */
static cJSON *
slice(const char *name, const char *node_name, int generation, int gpus,
      int migs, const char *product)
{
    cJSON *s = cJSON_CreateObject(), *spec, *devs, *pool;

    cJSON_AddStringToObject(s, "kind", "ResourceSlice");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(s, "metadata"), "name",
                            name);
    spec = cJSON_AddObjectToObject(s, "spec");
    cJSON_AddStringToObject(spec, "driver", "gpu.nvidia.com");
    cJSON_AddStringToObject(spec, "nodeName", node_name);
    pool = cJSON_AddObjectToObject(spec, "pool");
    cJSON_AddStringToObject(pool, "name", node_name);
    cJSON_AddNumberToObject(pool, "generation", generation);
    cJSON_AddNumberToObject(pool, "resourceSliceCount", 1);
    devs = cJSON_AddArrayToObject(spec, "devices");
    for (int i = 0; i < gpus + migs; i++) {
        cJSON *d = cJSON_CreateObject(), *a;
        char dn[32];
        snprintf(dn, sizeof(dn), "gpu-%d", i);
        cJSON_AddStringToObject(d, "name", dn);
        a = cJSON_AddObjectToObject(d, "attributes");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(a, "type"), "string",
                                i < gpus ? "gpu" : "mig");
        /* Both forms of name: bare, and qualified by the driver. */
        cJSON_AddStringToObject(
            cJSON_AddObjectToObject(a, i % 2 ? "gpu.nvidia.com/productName"
                                             : "productName"),
            "string", product);
        cJSON_AddItemToArray(devs, d);
    }
    return s;
}

/* Takes o; 1 when the view would change. */
static int
put(struct view_index *x, cJSON *o)
{
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(o, "kind"));
    int rc = strcmp(kind, "Node") == 0 ? view_index_put_node(x, o)
                                       : view_index_put_object(x, kind, o);
    cJSON_Delete(o);
    return rc;
}

/* The one kind's GPUs and product, or 0 and "" when the view has none. */
static void
only_kind(struct view_index *x, long gpus, const char *product, size_t nodes)
{
    struct view *v = view_build(x);

    CHECK(v != NULL);
    CHECK_INT(v->n_kinds, gpus ? 1 : 0);
    CHECK_INT(v->n_nodes, nodes);
    if (v->n_kinds == 1) {
        CHECK_INT(v->kinds[0].gpus, gpus);
        CHECK_STR(v->kinds[0].dra_product ? v->kinds[0].dra_product : "",
                  product);
    }
    view_unref(v);
}

static void
slices_and_nodes(void)
{
    const char *h100 = "NVIDIA H100 80GB HBM3";
    struct view_index *a = view_index_new(), *b = view_index_new();

    /* The node first, GPU-less: kept out of the view, not forgotten. */
    CHECK_INT(put(a, node("n1", 0)), 0);
    only_kind(a, 0, "", 0);
    CHECK_INT(put(a, slice("s1", "n1", 1, 8, 0, h100)), 1);
    only_kind(a, 8, "NVIDIA-H100-80GB-HBM3", 1);
    /* The slices first: the same view. */
    CHECK_INT(put(b, slice("s1", "n1", 1, 8, 0, h100)), 1);
    CHECK_INT(put(b, node("n1", 0)), 1);
    only_kind(b, 8, "NVIDIA-H100-80GB-HBM3", 1);
    /* A heartbeat of the node is nothing new. */
    CHECK_INT(put(b, node("n1", 0)), 0);
    /* MIG devices are not GPUs; a newer generation replaces the old. */
    CHECK_INT(put(b, slice("s2", "n1", 2, 4, 8, h100)), 1);
    only_kind(b, 4, "NVIDIA-H100-80GB-HBM3", 1);
    /* Two products on one node: the count stands, the product is not
     * known. */
    CHECK_INT(put(b, slice("s3", "n1", 2, 4, 0, "NVIDIA L40S")), 1);
    only_kind(b, 8, "", 1);
    /* The device plugin's count wins where the node has one. */
    CHECK_INT(put(a, node("n1", 4)), 1);
    only_kind(a, 4, "", 1);
    /* A slice deleted takes its GPUs away. */
    cJSON *gone = slice("s1", "n1", 1, 8, 0, h100);
    CHECK_INT(view_index_del_object(b, "ResourceSlice", gone), 1);
    CHECK_INT(view_index_del_object(b, "ResourceSlice", gone), 0);
    cJSON_Delete(gone);
    only_kind(b, 8, "", 1);
    view_index_free(a);
    view_index_free(b);
}

/* A slice of no one node (allNodes, a nodeSelector) gives no node GPUs. */
static void
slice_of_no_node(void)
{
    struct view_index *x = view_index_new();
    cJSON *s = slice("net", "n1", 1, 8, 0, "NVIDIA H100 80GB HBM3");
    cJSON *spec = cJSON_GetObjectItem(s, "spec");

    cJSON_DeleteItemFromObject(spec, "nodeName");
    cJSON_AddBoolToObject(spec, "allNodes", true);
    CHECK_INT(put(x, node("n1", 0)), 0);
    CHECK_INT(put(x, s), 0);
    only_kind(x, 0, "", 0);
    view_index_free(x);
}

int
main(void)
{
    classes();
    gfd_product();
    slices_and_nodes();
    slice_of_no_node();
    CHECK_DONE();
}
