/*
 * jsonpatch.h - a decision's ops as RFC 6902 JSON Patch text, and the
 * base64 the AdmissionReview response carries it in.
 */
#ifndef TOPOGATE_JSONPATCH_H
#define TOPOGATE_JSONPATCH_H

#include <stddef.h>

#include "policy/decision.h"
#include "base/jsonout.h"

/* Appends the JSON text of the ops to o (see jsonout.h for failure). */
void jsonpatch_print(struct jsonout *o, const struct op *ops, size_t n);

/* Owned JSON text of the ops; NULL when out of memory. */
char *jsonpatch_write(const struct op *ops, size_t n);

/* Owned base64 (RFC 4648, no line breaks) of len bytes; NULL on failure. */
char *jsonpatch_base64(const char *bytes, size_t len);

#endif
