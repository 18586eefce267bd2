/*
 * yamltypes.h - values of a YAML manifest that the apiserver refuses for
 * their type once kubectl has read them (yamlresolve.h): a plain `yes`
 * where the API takes a string is the boolean true in the JSON kubectl
 * sends, and a Pod's nodeSelector, labels or env are map[string]string
 * or string fields in the Go types (k8s.io/api core/v1 types.go), so the
 * apiserver answers "json: cannot unmarshal bool into Go struct field
 * ... of type string" and nothing is created. Such a manifest has no
 * decision to report; its value is the mistake.
 */
#ifndef TOPOGATE_YAMLTYPES_H
#define TOPOGATE_YAMLTYPES_H

#include <stdbool.h>

#include "base/yamltree.h"

struct yaml_refused {
    const struct ynode *node; /* the scalar, borrowed from the tree */
    char path[256];           /* "spec.nodeSelector.gpu" */
    char message[700];        /* path, text, how it reads, what to write */
};

/*
 * The first such value in doc, in document order: true and *out filled,
 * or false. The fields, wherever they stand in an object (a Pod, or a
 * pod template inside a workload): metadata.labels and annotations,
 * nodeSelector and matchLabels values, env names and values, container
 * names and images, command and args items, tolerations' key, operator,
 * value and effect, matchExpressions' key, operator and values (strings);
 * resources' limits and requests (a quantity: a string or a number, not
 * a boolean). A null is taken there (it decodes as the zero value).
 */
bool yaml_find_refused(const struct ynode *doc, struct yaml_refused *out);

#endif
