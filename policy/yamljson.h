/*
 * yamljson.h - a YAML document as the JSON object Kubernetes would read
 * from it, and the template placeholders that stop it from being read.
 */
#ifndef TOPOGATE_YAMLJSON_H
#define TOPOGATE_YAMLJSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "yamltree.h"

/*
 * Most JSON nodes one document may expand to. Aliases share nodes in
 * YAML but are copied in JSON, so a few lines could otherwise expand
 * into gigabytes ("billion laughs").
 */
#define YAMLJSON_MAX_NODES 1000000

/*
 * The node as JSON: plain scalars are read as YAML's core schema reads
 * them (null, true/false, numbers); quoted ones stay strings. Returns an
 * owned tree, or NULL with *err filled (too large, out of memory).
 */
cJSON *yaml_to_json(const struct ynode *n, struct load_error *err);

/*
 * The first unrendered template placeholder ("${X}", "$X", "{{ x }}") in
 * a field the decision reads (replicas, resources, nodeSelector, labels,
 * process counts...), or NULL. *path gets the field ("spec.replicas").
 */
const struct ynode *yaml_find_placeholder(const struct ynode *doc, char *path,
                                          size_t path_len);

#endif
