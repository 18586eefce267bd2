/*
 * base64.h - RFC 4648 base64 (the standard alphabet, padded, no line
 * breaks): how an AdmissionReview response carries its JSON Patch.
 */
#ifndef TOPOGATE_BASE64_H
#define TOPOGATE_BASE64_H

#include <stddef.h>

#include "base/jsonout.h"

/* The length of len bytes in base64. */
#define BASE64_LEN(len) (((len) + 2) / 3 * 4)

/*
 * Writes the base64 of in[0..len) to out, which has room for
 * BASE64_LEN(len) bytes (no NUL is written); returns that length.
 */
size_t base64_encode(char *out, const unsigned char *in, size_t len);

/* The base64 of len bytes, appended to o. */
void base64_put(struct jsonout *o, const char *bytes, size_t len);

#endif
