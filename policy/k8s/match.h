/*
 * match.h - where a pod may land, by the Kubernetes API's rules: its
 * nodeSelector AND its required node affinity, and the taints its
 * tolerations admit.
 *
 * match_parse() reads a pod spec once into a struct match; match_labels()
 * and match_taint() then answer for any number of nodes, kinds of node,
 * Kueue flavors or table rows. A struct match owns its arrays and borrows
 * every string from the pod: free it with match_free() before the pod.
 */
#ifndef TOPOGATE_MATCH_H
#define TOPOGATE_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* One label of a node, or of a flavor or table row standing in for one. */
struct label {
    const char *key;
    const char *value;
};

/* A set of labels sorted by key (strcmp), without duplicate keys. */
struct label_set {
    const struct label *items;
    size_t n;
};

/* A node's taint. value may be NULL: "any value" (see match_taint). */
struct taint {
    const char *key;
    const char *value;
    const char *effect; /* "NoSchedule", "PreferNoSchedule", "NoExecute" */
};

enum match_op {
    MATCH_IN,
    MATCH_NOT_IN,
    MATCH_EXISTS,
    MATCH_DOES_NOT_EXIST,
    MATCH_GT,
    MATCH_LT,
    MATCH_INVALID, /* an operator or value the API would not accept */
};

struct match_expr {
    const char *key;
    enum match_op op;
    const cJSON *values; /* In, NotIn: an array of strings */
    long long bound;     /* Gt, Lt */
};

/*
 * Expressions and fields ANDed; an empty term matches nothing. A field
 * is an In or NotIn on the node's name (key "metadata.name", one value);
 * any other field is MATCH_INVALID.
 */
struct match_term {
    struct match_expr *exprs;
    size_t n;
    struct match_expr *fields; /* matchFields */
    size_t n_fields;
};

struct match_toleration {
    const char *key;    /* NULL or "": every key */
    bool exists;        /* operator Exists, else Equal */
    const char *value;  /* Equal: NULL reads as "" */
    const char *effect; /* NULL or "": every effect */
    bool invalid;       /* an operator we do not know: tolerates nothing */
};

struct match {
    struct match_expr *selector; /* nodeSelector: one In per key */
    size_t n_selector;
    bool has_affinity;        /* required node affinity is set */
    struct match_term *terms; /* ORed */
    size_t n_terms;
    struct match_toleration *tolerations;
    size_t n_tolerations;
    const char *node_name; /* spec.nodeName: bound to that node, or NULL */
    const char *problem;   /* why part of it matches nothing, or NULL */
    const char *culprit;   /* the key or value problem is about, or NULL */
};

/*
 * Reads spec.nodeSelector, spec.affinity.nodeAffinity.required... and
 * spec.tolerations of a pod spec (NULL reads as empty). 0, or -1 out of
 * memory (m is then empty). Never fails on what the pod says: what the
 * API would reject matches nothing, and m->problem says why.
 */
int match_parse(const cJSON *spec, struct match *m);
void match_free(struct match *m);

/*
 * Whether a node with these labels and this name (NULL: not known) fits
 * the pod's spec.nodeName, nodeSelector and required affinity. With no
 * name, spec.nodeName and matchFields are not judged: a term of fields
 * alone then matches (callers that know node names judge it).
 * unknown (may be NULL) names the keys whose absence from labels means
 * "not known" rather than "not set": an expression on such a key is not
 * judged. Kueue judges a flavor this way (its nodeLabels say nothing of
 * other keys), and topogate a table row or a kind of node without its
 * per-node labels. A term left with nothing to judge matches; a term
 * that was empty in the pod still does not.
 */
bool match_node(const struct match *m, const struct label_set *labels,
                const char *name, bool (*unknown)(const char *key));

/* match_node() of a node whose name is not known. */
bool match_labels(const struct match *m, const struct label_set *labels,
                  bool (*unknown)(const char *key));

/*
 * Whether the pod names single nodes: spec.nodeName, matchFields, or
 * an expression on the kubernetes.io/hostname label. Only the nodes
 * themselves then say where it lands, not kinds of node.
 */
bool match_names_nodes(const struct match *m);

/* A node the pod names, for a message: spec.nodeName, else the first
 * name or hostname it asks for with In; NULL when none. */
const char *match_named_node(const struct match *m);

/* For match_labels(): every absent key is unknown. */
bool match_any_key(const char *key);

/* The value of key in labels, or NULL. */
const char *label_get(const struct label_set *labels, const char *key);

/*
 * Whether the pod's tolerations admit taint. A taint whose value is NULL
 * stands for "whatever its value": only a toleration that admits every
 * value (Exists) counts.
 */
bool match_tolerates(const struct match *m, const struct taint *taint);

/*
 * The first taint of n that filter picks (NULL: every taint; the
 * scheduler's own filter keeps NoSchedule and NoExecute) and that neither the
 * pod's tolerations nor the extra ones admit, or NULL.
 */
const struct taint *match_untolerated(const struct match *m,
                                      const struct taint *taints, size_t n,
                                      bool (*filter)(const struct taint *),
                                      const struct match_toleration *extra,
                                      size_t n_extra);

/*
 * Whether the pod pins some key for which is_key() is true on every path
 * to a node: the nodeSelector names one, or every affinity term has an
 * In, Gt or Lt expression on one. NotIn and the existence tests narrow
 * without pinning.
 */
bool match_pins(const struct match *m, bool (*is_key)(const char *key));

/* As match_pins(), with a context for is_key (a policy's keys). */
bool match_pins_ctx(const struct match *m,
                    bool (*is_key)(const char *key, const void *ctx),
                    const void *ctx);

/* As match_pins(), where Exists counts too: every node the pod can land
 * on carries such a key. */
bool match_requires(const struct match *m, bool (*is_key)(const char *key));

#endif
