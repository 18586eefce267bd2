/*
 * jsoncheck.h - what a cJSON tree would read differently from the apiserver.
 *
 * Of two members of one object with the same name cJSON finds the first,
 * Go's encoding/json keeps the last: a review with such an object is
 * refused (400) rather than decided on something other than what the
 * apiserver stored. The text's own faults (bytes that are not UTF-8,
 * \u0000, lone surrogates) are refused by the parse, jsonread.h, which
 * reads UTF-8 sequences with jsoncheck_utf8().
 *
 * Nothing here allocates except jsoncheck_unique_keys() for very large
 * objects; nothing is kept.
 */
#ifndef TOPOGATE_JSONCHECK_H
#define TOPOGATE_JSONCHECK_H

#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * The length of the UTF-8 sequence at s (1 to 4; at most avail bytes are
 * read), or 0 when it is not one (RFC 3629).
 */
size_t jsoncheck_utf8(const unsigned char *s, size_t avail);

/*
 * 0 when no object in the tree under root has two members with one name;
 * else -1 with a one-line reason in msg (the name, quoted). -1 with "out
 * of memory" when a large object could not be checked.
 */
int jsoncheck_unique_keys(const cJSON *root, char *msg, size_t size);

#endif
