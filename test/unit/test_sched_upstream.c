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

#define CASES "test/sched/upstream-cases.json"
#define MAX 16

static int
label_cmp(const void *a, const void *b)
{
    return strcmp(((const struct label *)a)->key,
                  ((const struct label *)b)->key);
}

static bool
schedules(const struct taint *t)
{
    return strcmp(t->effect, "NoSchedule") == 0 ||
           strcmp(t->effect, "NoExecute") == 0;
}

static const char *
str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
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
    {
        CHECK(n_labels < MAX);
        labels[n_labels++] = (struct label){it->string, it->valuestring};
    }
    qsort(labels, n_labels, sizeof(labels[0]), label_cmp);
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(node, "taints"))
    {
        CHECK(n_taints < MAX);
        /* A Go Taint's zero Value is "". */
        taints[n_taints++] = (struct taint){
            str(it, "key"), str(it, "value") ? str(it, "value") : "",
            str(it, "effect")};
    }
    CHECK(match_parse(pod, &m) == 0);
    ok = match_node(&m, &(struct label_set){labels, n_labels},
                    str(node, "name") ? str(node, "name") : "", NULL) &&
         match_untolerated(&m, taints, n_taints, schedules, NULL, 0) == NULL;
    match_free(&m);
    return ok;
}

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
        if (str(c, "skip")) {
            skipped++;
            continue;
        }
        bool want = cJSON_IsTrue(cJSON_GetObjectItem(c, "want"));
        bool got =
            fits(cJSON_GetObjectItem(c, "pod"), cJSON_GetObjectItem(c, "node"));
        if (got != want)
            fprintf(stderr, "%s %s '%s': want %d, got %d\n", str(c, "source"),
                    str(c, "test"), str(c, "name"), want, got);
        CHECK_INT(got, want);
        run++;
    }
    printf("# %d upstream cases agree, %d skipped (see their reason)\n", run,
           skipped);
    CHECK(run >= 70);
    cJSON_Delete(doc);
    CHECK_DONE();
}
