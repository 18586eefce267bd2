/*
 * yamljson.h - a YAML document as the JSON object Kubernetes would read
 * from it, and the template placeholders that stop it from being read.
 */
#ifndef TOPOGATE_YAMLJSON_H
#define TOPOGATE_YAMLJSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/yamltree.h"

/*
 * Most JSON nodes one document may expand to. Aliases share nodes in
 * YAML but are copied in JSON, so a few lines could otherwise expand
 * into gigabytes ("billion laughs").
 */
#define YAMLJSON_MAX_NODES 1000000

/*
 * The node as the JSON kubectl sends for it: each scalar as go-yaml v2
 * resolves it (yamlresolve.h: YAML 1.1 booleans such as yes/no/on/off,
 * 0x/0o/0b and leading-0 octal integers, explicit tags), mapping keys
 * named as sigs.k8s.io/yaml names them ("yes:" is "true", "0x10:" is
 * "16"). Returns an owned tree, or NULL with *err filled where kubectl
 * refuses the document too (a tag the text does not fit, a float JSON
 * cannot hold, a null key, a duplicate key), or too large, or out of
 * memory.
 */
cJSON *yaml_to_json(const struct ynode *n, struct load_error *err);

/*
 * The first unrendered template placeholder ("${X}", "$X", "{{ x }}") in
 * a field the decision reads (replicas, resources, nodeSelector, labels,
 * process counts...), or NULL. *path gets the field ("spec.replicas").
 */
const struct ynode *yaml_find_placeholder(const struct ynode *doc, char *path,
                                          size_t path_len);

/* One unrendered placeholder in a field the decision may read. */
struct yaml_placeholder {
    const struct ynode *node; /* the scalar, borrowed from the tree */
    bool key;                 /* a mapping key, not a value */
    char path[256];           /* "spec.replicas"; a key: its parent's */
};

/*
 * Every placeholder that yaml_find_placeholder() would find, in document
 * order, each taken out of obj (the JSON of doc, from yaml_to_json()): a
 * mapping member is deleted, a list item becomes null, so that the rest
 * of the document can still be read. Records the first max in out and
 * returns how many there are (more than max: some were not removed).
 */
size_t yaml_unset_placeholders(const struct ynode *doc, cJSON *obj,
                               struct yaml_placeholder *out, size_t max);

/*
 * Appends ".key" (or "key" at the start), or "[index]" when key is NULL,
 * to the path in a buffer of size bytes, cut where it is full; returns
 * the old length, to cut back to.
 */
size_t yaml_path_push(char *path, size_t size, const char *key, size_t index);

#endif
