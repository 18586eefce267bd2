/*
 * The matcher against the Kubernetes projects' own scheduling tests,
 * written as data in test/sched/upstream-cases.json (node affinity,
 * NodeName, taints and tolerations; upstream names, paths and commits in
 * the file). Each case not marked "skip" must get upstream's answer:
 * NodeName and NodeAffinity (match_node() with the node's name) and the
 * TaintToleration filter (NoSchedule and NoExecute taints).
 */
#include <stdio.h>
#include <stdlib.h>

#include "policy/k8s/match.h"
#include "test/unit/check.h"
#include "test/unit/node_fit.h"

#define CASES "test/sched/upstream-cases.json"

int
main(void)
{
    FILE *f = fopen(CASES, "rb");
    char *text = malloc(1 << 20);
    size_t len = f && text ? fread(text, 1, (1 << 20) - 1, f) : 0;
    cJSON *doc, *c;
    int run = 0, skipped = 0;

    if (f)
        fclose(f);
    CHECK(text != NULL && len > 0);
    if (text == NULL)
        CHECK_DONE();
    text[len] = '\0';
    doc = cJSON_Parse(text);
    free(text);
    CHECK(doc != NULL);
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "cases"))
    {
        if (node_fit_str(c, "skip")) {
            skipped++;
            continue;
        }
        bool want = cJSON_IsTrue(cJSON_GetObjectItem(c, "want"));
        bool got = node_fits(cJSON_GetObjectItem(c, "pod"),
                             cJSON_GetObjectItem(c, "node"), true);
        if (got != want)
            fprintf(stderr, "%s %s '%s': want %d, got %d\n",
                    node_fit_str(c, "source"), node_fit_str(c, "test"),
                    node_fit_str(c, "name"), want, got);
        CHECK_INT(got, want);
        run++;
    }
    printf("# %d upstream cases agree, %d skipped (see their reason)\n", run,
           skipped);
    CHECK(run >= 70);
    cJSON_Delete(doc);
    CHECK_DONE();
}
