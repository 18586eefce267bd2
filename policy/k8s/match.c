/*
 * match.c - see match.h. The rules are the API's, in the order the
 * scheduler applies them (kubernetes/component-helpers
 * scheduling/corev1/nodeaffinity/nodeaffinity.go; core/v1 toleration.go).
 */
#include "policy/k8s/match.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/labelname.h"
#include "policy/k8s/pod.h"

#define FIELD_NAME "metadata.name" /* the one field of a Node selectable */
#define LABEL_HOSTNAME "kubernetes.io/hostname"

static void *
zalloc(size_t n, size_t size)
{
    return n ? calloc(n, size) : NULL;
}

/* Go's strconv.ParseInt(s, 10, 64): an optional sign, then digits. */
static bool
parse_int64(const char *s, long long *out)
{
    const char *p = s;
    char *end;

    if (s == NULL)
        return false;
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return false;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return errno == 0 && *end == '\0';
}

static enum match_op
op_parse(const char *op)
{
    static const struct {
        const char *name;
        enum match_op op;
    } ops[] = {
        {"In", MATCH_IN},         {"NotIn", MATCH_NOT_IN},
        {"Exists", MATCH_EXISTS}, {"DoesNotExist", MATCH_DOES_NOT_EXIST},
        {"Gt", MATCH_GT},         {"Lt", MATCH_LT},
    };

    for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(op, ops[i].name) == 0)
            return ops[i].op;
    return MATCH_INVALID;
}

/* x matches nothing; the first such reason is the pod's problem. */
static void
expr_refuse(struct match_expr *x, struct match *m, const char *why,
            const char *culprit)
{
    x->op = MATCH_INVALID;
    if (m->problem == NULL) {
        m->problem = why;
        m->culprit = culprit;
    }
}

/*
 * One expression as the API validates it: In and NotIn need values, the
 * existence tests none, Gt and Lt exactly one integer. Anything else
 * makes the expression (hence its term) match nothing.
 */
static void
expr_parse(const cJSON *e, struct match_expr *x, struct match *m)
{
    const cJSON *values = json_get(e, "values");
    int n = cJSON_IsArray(values) ? cJSON_GetArraySize(values) : 0;
    const cJSON *v;

    x->key = json_string(e, "key");
    x->op = op_parse(json_string(e, "operator"));
    if (!cJSON_IsArray(values)) {
        if (values && !cJSON_IsNull(values))
            x->op = MATCH_INVALID;
        values = NULL;
    }
    x->values = values;
    cJSON_ArrayForEach(v, values)
    {
        if (!cJSON_IsString(v))
            x->op = MATCH_INVALID;
    }
    switch (x->op) {
    case MATCH_IN:
    case MATCH_NOT_IN:
        if (n == 0)
            x->op = MATCH_INVALID;
        break;
    case MATCH_EXISTS:
    case MATCH_DOES_NOT_EXIST:
        if (n != 0)
            x->op = MATCH_INVALID;
        break;
    case MATCH_GT:
    case MATCH_LT:
        if (n != 1 ||
            !parse_int64(cJSON_GetArrayItem(values, 0)->valuestring, &x->bound))
            x->op = MATCH_INVALID;
        break;
    case MATCH_INVALID:
        break;
    }
    if (x->key == NULL)
        x->op = MATCH_INVALID;
    if (x->op == MATCH_INVALID && m->problem == NULL)
        m->problem = "a node affinity expression the API does not accept "
                     "matches no node";
    /* labels.NewRequirement checks the key and every value, whatever the
     * operator; the scheduler's term then matches no node. */
    if (x->op != MATCH_INVALID && !label_key_valid(x->key))
        expr_refuse(x, m, "a node affinity key that is not a valid label "
                          "key matches no node",
                    x->key);
    cJSON_ArrayForEach(v, values)
    {
        if (x->op != MATCH_INVALID && !label_value_valid(v->valuestring))
            expr_refuse(x, m, "a node affinity value that is not a valid "
                              "label value matches no node",
                        v->valuestring);
    }
}

/*
 * One matchFields entry as the scheduler reads it
 * (nodeSelectorRequirementsAsFieldSelector): In or NotIn with exactly
 * one value. A Node has one selectable field, its name; the API refuses
 * any other key (ValidateNodeFieldSelectorRequirement), so it matches
 * nothing here.
 */
static void
field_parse(const cJSON *e, struct match_expr *x, struct match *m)
{
    const cJSON *values = json_get(e, "values");
    const cJSON *one = cJSON_GetArrayItem(values, 0);

    x->key = json_string(e, "key");
    x->op = op_parse(json_string(e, "operator"));
    x->values = values;
    if ((x->op != MATCH_IN && x->op != MATCH_NOT_IN) ||
        !cJSON_IsArray(values) || cJSON_GetArraySize(values) != 1 ||
        !cJSON_IsString(one))
        expr_refuse(x, m, "a matchFields entry needs In or NotIn with one "
                          "value: it matches no node",
                    x->key);
    else if (x->key == NULL || strcmp(x->key, FIELD_NAME) != 0)
        expr_refuse(x, m, "matchFields on a field other than " FIELD_NAME
                          " matches no node",
                    x->key);
}

static int
term_parse(const cJSON *t, struct match_term *term, struct match *m)
{
    const cJSON *exprs = json_get(t, "matchExpressions");
    const cJSON *fields = json_get(t, "matchFields");
    const cJSON *e;

    if (!cJSON_IsArray(exprs))
        exprs = NULL;
    if (!cJSON_IsArray(fields))
        fields = NULL;
    term->n = term->n_fields = 0;
    term->exprs =
        zalloc((size_t)cJSON_GetArraySize(exprs), sizeof(*term->exprs));
    term->fields =
        zalloc((size_t)cJSON_GetArraySize(fields), sizeof(*term->fields));
    if ((cJSON_GetArraySize(exprs) > 0 && term->exprs == NULL) ||
        (cJSON_GetArraySize(fields) > 0 && term->fields == NULL))
        return -1;
    cJSON_ArrayForEach(e, exprs)
        expr_parse(e, &term->exprs[term->n++], m);
    cJSON_ArrayForEach(e, fields)
        field_parse(e, &term->fields[term->n_fields++], m);
    return 0;
}

static void
toleration_parse(const cJSON *t, struct match_toleration *x)
{
    const char *op = json_string(t, "operator");

    x->key = json_string(t, "key");
    x->value = json_string(t, "value");
    x->effect = json_string(t, "effect");
    x->exists = op && strcmp(op, "Exists") == 0;
    x->invalid = !cJSON_IsObject(t) ||
                 (!x->exists && op && *op && strcmp(op, "Equal") != 0);
}

int
match_parse(const cJSON *spec, struct match *m)
{
    const cJSON *sel = json_get(spec, "nodeSelector");
    const cJSON *no = NULL; /* what a field of the wrong type reads as */
    const cJSON *req =
        json_get(json_get(json_get(spec, "affinity"), "nodeAffinity"),
                 "requiredDuringSchedulingIgnoredDuringExecution");
    const cJSON *terms = json_get(req, "nodeSelectorTerms");
    const cJSON *tols = json_get(spec, "tolerations");
    const cJSON *it;

    memset(m, 0, sizeof(*m));
    if (!cJSON_IsObject(sel))
        sel = no;
    if (!cJSON_IsArray(terms))
        terms = no;
    if (!cJSON_IsArray(tols))
        tols = no;
    m->selector = zalloc((size_t)cJSON_GetArraySize(sel), sizeof(*m->selector));
    m->terms = zalloc((size_t)cJSON_GetArraySize(terms), sizeof(*m->terms));
    m->tolerations =
        zalloc((size_t)cJSON_GetArraySize(tols), sizeof(*m->tolerations));
    if ((cJSON_GetArraySize(sel) && !m->selector) ||
        (cJSON_GetArraySize(terms) && !m->terms) ||
        (cJSON_GetArraySize(tols) && !m->tolerations))
        goto fail;
    cJSON_ArrayForEach(it, sel)
    {
        struct match_expr *x = &m->selector[m->n_selector++];
        x->key = it->string;
        x->op = cJSON_IsString(it) ? MATCH_IN : MATCH_INVALID;
        x->values = it; /* the one value itself, see expr_holds() */
        if (x->op == MATCH_INVALID) {
            if (m->problem == NULL)
                m->problem = "a nodeSelector value that is not a string";
        }
        /* The apiserver refuses these (ValidateLabels); no node could
         * carry them, so they match nothing. */
        else if (!label_key_valid(x->key))
            expr_refuse(x, m, "a nodeSelector key that is not a valid label "
                              "key matches no node",
                        x->key);
        else if (!label_value_valid(it->valuestring))
            expr_refuse(x, m, "a nodeSelector value that is not a valid "
                              "label value matches no node",
                        it->valuestring);
    }
    m->node_name = json_string(spec, "nodeName");
    if (m->node_name && *m->node_name == '\0')
        m->node_name = NULL; /* "" is "not bound yet" */
    m->has_affinity = req != NULL && !cJSON_IsNull(req);
    cJSON_ArrayForEach(it, terms)
    {
        if (term_parse(it, &m->terms[m->n_terms++], m) < 0)
            goto fail;
    }
    cJSON_ArrayForEach(it, tols)
        toleration_parse(it, &m->tolerations[m->n_tolerations++]);
    return 0;
fail:
    match_free(m);
    return -1;
}

void
match_free(struct match *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->n_terms; i++) {
        free(m->terms[i].exprs);
        free(m->terms[i].fields);
    }
    free(m->terms);
    free(m->selector);
    free(m->tolerations);
    memset(m, 0, sizeof(*m));
}

const char *
label_get(const struct label_set *labels, const char *key)
{
    size_t lo = 0, hi = labels ? labels->n : 0;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(key, labels->items[mid].key);
        if (c == 0)
            return labels->items[mid].value;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static bool
value_in(const cJSON *values, const char *v)
{
    const cJSON *it;

    if (cJSON_IsString(values)) /* a nodeSelector entry */
        return strcmp(values->valuestring, v) == 0;
    cJSON_ArrayForEach(it, values)
    {
        if (cJSON_IsString(it) && strcmp(it->valuestring, v) == 0)
            return true;
    }
    return false;
}

/*
 * An expression against labels, as labels.Selector does:
 *   In            the label is set and its value is one of values
 *   NotIn         the label is not set, or its value is none of values
 *   Exists        the label is set
 *   DoesNotExist  the label is not set
 *   Gt, Lt        the label is set, reads as an integer, and is greater
 *                 (less) than the one value
 */
static bool
expr_holds(const struct match_expr *x, const char *v)
{
    long long n;

    switch (x->op) {
    case MATCH_IN:
        return v && value_in(x->values, v);
    case MATCH_NOT_IN:
        return v == NULL || !value_in(x->values, v);
    case MATCH_EXISTS:
        return v != NULL;
    case MATCH_DOES_NOT_EXIST:
        return v == NULL;
    case MATCH_GT:
        return parse_int64(v, &n) && n > x->bound;
    case MATCH_LT:
        return parse_int64(v, &n) && n < x->bound;
    case MATCH_INVALID:
        return false;
    }
    return false;
}

bool
match_any_key(const char *key)
{
    (void)key;
    return true;
}

/* All expressions hold, leaving out absent keys that are unknown. */
static bool
exprs_hold(const struct match_expr *xs, size_t n,
           const struct label_set *labels, bool (*unknown)(const char *))
{
    for (size_t i = 0; i < n; i++) {
        const char *v = xs[i].key ? label_get(labels, xs[i].key) : NULL;
        if (v == NULL && unknown && xs[i].op != MATCH_INVALID &&
            unknown(xs[i].key))
            continue;
        if (!expr_holds(&xs[i], v))
            return false;
    }
    return true;
}

/*
 * The node's name against a term's fields (fields.Set of one key, read
 * as "" where absent: a NotIn on the name holds for every other node).
 * A node with no name has no fields, and the scheduler then leaves them
 * out (nodeSelectorTerm.match: len(nodeFields) > 0).
 */
static bool
fields_hold(const struct match_term *t, const char *name)
{
    for (size_t i = 0; i < t->n_fields; i++) {
        const struct match_expr *x = &t->fields[i];
        if (x->op == MATCH_INVALID)
            return false;
        if (name == NULL || *name == '\0')
            continue;
        bool same =
            strcmp(cJSON_GetArrayItem(x->values, 0)->valuestring, name) == 0;
        if (same != (x->op == MATCH_IN))
            return false;
    }
    return true;
}

/*
 * The API's rule (Pod spec, "Assigning Pods to Nodes"; component-helpers
 * nodeaffinity.go GetRequiredNodeAffinity, Match; the NodeName plugin):
 *  1. spec.nodeName, when set, must be the node's name, AND
 *  2. every nodeSelector entry must match, AND
 *  3. when required node affinity is set, at least one of its
 *     nodeSelectorTerms must match (terms are ORed);
 *  4. the expressions and fields of one term must all match (ANDed);
 *  5. an empty term (no expressions, no fields) matches no node, and so
 *     do no terms at all.
 * Without a name (a kind of node, a table row) rule 1 and the fields are
 * not judged.
 */
bool
match_node(const struct match *m, const struct label_set *labels,
           const char *name, bool (*unknown)(const char *key))
{
    if (name && m->node_name && strcmp(m->node_name, name) != 0)
        return false;
    if (!exprs_hold(m->selector, m->n_selector, labels, unknown))
        return false;
    if (!m->has_affinity)
        return true;
    for (size_t i = 0; i < m->n_terms; i++) {
        const struct match_term *t = &m->terms[i];
        if ((t->n > 0 || t->n_fields > 0) &&
            exprs_hold(t->exprs, t->n, labels, unknown) &&
            fields_hold(t, name))
            return true;
    }
    return false;
}

bool
match_labels(const struct match *m, const struct label_set *labels,
             bool (*unknown)(const char *key))
{
    return match_node(m, labels, NULL, unknown);
}

static bool
names_host(const struct match_expr *xs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (xs[i].key && strcmp(xs[i].key, LABEL_HOSTNAME) == 0)
            return true;
    return false;
}

bool
match_names_nodes(const struct match *m)
{
    if (m->node_name || names_host(m->selector, m->n_selector))
        return true;
    for (size_t i = 0; m->has_affinity && i < m->n_terms; i++)
        if (m->terms[i].n_fields > 0 ||
            names_host(m->terms[i].exprs, m->terms[i].n))
            return true;
    return false;
}

/* The first value an In on key asks for, or NULL. */
static const char *
first_in(const struct match_expr *xs, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++) {
        if (xs[i].op != MATCH_IN || xs[i].key == NULL ||
            strcmp(xs[i].key, key) != 0)
            continue;
        if (cJSON_IsString(xs[i].values)) /* a nodeSelector entry */
            return xs[i].values->valuestring;
        return cJSON_GetStringValue(cJSON_GetArrayItem(xs[i].values, 0));
    }
    return NULL;
}

const char *
match_named_node(const struct match *m)
{
    const char *name = m->node_name;

    if (name == NULL)
        name = first_in(m->selector, m->n_selector, LABEL_HOSTNAME);
    for (size_t i = 0; name == NULL && m->has_affinity && i < m->n_terms;
         i++) {
        name = first_in(m->terms[i].fields, m->terms[i].n_fields, FIELD_NAME);
        if (name == NULL)
            name = first_in(m->terms[i].exprs, m->terms[i].n, LABEL_HOSTNAME);
    }
    return name;
}

/*
 * toleration.go ToleratesTaint:
 *  1. a toleration with an effect tolerates only taints of that effect;
 *  2. with a key, only taints of that key (no key: every key);
 *  3. Exists tolerates every value;
 *  4. Equal (or no operator) tolerates the one value it names.
 */
static bool
tolerates(const struct match_toleration *t, const struct taint *taint)
{
    if (t->invalid)
        return false;
    if (t->effect && *t->effect && strcmp(t->effect, taint->effect) != 0)
        return false;
    if (t->key && *t->key && strcmp(t->key, taint->key) != 0)
        return false;
    if (t->exists)
        return true;
    return taint->value != NULL &&
           strcmp(t->value ? t->value : "", taint->value) == 0;
}

bool
match_tolerates(const struct match *m, const struct taint *taint)
{
    for (size_t i = 0; i < m->n_tolerations; i++)
        if (tolerates(&m->tolerations[i], taint))
            return true;
    return false;
}

const struct taint *
match_untolerated(const struct match *m, const struct taint *taints, size_t n,
                  bool (*filter)(const struct taint *),
                  const struct match_toleration *extra, size_t n_extra)
{
    for (size_t i = 0; i < n; i++) {
        bool ok = false;
        if (filter && !filter(&taints[i]))
            continue;
        ok = match_tolerates(m, &taints[i]);
        for (size_t j = 0; !ok && j < n_extra; j++)
            ok = tolerates(&extra[j], &taints[i]);
        if (!ok)
            return &taints[i];
    }
    return NULL;
}

/* The key test of match_pins() and friends, with or without a context. */
struct key_test {
    bool (*plain)(const char *key);
    bool (*with)(const char *key, const void *ctx);
    const void *ctx;
};

static bool
key_is(const struct key_test *t, const char *key)
{
    return t->with ? t->with(key, t->ctx) : t->plain(key);
}

/* exists: an Exists expression counts too (the key, not its value). */
static bool
exprs_pin(const struct match_expr *xs, size_t n, const struct key_test *t,
          bool exists)
{
    for (size_t i = 0; i < n; i++)
        if (xs[i].key && key_is(t, xs[i].key) &&
            (xs[i].op == MATCH_IN || xs[i].op == MATCH_GT ||
             xs[i].op == MATCH_LT || (exists && xs[i].op == MATCH_EXISTS)))
            return true;
    return false;
}

static bool
on_every_path(const struct match *m, const struct key_test *t, bool exists)
{
    if (exprs_pin(m->selector, m->n_selector, t, exists))
        return true;
    if (!m->has_affinity || m->n_terms == 0)
        return false;
    for (size_t i = 0; i < m->n_terms; i++)
        if (!exprs_pin(m->terms[i].exprs, m->terms[i].n, t, exists))
            return false;
    return true;
}

bool
match_pins(const struct match *m, bool (*is_key)(const char *key))
{
    return on_every_path(m, &(struct key_test){.plain = is_key}, false);
}

bool
match_pins_ctx(const struct match *m,
               bool (*is_key)(const char *key, const void *ctx),
               const void *ctx)
{
    return on_every_path(m, &(struct key_test){.with = is_key, .ctx = ctx},
                         false);
}

bool
match_requires(const struct match *m, bool (*is_key)(const char *key))
{
    return on_every_path(m, &(struct key_test){.plain = is_key}, true);
}
