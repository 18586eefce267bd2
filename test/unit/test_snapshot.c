/* The policy loader: the default policy, its errors, and print stability. */
#include <stdlib.h>

#include "policy/table/snapshot.h"
#include "test/unit/check.h"
#include "test/unit/policy_load.h"

#define TYPE_P4D                                                             \
    "  - name: p4d.24xlarge\n"                                               \
    "    accelerator: A100\n"                                                \
    "    resource: nvidia.com/gpu\n"                                         \
    "    count: 8\n"                                                         \
    "    memory: 40Gi\n"                                                     \
    "    interconnect: nvswitch\n"                                           \
    "    efa: 4\n"                                                           \
    "    gpuDirectRDMA: %s\n"                                                \
    "    hostMemory: 1152Gi\n"                                               \
    "    shm: 144Gi\n"                                                       \
    "    env:\n"                                                             \
    "      - name: FI_EFA_USE_DEVICE_RDMA\n"                                 \
    "        value: \"1\"\n"                                                 \
    "        why: GPUDirect RDMA over EFA\n"                                 \
    "        versions: libfabric < 1.18.0\n"                                 \
    "        source: aws/aws-ofi-nccl doc/efa-env-var.md\n"

static void
test_embedded(void)
{
    struct load_error err;
    struct snapshot *s = snapshot_parse_embedded(NULL, &err);
    const struct instance_type *t;

    CHECK(s != NULL);
    if (s == NULL)
        return;
    CHECK_INT(s->n_types, 90);
    CHECK_INT(s->n_products, 25);
    CHECK_INT(s->mode, MODE_ENFORCE);
    t = snapshot_lookup(s, "p4d.24xlarge");
    CHECK(t != NULL);
    if (t) {
        CHECK_INT(t->count, 8);
        CHECK_INT(t->efa, 4);
        CHECK_INT(t->link, LINK_NVSWITCH);
        CHECK(t->gpudirect_rdma);
    }
    CHECK(snapshot_lookup(s, "ml.p4d.24xlarge") == t);
    /* Oracle's B200 shape: an NVSwitch board whose VFs need evidence. */
    t = snapshot_lookup(s, "BM.GPU.B200.8");
    CHECK(t != NULL);
    if (t) {
        CHECK_INT(t->link, LINK_NVSWITCH);
        CHECK_INT(t->efa, 8);
        CHECK(t->nics_need_evidence);
    }
    CHECK(snapshot_lookup(s, "p9.mega") == NULL);
    /* The rule of the table: no device RDMA env without GPUDirect RDMA. */
    for (size_t i = 0; i < s->n_types; i++)
        for (size_t j = 0; j < s->types[i].n_env; j++)
            if (strcmp(s->types[i].env[j].name, "FI_EFA_USE_DEVICE_RDMA") == 0)
                CHECK(s->types[i].gpudirect_rdma);
    snapshot_unref(s);
}

/* print -> parse -> print gives the same bytes. */
static void
test_print_stable(void)
{
    struct load_error err;
    struct snapshot_opts warn = {.force_mode = true, .mode = MODE_WARN};
    struct snapshot *a = snapshot_parse_embedded(&warn, &err), *b;
    char *first, *second;

    first = snapshot_print(a);
    b = snapshot_parse(first, strlen(first), "embedded", NULL, &err);
    CHECK(b != NULL);
    second = b ? snapshot_print(b) : NULL;
    CHECK_STR(first, second);
    CHECK(b != NULL && b->mode == MODE_WARN);
    free(first);
    free(second);
    snapshot_unref(a);
    snapshot_unref(b);
}

static void
test_namespaces(void)
{
    struct load_error err;
    char text[2048];
    struct snapshot *s;

    snprintf(text, sizeof(text),
             "namespaces:\n"
             "  - name: research\n"
             "    inject: {hostIPC: false}\n"
             "mode: warn\n"
             "instanceTypes:\n" TYPE_P4D,
             "true");
    s = load(text, &err);
    CHECK(s != NULL);
    if (s == NULL) {
        fprintf(stderr, "%d:%d: %s\n", err.line, err.column, err.message);
        return;
    }
    /* A namespace inherits the mode, wherever the mode is written. */
    CHECK_INT(snapshot_mode_for(s, "research"), MODE_WARN);
    CHECK(!snapshot_inject_for(s, "research")->host_ipc);
    CHECK(snapshot_inject_for(s, "research")->ipc_lock);
    CHECK(snapshot_inject_for(s, "other")->host_ipc);
    snapshot_unref(s);
    /* --mode overrides every namespace, in the parse itself. */
    s = snapshot_parse(text, strlen(text), "test.yaml",
                       &(struct snapshot_opts){.force_mode = true,
                                               .mode = MODE_AUDIT},
                       &err);
    CHECK(s != NULL);
    CHECK_INT(s ? (int)snapshot_mode_for(s, "research") : -1, MODE_AUDIT);
    CHECK_INT(s ? (int)snapshot_mode_for(s, "other") : -1, MODE_AUDIT);
    snapshot_unref(s);
}

static void
test_errors(void)
{
    char text[2048];

    expect_error("mode: strict\ninstanceTypes: []\n", 1, 7,
                 "unknown mode 'strict' (enforce, warn or audit)");
    expect_error("mod: warn\ninstanceTypes: []\n", 1, 1,
                 "unknown key 'mod' in the policy");
    expect_error("base: empty\nmode: warn\n", 1, 1,
                 "the policy needs 'instanceTypes'");
    expect_error("instanceTypes: [\n", 2, 1,
                 "did not find expected node content");
    expect_error("optOut: yes\ninstanceTypes: []\n", 1, 9,
                 "optOut must be true or false, not 'yes'");
    expect_error("a: 1\n---\nb: 2\n", 3, 1,
                 "a policy is one YAML document, found 2");
    snprintf(text, sizeof(text), "instanceTypes:\n" TYPE_P4D, "false");
    expect_error(text, 2, 5,
                 "'p4d.24xlarge' has no GPUDirect RDMA: "
                 "FI_EFA_USE_DEVICE_RDMA would break EFA there");
    snprintf(text, sizeof(text), "instanceTypes:\n" TYPE_P4D TYPE_P4D, "true",
             "true");
    expect_error(text, 18, 5, "instance type 'p4d.24xlarge' listed twice");
}

/* BEGIN print-escapes (issue 16, point 5) */
/*
 * The policy fuzzer's find, kept in test/fuzz/regressions/policy/: U+2028,
 * U+2029 and U+0085 (and DEL, a C1 control, U+FEFF) inside a quoted
 * string. YAML reads the line breaks raw as breaks and refuses the
 * controls, so the printer escapes them; the values must come back whole.
 */
#define LINE_BREAKS_YAML                                                     \
    "test/fuzz/regressions/policy/"                                          \
    "line-separator-in-quoted-string-round-trip.yaml"

static void
test_print_escapes_line_breaks(void)
{
    static const char want[] = "a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xc2\x85"
                               "d\x7f" "e\xc2\x80" "f\xef\xbb\xbf" "g";
    struct load_error err;
    struct snapshot *a = NULL, *b = NULL;
    const struct instance_type *ta, *tb;
    char *text = NULL, *first = NULL, *second = NULL;
    FILE *f = fopen(LINE_BREAKS_YAML, "rb");
    long n;

    CHECK(f != NULL);
    if (f == NULL)
        return;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (text = calloc(1, (size_t)n + 1)) &&
        fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    fclose(f);
    CHECK(text != NULL);
    if (text == NULL)
        return;
    a = load(text, &err);
    CHECK(a != NULL);
    if (a == NULL) {
        fprintf(stderr, "%d:%d: %s\n", err.line, err.column, err.message);
        goto done;
    }
    first = snapshot_print(a);
    /* Escaped, never raw: no U+2028 bytes, and the escape is there. */
    CHECK(first != NULL && strstr(first, "\xe2\x80\xa8") == NULL &&
          strstr(first, "\xc2\x85") == NULL && strstr(first, "\\u2028"));
    b = load(first, &err);
    CHECK(b != NULL);
    if (b == NULL) {
        fprintf(stderr, "%d:%d: %s\n", err.line, err.column, err.message);
        goto done;
    }
    second = snapshot_print(b);
    CHECK_STR(first, second);
    ta = snapshot_lookup(a, "p4d.24xlarge");
    tb = snapshot_lookup(b, "p4d.24xlarge");
    CHECK(ta != NULL && tb != NULL && ta->n_env == 1 && tb->n_env == 1);
    if (ta != NULL && tb != NULL && ta->n_env == 1 && tb->n_env == 1) {
        CHECK_STR(ta->env[0].value, want);
        CHECK_STR(tb->env[0].value, want);
        CHECK_STR(tb->env[0].why, ta->env[0].why);
    }
done:
    free(text);
    free(first);
    free(second);
    snapshot_unref(a);
    snapshot_unref(b);
}
/* END print-escapes */

/* BEGIN gpu-products (issue 12, point 4) */
#define TYPE_GKE                                                             \
    "  - name: a3-ultragpu-8g\n"                                             \
    "    accelerator: H200\n"                                                \
    "    resource: nvidia.com/gpu\n"                                         \
    "    count: 8\n"                                                         \
    "    memory: 141Gi\n"                                                    \
    "    interconnect: nvswitch\n"                                           \
    "    efa: %s\n"                                                          \
    "    %s\n"                                                               \
    "    gpuDirectRDMA: true\n"                                              \
    "    hostMemory: 2944Gi\n"                                               \
    "    shm: 368Gi\n"                                                       \
    "    env: %s\n"

#define PRODUCT_HEAD                                                         \
    "instanceTypes: []\n"                                                    \
    "gpuProducts:\n"                                                         \
    "  - name: H100-SXM\n"                                                   \
    "    accelerator: H100\n"                                                \
    "    labels: [NVIDIA-H100-80GB-HBM3, h100]\n"

/* The NIC of a row: EFA by default, a named resource, or an annotation. */
static void
test_nic_resources(void)
{
    struct load_error err;
    struct snapshot *s = snapshot_parse_embedded(NULL, &err);
    const struct instance_type *t;

    CHECK(s != NULL);
    if (s == NULL)
        return;
    t = snapshot_lookup(s, "p5.48xlarge");
    CHECK_STR(t ? type_nic_resource(t) : NULL, "vpc.amazonaws.com/efa");
    t = snapshot_lookup(s, "p3.2xlarge");
    CHECK(t != NULL && type_nic_resource(t) == NULL);
    t = snapshot_lookup(s, "Standard_ND96isr_H100_v5");
    CHECK_STR(t ? type_nic_resource(t) : NULL, "rdma/ib");
    CHECK_INT(t ? t->efa : -1, 8);
    t = snapshot_lookup(s, "BM.GPU.H100.8");
    CHECK_STR(t ? type_nic_resource(t) : NULL, "nvidia.com/rdma-vf");
    CHECK_INT(t ? t->efa : -1, 16);
    /* OKE's default reaches the NICs by hostNetwork: VFs need evidence. */
    CHECK(t != NULL && t->nics_need_evidence);
    t = snapshot_lookup(s, "Standard_ND96isr_H100_v5");
    CHECK(t != NULL && !t->nics_need_evidence);
    /* GKE attaches its NICs by annotation: no resource to patch. */
    t = snapshot_lookup(s, "a3-megagpu-8g");
    CHECK(t != NULL && type_nic_resource(t) == NULL);
    CHECK_STR(t ? t->nic_annotation : NULL, "networking.gke.io/interfaces");
    CHECK_INT(t ? t->efa : -1, 8);
    /* A slice of a board: unknown, and never NVLink. */
    t = snapshot_lookup(s, "a2-highgpu-4g");
    CHECK_INT(t ? (int)t->link : -1, LINK_UNKNOWN);
    CHECK(!link_is_nvlink(LINK_UNKNOWN));
    /* FI_* only where the NIC is EFA; every other row goes without. */
    for (size_t i = 0; i < s->n_types; i++) {
        const char *nic = type_nic_resource(&s->types[i]);
        for (size_t j = 0; j < s->types[i].n_env; j++)
            if (strncmp(s->types[i].env[j].name, "FI_", 3) == 0)
                CHECK_STR(nic, "vpc.amazonaws.com/efa");
    }
    snapshot_unref(s);
}

/* gkeNetworks: read, looked up by namespace and type, printed back. */
static void
test_gke_networks(void)
{
    static const char text[] =
        "gkeNetworks:\n"
        "  - instanceType: a3-megagpu-8g\n"
        "    interfaces:\n"
        "      - {interfaceName: eth0, network: default}\n"
        "      - {interfaceName: eth1, network: vpc1}\n"
        "namespaces:\n"
        "  - name: none-here\n"
        "    gkeNetworks: []\n"
        "  - name: own\n"
        "    gkeNetworks:\n"
        "      - instanceType: a4-highgpu-8g\n"
        "        interfaces: [{interfaceName: eth2, network: rdma-0}]\n";
    struct load_error err;
    struct snapshot *s = load(text, &err), *b = NULL;
    const struct gke_networks *g;
    const struct instance_type *t;
    char *first = NULL, *second = NULL;

    CHECK(s != NULL);
    if (s == NULL) {
        fprintf(stderr, "%d:%d: %s\n", err.line, err.column, err.message);
        return;
    }
    t = snapshot_lookup(s, "a3-megagpu-8g");
    CHECK_STR(t ? gpudirect_name(t->gke_gpudirect) : NULL, "tcpxo");
    t = snapshot_lookup(s, "a3-highgpu-8g");
    CHECK_STR(t ? gpudirect_name(t->gke_gpudirect) : NULL, "tcpx");
    t = snapshot_lookup(s, "a4-highgpu-8g");
    CHECK_STR(t ? gpudirect_name(t->gke_gpudirect) : NULL, "rdma");
    g = snapshot_gke_networks(s, "ml", "a3-megagpu-8g");
    CHECK_STR(g ? g->annotation : NULL,
              "[{\"interfaceName\":\"eth0\",\"network\":\"default\"},"
              "{\"interfaceName\":\"eth1\",\"network\":\"vpc1\"}]");
    CHECK(snapshot_gke_networks(s, "ml", "a4-highgpu-8g") == NULL);
    /* A namespace's own list, even empty, replaces the policy's. */
    CHECK(snapshot_gke_networks(s, "none-here", "a3-megagpu-8g") == NULL);
    CHECK(snapshot_gke_networks(s, "own", "a3-megagpu-8g") == NULL);
    g = snapshot_gke_networks(s, "own", "a4-highgpu-8g");
    CHECK_STR(g ? g->ifs[0].network : NULL, "rdma-0");
    first = snapshot_print(s);
    b = first ? snapshot_parse(first, strlen(first), "test.yaml", NULL, &err)
              : NULL;
    CHECK(b != NULL);
    second = b ? snapshot_print(b) : NULL;
    CHECK_STR(first, second);
    free(first);
    free(second);
    snapshot_unref(b);
    snapshot_unref(s);
}

static void
test_gke_network_errors(void)
{
    expect_error("gkeNetworks:\n"
                 "  - instanceType: p5.48xlarge\n"
                 "    interfaces: [{interfaceName: eth0, network: default}]\n",
                 2, 19,
                 "instanceType 'p5.48xlarge' is not a row whose NICs come by "
                 "nicAnnotation");
    expect_error("gkeNetworks:\n"
                 "  - instanceType: a4-highgpu-8g\n"
                 "    interfaces: [{interfaceName: eth0, network: \"a b\"}]\n",
                 3, 49,
                 "network must be letters, digits, '.', '_' or '-', not "
                 "'a b'");
    expect_error("gkeNetworks:\n"
                 "  - instanceType: a4-highgpu-8g\n"
                 "    interfaces: [{interfaceName: eth0, network: a},\n"
                 "                 {interfaceName: eth0, network: b}]\n",
                 4, 18, "'a4-highgpu-8g': interfaceName 'eth0' twice");
    expect_error("gkeNetworks:\n"
                 "  - instanceType: a4-highgpu-8g\n"
                 "    interfaces: []\n",
                 3, 17, "'a4-highgpu-8g': interfaces needs at least one");
}

static void
test_product_errors(void)
{
    char text[2048];

    snprintf(text, sizeof(text), "instanceTypes:\n" TYPE_GKE, "8",
             "nicResource: rdma/ib", "[{name: FI_PROVIDER, value: efa, "
             "why: x, versions: y, source: z}]");
    expect_error(text, 2, 5,
                 "'a3-ultragpu-8g' has no EFA: FI_PROVIDER is for EFA hosts "
                 "only");
    snprintf(text, sizeof(text), "instanceTypes:\n" TYPE_GKE, "8",
             "nicAnnotation: networking.gke.io/interfaces",
             "[{name: FI_PROVIDER, value: efa, why: x, versions: y, "
             "source: z}]");
    expect_error(text, 2, 5,
                 "'a3-ultragpu-8g' has no EFA: FI_PROVIDER is for EFA hosts "
                 "only");
    snprintf(text, sizeof(text), "instanceTypes:\n" TYPE_GKE, "0",
             "nicResource: rdma/ib", "[]");
    expect_error(text, 2, 5,
                 "'a3-ultragpu-8g' names how its NICs attach but has none "
                 "(efa: 0)");
    snprintf(text, sizeof(text), "instanceTypes:\n" TYPE_GKE, "8",
             "nicResource: rdma/ib\n    gkeGPUDirect: rdma", "[]");
    expect_error(text, 2, 5,
                 "'a3-ultragpu-8g': gkeGPUDirect goes with the NICs' "
                 "nicAnnotation");
    snprintf(text, sizeof(text), "instanceTypes:\n" TYPE_GKE, "8",
             "nicAnnotation: networking.gke.io/interfaces\n"
             "    gkeGPUDirect: roce", "[]");
    expect_error(text, 10, 19,
                 "unknown gkeGPUDirect 'roce' (tcpx, tcpxo or rdma)");
    snprintf(text, sizeof(text), "instanceTypes:\n" TYPE_GKE, "8",
             "nicAnnotation: networking.gke.io/interfaces\n"
             "    nicsNeedEvidence: true",
             "[]");
    expect_error(text, 2, 5,
                 "'a3-ultragpu-8g': nicsNeedEvidence holds back a NIC "
                 "resource, and the row has none (efa: 0 or nicAnnotation)");
    expect_error(PRODUCT_HEAD "  - name: H200-SXM\n"
                              "    accelerator: H200\n"
                              "    labels: [H100]\n",
                 8, 14, "label value 'H100' already names 'H100-SXM'");
    expect_error(PRODUCT_HEAD "    links: [{gpus: 2-8, interconnect: unknown},"
                              " {gpus: 8, interconnect: nvswitch}]\n",
                 6, 56, "'H100-SXM': gpus '8' overlaps an earlier entry");
    expect_error(PRODUCT_HEAD "    links: [{gpus: 1, interconnect: single}]\n",
                 6, 20,
                 "gpus must be a count from 2 to 1024, a range such as 2-8, "
                 "or a count and up such as 2+, not '1'");
    expect_error(PRODUCT_HEAD "    links: [{gpus: +8, interconnect: pcie}]\n",
                 6, 20,
                 "gpus must be a count from 2 to 1024, a range such as 2-8, "
                 "or a count and up such as 2+, not '+8'");
    expect_error(PRODUCT_HEAD "    links: [{gpus: 2+, interconnect: single}]\n",
                 6, 38,
                 "interconnect of several GPUs must be pcie, nvlink, "
                 "nvswitch, neuronlink or unknown, not 'single'");
    expect_error("instanceTypes: []\n"
                 "gpuProducts:\n"
                 "  - name: A100\n"
                 "    accelerator: A100\n"
                 "    labels: [A100-SXM4-40GB-MIG-1g.5gb]\n",
                 5, 14,
                 "label value 'A100-SXM4-40GB-MIG-1g.5gb' names MIG or "
                 "shared slices, which never match a product");
    expect_error(PRODUCT_HEAD "    interconnect: nvswitch\n", 6, 5,
                 "unknown key 'interconnect' in a GPU product");
}

/* Products print back as they read, links in their canonical forms. */
static void
test_product_print(void)
{
    static const char text[] =
        PRODUCT_HEAD "    links:\n"
                     "      - {gpus: 2-1024, interconnect: pcie}\n";
    struct load_error err;
    struct snapshot *a = load(text, &err), *b = NULL;
    const struct gpu_product *p;
    enum interconnect link;
    char *first = NULL, *second = NULL;

    CHECK(a != NULL);
    if (a == NULL) {
        fprintf(stderr, "%d:%d: %s\n", err.line, err.column, err.message);
        return;
    }
    first = snapshot_print(a);
    CHECK(first && strstr(first, "      - gpus: 2+\n"
                                 "        interconnect: pcie\n"));
    b = first ? load(first, &err) : NULL;
    CHECK(b != NULL);
    second = b ? snapshot_print(b) : NULL;
    CHECK_STR(first, second);
    p = b ? snapshot_product(b, "H100") : NULL;
    CHECK_STR(p ? p->name : NULL, "H100-SXM");
    CHECK(p && p->memory == NULL);
    CHECK(p && product_link(p, 64, &link) && link == LINK_PCIE);
    CHECK(p && !product_link(p, 0, &link));
    free(first);
    free(second);
    snapshot_unref(a);
    snapshot_unref(b);
}
/* END gpu-products */

/* BEGIN overlays (issue 14, point 4) */
/*
 * A policy file merges onto the embedded tables by name: a row of the
 * file replaces the embedded row of that name whole, a new name is added
 * after the embedded rows, settings override one by one; `base: empty`
 * starts from nothing, as every policy did before.
 */
#define TYPE_NEW                                                             \
    "  - name: p9.test\n"                                                    \
    "    accelerator: X100\n"                                                \
    "    resource: nvidia.com/gpu\n"                                         \
    "    count: 4\n"                                                         \
    "    memory: 80Gi\n"                                                     \
    "    interconnect: nvlink\n"                                             \
    "    efa: 0\n"                                                           \
    "    gpuDirectRDMA: false\n"                                             \
    "    hostMemory: 1024Gi\n"                                               \
    "    shm: 128Gi\n"

/* The text of a file of the repository, owned; NULL when it cannot be read. */
static char *
read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (text = calloc(1, (size_t)n + 1)) &&
        fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

/* snapshot_print() past its first line, which names the origin. */
static char *
print_body(const struct snapshot *s)
{
    char *text = s ? snapshot_print(s) : NULL, *nl;

    if (text && (nl = strchr(text, '\n')))
        memmove(text, nl + 1, strlen(nl + 1) + 1);
    return text;
}

static void
test_overlay_change_and_add(void)
{
    char text[4096];
    struct load_error err;
    struct snapshot *e = snapshot_parse_embedded(NULL, &err), *s, *again;
    const struct instance_type *t, *te;
    char *first = NULL, *second = NULL;

    /* Line 1: mode; 3-13: p4d.24xlarge without env; 14-23: a new type. */
    snprintf(text, sizeof(text),
             "mode: warn\n"
             "instanceTypes:\n"
             "  - name: p4d.24xlarge\n"
             "    accelerator: A100\n"
             "    resource: nvidia.com/gpu\n"
             "    count: 8\n"
             "    memory: 40Gi\n"
             "    interconnect: nvswitch\n"
             "    efa: 4\n"
             "    gpuDirectRDMA: true\n"
             "    hostMemory: 1152Gi\n"
             "    shm: 64Gi\n"
             "    nvlinkGBps: 600\n" TYPE_NEW);
    s = load(text, &err);
    CHECK(e != NULL && s != NULL);
    if (e == NULL || s == NULL) {
        fprintf(stderr, "%d:%d: %s\n", err.line, err.column, err.message);
        snapshot_unref(e);
        snapshot_unref(s);
        return;
    }
    CHECK(s->merged);
    CHECK_INT(s->n_types, e->n_types + 1);
    CHECK_INT(s->n_products, e->n_products);
    CHECK_INT(s->mode, MODE_WARN);
    CHECK_INT(s->unknown, e->unknown);
    /* Replaced whole: the file's row has no env, so none is inherited. */
    t = snapshot_lookup(s, "p4d.24xlarge");
    CHECK_STR(t ? t->shm : NULL, "64Gi");
    CHECK_INT(t ? (long)t->n_env : -1, 0);
    CHECK_INT(t ? t->nvlink_gbps : -1, 600);
    /* The embedded rows the file leaves come first, then the file's. */
    CHECK_STR(s->types[s->n_types - 2].name, "p4d.24xlarge");
    CHECK_STR(s->types[s->n_types - 1].name, "p9.test");
    CHECK(!s->type_sources[s->n_types - 2].embedded);
    CHECK_INT(s->type_sources[s->n_types - 2].line, 3);
    CHECK_INT(s->type_sources[s->n_types - 1].line, 14);
    CHECK(s->type_sources[0].embedded && s->product_sources[0].embedded);
    t = snapshot_lookup(s, "p5.48xlarge");
    te = snapshot_lookup(e, "p5.48xlarge");
    CHECK(t && te && t->n_env == te->n_env && t->efa == te->efa &&
          strcmp(t->shm, te->shm) == 0);
    /* -o yaml: the whole merged table, with the switch that keeps it so. */
    first = snapshot_print(s);
    CHECK(first && strstr(first, "\nbase: empty\n"));
    again = first ? load(first, &err) : NULL;
    CHECK(again != NULL && !again->merged);
    CHECK_INT(again ? again->n_types : 0, s->n_types);
    CHECK(again && !again->type_sources[0].embedded);
    second = again ? snapshot_print(again) : NULL;
    CHECK(first && second && strchr(first, '\n') && strchr(second, '\n'));
    if (first && second && strchr(first, '\n') && strchr(second, '\n'))
        CHECK_STR(strchr(first, '\n'), strchr(second, '\n'));
    free(first);
    free(second);
    snapshot_unref(again);
    snapshot_unref(s);
    snapshot_unref(e);
}

/* Settings alone: the tables stay the embedded ones; inject key by key. */
static void
test_overlay_settings(void)
{
    struct load_error err;
    struct snapshot *e = snapshot_parse_embedded(NULL, &err);
    struct snapshot *s = load("mode: audit\n"
                              "inject: {hostIPC: false}\n"
                              "namespaces:\n"
                              "  - name: research\n"
                              "    instanceType: p5.48xlarge\n"
                              "jobs: {repack: true}\n",
                              &err);
    char *a = NULL, *b = NULL;

    CHECK(e != NULL && s != NULL);
    if (e == NULL || s == NULL) {
        fprintf(stderr, "%d:%d: %s\n", err.line, err.column, err.message);
        snapshot_unref(e);
        snapshot_unref(s);
        return;
    }
    CHECK_INT(s->mode, MODE_AUDIT);
    CHECK(!s->inject.host_ipc && s->inject.efa && s->inject.shm);
    CHECK(s->repack);
    CHECK_INT(s->n_runtime_types, 0);
    CHECK_STR(snapshot_job_type(s, "research", NULL), "p5.48xlarge");
    CHECK_INT(s->n_types, e->n_types);
    CHECK_INT(s->n_products, e->n_products);
    /* Same tables, row for row. */
    a = print_body(s);
    b = print_body(e);
    CHECK(a && b && strstr(a, "\ninstanceTypes:") &&
          strstr(b, "\ninstanceTypes:"));
    if (a && b && strstr(a, "\ninstanceTypes:") &&
        strstr(b, "\ninstanceTypes:"))
        CHECK_STR(strstr(a, "\ninstanceTypes:"),
                  strstr(b, "\ninstanceTypes:"));
    free(a);
    free(b);
    snapshot_unref(s);
    snapshot_unref(e);
}

/*
 * Whole files load as before: deploy/policy.yaml itself, the chart's copy
 * (what its ConfigMap mounts), and the golden cases' way (a top, then
 * deploy/policy.yaml from instanceTypes on) give what the embedded policy
 * gives; with `base: empty` too.
 */
static void
test_overlay_whole_files(void)
{
    struct load_error err;
    struct snapshot *e = snapshot_parse_embedded(NULL, &err), *s;
    char *deploy = read_text("deploy/policy.yaml"), *table, *golden = NULL;
    char *want = print_body(e), *got;

    CHECK(e != NULL && deploy != NULL);
    if (e == NULL || deploy == NULL)
        goto done;
    s = load(deploy, &err);
    got = print_body(s);
    CHECK_STR(got, want);
    free(got);
    snapshot_unref(s);
    table = read_text("charts/topogate/policy.yaml");
    CHECK(table != NULL);
    s = table ? load(table, &err) : NULL;
    got = print_body(s);
    CHECK_STR(got, want);
    free(got);
    free(table);
    snapshot_unref(s);
    table = strstr(deploy, "\ninstanceTypes:\n");
    CHECK(table != NULL);
    if (table == NULL)
        goto done;
    golden = calloc(1, strlen(table) + 64);
    if (golden == NULL)
        goto done;
    for (int empty = 0; empty < 2; empty++) {
        snprintf(golden, strlen(table) + 64, "%smode: enforce%s",
                 empty ? "base: empty\n" : "", table);
        s = load(golden, &err);
        CHECK(s != NULL && s->merged == !empty);
        got = print_body(s);
        CHECK_STR(got, want);
        free(got);
        snapshot_unref(s);
    }
    /* A whole table of one row with base: empty is that one row. */
    snprintf(golden, strlen(table) + 64, "base: empty\ninstanceTypes:\n%s",
             TYPE_NEW);
    s = load(golden, &err);
    CHECK(s != NULL && !s->merged);
    CHECK_INT(s ? s->n_types : 0, 1);
    CHECK_INT(s ? s->n_products : 1, 0);
    CHECK(s && !s->type_sources[0].embedded && s->type_sources[0].line == 3);
    snapshot_unref(s);
done:
    free(golden);
    free(deploy);
    free(want);
    snapshot_unref(e);
}

static void
test_overlay_errors(void)
{
    char text[2048];

    expect_error("base: nothing\n", 1, 7,
                 "base must be embedded or empty, not 'nothing'");
    expect_error("instanceTypes: {}\n", 1, 16, "instanceTypes must be a list");
    /* Still refused inside the file: a name twice. */
    snprintf(text, sizeof(text), "instanceTypes:\n" TYPE_NEW TYPE_NEW);
    expect_error(text, 12, 5, "instance type 'p9.test' listed twice");
    /* Checked against the embedded rows the file keeps, at the file. */
    expect_error("gpuProducts:\n"
                 "  - name: H100-mine\n"
                 "    accelerator: H100\n"
                 "    labels: [H100]\n",
                 4, 14, "label value 'H100' already names 'H100-SXM'");
    /* A namespace may name an embedded type; an unknown one is refused. */
    expect_error("namespaces: [{name: a, instanceType: p9.mega}]\n", 1, 38,
                 "instanceType 'p9.mega' is not in instanceTypes");
}
/* END overlays */

/* BEGIN env-profiles (issue 45, point 1) */
#define PROFILE_HEAD                                                         \
    "envProfiles:\n"                                                         \
    "  - name: old\n"                                                        \
    "    env:\n"                                                             \
    "      - {name: FI_PROVIDER, value: efa, rows: efa, versions: a, "        \
    "source: b, why: c}\n"                                                   \
    "      - {name: FI_EFA_USE_DEVICE_RDMA, value: \"1\", rows: efa-gdr, "   \
    "versions: a, source: b, why: c}\n"                                      \
    "      - {name: NCCL_DEBUG, value: INFO, rows: all, versions: a, "        \
    "source: b, why: c}\n"

/* The value of env name on row type of s, or NULL; *profile, whose it is. */
static const char *
env_of(const struct snapshot *s, const char *type, const char *name,
       const char **profile)
{
    const struct instance_type *t = snapshot_lookup(s, type);

    for (size_t i = 0; t && i < t->n_env; i++) {
        if (strcmp(t->env[i].name, name) == 0) {
            *profile = t->env[i].profile;
            return t->env[i].value;
        }
    }
    return NULL;
}

static void
test_env_profiles(void)
{
    struct load_error err;
    struct snapshot *s = snapshot_parse_embedded(NULL, &err), *b;
    const char *from = NULL;
    char *first, *second, text[2048];

    /* By default no row injects anything, and legacy-efa is off. */
    CHECK(s != NULL);
    if (s == NULL)
        return;
    CHECK(s->env_profile == NULL);
    CHECK_INT(s->n_env_profiles, 1);
    for (size_t i = 0; i < s->n_types; i++)
        CHECK_INT(s->types[i].n_env, 0);
    snapshot_unref(s);

    /* On: FI_PROVIDER on every EFA row, device RDMA only with GDR. */
    s = load("envProfile: legacy-efa\n", &err);
    CHECK(s != NULL);
    if (s == NULL)
        return;
    CHECK_STR(env_of(s, "p4d.24xlarge", "FI_PROVIDER", &from), "efa");
    CHECK_STR(from, "legacy-efa");
    CHECK_STR(env_of(s, "p4d.24xlarge", "FI_EFA_USE_DEVICE_RDMA", &from),
              "1");
    CHECK_STR(env_of(s, "g5.12xlarge", "FI_PROVIDER", &from), "efa");
    CHECK(env_of(s, "g5.12xlarge", "FI_EFA_USE_DEVICE_RDMA", &from) == NULL);
    CHECK(env_of(s, "g5.xlarge", "FI_PROVIDER", &from) == NULL);
    CHECK(env_of(s, "Standard_ND96isr_H100_v5", "FI_PROVIDER", &from) ==
          NULL);
    CHECK(env_of(s, "a3-ultragpu-8g", "FI_PROVIDER", &from) == NULL);
    /* Printed as the setting, not into the rows: it reads back the same. */
    first = snapshot_print(s);
    CHECK(first != NULL && strstr(first, "envProfile: legacy-efa\n"));
    b = first ? load(first, &err) : NULL;
    second = b ? snapshot_print(b) : NULL;
    CHECK_STR(first, second);
    free(first);
    free(second);
    snapshot_unref(b);
    snapshot_unref(s);

    /* A row's own variable wins over the profile's of the same name. */
    snprintf(text, sizeof(text),
             PROFILE_HEAD "envProfile: old\ninstanceTypes:\n" TYPE_P4D,
             "true");
    s = load(text, &err);
    CHECK(s != NULL);
    if (s == NULL) {
        fprintf(stderr, "%d:%d: %s\n", err.line, err.column, err.message);
        return;
    }
    CHECK_STR(env_of(s, "p4d.24xlarge", "FI_EFA_USE_DEVICE_RDMA", &from),
              "1");
    CHECK(from == NULL);
    CHECK_STR(env_of(s, "p4d.24xlarge", "NCCL_DEBUG", &from), "INFO");
    CHECK_STR(from, "old");
    CHECK_STR(env_of(s, "p3.2xlarge", "NCCL_DEBUG", &from), "INFO");
    CHECK(env_of(s, "p3.2xlarge", "FI_PROVIDER", &from) == NULL);
    snapshot_unref(s);
}

static void
test_env_profile_errors(void)
{
    expect_error("envProfile: old\n", 1, 13,
                 "envProfile 'old' is not in envProfiles (or say none)");
    expect_error("envProfiles:\n  - name: none\n    env: []\n", 2, 11,
                 "'none' is no profile's name: it turns profiles off");
    expect_error("envProfiles:\n  - name: x\n    env:\n"
                 "      - {name: FI_PROVIDER, value: efa, rows: all, "
                 "versions: a, source: b, why: c}\n",
                 4, 9, "FI_PROVIDER is for EFA rows only (rows: efa or "
                       "efa-gdr)");
    expect_error("envProfiles:\n  - name: x\n    env:\n"
                 "      - {name: FI_EFA_USE_DEVICE_RDMA, value: \"1\", "
                 "rows: efa, versions: a, source: b, why: c}\n",
                 4, 9, "FI_EFA_USE_DEVICE_RDMA goes only to rows with EFA "
                       "and GPUDirect RDMA (rows: efa-gdr)");
    expect_error("envProfiles:\n  - name: x\n    env:\n"
                 "      - {name: A, value: b, rows: some, versions: a, "
                 "source: b, why: c}\n",
                 4, 35, "rows must be all, efa or efa-gdr, not 'some'");
    expect_error("envProfiles:\n  - name: x\n    env:\n"
                 "      - {name: A, value: b, rows: all, why: c}\n",
                 4, 9, "an env entry needs 'versions'");
    expect_error("envProfiles:\n  - name: x\n    env: []\n"
                 "  - name: x\n    env: []\n",
                 4, 11, "env profile 'x' listed twice");
    /* A row's own entry carries its versions and source, and no rows. */
    expect_error("instanceTypes:\n  - name: p4d.24xlarge\n"
                 "    accelerator: A100\n    resource: nvidia.com/gpu\n"
                 "    count: 8\n    memory: 40Gi\n"
                 "    interconnect: nvswitch\n    efa: 4\n"
                 "    gpuDirectRDMA: true\n    hostMemory: 1152Gi\n"
                 "    shm: 144Gi\n"
                 "    env: [{name: A, value: b, why: c, source: d}]\n",
                 12, 11, "an env entry needs 'versions'");
    expect_error("instanceTypes:\n  - name: p4d.24xlarge\n"
                 "    accelerator: A100\n    resource: nvidia.com/gpu\n"
                 "    count: 8\n    memory: 40Gi\n"
                 "    interconnect: nvswitch\n    efa: 4\n"
                 "    gpuDirectRDMA: true\n    hostMemory: 1152Gi\n"
                 "    shm: 144Gi\n"
                 "    env: [{name: A, value: b, why: c, versions: v, "
                 "source: d, rows: all}]\n",
                 12, 63, "unknown key 'rows' in an env entry");
}
/* END env-profiles */

/*
 * frameworks: each switch defaults to warn, merges key by key over the
 * embedded policy, prints only where it differs from warn, and reads
 * back the same; warn lowers enforce to warn and leaves audit alone.
 */
static void
test_frameworks(void)
{
    struct load_error err;
    struct snapshot *e = snapshot_parse_embedded(NULL, &err);
    struct snapshot *s = load("frameworks: {ray: off, podGroup: enforce, "
                              "jobSet: audit}\n"
                              "namespaces:\n"
                              "  - name: research\n"
                              "    mode: audit\n",
                              &err);
    struct snapshot *again = NULL;
    char *a = NULL, *b = NULL;

    CHECK(e != NULL && s != NULL);
    if (e == NULL || s == NULL) {
        snapshot_unref(e);
        snapshot_unref(s);
        return;
    }
    for (int i = 1; i < FRAMEWORK_N; i++)
        CHECK_INT(e->frameworks[i], FRAMEWORK_WARN);
    CHECK_INT(s->frameworks[FRAMEWORK_RAY], FRAMEWORK_OFF);
    CHECK_INT(s->frameworks[FRAMEWORK_GANG], FRAMEWORK_ENFORCE);
    CHECK_INT(s->frameworks[FRAMEWORK_LWS], FRAMEWORK_WARN);
    CHECK_INT(snapshot_framework_mode(s, "ml", FRAMEWORK_LWS), MODE_WARN);
    CHECK_INT(snapshot_framework_mode(s, "ml", FRAMEWORK_GANG), MODE_ENFORCE);
    CHECK_INT(snapshot_framework_mode(s, "ml", FRAMEWORK_NONE), MODE_ENFORCE);
    CHECK_INT(snapshot_framework_mode(s, "research", FRAMEWORK_LWS),
              MODE_AUDIT);
    CHECK_INT(snapshot_framework_mode(s, "ml", FRAMEWORK_JOBSET), MODE_AUDIT);
    a = snapshot_print(s);
    CHECK(a && strstr(a, "frameworks:\n  ray: off\n  jobSet: audit\n"
                         "  podGroup: enforce\n"));
    if (a)
        again = snapshot_parse(a, strlen(a), "printed", NULL, &err);
    CHECK(again != NULL);
    if (again) {
        b = snapshot_print(again);
        CHECK(b && strchr(a, '\n') && strchr(b, '\n'));
        if (b && strchr(a, '\n') && strchr(b, '\n'))
            CHECK_STR(strchr(a, '\n'), strchr(b, '\n'));
    }
    free(a);
    free(b);
    /* The embedded policy says every default: nothing to print. */
    a = snapshot_print(e);
    CHECK(a && strstr(a, "frameworks:") == NULL);
    free(a);
    expect_error("frameworks: {ray: maybe}\ninstanceTypes: []\n", 1, 19,
                 "frameworks.ray must be off, audit, warn or enforce, not "
                 "'maybe'");
    expect_error("frameworks: {rays: off}\ninstanceTypes: []\n", 1, 14,
                 "unknown key 'rays' in frameworks");
    snapshot_unref(again);
    snapshot_unref(s);
    snapshot_unref(e);
}

int
main(void)
{
    test_embedded();
    test_print_stable();
    test_namespaces();
    test_errors();
    test_print_escapes_line_breaks();
    test_nic_resources();
    test_product_errors();
    test_gke_networks();
    test_gke_network_errors();
    test_product_print();
    test_overlay_change_and_add();
    test_overlay_settings();
    test_overlay_whole_files();
    test_overlay_errors();
    test_env_profiles();
    test_env_profile_errors();
    test_frameworks();
    CHECK_DONE();
}
