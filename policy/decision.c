/* decision.c - building and freeing a decision. */
#include "decision.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static const char *const verdict_names[] = {
    [VERDICT_IGNORE] = "ignore", [VERDICT_ALLOW] = "allow",
    [VERDICT_PATCH] = "patch",   [VERDICT_WARN] = "warn",
    [VERDICT_DENY] = "deny",
};

const char *
verdict_name(enum verdict v)
{
    return verdict_names[v];
}

void
decision_init(struct decision *d)
{
    memset(d, 0, sizeof(*d));
    d->allowed = true;
    d->code = 200;
    d->verdict = d->judged = VERDICT_IGNORE;
    d->mode = "";
    d->instance_type = "";
}

void
decision_free(struct decision *d)
{
    free(d->message);
    free(d->reason);
    free(d->fix);
    free(d->would_patch);
    for (size_t i = 0; i < d->n_warnings; i++)
        free(d->warnings[i]);
    free(d->warnings);
    for (size_t i = 0; i < d->n_ops; i++) {
        free(d->ops[i].path);
        cJSON_Delete(d->ops[i].value);
    }
    free(d->ops);
    decision_init(d);
}

/* An owned, formatted string; NULL when out of memory. */
static char *
vformat(const char *fmt, va_list ap)
{
    char *s = NULL;

    if (vasprintf(&s, fmt, ap) < 0)
        return NULL;
    return s;
}

int
decision_warn(struct decision *d, const char *fmt, ...)
{
    va_list ap;
    char *w, **grown;

    va_start(ap, fmt);
    w = vformat(fmt, ap);
    va_end(ap);
    if (w == NULL)
        return -1;
    /* Cut at a space near the limit (else on a UTF-8 character
     * boundary), marking the cut. */
    if (strlen(w) > WARNING_MAX) {
        size_t cut = WARNING_MAX - 3, space = cut;
        while (space > WARNING_MAX / 2 && w[space] != ' ')
            space--;
        if (w[space] == ' ')
            cut = space;
        while (cut > 0 && ((unsigned char)w[cut] & 0xC0) == 0x80)
            cut--;
        memcpy(w + cut, "...", 4);
    }
    for (size_t i = 0; i < d->n_warnings; i++) {
        if (strcmp(d->warnings[i], w) == 0) {
            free(w);
            return 0;
        }
    }
    grown = realloc(d->warnings, (d->n_warnings + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(w);
        return -1;
    }
    d->warnings = grown;
    d->warnings[d->n_warnings++] = w;
    return 0;
}

static int
append_op(struct decision *d, enum op_kind kind, const char *path, cJSON *value)
{
    struct op *grown;
    char *p;

    if (value == NULL || (p = strdup(path)) == NULL) {
        cJSON_Delete(value);
        return -1;
    }
    grown = realloc(d->ops, (d->n_ops + 1) * sizeof(*grown));
    if (grown == NULL) {
        free(p);
        cJSON_Delete(value);
        return -1;
    }
    d->ops = grown;
    d->ops[d->n_ops].kind = kind;
    d->ops[d->n_ops].path = p;
    d->ops[d->n_ops].value = value;
    d->n_ops++;
    return 0;
}

int
decision_add(struct decision *d, const char *path, cJSON *value)
{
    return append_op(d, OP_ADD, path, value);
}

int
decision_replace(struct decision *d, const char *path, cJSON *value)
{
    return append_op(d, OP_REPLACE, path, value);
}

int
decision_deny(struct decision *d, const char *fmt, ...)
{
    va_list ap;
    char *m;

    va_start(ap, fmt);
    m = vformat(fmt, ap);
    va_end(ap);
    if (m == NULL)
        return -1;
    free(d->message);
    d->message = m;
    d->allowed = false;
    d->code = 403;
    d->verdict = VERDICT_DENY;
    return 0;
}

/* RFC 6901: "~" -> "~0", "/" -> "~1". */
static void
put_escaped(struct strbuf *sb, const char *key)
{
    for (const char *p = key; *p; p++) {
        if (*p == '~')
            strbuf_puts(sb, "~0");
        else if (*p == '/')
            strbuf_puts(sb, "~1");
        else
            strbuf_add(sb, p, 1);
    }
}

int
decision_add_at(struct decision *d, cJSON *value, const char *prefix,
                const char *key)
{
    struct strbuf sb = {0};
    char *path;
    int rc;

    strbuf_puts(&sb, prefix);
    if (key) {
        strbuf_puts(&sb, "/");
        put_escaped(&sb, key);
    }
    if ((path = strbuf_take(&sb)) == NULL) {
        cJSON_Delete(value);
        return -1;
    }
    rc = decision_add(d, path, value);
    free(path);
    return rc;
}

char *
decision_fields(const struct decision *d)
{
    static const struct {
        const char *needle, *field;
    } fields[] = {
        {"/hostIPC", "hostIPC"},
        {"/volumes", "/dev/shm"},
        {"/volumeMounts", "/dev/shm"},
        {"securityContext", "IPC_LOCK"},
        {"/env", "env"},
        {"vpc.amazonaws.com~1efa", "EFA"},
        {"nvidia.com~1gpu", "GPUs"},
        {"/tolerations", "tolerations"},
        {"/numNodes", "numNodes"},
        {"/replicas", "replicas"},
        {"/numProcPerNode", "numProcPerNode"},
        {"/nprocPerNode", "nprocPerNode"},
        {"/slotsPerWorker", "slotsPerWorker"},
        {"/metadata/annotations", "annotation"},
    };
    enum { N_FIELDS = sizeof(fields) / sizeof(fields[0]) };
    struct strbuf sb = {0};
    const char *seen[N_FIELDS];
    size_t n_seen = 0;

    strbuf_puts(&sb, "");
    for (size_t f = 0; f < N_FIELDS; f++) {
        bool hit = false, dup = false;
        for (size_t i = 0; i < d->n_ops && !hit; i++)
            hit = strstr(d->ops[i].path, fields[f].needle) != NULL;
        for (size_t k = 0; k < n_seen; k++)
            dup = dup || strcmp(seen[k], fields[f].field) == 0;
        if (!hit || dup)
            continue;
        strbuf_printf(&sb, "%s%s", n_seen ? ", " : "", fields[f].field);
        seen[n_seen++] = fields[f].field;
    }
    return strbuf_take(&sb);
}

int
decision_set_reason(struct decision *d, const char *reason)
{
    free(d->reason);
    return (d->reason = strdup(reason)) ? 0 : -1;
}
