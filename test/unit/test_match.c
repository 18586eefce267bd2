/*
 * The matcher against test/unit/cases/node-affinity.json: named cases
 * written from the API documentation (node affinity, taints and
 * tolerations), each a pod spec, a node and whether the pod fits it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "policy/k8s/match.h"
#include "test/unit/check.h"

#define CASES "test/unit/cases/node-affinity.json"
#define MAX 32

static int
label_cmp(const void *a, const void *b)
{
    return strcmp(((const struct label *)a)->key,
                  ((const struct label *)b)->key);
}

/* The scheduler's filter: only these effects keep a pod off a node. */
static bool
schedules(const struct taint *t)
{
    return strcmp(t->effect, "NoSchedule") == 0 ||
           strcmp(t->effect, "NoExecute") == 0;
}

static bool
fits(const cJSON *pod, const cJSON *node)
{
    struct label labels[MAX];
    struct taint taints[MAX];
    size_t n_labels = 0, n_taints = 0;
    const cJSON *it;
    struct match m;
    bool ok;

    cJSON_ArrayForEach(it, cJSON_GetObjectItem(node, "labels"))
        labels[n_labels++] = (struct label){it->string, it->valuestring};
    qsort(labels, n_labels, sizeof(labels[0]), label_cmp);
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(node, "taints"))
    {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(it, "value"));
        taints[n_taints++] = (struct taint){
            cJSON_GetStringValue(cJSON_GetObjectItem(it, "key")), v ? v : "",
            cJSON_GetStringValue(cJSON_GetObjectItem(it, "effect"))};
    }
    CHECK(match_parse(pod, &m) == 0);
    ok = match_labels(&m, &(struct label_set){labels, n_labels}, NULL) &&
         match_untolerated(&m, taints, n_taints, schedules, NULL, 0) == NULL;
    match_free(&m);
    return ok;
}

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
        bool got =
            fits(cJSON_GetObjectItem(c, "pod"), cJSON_GetObjectItem(c, "node"));
        if (got != want)
            fprintf(stderr, "case '%s': want %d, got %d\n",
                    cJSON_GetStringValue(cJSON_GetObjectItem(c, "comment")),
                    want, got);
        CHECK_INT(got, want);
    }
    cJSON_Delete(cases);
    CHECK_DONE();
}
