/* yamljson.c - see yamljson.h. */
#include "policy/k8s/yamljson.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
is_one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0)
            return true;
    return false;
}

/* YAML core schema numbers: decimal, 0x, 0o, floats, .inf, .nan. */
static bool
read_number(const char *s, double *out)
{
    static const char *const inf[] = {".inf",  ".Inf",  ".INF", "+.inf",
                                      "+.Inf", "+.INF", NULL};
    const char *digits = (*s == '-' || *s == '+') ? s + 1 : s;
    char *end;

    if (is_one_of(s, inf) ||
        is_one_of(digits, (const char *const[]){".nan", ".NaN", ".NAN", NULL}))
        return false; /* JSON has no infinity or NaN: keep the text */
    if (strncmp(s, "0x", 2) == 0 || strncmp(s, "0o", 2) == 0) {
        errno = 0;
        unsigned long long v = strtoull(s + 2, &end, s[1] == 'x' ? 16 : 8);
        *out = (double)v;
        return s[2] != '\0' && *end == '\0' && errno == 0;
    }
    if (!isdigit((unsigned char)*digits) &&
        !(*digits == '.' && isdigit((unsigned char)digits[1])))
        return false;
    for (const char *p = digits; *p; p++)
        if (!isdigit((unsigned char)*p) && !strchr(".eE+-", *p))
            return false;
    errno = 0;
    *out = strtod(s, &end);
    return *end == '\0' && errno == 0;
}

static cJSON *
scalar_to_json(const struct ynode *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    double v;

    if (!n->plain)
        return cJSON_CreateString(n->scalar);
    if (is_one_of(n->scalar, nulls))
        return cJSON_CreateNull();
    if (is_one_of(n->scalar, trues))
        return cJSON_CreateTrue();
    if (is_one_of(n->scalar, falses))
        return cJSON_CreateFalse();
    if (read_number(n->scalar, &v))
        return cJSON_CreateNumber(v);
    return cJSON_CreateString(n->scalar);
}

struct converter {
    size_t nodes;
    struct load_error *err;
};

static cJSON *convert(struct converter *c, const struct ynode *n);

static cJSON *
convert_map(struct converter *c, const struct ynode *n)
{
    cJSON *obj = cJSON_CreateObject();

    for (size_t i = 0; obj && i + 1 < n->n_items; i += 2) {
        const struct ynode *key = n->items[i];
        cJSON *value;

        if (key->kind != YNODE_SCALAR) {
            ynode_error(c->err, key, "a mapping key must be a scalar");
            goto fail;
        }
        if (cJSON_GetObjectItemCaseSensitive(obj, key->scalar)) {
            /* kubectl refuses duplicate keys; so do we. */
            ynode_error(c->err, key, "duplicate key '%s'", key->scalar);
            goto fail;
        }
        if ((value = convert(c, n->items[i + 1])) == NULL)
            goto fail;
        if (!cJSON_AddItemToObject(obj, key->scalar, value)) {
            cJSON_Delete(value);
            goto fail;
        }
    }
    return obj;
fail:
    cJSON_Delete(obj);
    return NULL;
}

static cJSON *
convert(struct converter *c, const struct ynode *n)
{
    cJSON *out;

    if (++c->nodes > YAMLJSON_MAX_NODES) {
        ynode_error(c->err, n, "document expands to more than %d nodes",
                    YAMLJSON_MAX_NODES);
        return NULL;
    }
    switch (n->kind) {
    case YNODE_SCALAR:
        out = scalar_to_json(n);
        break;
    case YNODE_MAP:
        return convert_map(c, n);
    default:
        if ((out = cJSON_CreateArray()) == NULL)
            break;
        for (size_t i = 0; i < n->n_items; i++) {
            cJSON *item = convert(c, n->items[i]);
            if (item == NULL || !cJSON_AddItemToArray(out, item)) {
                cJSON_Delete(item);
                cJSON_Delete(out);
                return NULL;
            }
        }
        return out;
    }
    if (out == NULL)
        ynode_error(c->err, n, "out of memory");
    return out;
}

cJSON *
yaml_to_json(const struct ynode *n, struct load_error *err)
{
    struct converter c = {0, err};
    cJSON *out;

    memset(err, 0, sizeof(*err));
    out = convert(&c, n);
    if (out == NULL && err->message[0] == '\0')
        ynode_error(err, n, "out of memory");
    return out;
}

/* "${X}", "$X" (a shell-style upper-case name) or "{{ ... }}" anywhere. */
static bool
has_placeholder(const char *s)
{
    if (strstr(s, "{{") || strstr(s, "${"))
        return true;
    for (const char *p = strchr(s, '$'); p; p = strchr(p + 1, '$'))
        if (isupper((unsigned char)p[1]) || p[1] == '_')
            return true;
    return false;
}

/*
 * The fields the decision reads: a placeholder under one of them leaves
 * nothing to judge. One elsewhere (an image, a name, a command) does not
 * change the decision, and "$X" in commands is for the shell anyway.
 */
static bool
is_decisive_field(const char *key)
{
    static const char *const fields[] = {"apiVersion",
                                         "kind",
                                         "labels",
                                         "replicas",
                                         "parallelism",
                                         "numNodes",
                                         "numProcPerNode",
                                         "nprocPerNode",
                                         "slotsPerWorker",
                                         "minReplicas",
                                         "maxReplicas",
                                         "resources",
                                         "resourcesPerNode",
                                         "nodeSelector",
                                         "affinity",
                                         "hostIPC",
                                         NULL};
    return is_one_of(key, fields);
}

/*
 * A decisive field's value. "resources" is a container's (a map of
 * limits and requests); a Kueue ClusterQueue's list of quotas is not
 * read by any decision.
 */
static bool
decisive_under(const char *key, const struct ynode *value)
{
    if (strcmp(key, "resources") == 0)
        return value->kind != YNODE_SEQ;
    return is_decisive_field(key);
}

static const struct ynode *
find(const struct ynode *n, char *path, size_t path_len, size_t used,
     bool decisive)
{
    if (n->kind == YNODE_SCALAR)
        return decisive && has_placeholder(n->scalar) ? n : NULL;
    for (size_t i = 0; i < n->n_items; i++) {
        const struct ynode *child = n->items[i];
        bool under = decisive;
        size_t len = used;

        if (n->kind == YNODE_MAP) {
            const struct ynode *key = child;
            if (i % 2 == 0) {
                if (decisive && key->kind == YNODE_SCALAR &&
                    has_placeholder(key->scalar))
                    return key; /* a templated key: the path stops here */
                continue;
            }
            key = n->items[i - 1];
            if (key->kind != YNODE_SCALAR ||
                strcmp(key->scalar, "command") == 0 ||
                strcmp(key->scalar, "args") == 0)
                continue;
            under = under || decisive_under(key->scalar, child);
            len += (size_t)snprintf(path + used, path_len - used, "%s%s",
                                    used ? "." : "", key->scalar);
        } else {
            len += (size_t)snprintf(path + used, path_len - used, "[%zu]", i);
        }
        if (len >= path_len)
            len = path_len - 1;
        const struct ynode *hit = find(child, path, path_len, len, under);
        if (hit)
            return hit;
        path[used] = '\0';
    }
    return NULL;
}

const struct ynode *
yaml_find_placeholder(const struct ynode *doc, char *path, size_t path_len)
{
    if (path_len == 0)
        return NULL;
    path[0] = '\0';
    return find(doc, path, path_len, 0, false);
}

struct unsetter {
    struct yaml_placeholder *out;
    size_t max, n;
    char path[sizeof(((struct yaml_placeholder *)0)->path)];
};

/* Records one placeholder; true when obj may drop it (it was recorded). */
static bool
record(struct unsetter *u, const struct ynode *n, bool key)
{
    if (u->n++ >= u->max)
        return false;
    u->out[u->n - 1].node = n;
    u->out[u->n - 1].key = key;
    snprintf(u->out[u->n - 1].path, sizeof(u->out[0].path), "%s", u->path);
    return true;
}

/* Appends ".key", or "[index]" when key is NULL; returns the old length,
 * to cut back to. */
static size_t
push(struct unsetter *u, const char *key, size_t index)
{
    size_t used = strlen(u->path);

    if (key)
        snprintf(u->path + used, sizeof(u->path) - used, "%s%s",
                 used ? "." : "", key);
    else
        snprintf(u->path + used, sizeof(u->path) - used, "[%zu]", index);
    return used;
}

/* Walks the tree and its JSON together (yaml_to_json() keeps the shape). */
static void
unset(struct unsetter *u, const struct ynode *n, cJSON *json, bool decisive)
{
    if (n->kind == YNODE_MAP) {
        for (size_t i = 0; i + 1 < n->n_items; i += 2) {
            const struct ynode *key = n->items[i], *value = n->items[i + 1];
            size_t used;

            if (key->kind != YNODE_SCALAR)
                continue;
            if (decisive && has_placeholder(key->scalar)) {
                if (record(u, key, true))
                    cJSON_DeleteItemFromObjectCaseSensitive(json, key->scalar);
                continue;
            }
            if (strcmp(key->scalar, "command") == 0 ||
                strcmp(key->scalar, "args") == 0)
                continue;
            used = push(u, key->scalar, 0);
            if (value->kind == YNODE_SCALAR) {
                if ((decisive || decisive_under(key->scalar, value)) &&
                    has_placeholder(value->scalar) && record(u, value, false))
                    cJSON_DeleteItemFromObjectCaseSensitive(json, key->scalar);
            } else {
                unset(u, value,
                      cJSON_GetObjectItemCaseSensitive(json, key->scalar),
                      decisive || decisive_under(key->scalar, value));
            }
            u->path[used] = '\0';
        }
        return;
    }
    for (size_t i = 0; n->kind == YNODE_SEQ && i < n->n_items; i++) {
        const struct ynode *item = n->items[i];
        size_t used = push(u, NULL, i);

        if (item->kind == YNODE_SCALAR) {
            cJSON *null;
            if (decisive && has_placeholder(item->scalar) &&
                record(u, item, false) && (null = cJSON_CreateNull()) &&
                !cJSON_ReplaceItemInArray(json, (int)i, null))
                cJSON_Delete(null);
        } else {
            unset(u, item, cJSON_GetArrayItem(json, (int)i), decisive);
        }
        u->path[used] = '\0';
    }
}

size_t
yaml_unset_placeholders(const struct ynode *doc, cJSON *obj,
                        struct yaml_placeholder *out, size_t max)
{
    struct unsetter u = {out, max, 0, ""};

    unset(&u, doc, obj, false);
    return u.n;
}
