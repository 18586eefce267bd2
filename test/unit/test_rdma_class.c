/*
 * table_rdma_class() against test/unit/cases/rdma-resources.json: named
 * cases, each an extended resource name and what it is (an RDMA NIC, a
 * shared plugin's slot, or neither), written from
 * shared/research/cluster-view-facts.md 1.5-1.7 and platform-facts.md.
 */
#include <stdio.h>
#include <stdlib.h>

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
    cJSON_Delete(cases);
    CHECK_DONE();
}
