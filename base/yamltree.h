/*
 * yamltree.h - a YAML stream read into a small tree that remembers where
 * every node came from, so callers can say "file:line:col: message".
 *
 * ytree_parse() returns an owned tree; every node and string in it belongs
 * to the tree and dies with ytree_free(). Aliases point at the anchored
 * node (shared, not copied).
 */
#ifndef TOPOGATE_YAMLTREE_H
#define TOPOGATE_YAMLTREE_H

#include <stdbool.h>
#include <stddef.h>

/* Where and what went wrong; line and column count from 1 (0: unknown). */
struct load_error {
    int line;
    int column;
    char message[256];
};

enum ynode_kind { YNODE_SCALAR, YNODE_SEQ, YNODE_MAP };

struct ynode {
    enum ynode_kind kind;
    int line;
    int column;
    char *scalar;  /* YNODE_SCALAR: the text, NUL-terminated; a NUL
                      in it ("\0" in double quotes) is UTF8_NUL_STANDIN
                      (base/utf8.h), so the text is never cut */
    bool plain;    /* unquoted and untagged: may be a number, bool or
                      null (the YAML 1.1 rules of yamljson.h) */
    char *tag;     /* a scalar's explicit tag, as libyaml resolves it
                      ("!!str" is "tag:yaml.org,2002:str"; "!" stays
                      "!"), or NULL */
    struct ynode **items; /* SEQ: items; MAP: key, value, key, value... */
    size_t n_items;
};

struct ytree {
    struct ynode **docs; /* one root per document */
    size_t n_docs;
    struct ynode **all;  /* every node, for ytree_free() */
    size_t n_all;
    size_t cap_all;
};

struct ytree *ytree_parse(const char *bytes, size_t len,
                          struct load_error *err);
void ytree_free(struct ytree *t);

/* Borrowed value of key in a map, or NULL. */
const struct ynode *ynode_get(const struct ynode *map, const char *key);

/* Fills err with the node's position and a printf-style message. */
void ynode_error(struct load_error *err, const struct ynode *at,
                 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
