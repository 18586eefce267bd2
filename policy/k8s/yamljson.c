/* yamljson.c - see yamljson.h. */
#include "policy/k8s/yamljson.h"
#include "policy/k8s/yamlresolve.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
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
/*
 * A resolved scalar as the JSON sigs.k8s.io/yaml writes of it (json.Marshal
 * of go-yaml's value): NaN and infinities have no JSON, and json.Marshal
 * fails the whole document ("json: unsupported value: +Inf").
 */
static cJSON *
scalar_to_json(const struct ynode *n, struct load_error *err)
{
    struct yscalar v;
    char msg[200];
    cJSON *out = NULL;

    if (yscalar_resolve(n, &v, msg, sizeof(msg)) < 0) {
        ynode_error(err, n, "kubectl's YAML decoder refuses '%.60s': %s",
                    n->scalar, msg);
        return NULL;
    }
    switch (v.kind) {
    case YSCALAR_NULL:
        out = cJSON_CreateNull();
        break;
    case YSCALAR_BOOL:
        out = cJSON_CreateBool(v.b);
        break;
    case YSCALAR_INT:
        out = cJSON_CreateNumber((double)v.i);
        break;
    case YSCALAR_UINT:
        out = cJSON_CreateNumber((double)v.u);
        break;
    case YSCALAR_FLOAT:
        if (isnan(v.f) || isinf(v.f)) {
            ynode_error(err, n,
                        "'%.60s' is a float JSON cannot hold (%s): kubectl "
                        "refuses the document (json: unsupported value); "
                        "quote it to keep it text",
                        n->scalar, isnan(v.f) ? "NaN" : "infinity");
            return NULL;
        }
        out = cJSON_CreateNumber(v.f);
        break;
    default:
        out = cJSON_CreateString(v.text);
        break;
    }
    yscalar_free(&v);
    if (out == NULL)
        ynode_error(err, n, "out of memory");
    return out;
}

/*
 * Go's strconv.FormatFloat(f, 'g', -1, 32), as sigs.k8s.io/yaml writes a
 * float key: the fewest digits that read back as the same float32, in
 * %e form where the exponent is below -4 or from 6 on (Go's shortest
 * 'g'), and ".inf", "-.inf", ".nan" for those.
 */
static void
float_key(double f, char *out, size_t size)
{
    int digits = 1, exp;
    char e[40];

    /* Past FLT_MAX the float32 it is printed as is infinite too, and
     * "%e" of an infinity has no 'e' to read the exponent after. */
    if (isnan(f) || isinf(f) || fabs(f) > FLT_MAX) {
        snprintf(out, size, "%s", isnan(f) ? ".nan" : f > 0 ? ".inf" : "-.inf");
        return;
    }
    for (; digits < 9; digits++) {
        snprintf(e, sizeof(e), "%.*e", digits - 1, (double)(float)f);
        if ((float)strtod(e, NULL) == (float)f)
            break;
    }
    snprintf(e, sizeof(e), "%.*e", digits - 1, (double)(float)f);
    exp = atoi(strchr(e, 'e') + 1);
    if (f == 0)
        snprintf(out, size, "%s", signbit(f) ? "-0" : "0");
    else if (exp < -4 || exp >= 6)
        snprintf(out, size, "%s", e);
    else
        snprintf(out, size, "%.*f", digits - 1 - exp > 0 ? digits - 1 - exp : 0,
                 (double)(float)f);
}

/*
 * A mapping key as sigs.k8s.io/yaml's convertToJSONableObject() names it:
 * a string as it is; an integer in decimal ("0x10" is "16"); a boolean
 * "true" or "false" (a plain "yes:" key is "true"); a float by
 * float_key(). A null key, or an integer above int64 (go-yaml's uint64),
 * fails the document ("unsupported map key"). Returns the name in buf or
 * the node's own text, or NULL with *err filled.
 */
static const char *
key_name(const struct ynode *key, char *buf, size_t size,
         struct load_error *err)
{
    struct yscalar v;
    char msg[200];
    const char *name = buf;

    if (yscalar_resolve(key, &v, msg, sizeof(msg)) < 0) {
        ynode_error(err, key, "kubectl's YAML decoder refuses key '%.60s': %s",
                    key->scalar, msg);
        return NULL;
    }
    switch (v.kind) {
    case YSCALAR_NULL:
    case YSCALAR_UINT:
        ynode_error(err, key,
                    "key '%.60s' is %s, which kubectl's YAML decoder cannot "
                    "make a JSON name of (unsupported map key)",
                    key->scalar,
                    v.kind == YSCALAR_NULL ? "null" : "above int64");
        name = NULL;
        break;
    case YSCALAR_BOOL:
        name = v.b ? "true" : "false";
        break;
    case YSCALAR_INT:
        snprintf(buf, size, "%lld", v.i);
        break;
    case YSCALAR_FLOAT:
        float_key(v.f, buf, size);
        break;
    default:
        /* !!binary's text is v's own: copied before it is freed. */
        if (v.owned != NULL)
            snprintf(buf, size, "%s", v.owned);
        else
            name = key->scalar;
        break;
    }
    yscalar_free(&v);
    return name;
}

/* Aliases nest a tree in another: past cJSON's own nesting limit the
 * JSON could not be read back, and the stack would run out first. */
#define YAMLJSON_MAX_DEPTH CJSON_NESTING_LIMIT

struct converter {
    size_t nodes;
    size_t depth;
    struct load_error *err;
};

static cJSON *convert(struct converter *c, const struct ynode *n);

/* "<<" as go-yaml v2's isMerge() (decode.go) reads it: plain or !!merge. */
static bool
is_merge_key(const struct ynode *k)
{
    return k->kind == YNODE_SCALAR && strcmp(k->scalar, "<<") == 0 &&
           (k->plain ||
            (k->tag && strcmp(k->tag, "tag:yaml.org,2002:merge") == 0));
}

/* The members of one object that a merge put there, not a key of its own. */
struct merged {
    const cJSON **items;
    size_t n;
};

static const cJSON **
merged_slot(struct merged *m, const cJSON *item)
{
    for (size_t i = 0; item && i < m->n; i++)
        if (m->items[i] == item)
            return &m->items[i];
    return NULL;
}

/* obj[name] = value, over a member of that name; -1 out of memory. */
static int
put_member(cJSON *obj, const char *name, cJSON *value, struct merged *m,
           bool merging)
{
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(obj, name);
    const cJSON **slot = merged_slot(m, old);

    if (old != NULL
            ? !cJSON_ReplaceItemInObjectCaseSensitive(obj, name, value)
            : !cJSON_AddItemToObject(obj, name, value)) {
        cJSON_Delete(value);
        return -1;
    }
    if (slot != NULL) /* the old one is freed: forget it */
        *slot = merging ? value : m->items[--m->n];
    else if (merging) {
        const cJSON **grown = realloc(m->items, (m->n + 1) * sizeof(*grown));
        if (grown == NULL)
            return -1;
        m->items = grown;
        m->items[m->n++] = value;
    }
    return 0;
}

/* One mapping of a merge, converted, set member by member into obj. */
static int
merge_map(struct converter *c, cJSON *obj, const struct ynode *v,
          struct merged *m)
{
    cJSON *src = convert(c, v), *member;

    if (src == NULL)
        return -1;
    while ((member = src->child) != NULL) {
        cJSON_DetachItemViaPointer(src, member);
        /* The member's name is its own: keep it across the move. */
        char *name = member->string;
        member->string = NULL;
        int rc = put_member(obj, name, member, m, true);
        cJSON_free(name);
        if (rc < 0) {
            cJSON_Delete(src);
            ynode_error(c->err, v, "out of memory");
            return -1;
        }
    }
    cJSON_Delete(src);
    return 0;
}

/*
 * go-yaml v2's merge() (decode.go): "<<: *base" sets base's members into
 * the map, over any it has so far (keys after it win over base's); a
 * list of maps merges the last first, so the earlier ones win. kubectl
 * reads manifests so (yamlresolve.h).
 */
static int
merge_into(struct converter *c, cJSON *obj, const struct ynode *key,
           const struct ynode *v, struct merged *m)
{
    if (v->kind == YNODE_MAP)
        return merge_map(c, obj, v, m);
    if (v->kind != YNODE_SEQ)
        goto not_maps;
    for (size_t i = 0; i < v->n_items; i++)
        if (v->items[i]->kind != YNODE_MAP)
            goto not_maps;
    for (size_t i = v->n_items; i-- > 0;)
        if (merge_map(c, obj, v->items[i], m) < 0)
            return -1;
    return 0;
not_maps:
    ynode_error(c->err, key,
                "map merge requires map or sequence of maps as the value");
    return -1;
}

static cJSON *
convert_map(struct converter *c, const struct ynode *n)
{
    cJSON *obj = cJSON_CreateObject();
    struct merged m = {NULL, 0};

    for (size_t i = 0; obj && i + 1 < n->n_items; i += 2) {
        const struct ynode *key = n->items[i];
        const cJSON *old;
        cJSON *value;
        char buf[64];
        const char *name;

        if (key->kind != YNODE_SCALAR) {
            ynode_error(c->err, key, "a mapping key must be a scalar");
            goto fail;
        }
        if (is_merge_key(key)) {
            if (merge_into(c, obj, key, n->items[i + 1], &m) < 0)
                goto fail;
            continue;
        }
        if ((name = key_name(key, buf, sizeof(buf), c->err)) == NULL)
            goto fail;
        old = cJSON_GetObjectItemCaseSensitive(obj, name);
        if (old != NULL && merged_slot(&m, old) == NULL) {
            /* kubectl refuses duplicate keys; so do we. */
            if (strcmp(name, key->scalar) == 0)
                ynode_error(c->err, key, "duplicate key '%s'", name);
            else
                ynode_error(c->err, key, "duplicate key '%s' (%s)", name,
                            key->scalar);
            goto fail;
        }
        if ((value = convert(c, n->items[i + 1])) == NULL)
            goto fail;
        if (put_member(obj, name, value, &m, false) < 0) {
            ynode_error(c->err, key, "out of memory");
            goto fail;
        }
    }
    free(m.items);
    return obj;
fail:
    free(m.items);
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
    if (n->kind != YNODE_SCALAR && c->depth >= YAMLJSON_MAX_DEPTH) {
        ynode_error(c->err, n, "aliases nest the document deeper than %d",
                    YAMLJSON_MAX_DEPTH);
        return NULL;
    }
    switch (n->kind) {
    case YNODE_SCALAR:
        /* NULL: scalar_to_json() said why. */
        return scalar_to_json(n, c->err);
    case YNODE_MAP:
        c->depth++;
        out = convert_map(c, n);
        c->depth--;
        return out;
    default:
        if ((out = cJSON_CreateArray()) == NULL)
            break;
        c->depth++;
        for (size_t i = 0; i < n->n_items; i++) {
            cJSON *item = convert(c, n->items[i]);
            if (item == NULL || !cJSON_AddItemToArray(out, item)) {
                cJSON_Delete(item);
                cJSON_Delete(out);
                c->depth--;
                return NULL;
            }
        }
        c->depth--;
        return out;
    }
    if (out == NULL)
        ynode_error(c->err, n, "out of memory");
    return out;
}

cJSON *
yaml_to_json(const struct ynode *n, struct load_error *err)
{
    struct converter c = {0, 0, err};
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

size_t
yaml_path_push(char *path, size_t size, const char *key, size_t index)
{
    size_t used = strlen(path);

    if (key)
        snprintf(path + used, size - used, "%s%s", used ? "." : "", key);
    else
        snprintf(path + used, size - used, "[%zu]", index);
    return used;
}

/* Walks the tree and its JSON together (yaml_to_json() keeps the shape). */
static void
unset(struct unsetter *u, const struct ynode *n, cJSON *json, bool decisive)
{
    if (n->kind == YNODE_MAP) {
        for (size_t i = 0; i + 1 < n->n_items; i += 2) {
            const struct ynode *key = n->items[i], *value = n->items[i + 1];
            struct load_error err;
            char buf[64];
            const char *name;
            size_t used;

            /* The member as yaml_to_json() named it ("yes:" is "true"). */
            if (key->kind != YNODE_SCALAR ||
                (name = key_name(key, buf, sizeof(buf), &err)) == NULL)
                continue;
            if (decisive && has_placeholder(key->scalar)) {
                if (record(u, key, true))
                    cJSON_DeleteItemFromObjectCaseSensitive(json, name);
                continue;
            }
            if (strcmp(key->scalar, "command") == 0 ||
                strcmp(key->scalar, "args") == 0)
                continue;
            used = yaml_path_push(u->path, sizeof(u->path), key->scalar, 0);
            if (value->kind == YNODE_SCALAR) {
                if ((decisive || decisive_under(key->scalar, value)) &&
                    has_placeholder(value->scalar) && record(u, value, false))
                    cJSON_DeleteItemFromObjectCaseSensitive(json, name);
            } else {
                unset(u, value, cJSON_GetObjectItemCaseSensitive(json, name),
                      decisive || decisive_under(key->scalar, value));
            }
            u->path[used] = '\0';
        }
        return;
    }
    for (size_t i = 0; n->kind == YNODE_SEQ && i < n->n_items; i++) {
        const struct ynode *item = n->items[i];
        size_t used = yaml_path_push(u->path, sizeof(u->path), NULL, i);

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
