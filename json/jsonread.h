/*
 * jsonread.h - the strict JSON reader: a review's text into a cJSON tree,
 * in one pass, in an arena the caller passes. The one header of json/.
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
 * an escape, no lone surrogate (not a character) and no object with two
 * members of one name (cJSON would read the first, encoding/json keeps
 * the last). Nesting deeper than cJSON's limit (1,000) is refused.
 *
 * \u0000 is taken, in names and values: the apiserver stores a Pod whose
 * env value or annotation holds it, and refusing it refused the Pod
 * (failurePolicy Fail: it could never be created). A NUL would end a C
 * string there, so it is decoded as UTF8_NUL_STANDIN (base/utf8.h), the
 * byte no UTF-8 text holds: the whole string is read, and compares and
 * parses as the apiserver reads it. No string is refused for its NUL:
 * a decision could change only where a string is cut at its NUL, and
 * no string this reader returns is.
 * The contents of every array that is the value of a member named
 * "managedFields" are checked the same way but not built: the apiserver's
 * record of who set which field is often half of a pod's JSON and no
 * decision reads it (their names are not checked for twins either).
 *
 * Ownership. An arena is its creator's (jsonarena_new(), jsonarena_free())
 * and serves one thread at a time: it has no lock. Every node and string
 * of a tree jsonread() returns is a piece of the arena: the tree is
 * borrowed from it until its next jsonarena_reset() or jsonarena_free(),
 * which drop the tree whole, without a walk (deleting a parsed review
 * node by node was about half the CPU of a review in malloc() and free()).
 * So the tree is read-only: never cJSON_Delete() it or a node of it, and
 * never add, replace or detach a node (cJSON_Add*, cJSON_Replace*,
 * cJSON_Detach*): cJSON would free() what the arena owns, or malloc() a
 * node that the reset never frees. cJSON's allocation hooks are left
 * alone, for the whole process: what cJSON builds anywhere else, a
 * decision's patch included, is malloc()'s as usual.
 */
#ifndef TOPOGATE_JSONREAD_H
#define TOPOGATE_JSONREAD_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Blocks of memory that the trees read into it are cut from. */
struct jsonarena;

/*
 * An empty arena (its first block is taken at the first read); NULL when
 * out of memory. One per thread, or per request, kept across reads: a
 * reset keeps one block that holds what the last read took (up to
 * JSONARENA_KEEP), so that the next read of that size maps no memory.
 */
struct jsonarena *jsonarena_new(void);

/*
 * The most a reset keeps: the tree of a 1.5 MiB pod (etcd's largest
 * object by default) with room to spare; a review's tree takes about 3.3
 * bytes a byte of text. A kept block past the first size goes back after
 * JSONARENA_QUIET resets in a row that each used at most a quarter of it.
 */
#define JSONARENA_KEEP (6 * 1024 * 1024)
#define JSONARENA_QUIET 256

/* Drops every tree read into arena; they must not be used any more.
 * NULL: nothing to do. */
void jsonarena_reset(struct jsonarena *arena);

/* Bytes of blocks the arena holds now (0 for NULL): for tests and bounds. */
size_t jsonarena_held(const struct jsonarena *arena);

/* Drops the arena and every tree read into it; NULL: nothing to do. */
void jsonarena_free(struct jsonarena *arena);

enum jsonread_status {
    JSONREAD_OK = 0,
    JSONREAD_MALFORMED = -1, /* msg says what and at which byte */
    JSONREAD_NO_MEMORY = -2,
};

/*
 * Parses json[0..len) into *root (NULL unless JSONREAD_OK), a tree in
 * arena (see Ownership above). The text is copied into the arena once and
 * every string is a piece of that copy; json itself is only read. On
 * JSONREAD_MALFORMED, msg holds a one-line reason that names the byte
 * offset. Whatever the parse built before it stopped stays in the arena
 * until its reset: nothing else is left to free.
 */
enum jsonread_status jsonread(struct jsonarena *arena, const char *json,
                              size_t len, const cJSON **root, char *msg,
                              size_t size);

/*
 * As jsonread(), reading text where it is instead of a copy: text[0..len]
 * (len + 1 bytes) is the caller's to give up, its strings are decoded into
 * it, and it must outlive the tree (until the arena's next reset). For a
 * caller that owns the bytes it received, like the server's body buffer:
 * one copy fewer, about 100 cache lines written fewer for a 6 KB review
 * and 900 for a 59 KB one.
 */
enum jsonread_status jsonread_in_place(struct jsonarena *arena, char *text,
                                       size_t len, const cJSON **root,
                                       char *msg, size_t size);

#endif
