/*
 * The GPU-product table of the embedded policy against
 * test/unit/cases/gpu-products.json: named cases written from
 * docs/facts/node-labels.md and docs/facts/gpu-products.md, each a
 * node label value and GPU count, and the product and interconnect they
 * must give ("unknown" where the product alone does not say).
 */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "policy/table/snapshot.h"
#include "test/unit/check.h"

#define CASES "test/unit/cases/gpu-products.json"

static const char *
str(const cJSON *c, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(c, key));
}

static void
check_case(const struct snapshot *s, const cJSON *c)
{
    const char *label = str(c, "label"), *want = str(c, "product");
    const cJSON *memory = cJSON_GetObjectItem(c, "memory");
    int gpus = cJSON_GetObjectItem(c, "gpus")->valueint;
    const struct gpu_product *p = snapshot_product(s, label);
    enum interconnect link;
    const char *got_link, *want_link = str(c, "link");

    if (want == NULL) {
        CHECK_STR(p ? p->name : "(none)", "(none)");
        return;
    }
    CHECK_STR(p ? p->name : "(none)", want);
    if (p == NULL)
        return;
    if (str(c, "accelerator"))
        CHECK_STR(p->accelerator, str(c, "accelerator"));
    if (cJSON_IsNull(memory))
        CHECK_STR(p->memory ? p->memory : "(none)", "(none)");
    else if (memory)
        CHECK_STR(p->memory ? p->memory : "(none)", memory->valuestring);
    got_link = product_link(p, gpus, &link) ? link_name(link) : "unknown";
    CHECK_STR(got_link, want_link);
    /* Nothing that does not say NVLink may read as NVLink. */
    if (strcmp(want_link, "unknown") == 0 && product_link(p, gpus, &link))
        CHECK(!link_is_nvlink(link));
}

int
main(void)
{
    static char text[1 << 16];
    struct load_error err;
    struct snapshot *s = snapshot_parse_embedded(NULL, &err);
    FILE *f = fopen(CASES, "rb");
    size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    cJSON *cases, *c;

    if (f)
        fclose(f);
    text[len] = '\0';
    CHECK(s != NULL);
    if (s == NULL) {
        fprintf(stderr, "%d:%d: %s\n", err.line, err.column, err.message);
        CHECK_DONE();
    }
    cases = cJSON_Parse(text);
    CHECK(cases != NULL && cJSON_GetArraySize(cases) >= 40);
    cJSON_ArrayForEach(c, cases)
    {
        int before = check_failures;

        check_case(s, c);
        if (check_failures != before)
            fprintf(stderr, "  in case '%s' (%s, %d GPUs)\n", str(c, "comment"),
                    str(c, "label"), cJSON_GetObjectItem(c, "gpus")->valueint);
    }
    CHECK(!link_is_nvlink(LINK_UNKNOWN));
    cJSON_Delete(cases);
    snapshot_unref(s);
    CHECK_DONE();
}
