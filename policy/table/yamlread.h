/*
 * yamlread.h - typed reads from a parsed YAML tree (yamltree.h), for the
 * policy's readers (snapshot.c, products.c): one wording of every error,
 * each at its line and column in err. Strings read are owned by the
 * caller; nodes returned are borrowed from the tree.
 */
#ifndef TOPOGATE_YAMLREAD_H
#define TOPOGATE_YAMLREAD_H

#include "base/yamltree.h"

/* 0 when n is of kind; else -1, "WHAT must be a map" and the like. */
int yamlread_kind(const struct ynode *n, enum ynode_kind kind,
                  const char *what, struct load_error *err);

/* A non-empty scalar into *out (freeing what was there). 0 or -1. */
int yamlread_string(const struct ynode *n, const char *what, char **out,
                    struct load_error *err);

/* Every key of map is one of keys (NULL-terminated), none twice. 0, -1. */
int yamlread_keys(const struct ynode *map, const char *const *keys,
                  const char *what, struct load_error *err);

/* The value of key in map, or NULL with "WHAT needs 'KEY'" in err. */
const struct ynode *yamlread_need(const struct ynode *map, const char *key,
                                  const char *what, struct load_error *err);

#endif
