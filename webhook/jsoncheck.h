/*
 * jsoncheck.h - what cJSON would read differently from the apiserver.
 *
 * cJSON keeps a string as a C string: "true\u0000x" is read as "true",
 * and bytes that are not UTF-8 are kept as they are and echoed into the
 * response, which is then not JSON. Of two members of one object with the
 * same name cJSON finds the first, Go's encoding/json keeps the last. A
 * review with any of these is refused (400) rather than decided on
 * something other than what the apiserver stored.
 *
 * Nothing here allocates except jsoncheck_unique_keys() for very large
 * objects; nothing is kept.
 */
#ifndef TOPOGATE_JSONCHECK_H
#define TOPOGATE_JSONCHECK_H

#include <stddef.h>

#include <cjson/cJSON.h>

/*
 * Scans json[0..len) as text, before any parse. 0 when every byte is UTF-8
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), no
 * byte is a control character other than tab, line feed and carriage
 * return, and no \u escape is \u0000 or half of a surrogate pair. Else -1
 * with a one-line reason (naming the byte offset) in msg. Escapes that are
 * otherwise malformed are left for the parser to refuse.
 */
int jsoncheck_text(const char *json, size_t len, char *msg, size_t size);

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
