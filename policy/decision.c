/* decision.c - building and freeing a decision. */
#include "policy/decision.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

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
decision_drop_ops(struct decision *d)
{
    for (size_t i = 0; i < d->n_ops; i++) {
        cJSON_free(d->ops[i].path);
        cJSON_free(d->ops[i].value);
    }
    d->n_ops = 0;
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
    decision_drop_ops(d);
    cJSON_free(d->ops);
    jsonout_free(&d->value);
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
decision_say(void *d, const char *sentence)
{
    return decision_warn(d, "%s", sentence);
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

/* prefix + "/" + key escaped as RFC 6901 says ("~" -> "~0", "/" -> "~1"),
 * from cJSON_malloc() like every op's path; key NULL: prefix alone. */
static char *
path_at(const char *prefix, const char *key)
{
    size_t n = strlen(prefix), k = 0;
    char *path, *w;

    for (const char *p = key; p && *p; p++)
        k += *p == '~' || *p == '/' ? 2 : 1;
    if ((path = cJSON_malloc(n + (key ? 1 + k : 0) + 1)) == NULL)
        return NULL;
    memcpy(path, prefix, n);
    w = path + n;
    if (key) {
        *w++ = '/';
        for (const char *p = key; *p; p++) {
            if (*p == '~' || *p == '/') {
                *w++ = '~';
                *w++ = *p == '~' ? '0' : '1';
            } else {
                *w++ = *p;
            }
        }
    }
    *w = '\0';
    return path;
}

struct jsonout *
decision_value(struct decision *d)
{
    jsonout_clear(&d->value);
    return &d->value;
}

/* Appends an op of the value written; takes path (from cJSON_malloc(),
 * may be NULL: out of memory). */
static int
append_op(struct decision *d, enum op_kind kind, char *path)
{
    const struct jsonout *v = &d->value;
    char *value = NULL;

    if (path == NULL || v->failed || v->len == 0 ||
        (value = cJSON_malloc(v->len + 1)) == NULL)
        goto fail;
    memcpy(value, v->buf, v->len + 1);
    if (d->n_ops == d->cap_ops) {
        size_t cap = d->cap_ops ? 2 * d->cap_ops : 8;
        struct op *grown = cJSON_malloc(cap * sizeof(*grown));

        if (grown == NULL)
            goto fail;
        if (d->n_ops > 0)
            memcpy(grown, d->ops, d->n_ops * sizeof(*grown));
        cJSON_free(d->ops);
        d->ops = grown;
        d->cap_ops = cap;
    }
    d->ops[d->n_ops++] = (struct op){kind, path, value, v->len};
    return 0;
fail:
    cJSON_free(path);
    cJSON_free(value);
    return -1;
}

int
decision_add_value(struct decision *d, const char *prefix, const char *key)
{
    return append_op(d, OP_ADD, path_at(prefix, key));
}

int
decision_replace_value(struct decision *d, const char *path)
{
    return append_op(d, OP_REPLACE, path_at(path, NULL));
}

/* value's text as the next op's value (NULL fails it); value deleted. */
static void
write_value(struct decision *d, cJSON *value)
{
    jsonout_value(decision_value(d), value);
    cJSON_Delete(value);
}

int
decision_add(struct decision *d, const char *path, cJSON *value)
{
    write_value(d, value);
    return decision_add_value(d, path, NULL);
}

int
decision_replace(struct decision *d, const char *path, cJSON *value)
{
    write_value(d, value);
    return decision_replace_value(d, path);
}

int
decision_add_at(struct decision *d, cJSON *value, const char *prefix,
                const char *key)
{
    write_value(d, value);
    return decision_add_value(d, prefix, key);
}

void
decision_print_op(struct jsonout *o, const struct op *op)
{
    if (op->kind == OP_REPLACE)
        jsonout_lit(o, "{\"op\":\"replace\",\"path\":");
    else
        jsonout_lit(o, "{\"op\":\"add\",\"path\":");
    jsonout_string(o, op->path);
    jsonout_lit(o, ",\"value\":");
    jsonout_raw(o, op->value, op->value_len);
    jsonout_lit(o, "}");
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
