/*
 * fuzz_manifest.c - libFuzzer target: manifest bytes through what
 * `topogate audit` does with a document: YAML -> JSON (scalars as
 * kubectl resolves them), the placeholder scan, the values the apiserver
 * refuses for their type, then expansion, decide() per pod, the job-level decision and the
 * manifest lint (audit_object()), with runtimes from the same input and
 * a cluster view of the Nodes and Kueue objects among the documents, as
 * `audit` builds it.
 *
 * The embedded policy is loaded once. Beyond "no crash, no leak, no
 * undefined behaviour", an expanded workload's outcome must be one the
 * report knows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/audit/audit.h"
#include "policy/table/snapshot.h"
#include "policy/view/view.h"
#include "test/fuzz/embedded_policy.h"
#include "policy/k8s/yamljson.h"
#include "policy/k8s/yamltypes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Documents per input worth looking at; more only repeats the work. */
#define FUZZ_DOCS 16

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *objs[FUZZ_DOCS];
    const cJSON *runtimes[FUZZ_DOCS];
    struct runtimes rt = {runtimes, 0};
    struct load_error err;
    struct ytree *tree;
    size_t n = 0;
    char path[256];
    /* An exact-size copy: a read past size is a heap overflow for ASan. */
    char *bytes = malloc(size > 0 ? size : 1);

    if (bytes == NULL)
        return 0;
    memcpy(bytes, data, size);
    tree = ytree_parse(bytes, size, &err);
    for (size_t i = 0; tree && i < tree->n_docs && n < FUZZ_DOCS; i++) {
        cJSON *obj = yaml_to_json(tree->docs[i], &err);
        if (obj == NULL)
            continue;
        (void)yaml_find_placeholder(tree->docs[i], path, sizeof(path));
        {
            struct yaml_refused refused;
            if (yaml_find_refused(tree->docs[i], &refused) &&
                (refused.node == NULL || refused.message[0] == '\0'))
                abort(); /* a refusal names its value and says why */
        }
        if (expand_is_runtime(obj))
            runtimes[rt.n++] = obj;
        objs[n++] = obj;
    }
    struct view_index *x = view_index_new();
    struct view *view = NULL;
    for (size_t i = 0; x && i < n; i++)
        if (view_index_put(x, objs[i]) < 0)
            abort();
    if (x && (view = view_build(x)) == NULL)
        abort();
    for (size_t i = 0; i < n; i++) {
        struct audit_item item;
        if (audit_object(fuzz_snapshot, view, objs[i], &rt, &item) != 0)
            abort(); /* out of memory cannot happen at these sizes */
        if (item.outcome > OUTCOME_DENY)
            abort();
        audit_item_free(&item);
    }
    view_unref(view);
    view_index_free(x);
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(objs[i]);
    ytree_free(tree);
    free(bytes);
    return 0;
}
