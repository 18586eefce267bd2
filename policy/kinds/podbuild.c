/* podbuild.c - see podbuild.h. */
#include "policy/kinds/podbuild.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/pod.h"

cJSON *
podbuild_object(cJSON *parent, const char *key)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);

    if (cJSON_IsObject(o))
        return o;
    if (o)
        cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
    return cJSON_AddObjectToObject(parent, key);
}

static int
set_string(cJSON *obj, const char *key, const char *value)
{
    cJSON *v;

    if (obj == NULL || (v = cJSON_CreateString(value)) == NULL)
        return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    if (!cJSON_AddItemToObject(obj, key, v)) {
        cJSON_Delete(v);
        return -1;
    }
    return 0;
}

cJSON *
podbuild_from_template(const cJSON *template, const char *ns, const char *owner)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(template, "metadata");
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(template, "spec");
    cJSON *pod = cJSON_CreateObject(), *m;
    char name[256];

    if (pod == NULL || !cJSON_AddStringToObject(pod, "apiVersion", "v1") ||
        !cJSON_AddStringToObject(pod, "kind", "Pod"))
        goto fail;
    m = cJSON_IsObject(meta) ? cJSON_Duplicate(meta, true)
                             : cJSON_CreateObject();
    if (m == NULL || !cJSON_AddItemToObject(pod, "metadata", m)) {
        cJSON_Delete(m);
        goto fail;
    }
    /* Controllers name pods after their owner; the apiserver adds a
     * suffix to generateName. */
    cJSON_DeleteItemFromObjectCaseSensitive(m, "name");
    snprintf(name, sizeof(name), "%s-", owner && *owner ? owner : "pod");
    if (set_string(m, "generateName", name) < 0 ||
        (ns && *ns && set_string(m, "namespace", ns) < 0))
        goto fail;
    cJSON *s = cJSON_IsObject(spec) ? cJSON_Duplicate(spec, true)
                                    : cJSON_CreateObject();
    if (s == NULL || !cJSON_AddItemToObject(pod, "spec", s)) {
        cJSON_Delete(s);
        goto fail;
    }
    return pod;
fail:
    cJSON_Delete(pod);
    return NULL;
}

int
podbuild_label(cJSON *pod, const char *key, const char *value)
{
    return set_string(
        podbuild_object(podbuild_object(pod, "metadata"), "labels"), key,
        value);
}

int
podbuild_annotation(cJSON *pod, const char *key, const char *value)
{
    return set_string(
        podbuild_object(podbuild_object(pod, "metadata"), "annotations"), key,
        value);
}

int
podbuild_env(cJSON *container, const char *name, const char *value)
{
    cJSON *env = cJSON_GetObjectItemCaseSensitive(container, "env"), *e;

    if (pod_env(container, name))
        return 0;
    if (!cJSON_IsArray(env)) {
        cJSON_DeleteItemFromObjectCaseSensitive(container, "env");
        if ((env = cJSON_AddArrayToObject(container, "env")) == NULL)
            return -1;
    }
    if ((e = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(env, e)) {
        cJSON_Delete(e);
        return -1;
    }
    return cJSON_AddStringToObject(e, "name", name) &&
                   cJSON_AddStringToObject(e, "value", value)
               ? 0
               : -1;
}

int
podbuild_env_all(cJSON *pod, const char *name, const char *value)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec"), *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
    {
        if (cJSON_IsObject(c) && podbuild_env(c, name, value) < 0)
            return -1;
    }
    return 0;
}

cJSON *
podbuild_container(cJSON *pod, const char *name)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec"), *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, "containers"))
    {
        const char *n = json_string(c, "name");
        if (n && strcmp(n, name) == 0)
            return c;
    }
    return NULL;
}

int
podbuild_group(struct expansion *e, const char *role, long replicas, cJSON *pod)
{
    struct pod_group *g;

    if (pod == NULL)
        return -1;
    g = realloc(e->groups, (e->n_groups + 1) * sizeof(*g));
    if (g == NULL) {
        cJSON_Delete(pod);
        return -1;
    }
    e->groups = g;
    g = &e->groups[e->n_groups];
    if ((g->role = strdup(role)) == NULL) {
        cJSON_Delete(pod);
        return -1;
    }
    g->replicas = replicas;
    g->pod = pod;
    e->n_groups++;
    return 0;
}

long
podbuild_long(const cJSON *obj, const char *key, long fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < 0 || v->valuedouble > 1e9)
        return fallback;
    return (long)v->valuedouble;
}

long
podbuild_count(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char *end;
    long n;

    if (cJSON_IsNumber(v))
        return podbuild_long(obj, key, 0);
    if (!cJSON_IsString(v) || v->valuestring[0] < '1' ||
        v->valuestring[0] > '9')
        return 0;
    n = strtol(v->valuestring, &end, 10);
    return *end == '\0' && n < 1000000 ? n : 0;
}

int
podbuild_note(struct expansion *e, const char *fmt, ...)
{
    va_list ap;
    char *text;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    free(e->note);
    e->note = text;
    return 0;
}

int
podbuild_group_with(struct expansion *e, const char *role, long replicas,
                    const cJSON *template, const char *const *labels)
{
    cJSON *pod = podbuild_from_template(template, e->namespace, e->name);

    for (; pod && labels && labels[0]; labels += 2)
        if (podbuild_label(pod, labels[0], labels[1]) < 0) {
            cJSON_Delete(pod);
            return -1;
        }
    return pod ? podbuild_group(e, role, replicas, pod) : -1;
}
