/*
 * audit_finding.c - the findings of an audit, each with an id that stays
 * the same for the same manifest and finding: derived from what the
 * finding is (file, workload, part, rule, reason), never from a line
 * number, the order of documents or the time of the run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/audit.h"
#include "base/strbuf.h"
#include "policy/kinds/expand.h"

const char *
audit_rule_name(enum audit_rule r)
{
    static const char *const names[] = {
        [RULE_DENY] = "deny",
        [RULE_WARN] = "warn",
        [RULE_MISTAKE] = "mistake",
        [RULE_UNREADABLE] = "unreadable",
    };
    return names[r];
}

/* As fails() in audit.c: a deny fails at deny and warn; the rest at warn. */
bool
audit_finding_fails(const struct audit_finding *f, enum audit_outcome fail_on)
{
    if (fail_on == OUTCOME_SKIPPED)
        return false;
    return f->rule == RULE_DENY || fail_on <= OUTCOME_WARN;
}

/*
 * 64-bit FNV-1a (Fowler, Noll, Vo; offset basis 0xcbf29ce484222325,
 * prime 2^40 + 2^8 + 0xb3, as the IETF draft-eastlake-fnv and
 * isthe.com/chongo/tech/comp/fnv give them; check_ci.py checks the
 * published vectors of "a" and "foobar"): short, no library, and
 * an id is a name, not a secret. Each field is hashed with its NUL, so
 * ("ab", "c") and ("a", "bc") differ.
 */
static uint64_t
fnv1a_field(uint64_t h, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    do {
        h ^= *p;
        h *= 0x100000001b3ULL;
    } while (*p++);
    return h;
}

/* The fields of the key, in this order; docs/audit.md lists them. */
static uint64_t
key_hash(const struct audit_finding *f, const struct audit_doc *d)
{
    const struct expansion *e = d->error ? NULL : &d->item.e;
    uint64_t h = 0xcbf29ce484222325ULL;

    h = fnv1a_field(h, "topogate-finding-v1");
    h = fnv1a_field(h, f->path);
    h = fnv1a_field(h, audit_rule_name(f->rule));
    h = fnv1a_field(h, f->api_group);
    h = fnv1a_field(h, e ? e->kind : "");
    h = fnv1a_field(h, e ? e->namespace : "");
    h = fnv1a_field(h, e ? e->name : "");
    h = fnv1a_field(h, f->part);
    return fnv1a_field(h, f->finding);
}

static struct audit_finding *
add(struct audit_findings *out, const struct audit_input *in, size_t doc,
    int line, enum audit_rule rule)
{
    struct audit_finding *f =
        realloc(out->items, (out->n + 1) * sizeof(*out->items));

    if (f == NULL)
        return NULL;
    out->items = f;
    f = &out->items[out->n++];
    memset(f, 0, sizeof(*f));
    f->doc = doc;
    f->path = in->files[in->docs[doc].file];
    f->line = line;
    f->rule = rule;
    return f;
}

static char *
workload_label(const struct expansion *e)
{
    struct strbuf sb = {0};

    strbuf_printf(&sb, "%s %s%s%s", e->kind, e->namespace,
                  e->namespace[0] ? "/" : "",
                  e->name[0] ? e->name : "(no name)");
    return strbuf_take(&sb);
}

/* What a decision's id is derived from: its reason, else its deny
 * message, else its first warning. */
static const char *
decision_text(const struct decision *d)
{
    if (d->reason && d->reason[0])
        return d->reason;
    if (d->message && d->message[0])
        return d->message;
    if (d->n_warnings > 0)
        return d->warnings[0];
    return outcome_name(outcome_of(d));
}

/* "TrainJob ns/name, job: reason; fix: ...; warning: ..." as the text
 * report words it (warnings that repeat the reason or fix left out). */
static char *
decision_message(const struct audit_finding *f, const struct decision *d)
{
    struct strbuf sb = {0};

    strbuf_printf(&sb, "%s, %s: %s", f->workload, f->part, f->finding);
    if (d->fix)
        strbuf_printf(&sb, "; fix: %s", d->fix);
    for (size_t i = 0; i < d->n_warnings; i++)
        if (strcmp(d->warnings[i], f->finding) != 0 &&
            (!d->fix || !strstr(d->fix, d->warnings[i])))
            strbuf_printf(&sb, "; warning: %s", d->warnings[i]);
    return strbuf_take(&sb);
}

static int
add_decision(struct audit_findings *out, const struct audit_input *in,
             size_t doc, char *part, const struct decision *d)
{
    const struct audit_doc *ad = &in->docs[doc];
    enum audit_outcome o = outcome_of(d);
    struct audit_finding *f;

    if (part == NULL)
        return -1;
    if (o < OUTCOME_WARN) {
        free(part);
        return 0;
    }
    if ((f = add(out, in, doc, ad->line,
                 o == OUTCOME_DENY ? RULE_DENY : RULE_WARN)) == NULL) {
        free(part);
        return -1;
    }
    f->part = part;
    f->fix = d->fix;
    expand_api_group(ad->object, f->api_group, sizeof(f->api_group));
    if ((f->workload = workload_label(&ad->item.e)) == NULL ||
        (f->finding = strdup(decision_text(d))) == NULL ||
        (f->message = decision_message(f, d)) == NULL)
        return -1;
    return 0;
}

static int
add_mistake(struct audit_findings *out, const struct audit_input *in,
            size_t doc, const char *text)
{
    const struct audit_doc *ad = &in->docs[doc];
    struct audit_finding *f = add(out, in, doc, ad->line, RULE_MISTAKE);
    struct strbuf sb = {0};

    if (f == NULL || (f->part = strdup("")) == NULL ||
        (f->workload = workload_label(&ad->item.e)) == NULL ||
        (f->finding = strdup(text)) == NULL)
        return -1;
    expand_api_group(ad->object, f->api_group, sizeof(f->api_group));
    strbuf_printf(&sb, "%s: %s", f->workload, text);
    return (f->message = strbuf_take(&sb)) ? 0 : -1;
}

static int
add_unreadable(struct audit_findings *out, const struct audit_input *in,
               size_t doc)
{
    const struct audit_doc *ad = &in->docs[doc];
    struct audit_finding *f = add(out, in, doc, ad->line, RULE_UNREADABLE);
    struct strbuf sb = {0};

    if (f == NULL || (f->part = strdup("")) == NULL ||
        (f->workload = strdup("")) == NULL ||
        (f->finding = strdup(ad->error)) == NULL)
        return -1;
    strbuf_printf(&sb, "unreadable document: %s", ad->error);
    return (f->message = strbuf_take(&sb)) ? 0 : -1;
}

/* A kind of pod as a part: "Worker pod", or "pod" for one template. */
static char *
pod_part(const struct pod_group *g)
{
    struct strbuf sb = {0};

    strbuf_printf(&sb, "%s%spod", g->role, g->role[0] ? " " : "");
    return strbuf_take(&sb);
}

static int
collect_doc(struct audit_findings *out, const struct audit_input *in,
            size_t doc)
{
    const struct audit_doc *d = &in->docs[doc];
    const struct audit_item *it = &d->item;

    if (d->error)
        return add_unreadable(out, in, doc);
    if (!d->evaluated)
        return 0;
    if (it->has_job &&
        add_decision(out, in, doc, strdup("job"), &it->job) < 0)
        return -1;
    for (size_t i = 0; i < it->n_pods; i++)
        /* The outcomes the workload's is the worst of (audit.c). */
        if (outcome_of(&it->pods[i].d) >= OUTCOME_WARN &&
            add_decision(out, in, doc, pod_part(it->pods[i].group),
                         &it->pods[i].d) < 0)
            return -1;
    for (size_t i = 0; i < it->mistakes.n; i++)
        if (add_mistake(out, in, doc, it->mistakes.lines[i]) < 0)
            return -1;
    return 0;
}

int
audit_findings_collect(const struct audit_input *in,
                       struct audit_findings *out)
{
    uint64_t *keys;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < in->n_docs; i++)
        if (collect_doc(out, in, i) < 0)
            return -1;
    if ((keys = calloc(out->n + 1, sizeof(*keys))) == NULL)
        return -1;
    for (size_t j = 0; j < out->n; j++)
        keys[j] = key_hash(&out->items[j], &in->docs[out->items[j].doc]);
    /* The same key twice (one workload listed twice, one mistake in two
     * containers alike): numbered in input order, the first one 0. */
    for (size_t j = 0; j < out->n; j++) {
        struct audit_finding *f = &out->items[j];
        char occurrence[16];
        for (size_t k = 0; k < j; k++)
            if (keys[k] == keys[j])
                f->occurrence++;
        snprintf(occurrence, sizeof(occurrence), "%u", f->occurrence);
        snprintf(f->id, sizeof(f->id), "%016llx",
                 (unsigned long long)fnv1a_field(keys[j], occurrence));
    }
    free(keys);
    return 0;
}

void
audit_findings_free(struct audit_findings *f)
{
    for (size_t i = 0; i < f->n; i++) {
        struct audit_finding *x = &f->items[i];
        free(x->part);
        free(x->workload);
        free(x->finding);
        free(x->message);
    }
    free(f->items);
    memset(f, 0, sizeof(*f));
}
