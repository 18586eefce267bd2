/*
 * The matcher against test/unit/cases/node-affinity.json: named cases
 * written from the API documentation (node affinity, taints and
 * tolerations), each a pod spec, a node and whether the pod fits it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "policy/k8s/match.h"
#include "test/unit/check.h"
#include "test/unit/node_fit.h"

#define CASES "test/unit/cases/node-affinity.json"

int
main(void)
{
    FILE *f = fopen(CASES, "rb");
    static char text[1 << 16];
    size_t len = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
    cJSON *cases, *c;

    if (f)
        fclose(f);
    text[len] = '\0';
    cases = cJSON_Parse(text);
    CHECK(cases != NULL && cJSON_GetArraySize(cases) > 30);
    cJSON_ArrayForEach(c, cases)
    {
        bool want = cJSON_IsTrue(cJSON_GetObjectItem(c, "want"));
        bool got = node_fits(cJSON_GetObjectItem(c, "pod"),
                             cJSON_GetObjectItem(c, "node"), false);
        if (got != want)
            fprintf(stderr, "case '%s': want %d, got %d\n",
                    cJSON_GetStringValue(cJSON_GetObjectItem(c, "comment")),
                    want, got);
        CHECK_INT(got, want);
    }
    cJSON_Delete(cases);
    CHECK_DONE();
}
