/*
 * labelname.h - label keys and values the Kubernetes API accepts.
 *
 * The scheduler builds every node affinity expression with
 * labels.NewRequirement, which refuses a key or value these reject; the
 * term that holds it then matches no node. The apiserver refuses a
 * nodeSelector entry these reject. Pure; nothing is allocated.
 */
#ifndef TOPOGATE_LABELNAME_H
#define TOPOGATE_LABELNAME_H

#include <stdbool.h>

/* apimachinery IsQualifiedName (IsLabelKey): an optional DNS-1123
 * subdomain prefix of at most 253 characters and '/', then a name of
 * 1 to 63 characters [A-Za-z0-9][-A-Za-z0-9_.]* ending alphanumeric. */
bool label_key_valid(const char *key);

/* apimachinery IsValidLabelValue (IsLabelValue): empty, or at most 63
 * characters of the name grammar above. */
bool label_value_valid(const char *value);

#endif
