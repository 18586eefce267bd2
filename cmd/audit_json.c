/*
 * audit_json.c - the audit report for machines: one JSON document, its
 * shape documented in the README ("Audit"). Keys are stable; optional
 * ones are left out rather than null.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/audit.h"
#include "base/utf8.h"

static bool
add_string(cJSON *obj, const char *key, const char *value)
{
    return value == NULL || cJSON_AddStringToObject(obj, key, value);
}

static bool
add_strings(cJSON *obj, const char *key, char *const *items, size_t n)
{
    cJSON *arr;

    if (n == 0)
        return true;
    if ((arr = cJSON_AddArrayToObject(obj, key)) == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        cJSON *s = cJSON_CreateString(items[i]);
        if (s == NULL || !cJSON_AddItemToArray(arr, s)) {
            cJSON_Delete(s);
            return false;
        }
    }
    return true;
}

static cJSON *
patch_json(const struct decision *d)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; arr && i < d->n_ops; i++) {
        cJSON *op = cJSON_CreateObject();
        cJSON *v = cJSON_Parse(d->ops[i].value);
        if (op == NULL || !cJSON_AddItemToArray(arr, op) || v == NULL ||
            !cJSON_AddStringToObject(
                op, "op", d->ops[i].kind == OP_REPLACE ? "replace" : "add") ||
            !cJSON_AddStringToObject(op, "path", d->ops[i].path) ||
            !cJSON_AddItemToObject(op, "value", v)) {
            cJSON_Delete(v);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

/* decision, reason, fix, warnings, patch of one decision, into obj. */
static bool
decision_json(cJSON *obj, const struct decision *d)
{
    cJSON *patch;

    if (!add_string(obj, "decision", outcome_name(outcome_of(d))) ||
        !add_string(obj, "reason", d->reason) ||
        !add_string(obj, "fix", d->fix) ||
        !add_string(obj, "message", d->message) ||
        !add_strings(obj, "warnings", d->warnings, d->n_warnings))
        return false;
    if (d->n_ops == 0)
        return true;
    if ((patch = patch_json(d)) == NULL)
        return false;
    return cJSON_AddItemToObject(obj, "patch", patch);
}

static cJSON *
pod_json(const struct audit_pod *p, bool with_pods)
{
    cJSON *o = cJSON_CreateObject(), *pod;

    if (o == NULL || !add_string(o, "role", p->group->role) ||
        !cJSON_AddNumberToObject(o, "replicas", (double)p->group->replicas))
        goto fail;
    if (p->ignored) {
        if (!add_string(o, "decision", "allow") ||
            !add_string(o, "governed", "no") ||
            !add_string(o, "reason", p->ignored))
            goto fail;
    } else if (!decision_json(o, &p->d)) {
        goto fail;
    }
    if (with_pods && ((pod = cJSON_Duplicate(p->group->pod, true)) == NULL ||
                      !cJSON_AddItemToObject(o, "pod", pod))) {
        cJSON_Delete(pod);
        goto fail;
    }
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

/* Placeholders left in fields this decision does not read. */
static bool
unrendered_json(cJSON *o, const struct audit_doc *doc)
{
    cJSON *list = cJSON_AddArrayToObject(o, "unrendered");

    for (size_t i = 0; list && i < doc->n_unrendered; i++) {
        const struct audit_unrendered *u = &doc->unrendered[i];
        cJSON *item = cJSON_CreateObject();
        if (item == NULL || !cJSON_AddItemToArray(list, item) ||
            !add_string(item, "field", u->path) ||
            !add_string(item, "value", u->value) ||
            !cJSON_AddNumberToObject(item, "line", u->line) ||
            !add_string(item, "why", u->why ? u->why : ""))
            return false;
    }
    return list != NULL;
}

static cJSON *
workload_json(const struct audit_doc *doc, bool with_pods)
{
    const struct audit_item *it = &doc->item;
    cJSON *o = cJSON_CreateObject(), *pods, *job;

    if (o == NULL || !add_string(o, "kind", it->e.kind) ||
        !add_string(o, "apiVersion",
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                        doc->object, "apiVersion"))) ||
        !add_string(o, "namespace", it->e.namespace) ||
        !add_string(o, "name", it->e.name) ||
        !cJSON_AddNumberToObject(o, "line", doc->line) ||
        !add_string(o, "decision", outcome_name(it->outcome)) ||
        !add_string(o, "note", it->e.note) ||
        !add_strings(o, "mistakes", it->mistakes.lines, it->mistakes.n))
        goto fail;
    if (doc->n_unrendered > 0 && !unrendered_json(o, doc))
        goto fail;
    if (it->has_job && it->job.mode[0]) {
        if ((job = cJSON_AddObjectToObject(o, "job")) == NULL ||
            !decision_json(job, &it->job))
            goto fail;
    }
    if (it->n_pods > 0) {
        if ((pods = cJSON_AddArrayToObject(o, "pods")) == NULL)
            goto fail;
        for (size_t i = 0; i < it->n_pods; i++) {
            cJSON *p = pod_json(&it->pods[i], with_pods);
            if (p == NULL || !cJSON_AddItemToArray(pods, p)) {
                cJSON_Delete(p);
                goto fail;
            }
        }
    }
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

static cJSON *
summary_json(const struct audit_summary *sum, size_t files)
{
    cJSON *o = cJSON_CreateObject();

    if (o == NULL || !cJSON_AddNumberToObject(o, "files", (double)files) ||
        !cJSON_AddNumberToObject(o, "workloads", (double)sum->workloads))
        goto fail;
    for (int i = OUTCOME_DENY; i >= OUTCOME_SKIPPED; i--)
        if (!cJSON_AddNumberToObject(o, outcome_name((enum audit_outcome)i),
                                     (double)sum->by_outcome[i]))
            goto fail;
    if (!cJSON_AddNumberToObject(o, "mistakes", (double)sum->mistakes) ||
        !cJSON_AddNumberToObject(o, "errors", (double)sum->errors))
        goto fail;
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

/* The files array: each with its errors and workloads, in input order. */
static bool
files_json(cJSON *root, const struct audit_input *in, bool with_pods)
{
    cJSON *files = cJSON_AddArrayToObject(root, "files");

    for (size_t f = 0; files && f < in->n_files; f++) {
        cJSON *file = cJSON_CreateObject(), *errors, *mistakes = NULL,
              *workloads;
        if (file == NULL || !cJSON_AddItemToArray(files, file) ||
            !add_string(file, "path", in->files[f]) ||
            (errors = cJSON_AddArrayToObject(file, "errors")) == NULL ||
            (workloads = cJSON_AddArrayToObject(file, "workloads")) == NULL) {
            cJSON_Delete(file);
            return false;
        }
        for (size_t i = 0; i < in->n_docs; i++) {
            const struct audit_doc *d = &in->docs[i];
            cJSON *item;
            if (d->file != f)
                continue;
            if (d->error) {
                item = cJSON_CreateObject();
                if (item && (!cJSON_AddNumberToObject(item, "line", d->line) ||
                             !add_string(item, "message", d->error))) {
                    cJSON_Delete(item);
                    item = NULL;
                }
            } else {
                item = workload_json(d, with_pods);
            }
            /* "mistakes" only in a file that has one: the others' JSON
             * stays as it was. */
            if (d->refused && mistakes == NULL &&
                (mistakes = cJSON_AddArrayToObject(file, "mistakes")) == NULL) {
                cJSON_Delete(item);
                return false;
            }
            if (item == NULL ||
                !cJSON_AddItemToArray(d->refused ? mistakes
                                      : d->error ? errors
                                                 : workloads,
                                      item)) {
                cJSON_Delete(item);
                return false;
            }
        }
    }
    return files != NULL;
}

void
audit_put_json(FILE *out, const char *text)
{
    /*
     * cJSON prints a string's bytes as they are: a NUL the readers read as
     * UTF8_NUL_STANDIN (base/utf8.h) goes back to \u0000. No UTF-8 text
     * holds that byte, so it is in a string wherever it is.
     */
    for (const char *p = text; *p; p++)
        if ((unsigned char)*p == UTF8_NUL_STANDIN)
            fputs("\\u0000", out);
        else
            fputc(*p, out);
    fputc('\n', out);
}

int
audit_write_json(FILE *out, const struct audit_input *in,
                 const struct audit_summary *sum, const char *policy,
                 bool with_pods)
{
    cJSON *root = cJSON_CreateObject(), *summary;
    char *text = NULL;

    if (root == NULL ||
        !cJSON_AddStringToObject(root, "apiVersion", "topogate.io/v1") ||
        !cJSON_AddStringToObject(root, "kind", "AuditReport") ||
        !cJSON_AddStringToObject(root, "policy", policy) ||
        (summary = summary_json(sum, in->n_files)) == NULL ||
        !cJSON_AddItemToObject(root, "summary", summary) ||
        !files_json(root, in, with_pods) ||
        (text = cJSON_Print(root)) == NULL) {
        cJSON_Delete(root);
        return -1;
    }
    audit_put_json(out, text);
    free(text);
    cJSON_Delete(root);
    return 0;
}
