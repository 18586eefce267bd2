/*
 * table_rdma_class() against test/unit/cases/rdma-resources.json: named
 * cases, each an extended resource name and what it is (an RDMA NIC, a
 * shared plugin's slot, or neither), written from
 * docs/facts/node-labels.md#rdma-nic-resources.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/table/table.h"
#include "test/unit/check.h"

#define CASES "test/unit/cases/rdma-resources.json"

static const char *
class_name(enum rdma_class c)
{
    switch (c) {
    case RDMA_NICS:
        return "nics";
    case RDMA_SLOTS:
        return "slots";
    case RDMA_NONE:
        break;
    }
    return "none";
}

/*
 * The lists `topogate tables` prints: every name says who advertises it
 * and where that is written, and a whole name (no '*') is of the class
 * of its list.
 */
static void
check_names(enum rdma_class class)
{
    size_t n;
    const struct rdma_name *names = table_rdma_names(class, &n);

    CHECK(n > 0);
    for (size_t i = 0; i < n; i++) {
        CHECK(names[i].who != NULL && names[i].who[0] != '\0');
        CHECK(names[i].source != NULL && names[i].source[0] != '\0');
        if (strchr(names[i].pattern, '*') == NULL &&
            (class == RDMA_SLOTS ||
             table_rdma_class(names[i].pattern) != RDMA_SLOTS))
            CHECK_STR(class_name(table_rdma_class(names[i].pattern)),
                      class_name(class));
    }
}

int
main(void)
{
    static char text[1 << 14];
    FILE *f = fopen(CASES, "rb");
    size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    cJSON *cases, *c;

    if (f)
        fclose(f);
    text[len] = '\0';
    cases = cJSON_Parse(text);
    CHECK(cases != NULL && cJSON_GetArraySize(cases) >= 10);
    cJSON_ArrayForEach(c, cases)
    {
        const char *name =
            cJSON_GetStringValue(cJSON_GetObjectItem(c, "resource"));
        const char *want =
            cJSON_GetStringValue(cJSON_GetObjectItem(c, "class"));
        int before = check_failures;

        CHECK_STR(class_name(table_rdma_class(name)), want);
        if (check_failures != before)
            fprintf(stderr, "  in case '%s' (%s)\n",
                    cJSON_GetStringValue(cJSON_GetObjectItem(c, "comment")),
                    name);
    }
    CHECK_STR(class_name(table_rdma_class(NULL)), "none");
    check_names(RDMA_NICS);
    check_names(RDMA_SLOTS);
    cJSON_Delete(cases);
    CHECK_DONE();
}
