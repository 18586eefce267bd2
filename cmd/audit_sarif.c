/*
 * audit_sarif.c - the audit as SARIF 2.1.0 (OASIS; the schema is
 * test/data/sarif/sarif-schema-2.1.0.json), the format GitHub code
 * scanning uploads: one run, a rule per kind of finding, a result per
 * finding at its file and line, the finding's id as its fingerprint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/audit.h"
#include "base/strbuf.h"

/* The schema's own id (its "id" member), for $schema. */
#define SARIF_SCHEMA                                                         \
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"    \
    "sarif-schema-2.1.0.json"

/* partialFingerprints names are the tool's: a versioned hierarchical
 * string (SARIF 2.1.0 sections 3.27.17 and 3.5.4.2), "/v1" the version
 * of the derivation in docs/audit.md. */
#define FINGERPRINT_KEY "topogateFindingId/v1"

struct rule_text {
    const char *name, *short_text, *full_text, *level;
};

/* In enum audit_rule order: a result's ruleIndex is its rule. */
static const struct rule_text rules[] = {
    [RULE_DENY] = {"Deny",
                   "The webhook would refuse this job or pod.",
                   "In this policy's mode the webhook denies it: a "
                   "fragmented GPU layout on an NVLink or NVSwitch host, "
                   "more GPUs or EFA devices than the node has, or what "
                   "the policy says to deny. The message says what to "
                   "change instead.",
                   "error"},
    [RULE_WARN] = {"Warn",
                   "The webhook would warn about this job or pod.",
                   "A layout or instance-type problem the webhook lets "
                   "through with a warning in this mode: a fragmented "
                   "layout in warn or audit mode, GPUs split on a PCIe "
                   "host, an instance type not in the table.",
                   "warning"},
    [RULE_MISTAKE] = {"Mistake",
                      "A mistake in the manifest.",
                      "A resource named nvidia.com (missing /gpu), an "
                      "extended resource in requests but not limits, EFA "
                      "without GPUs, a process count that does not match "
                      "the GPUs per pod, or a launcher command that "
                      "hard-codes a count the spec disagrees with.",
                      "warning"},
    [RULE_UNREADABLE] = {"Unreadable",
                         "A document topogate cannot evaluate.",
                         "Invalid YAML, a template, or a placeholder left "
                         "unrendered in a field the decision reads: render "
                         "it first (--set NAME=VALUE, --env).",
                         "warning"},
};

static bool
add_text(cJSON *obj, const char *key, const char *text)
{
    cJSON *m = cJSON_AddObjectToObject(obj, key);
    return m && cJSON_AddStringToObject(m, "text", text);
}

static cJSON *
rules_json(void)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; arr && i < sizeof(rules) / sizeof(rules[0]); i++) {
        cJSON *r = cJSON_CreateObject(), *conf;
        if (r == NULL || !cJSON_AddItemToArray(arr, r) ||
            !cJSON_AddStringToObject(r, "id",
                                     audit_rule_name((enum audit_rule)i)) ||
            !cJSON_AddStringToObject(r, "name", rules[i].name) ||
            !add_text(r, "shortDescription", rules[i].short_text) ||
            !add_text(r, "fullDescription", rules[i].full_text) ||
            (conf = cJSON_AddObjectToObject(r, "defaultConfiguration")) ==
                NULL ||
            !cJSON_AddStringToObject(conf, "level", rules[i].level)) {
            cJSON_Delete(r);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

/* A path as a URI reference (RFC 3986): unreserved bytes and "/" kept,
 * the rest percent-encoded. NULL out of memory. */
static char *
uri_of(const char *path)
{
    static const char keep[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                               "qrstuvwxyz0123456789-._~/";
    struct strbuf sb = {0};

    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        if (strchr(keep, *p))
            strbuf_add(&sb, (const char *)p, 1);
        else
            strbuf_printf(&sb, "%%%02X", *p);
    return strbuf_take(&sb);
}

/* Stdin has no artifact to point at: its results carry no location. */
static bool
location_json(cJSON *res, const struct audit_finding *f)
{
    cJSON *locs, *loc, *phys, *art, *region;
    char *uri;
    bool ok;

    if (strcmp(f->path, "-") == 0)
        return true;
    if ((uri = uri_of(f->path)) == NULL)
        return false;
    ok = (locs = cJSON_AddArrayToObject(res, "locations")) != NULL &&
         (loc = cJSON_CreateObject()) != NULL &&
         cJSON_AddItemToArray(locs, loc) &&
         (phys = cJSON_AddObjectToObject(loc, "physicalLocation")) != NULL &&
         (art = cJSON_AddObjectToObject(phys, "artifactLocation")) != NULL &&
         cJSON_AddStringToObject(art, "uri", uri) &&
         (region = cJSON_AddObjectToObject(phys, "region")) != NULL &&
         cJSON_AddNumberToObject(region, "startLine",
                                 f->line > 0 ? f->line : 1);
    free(uri);
    return ok;
}

/* What the id is derived from, so that a reader can check it. */
static bool
properties_json(cJSON *res, const struct audit_input *in,
                const struct audit_finding *f)
{
    const struct audit_doc *d = &in->docs[f->doc];
    const struct expansion *e = d->error ? NULL : &d->item.e;
    cJSON *p = cJSON_AddObjectToObject(res, "properties");

    return p && cJSON_AddStringToObject(p, "apiGroup", f->api_group) &&
           cJSON_AddStringToObject(p, "kind", e ? e->kind : "") &&
           cJSON_AddStringToObject(p, "namespace", e ? e->namespace : "") &&
           cJSON_AddStringToObject(p, "name", e ? e->name : "") &&
           cJSON_AddStringToObject(p, "part", f->part) &&
           cJSON_AddStringToObject(p, "finding", f->finding) &&
           cJSON_AddNumberToObject(p, "occurrence", f->occurrence) &&
           (f->fix == NULL || cJSON_AddStringToObject(p, "fix", f->fix));
}

static cJSON *
result_json(const struct audit_input *in, const struct audit_finding *f,
            bool baseline)
{
    cJSON *res = cJSON_CreateObject(), *fp;

    if (res == NULL ||
        !cJSON_AddStringToObject(res, "ruleId", audit_rule_name(f->rule)) ||
        !cJSON_AddNumberToObject(res, "ruleIndex", f->rule) ||
        !cJSON_AddStringToObject(res, "level", rules[f->rule].level) ||
        !add_text(res, "message", f->message) || !location_json(res, f) ||
        (fp = cJSON_AddObjectToObject(res, "partialFingerprints")) == NULL ||
        !cJSON_AddStringToObject(fp, FINGERPRINT_KEY, f->id) ||
        (baseline && !cJSON_AddStringToObject(res, "baselineState",
                                              f->known ? "unchanged"
                                                       : "new")) ||
        !properties_json(res, in, f)) {
        cJSON_Delete(res);
        return NULL;
    }
    return res;
}

int
audit_write_sarif(FILE *out, const struct audit_input *in,
                  const struct audit_findings *f, const char *policy,
                  bool baseline)
{
    cJSON *root = cJSON_CreateObject(), *runs, *run, *tool, *driver, *rl,
          *results, *props;
    char *text = NULL;

    if (root == NULL ||
        !cJSON_AddStringToObject(root, "$schema", SARIF_SCHEMA) ||
        !cJSON_AddStringToObject(root, "version", "2.1.0") ||
        (runs = cJSON_AddArrayToObject(root, "runs")) == NULL ||
        (run = cJSON_CreateObject()) == NULL ||
        !cJSON_AddItemToArray(runs, run) ||
        (tool = cJSON_AddObjectToObject(run, "tool")) == NULL ||
        (driver = cJSON_AddObjectToObject(tool, "driver")) == NULL ||
        !cJSON_AddStringToObject(driver, "name", "topogate") ||
        !cJSON_AddStringToObject(driver, "version", TOPOGATE_VERSION) ||
        (rl = rules_json()) == NULL ||
        !cJSON_AddItemToObject(driver, "rules", rl) ||
        (results = cJSON_AddArrayToObject(run, "results")) == NULL ||
        (props = cJSON_AddObjectToObject(run, "properties")) == NULL ||
        !cJSON_AddStringToObject(props, "policy", policy))
        goto fail;
    for (size_t i = 0; i < f->n; i++) {
        cJSON *r = result_json(in, &f->items[i], baseline);
        if (r == NULL || !cJSON_AddItemToArray(results, r)) {
            cJSON_Delete(r);
            goto fail;
        }
    }
    if ((text = cJSON_Print(root)) == NULL)
        goto fail;
    fprintf(out, "%s\n", text);
    free(text);
    cJSON_Delete(root);
    return 0;
fail:
    cJSON_Delete(root);
    return -1;
}
