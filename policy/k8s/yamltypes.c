/*
 * yamltypes.c - see yamltypes.h. The string fields, from kubernetes/api
 * core/v1/types.go (master, July 2026): PodSpec.NodeSelector
 * map[string]string, EnvVar.Name and .Value string, Container.Name and
 * .Image string, .Command and .Args []string, Toleration.Key, .Operator,
 * .Value, .Effect (string types), NodeSelectorRequirement.Key, .Operator
 * and .Values []string; apimachinery meta/v1 types.go: ObjectMeta.Labels
 * and .Annotations, LabelSelector.MatchLabels map[string]string. A
 * resource.Quantity (pkg/api/resource/quantity.go, UnmarshalJSON) takes
 * null, a string or a number, and refuses `true` (ParseQuantity fails).
 */
#include "policy/k8s/yamltypes.h"

#include <stdio.h>
#include <string.h>

#include "policy/k8s/yamljson.h"
#include "policy/k8s/yamlresolve.h"

/* What a node holds, as the API's Go types read it. */
enum want {
    WANT_ANY,
    WANT_STRING,        /* a scalar that must be a string */
    WANT_QUANTITY,      /* a scalar: a string or a number */
    WANT_STRING_MAP,    /* labels, annotations, nodeSelector, matchLabels */
    WANT_QUANTITY_MAP,  /* limits, requests */
    WANT_STRING_LIST,   /* command, args, values */
    WANT_NAMED_LIST,    /* env, containers: items named, with strings */
    WANT_TOLERATIONS,   /* items: key, operator, value, effect */
    WANT_EXPRESSIONS,   /* items: key, operator, values */
};

struct walk {
    struct yaml_refused *out;
    char path[sizeof(((struct yaml_refused *)0)->path)];
};

static bool
is_one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0)
            return true;
    return false;
}

/* What the member key of a map holds; parent_key: the map's own key. */
static enum want
member_want(const char *parent_key, const char *key)
{
    static const char *const string_maps[] = {"nodeSelector", "matchLabels",
                                              NULL};
    static const char *const named[] = {"env", "containers", "initContainers",
                                        "ephemeralContainers", NULL};

    if ((strcmp(key, "labels") == 0 || strcmp(key, "annotations") == 0) &&
        parent_key != NULL && strcmp(parent_key, "metadata") == 0)
        return WANT_STRING_MAP;
    if (is_one_of(key, string_maps))
        return WANT_STRING_MAP;
    if ((strcmp(key, "limits") == 0 || strcmp(key, "requests") == 0) &&
        parent_key != NULL &&
        (strcmp(parent_key, "resources") == 0 ||
         strcmp(parent_key, "resourcesPerNode") == 0))
        return WANT_QUANTITY_MAP;
    if (strcmp(key, "command") == 0 || strcmp(key, "args") == 0)
        return WANT_STRING_LIST;
    if (is_one_of(key, named))
        return WANT_NAMED_LIST;
    if (strcmp(key, "tolerations") == 0)
        return WANT_TOLERATIONS;
    if (strcmp(key, "matchExpressions") == 0)
        return WANT_EXPRESSIONS;
    return WANT_ANY;
}

/* In an item of a list of want, what its member key holds. */
static enum want
item_member_want(enum want list, const char *key)
{
    static const char *const named[] = {"name", "value", "image", NULL};
    static const char *const toleration[] = {"key", "operator", "value",
                                             "effect", NULL};

    if (list == WANT_NAMED_LIST && is_one_of(key, named))
        return WANT_STRING;
    if (list == WANT_TOLERATIONS && is_one_of(key, toleration))
        return WANT_STRING;
    if (list == WANT_EXPRESSIONS &&
        (strcmp(key, "key") == 0 || strcmp(key, "operator") == 0))
        return WANT_STRING;
    if (list == WANT_EXPRESSIONS && strcmp(key, "values") == 0)
        return WANT_STRING_LIST;
    return WANT_ANY;
}

/* How kubectl reads v, for the message: "the boolean true". */
static void
reading(const struct yscalar *v, char *out, size_t size)
{
    switch (v->kind) {
    case YSCALAR_BOOL:
        snprintf(out, size, "the boolean %s", v->b ? "true" : "false");
        break;
    case YSCALAR_INT:
        snprintf(out, size, "the number %lld", v->i);
        break;
    case YSCALAR_UINT:
        snprintf(out, size, "the number %llu", v->u);
        break;
    default:
        snprintf(out, size, "the number %g", v->f);
        break;
    }
}

/* Whether scalar n, which must be a string (or a quantity), is refused;
 * then out is filled. */
static bool
check_scalar(struct walk *w, const struct ynode *n, enum want want)
{
    struct yscalar v;
    char msg[200], how[64];
    bool refused;

    if (yscalar_resolve(n, &v, msg, sizeof(msg)) < 0)
        return false; /* yaml_to_json() has refused the document */
    refused = want == WANT_QUANTITY
                  ? v.kind == YSCALAR_BOOL
                  : v.kind != YSCALAR_STRING && v.kind != YSCALAR_NULL;
    if (refused) {
        reading(&v, how, sizeof(how));
        w->out->node = n;
        snprintf(w->out->path, sizeof(w->out->path), "%s", w->path);
        if (want == WANT_QUANTITY)
            snprintf(w->out->message, sizeof(w->out->message),
                     "%s is '%.60s', which kubectl reads as %s (YAML 1.1, "
                     "go-yaml v2): a quantity is a string or a number, so "
                     "the apiserver refuses the object; write a count",
                     w->path, n->scalar, how);
        else
            snprintf(w->out->message, sizeof(w->out->message),
                     "%s is '%.60s', which kubectl reads as %s (YAML 1.1, "
                     "go-yaml v2): the API takes only a string there, so "
                     "the apiserver refuses the object; quote it: \"%.60s\"",
                     w->path, n->scalar, how, n->scalar);
    }
    yscalar_free(&v);
    return refused;
}

static bool walk(struct walk *w, const struct ynode *n, const char *key,
                 enum want want);

static bool
walk_map(struct walk *w, const struct ynode *n, const char *key,
         enum want want)
{
    for (size_t i = 0; i + 1 < n->n_items; i += 2) {
        const struct ynode *k = n->items[i], *v = n->items[i + 1];
        enum want child;
        size_t used;
        bool hit;

        if (k->kind != YNODE_SCALAR)
            continue;
        /* "<<: *base" puts base's members here (yamljson.c): check them
         * as this map's own. */
        if (k->plain && strcmp(k->scalar, "<<") == 0) {
            for (size_t j = 0; j < (v->kind == YNODE_SEQ ? v->n_items : 1);
                 j++) {
                const struct ynode *m = v->kind == YNODE_SEQ ? v->items[j] : v;
                if (m->kind == YNODE_MAP && walk_map(w, m, key, want))
                    return true;
            }
            continue;
        }
        if (want == WANT_STRING_MAP)
            child = WANT_STRING;
        else if (want == WANT_QUANTITY_MAP)
            child = WANT_QUANTITY;
        else if (want == WANT_NAMED_LIST || want == WANT_TOLERATIONS ||
                 want == WANT_EXPRESSIONS)
            child = item_member_want(want, k->scalar);
        else
            child = member_want(key, k->scalar);
        if (child == WANT_ANY &&
            (want == WANT_NAMED_LIST || want == WANT_TOLERATIONS ||
             want == WANT_EXPRESSIONS))
            child = member_want(key, k->scalar); /* e.g. a container's
                                                    resources, command */
        used = yaml_path_push(w->path, sizeof(w->path), k->scalar, 0);
        hit = walk(w, v, k->scalar, child);
        w->path[used] = '\0';
        if (hit)
            return true;
    }
    return false;
}

static bool
walk(struct walk *w, const struct ynode *n, const char *key, enum want want)
{
    if (n->kind == YNODE_SCALAR)
        return (want == WANT_STRING || want == WANT_QUANTITY) &&
               check_scalar(w, n, want);
    if (n->kind == YNODE_MAP)
        return walk_map(w, n, key, want);
    for (size_t i = 0; i < n->n_items; i++) {
        size_t used = yaml_path_push(w->path, sizeof(w->path), NULL, i);
        /* A list's items: strings, or the items of a typed list. */
        enum want item = want == WANT_STRING_LIST ? WANT_STRING
                         : want == WANT_NAMED_LIST || want == WANT_TOLERATIONS ||
                                 want == WANT_EXPRESSIONS
                             ? want
                             : WANT_ANY;
        bool hit = walk(w, n->items[i], key, item);
        w->path[used] = '\0';
        if (hit)
            return true;
    }
    return false;
}

bool
yaml_find_refused(const struct ynode *doc, struct yaml_refused *out)
{
    struct walk w = {out, ""};

    memset(out, 0, sizeof(*out));
    return doc != NULL && walk(&w, doc, NULL, WANT_ANY);
}
