/*
 * nodeLabels, the providers' label schemes (policy/table/nodelabels.h):
 * the embedded entries give the keys the view reads, in their order; a
 * policy that adds a provider's label makes nodes carrying only that
 * label known, and without the entry they are not; the loader's errors
 * come at their line; the schemes print and read back.
 */
#include <stdio.h>
#include <stdlib.h>

#include "policy/pod/placement.h"
#include "policy/table/snapshot.h"
#include "policy/view/view.h"
#include "test/unit/check.h"
#include "test/unit/policy_load.h"

/* A view of one node of 8 GPUs with the one label key=value. */
static struct view *
one_node(const char *key, const char *value)
{
    struct view_index *x = view_index_new();
    cJSON *n = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(n, "metadata");
    cJSON *status = cJSON_AddObjectToObject(n, "status");
    cJSON *alloc = cJSON_AddObjectToObject(status, "allocatable");
    struct view *v;

    cJSON_AddStringToObject(n, "kind", "Node");
    cJSON_AddStringToObject(meta, "name", "n-1");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "labels"), key,
                            value);
    cJSON_AddStringToObject(alloc, "nvidia.com/gpu", "8");
    cJSON_AddStringToObject(alloc, "memory", "2048Gi");
    CHECK(x != NULL && view_index_put_node(x, n) == 1);
    cJSON_Delete(n);
    v = x ? view_build(x) : NULL;
    CHECK(v != NULL && v->n_kinds == 1);
    view_index_free(x);
    return v;
}

/* What placement_kind() says of v's one kind: the key, or "(unknown)";
 * the row's accelerator into acc, placement_describe() into what. */
static const char *
kind_by(const struct snapshot *s, const struct view *v, char acc[32],
        char what[PLACEMENT_WHAT])
{
    struct placement_row r;
    const char *by;

    memset(&r, 0, sizeof(r));
    acc[0] = '\0';
    by = placement_kind(s, &v->kinds[0], &r);
    if (by)
        snprintf(acc, 32, "%s", r.row.accelerator);
    placement_describe(s, &v->kinds[0], what, PLACEMENT_WHAT);
    return by ? by : "(unknown)";
}

/* The embedded entries give today's keys, in today's order. */
static void
test_embedded(void)
{
    static const char *const types[] = {"node.kubernetes.io/instance-type",
                                        "beta.kubernetes.io/instance-type",
                                        "nvidia.com/gpu.machine"};
    static const char *const products[] = {
        "nvidia.com/gpu.product", "cloud.google.com/gke-accelerator",
        "karpenter.k8s.aws/instance-gpu-name",
        "eks.amazonaws.com/instance-gpu-name"};
    struct load_error err;
    struct snapshot *s = snapshot_parse_embedded(NULL, &err);

    CHECK(s != NULL);
    if (s == NULL)
        return;
    CHECK_INT(s->n_schemes, 7);
    CHECK_INT(s->n_type_keys, 3);
    for (size_t i = 0; i < 3 && i < s->n_type_keys; i++)
        CHECK_STR(s->type_keys[i], types[i]);
    CHECK_INT(s->n_product_keys, 4);
    for (size_t i = 0; i < 4 && i < s->n_product_keys; i++)
        CHECK_STR(s->product_keys[i], products[i]);
    CHECK(s->type_keys[s->n_type_keys] == NULL);
    CHECK(s->product_keys[s->n_product_keys] == NULL);
    for (size_t i = 0; i < s->n_schemes; i++)
        CHECK(s->schemes[i].source && s->schemes[i].source[0] == '[');
    snapshot_unref(s);
}

#define EXAMPLE                                                                \
    "nodeLabels:\n"                                                            \
    "  - name: example-cloud\n"                                                \
    "    source: \"example.com docs, node labels\"\n"                          \
    "    instanceType: [example.com/machine]\n"                                \
    "    gpuProduct: [example.com/gpu-product]\n"

/* A new provider's labels: known with the entry, unknown without. */
static void
test_new_provider(void)
{
    struct load_error err;
    struct snapshot *e = snapshot_parse_embedded(NULL, &err);
    struct snapshot *s = load(EXAMPLE, &err);
    struct view *product =
        one_node("example.com/gpu-product", "NVIDIA-H100-80GB-HBM3");
    struct view *machine = one_node("example.com/machine", "p5.48xlarge");
    char acc[32], what[PLACEMENT_WHAT];

    CHECK(e != NULL && s != NULL && product != NULL && machine != NULL);
    if (!e || !s || !product || !machine)
        goto out;
    /* Merged by name: the embedded entries, then the file's. */
    CHECK_INT(s->n_schemes, e->n_schemes + 1);
    CHECK_STR(s->schemes[s->n_schemes - 1].name, "example-cloud");
    CHECK(!s->scheme_sources[s->n_schemes - 1].embedded);
    CHECK_INT(s->scheme_sources[s->n_schemes - 1].line, 2);

    CHECK_STR(kind_by(e, product, acc, what), "(unknown)");
    CHECK_STR(what, "nodes of 8 GPUs of no named product");
    CHECK_STR(kind_by(s, product, acc, what), "example.com/gpu-product");
    CHECK_STR(acc, "H100");
    CHECK_STR(what, "nodes of 8 x 'NVIDIA-H100-80GB-HBM3' GPUs");

    CHECK_STR(kind_by(e, machine, acc, what), "(unknown)");
    CHECK_STR(kind_by(s, machine, acc, what), "example.com/machine");
    CHECK_STR(acc, "H100");
out:
    view_unref(product);
    view_unref(machine);
    snapshot_unref(e);
    snapshot_unref(s);
}

/* A file's entry replaces the embedded one of its name whole. `base:
 * empty` reads nodes as the embedded policy does unless it gives
 * nodeLabels itself: then only its own (none, for []). */
static void
test_replace_and_empty(void)
{
    struct load_error err;
    struct snapshot *s = load("nodeLabels:\n"
                              "  - name: gke\n"
                              "    source: \"[GKE-PART]\"\n"
                              "    gpuProduct: [example.com/gpu-product]\n",
                              &err);
    struct snapshot *empty = load("base: empty\ninstanceTypes: []\n", &err);
    struct snapshot *none =
        load("base: empty\ninstanceTypes: []\nnodeLabels: []\n", &err);
    struct view *gke =
        one_node("cloud.google.com/gke-accelerator", "nvidia-h100-80gb");
    char acc[32], what[PLACEMENT_WHAT];

    CHECK(s != NULL && empty != NULL && none != NULL && gke != NULL);
    if (!s || !empty || !none || !gke)
        goto out;
    CHECK_INT(s->n_schemes, 7);
    /* Replaced: it comes after the embedded ones the file leaves. */
    CHECK_STR(s->schemes[6].name, "gke");
    CHECK_STR(s->schemes[6].gpu_product[0], "example.com/gpu-product");
    CHECK_STR(kind_by(s, gke, acc, what), "(unknown)");
    CHECK_INT(empty->n_schemes, 7);
    CHECK(empty->scheme_sources[0].embedded);
    CHECK_INT(empty->n_type_keys, 3);
    CHECK_INT(empty->n_attr_keys, 14);
    CHECK_INT(none->n_schemes, 0);
    CHECK_INT(none->n_type_keys, 0);
    CHECK_INT(none->n_product_keys, 0);
    CHECK_INT(none->n_attr_keys, 0);
out:
    view_unref(gke);
    snapshot_unref(s);
    snapshot_unref(empty);
    snapshot_unref(none);
}

/* The candidates of a pod whose nodeSelector is key=value: "pinned:
 * a b" or "free". */
static void
expect_pin(const struct snapshot *s, const char *key, const char *value,
           const char *want)
{
    cJSON *spec = cJSON_CreateObject();
    struct placement p;
    struct match m;
    char got[512];
    size_t at;

    cJSON_AddStringToObject(cJSON_AddObjectToObject(spec, "nodeSelector"), key,
                            value);
    CHECK(match_parse(spec, &m) == 0);
    placement_read(s, &m, 0, &p);
    at =
        (size_t)snprintf(got, sizeof(got), "%s", p.pinned ? "pinned:" : "free");
    for (size_t i = 0; i < p.n_types && at < sizeof(got); i++)
        at += (size_t)snprintf(got + at, sizeof(got) - at, " %s",
                               p.types[i]->name);
    CHECK_STR(got, want);
    match_free(&m);
    cJSON_Delete(spec);
}

/* instanceLabelPrefix: a provider that labels nodes as Karpenter does,
 * under a prefix of its own, pins rows by those labels. */
static void
test_prefix(void)
{
    struct load_error err;
    struct snapshot *e = snapshot_parse_embedded(NULL, &err);
    struct snapshot *s =
        load("nodeLabels:\n"
             "  - name: example-karpenter\n"
             "    source: \"example.com docs\"\n"
             "    instanceLabelPrefix: example.com/instance-\n",
             &err);

    CHECK(e != NULL && s != NULL);
    if (!e || !s)
        goto out;
    CHECK_INT(e->n_attr_prefixes, 2);
    CHECK_INT(e->n_attr_keys, 14);
    CHECK_INT(s->n_attr_keys, 21);
    for (size_t i = 1; i < s->n_attr_keys; i++)
        CHECK(strcmp(s->attr_keys[i - 1].key, s->attr_keys[i].key) < 0);
    expect_pin(e, "karpenter.k8s.aws/instance-family", "p5e",
               "pinned: p5e.48xlarge");
    expect_pin(e, "example.com/instance-family", "p5e", "free");
    expect_pin(s, "example.com/instance-family", "p5e", "pinned: p5e.48xlarge");
    expect_pin(s, "example.com/instance-gpu-name", "a100",
               "pinned: p4d.24xlarge p4de.24xlarge");
out:
    snapshot_unref(e);
    snapshot_unref(s);
}

static void
test_errors(void)
{
    expect_error("nodeLabels: {}\n", 1, 13, "nodeLabels must be a list");
    expect_error("nodeLabels:\n  - name: x\n    source: y\n", 2, 5,
                 "'x': nodeLabels entry names no instanceType or "
                 "gpuProduct key");
    expect_error("nodeLabels:\n  - name: x\n    instanceType: [a/b]\n", 2, 5,
                 "a nodeLabels entry needs 'source'");
    expect_error("nodeLabels:\n  - name: x\n    source: y\n"
                 "    gpuProduct: [example.com/a, \"bad key\"]\n",
                 4, 33, "'x': 'bad key' is not a label key");
    expect_error("nodeLabels:\n  - name: x\n    source: y\n"
                 "    gpuProduct: [example.com/a, example.com/a]\n",
                 4, 33, "'x': gpuProduct key 'example.com/a' listed twice");
    expect_error("nodeLabels:\n  - name: x\n    source: y\n"
                 "    gpuProducts: [example.com/a]\n",
                 4, 5, "unknown key 'gpuProducts' in a nodeLabels entry");
    expect_error("nodeLabels:\n"
                 "  - {name: x, source: y, gpuProduct: [example.com/a]}\n"
                 "  - {name: x, source: y, gpuProduct: [example.com/b]}\n",
                 3, 12, "nodeLabels 'x' listed twice");
    expect_error("nodeLabels:\n  - name: x\n    source: y\n"
                 "    instanceType: example.com/a\n",
                 4, 19, "instanceType must be a list");
    expect_error("nodeLabels:\n  - name: x\n    source: y\n"
                 "    instanceLabelPrefix: \"bad/prefix/\"\n",
                 4, 26,
                 "'x': instanceLabelPrefix 'bad/prefix/' makes "
                 "'bad/prefix/family', not a label key");
    expect_error("nodeLabels:\n  - name: x\n    source: y\n"
                 "    instanceLabelPrefix: karpenter.k8s.aws/instance-\n",
                 4, 26,
                 "instanceLabelPrefix 'karpenter.k8s.aws/instance-' listed "
                 "twice");
}

/* Printed whole with `base: empty`, the schemes read back the same. */
static void
test_print(void)
{
    struct load_error err;
    struct snapshot *s = load(EXAMPLE, &err), *again = NULL;
    char *text = s ? snapshot_print(s) : NULL;

    CHECK(text && strstr(text, "\nnodeLabels:\n  - name: kubernetes\n"));
    CHECK(text && strstr(text, "    gpuProduct: [example.com/gpu-product]\n"));
    again = text ? load(text, &err) : NULL;
    CHECK(again != NULL);
    if (s && again) {
        CHECK_INT(again->n_schemes, s->n_schemes);
        CHECK_INT(again->n_type_keys, s->n_type_keys);
        CHECK_INT(again->n_product_keys, s->n_product_keys);
        for (size_t i = 0; i < s->n_product_keys; i++)
            CHECK_STR(again->product_keys[i], s->product_keys[i]);
        for (size_t i = 0; i < s->n_schemes; i++)
            CHECK_STR(again->schemes[i].source, s->schemes[i].source);
    }
    free(text);
    snapshot_unref(s);
    snapshot_unref(again);
}

int
main(void)
{
    test_embedded();
    test_new_provider();
    test_replace_and_empty();
    test_prefix();
    test_errors();
    test_print();
    CHECK_DONE();
}
