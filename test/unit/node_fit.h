/*
 * node_fit.h - whether a pod spec fits a node written as test data
 * ({"name", "labels": {k: v}, "taints": [{key, value, effect}]}): its
 * node affinity and selector and the scheduler's taint filter. With
 * by_name, the node's name counts (a Go Node's zero name is "");
 * without, it is unknown. Shared by the
 * matcher's own cases and upstream's.
 */
#ifndef TOPOGATE_TEST_NODE_FIT_H
#define TOPOGATE_TEST_NODE_FIT_H

#include <stdlib.h>
#include <string.h>

#include "policy/k8s/match.h"
#include "test/unit/check.h"

#define NODE_FIT_MAX 32

static int
node_fit_label_cmp(const void *a, const void *b)
{
    return strcmp(((const struct label *)a)->key,
                  ((const struct label *)b)->key);
}

/* The scheduler's filter: only these effects keep a pod off a node. */
static bool
node_fit_schedules(const struct taint *t)
{
    return strcmp(t->effect, "NoSchedule") == 0 ||
           strcmp(t->effect, "NoExecute") == 0;
}

static const char *
node_fit_str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static bool
node_fits(const cJSON *pod, const cJSON *node, bool by_name)
{
    struct label labels[NODE_FIT_MAX];
    struct taint taints[NODE_FIT_MAX];
    size_t n_labels = 0, n_taints = 0;
    const char *name = node_fit_str(node, "name");
    const cJSON *it;
    struct label_set set;
    struct match m;
    bool ok;

    cJSON_ArrayForEach(it, cJSON_GetObjectItem(node, "labels"))
    {
        CHECK(n_labels < NODE_FIT_MAX);
        labels[n_labels++] = (struct label){it->string, it->valuestring};
    }
    qsort(labels, n_labels, sizeof(labels[0]), node_fit_label_cmp);
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(node, "taints"))
    {
        const char *value = node_fit_str(it, "value");

        CHECK(n_taints < NODE_FIT_MAX);
        /* A Go Taint's zero Value is "". */
        taints[n_taints++] =
            (struct taint){node_fit_str(it, "key"), value ? value : "",
                           node_fit_str(it, "effect")};
    }
    CHECK(match_parse(pod, &m) == 0);
    set = (struct label_set){labels, n_labels};
    ok = (by_name ? match_node(&m, &set, name ? name : "", NULL)
                  : match_labels(&m, &set, NULL)) &&
         match_untolerated(&m, taints, n_taints, node_fit_schedules, NULL, 0) ==
             NULL;
    match_free(&m);
    return ok;
}

#endif
