/*
 * jsonstrip.h - a review without its managedFields, before parsing.
 *
 * metadata.managedFields is the apiserver's record of who set which
 * field: often half of a pod's JSON (33 KB of a 59 KB pod), never read by
 * a decision, and costly to parse (cJSON makes a node and a string copy
 * for every key of it). Emptying every "managedFields": [ ... ] array
 * before the parse leaves everything else byte for byte.
 */
#ifndef TOPOGATE_JSONSTRIP_H
#define TOPOGATE_JSONSTRIP_H

#include <stddef.h>

/*
 * A malloc()ed copy of json[0..len) in which the contents of every array
 * that is the value of a member named "managedFields" are gone, and its
 * length in *out_len. NULL when there was nothing to strip (or no memory
 * for the copy): parse json as it is. The arrays' contents are only
 * matched for brackets and strings, not otherwise checked.
 */
char *jsonstrip_managed_fields(const char *json, size_t len, size_t *out_len);

#endif
