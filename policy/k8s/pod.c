/* pod.c - see pod.h. */
#include "policy/k8s/pod.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/quantity.h"

/* cJSON_IsString() without a call into the library. */
static const char *
string_of(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_String ? v->valuestring
                                                          : NULL;
}

const char *
json_string(const cJSON *obj, const char *key)
{
    return string_of(json_get(obj, key));
}

/* cJSON_IsNull() without a call into the library. */
static bool
is_null(const cJSON *v)
{
    return v != NULL && (v->type & 0xFF) == cJSON_NULL;
}

/* A value that says something: a null is no more than an absent key. */
static const cJSON *
present(const cJSON *v)
{
    return is_null(v) ? NULL : v;
}

const cJSON *
pod_resource(const cJSON *container, const char *resource)
{
    const cJSON *res = json_get(container, "resources");
    const cJSON *v = present(json_get(json_get(res, "limits"), resource));

    if (v == NULL)
        v = present(json_get(json_get(res, "requests"), resource));
    return v;
}

/* pod_count() of the value pod_resource() found. */
static enum count_status
count_of(const cJSON *v, long *out)
{
    *out = 0;
    if (v == NULL)
        return COUNT_ABSENT;
    return quantity_count(v, out) == 0 ? COUNT_OK : COUNT_INVALID;
}

enum count_status
pod_count(const cJSON *container, const char *resource, long *out)
{
    return count_of(pod_resource(container, resource), out);
}

struct pod_maps
pod_maps(const cJSON *container)
{
    const cJSON *res = json_get(container, "resources");
    return (struct pod_maps){json_get(res, "limits"),
                             json_get(res, "requests")};
}

struct pod_quantity
pod_quantity(const cJSON *container, const char *resource)
{
    struct pod_maps maps = pod_maps(container);
    return pod_quantity_in(&maps, resource);
}

struct pod_quantity
pod_quantity_in(const struct pod_maps *maps, const char *resource)
{
    const cJSON *limit = json_get(maps->limits, resource);
    const cJSON *request = json_get(maps->requests, resource);
    struct pod_quantity q = {
        .value = present(limit) != NULL ? limit : present(request),
        .null_map = is_null(limit)     ? "limits"
                    : is_null(request) ? "requests"
                                       : NULL,
    };

    q.status = count_of(q.value, &q.count);
    return q;
}

bool
pod_is_sidecar(const cJSON *init_container)
{
    const char *policy = json_string(init_container, "restartPolicy");
    return policy && strcmp(policy, "Always") == 0;
}

/*
 * An env entry's name. The apiserver writes "name" first: that member is
 * compared byte by byte (a large pod has hundreds of entries, scanned a
 * dozen times a review), any other order is looked up.
 */
static inline const char *
env_name(const cJSON *e)
{
    const cJSON *first = e->child;
    const char *k = first != NULL ? first->string : NULL;

    if (k != NULL && k[0] == 'n' && k[1] == 'a' && k[2] == 'm' &&
        k[3] == 'e' && k[4] == '\0')
        return string_of(first);
    return json_string(e, "name");
}

const cJSON *
pod_env(const cJSON *container, const char *name)
{
    const cJSON *e;

    if (name == NULL)
        return NULL; /* an entry of the user's with no name has no twin */
    cJSON_ArrayForEach(e, json_get(container, "env"))
    {
        const char *n = env_name(e);
        if (n && n[0] == name[0] && strcmp(n, name) == 0)
            return e;
    }
    return NULL;
}

const char *
pod_env_value(const cJSON *container, const char *name)
{
    return json_string(pod_env(container, name), "value");
}

/* A name's first byte, folded to 64, as a bit. */
static uint64_t
first_byte_bit(const char *name)
{
    return (uint64_t)1 << ((unsigned char)name[0] & 63);
}

void
pod_env_all(const cJSON *container, const char *const *names, size_t n,
            const cJSON **found)
{
    uint64_t firsts = 0; /* entries whose first byte is none of these are
                            passed at a glance */
    size_t left = 0;
    const cJSON *e;

    for (size_t k = 0; k < n; k++) {
        found[k] = NULL;
        if (names[k] != NULL) {
            firsts |= first_byte_bit(names[k]);
            left++;
        }
    }
    cJSON_ArrayForEach(e, json_get(container, "env"))
    {
        const char *have;

        if (left == 0)
            break;
        if ((have = env_name(e)) == NULL ||
            (firsts & first_byte_bit(have)) == 0)
            continue;
        for (size_t k = 0; k < n; k++)
            if (found[k] == NULL && names[k] != NULL &&
                names[k][0] == have[0] && strcmp(names[k], have) == 0) {
                found[k] = e;
                left--;
            }
    }
}

static const char *
metadata_string(const cJSON *pod, const char *field, const char *key)
{
    const cJSON *meta = json_get(pod, "metadata");
    return json_string(json_get(meta, field), key);
}

const char *
pod_label(const cJSON *pod, const char *key)
{
    return metadata_string(pod, "labels", key);
}

const char *
pod_annotation(const cJSON *pod, const char *key)
{
    return metadata_string(pod, "annotations", key);
}

long
pod_text_count(const char *s)
{
    long v = 0;

    if (s == NULL || *s == '\0')
        return -1;
    /* Digits only (no sign, no space), so no strtol(): a review reads a
     * few of these, and strtol() is one more libc function to warm. */
    for (; *s >= '0' && *s <= '9'; s++)
        if ((v = v * 10 + (*s - '0')) >= 1000000)
            return -1;
    return *s == '\0' && v > 0 ? v : -1;
}

bool
pod_affinity_on(const cJSON *spec, bool (*is_key)(const char *key))
{
    const cJSON *terms =
        json_get(json_get(json_get(spec, "affinity"), "podAffinity"),
                 "requiredDuringSchedulingIgnoredDuringExecution");
    const cJSON *t;

    if (!cJSON_IsArray(terms))
        return false;
    cJSON_ArrayForEach(t, terms)
    {
        const char *key = json_string(t, "topologyKey");
        if (key && is_key(key))
            return true;
    }
    return false;
}

const char *
pod_name(const cJSON *pod)
{
    const cJSON *meta = json_get(pod, "metadata");
    const char *name = json_string(meta, "name");

    if (name == NULL || name[0] == '\0')
        name = json_string(meta, "generateName");
    return name ? name : "";
}

cJSON *
json_wrap(const char *key, cJSON *value)
{
    cJSON *obj = value ? cJSON_CreateObject() : NULL;

    if (obj == NULL || !cJSON_AddItemToObject(obj, key, value)) {
        cJSON_Delete(obj);
        cJSON_Delete(value);
        return NULL;
    }
    return obj;
}

cJSON *
json_one_item(cJSON *value)
{
    cJSON *arr = value ? cJSON_CreateArray() : NULL;

    if (arr == NULL || !cJSON_AddItemToArray(arr, value)) {
        cJSON_Delete(arr);
        cJSON_Delete(value);
        return NULL;
    }
    return arr;
}

char *
json_text(const cJSON *node)
{
    char *printed = cJSON_PrintUnformatted(node), *copy;

    if (printed == NULL)
        return NULL;
    copy = strdup(printed);
    cJSON_free(printed);
    return copy;
}

/*
 * cJSON_GetObjectItemCaseSensitive() with the first byte compared before
 * strcmp(): a review's decision makes some 900 look-ups, most of them
 * past members whose names begin otherwise. The same answer: the first
 * member named key, NULL for an array or a missing one.
 */
const cJSON *
json_get(const cJSON *obj, const char *key)
{
    if (obj == NULL || key == NULL || (obj->type & 0xFF) != cJSON_Object)
        return NULL;
    /* An object's members all have names (cJSON's adds and our parse
     * give each one): nothing to check for NULL on the way. */
    for (const cJSON *c = obj->child; c != NULL; c = c->next)
        if (c->string[0] == key[0] && strcmp(c->string, key) == 0)
            return c;
    return NULL;
}
