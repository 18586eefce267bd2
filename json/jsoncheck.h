/*
 * jsoncheck.h - inside json/ only (and its unit test): a check of the
 * reader's parse (jsonread.c), members named twice (UTF-8 sequences:
 * base/utf8.h).
 *
 * Of two members of one object with the same name cJSON finds the first,
 * Go's encoding/json keeps the last: a review with such an object is
 * refused (400) rather than decided on something other than what the
 * apiserver stored.
 *
 * Nothing here allocates except jsoncheck_unique_members() for very
 * large objects; nothing is kept.
 */
#ifndef TOPOGATE_JSONCHECK_H
#define TOPOGATE_JSONCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/*
 * Whether no two of object's members begin with the same byte (a bit
 * each, the byte folded to 64), and so surely have no name in common:
 * most objects of a pod. Counts the members into *n. Inline: it runs as
 * each object of a review closes.
 */
static inline bool
jsoncheck_first_bytes_differ(const cJSON *object, size_t *n)
{
    uint64_t seen = 0, repeated = 0;
    size_t members = 0;

    for (const cJSON *m = object->child; m != NULL; m = m->next) {
        uint64_t bit = (uint64_t)1 << ((unsigned char)m->string[0] & 63);

        repeated |= seen & bit;
        seen |= bit;
        members++;
    }
    *n = members;
    return repeated == 0;
}

/*
 * 0 when no two of object's n members (n > 0) have one name; else -1
 * with a one-line reason in msg (the name, quoted), or with "out of
 * memory" when a large object could not be checked.
 */
int jsoncheck_unique_members(const cJSON *object, size_t n, char *msg,
                             size_t size);

#endif
