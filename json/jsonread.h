/*
 * jsonread.h - a review's JSON text into a cJSON tree, in one pass.
 *
 * cJSON's own parser was half the instructions of a review (about 194,000
 * of 367,000 for a 6 KB pod, 1.0 M of 1.77 M for a 59 KB one): it tries
 * "null", "false" and "true" before every value, reads every string twice,
 * and its number path goes through localeconv() and strtod(). Before it ran,
 * the text was scanned once more for what cJSON would misread (bytes that
 * are not UTF-8, control characters, \u0000, lone surrogates) and once more
 * to cut managedFields out. This reads the text once, checks all of that
 * as it goes, and builds the same cJSON nodes (cJSON stays the tree every
 * reader of a review walks), so each member costs one look at its bytes.
 *
 * What it takes is RFC 8259 JSON and nothing else, as the apiserver's
 * encoding/json writes and reads it: no leading zeros, no "1.", no bytes
 * after the value, UTF-8 only (RFC 3629), no control character outside
 * an escape, no \u0000 (a C string would end there), no lone surrogate
 * (not a character) and no object with two members of one name (cJSON
 * would read the first, encoding/json keeps the last). Nesting deeper
 * than cJSON's limit (1,000) is refused.
 * The contents of every array that is the value of a member named
 * "managedFields" are checked the same way but not built: the apiserver's
 * record of who set which field is often half of a pod's JSON and no
 * decision reads it (their names are not checked for twins either).
 *
 * Nodes are allocated as cJSON allocates them (its hooks: in this
 * thread's arena between jsonarena_begin() and _end(), else malloc), so
 * cJSON_Delete() or jsonarena_reset() frees the tree. In an arena the
 * text is copied there once and every string is a piece of that copy
 * (ended where its closing quote was, escapes decoded in place); outside,
 * each string is its own malloc(). The caller's text is never written,
 * except by jsonread_in_place(), which reads it where it is instead of a
 * copy.
 */
#ifndef TOPOGATE_JSONREAD_H
#define TOPOGATE_JSONREAD_H

#include <stddef.h>

#include <cjson/cJSON.h>

enum jsonread_status {
    JSONREAD_OK = 0,
    JSONREAD_MALFORMED = -1, /* msg says what and at which byte */
    JSONREAD_NO_MEMORY = -2,
};

/*
 * Parses json[0..len) into *root (NULL unless JSONREAD_OK). On
 * JSONREAD_MALFORMED, msg holds a one-line reason that names the byte
 * offset; nothing of the tree is left to free.
 */
enum jsonread_status jsonread(const char *json, size_t len, cJSON **root,
                              char *msg, size_t size);

/*
 * As jsonread(), reading text where it is instead of a copy in the arena:
 * text[0..len] (len + 1 bytes) is the caller's to give up, its strings
 * are decoded into it, and it must outlive the tree (the arena adopts
 * it until its reset: jsonarena_adopt()). For a caller that owns the
 * bytes it received, like the server's body buffer: one copy fewer, about
 * 100 cache lines written fewer for a 6 KB review and 900 for a 59 KB
 * one. Outside an arena it is jsonread() and text is left as it was.
 */
enum jsonread_status jsonread_in_place(char *text, size_t len, cJSON **root,
                                       char *msg, size_t size);

#endif
