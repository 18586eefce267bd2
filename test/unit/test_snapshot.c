/* The policy loader: the default policy, its errors, and print stability. */
#include <stdlib.h>

#include "policy/snapshot.h"
#include "test/unit/check.h"

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
    "        why: GPUDirect RDMA over EFA\n"

/* Loads text; on failure returns NULL with err filled. */
static struct snapshot *
load(const char *text, struct load_error *err)
{
    return snapshot_parse(text, strlen(text), "test.yaml", err);
}

static void
expect_error(const char *text, int line, int column, const char *message)
{
    struct load_error err;
    struct snapshot *s = load(text, &err);

    CHECK(s == NULL);
    snapshot_unref(s);
    CHECK_INT(err.line, line);
    CHECK_INT(err.column, column);
    CHECK_STR(err.message, message);
}

static void
test_embedded(void)
{
    struct load_error err;
    struct snapshot *s = snapshot_parse_embedded(&err);
    const struct instance_type *t;

    CHECK(s != NULL);
    if (s == NULL)
        return;
    CHECK_INT(s->n_types, 32);
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
    struct snapshot *a = snapshot_parse_embedded(&err), *b;
    char *first, *second;

    snapshot_force_mode(a, MODE_WARN);
    first = snapshot_print(a);
    b = snapshot_parse(first, strlen(first), "embedded", &err);
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
    snapshot_force_mode(s, MODE_AUDIT);
    CHECK_INT(snapshot_mode_for(s, "research"), MODE_AUDIT);
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
    expect_error("mode: warn\n", 1, 1, "the policy needs 'instanceTypes'");
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
    expect_error(text, 16, 5, "instance type 'p4d.24xlarge' listed twice");
}

int
main(void)
{
    test_embedded();
    test_print_stable();
    test_namespaces();
    test_errors();
    CHECK_DONE();
}
