/*
 * jsonread_arena.h - jsonread() and jsonread_in_place() of the same text,
 * for the jsonread unit test and its fuzz target.
 *
 * jsonread() reads a copy of the text that it makes in the arena, where
 * every string ends where its closing quote was; jsonread_in_place() does
 * the same in the caller's buffer, the way `serve` reads its body buffer
 * (len + 1 bytes, nothing past them). Both must agree: the same verdict,
 * the same message, the same tree; and jsonread() leaves the caller's
 * text as it was. Both trees are the arenas' (json/jsonread.h): read
 * here, never changed or deleted.
 */
#ifndef TOPOGATE_JSONREAD_ARENA_H
#define TOPOGATE_JSONREAD_ARENA_H

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/unit/json_same.h"
#include "json/jsonread.h"

/* The arena of the in-place reads, kept from one to the next. */
static struct jsonarena *read_in_place_arena;

/*
 * jsonread() of s[0..len) into arena, as the tests call it: its verdict,
 * with *root and msg. *why is NULL when jsonread_in_place() of a copy of
 * s, in an arena of its own, gives the same verdict, message (when
 * refused) and tree, and s is as it was; else it says what differs.
 */
static enum jsonread_status
read_both_ways(struct jsonarena *arena, const char *s, size_t len,
               const cJSON **root, char *msg, size_t size, const char **why)
{
    char *before = malloc(len + 1), *writable = malloc(len + 1);
    char place_msg[256];
    struct jsonarena *own = read_in_place_arena;
    enum jsonread_status rc, place_rc;
    const cJSON *in_place = NULL;

    *why = NULL;
    if (own == NULL)
        own = read_in_place_arena = jsonarena_new();
    if (before == NULL || writable == NULL || own == NULL) {
        free(before);
        free(writable);
        *why = "out of memory";
        return jsonread(arena, s, len, root, msg, size);
    }
    memcpy(before, s, len);
    memcpy(writable, s, len);
    rc = jsonread(arena, s, len, root, msg, size);
    place_rc = jsonread_in_place(own, writable, len, &in_place, place_msg,
                                 sizeof(place_msg));
    if (memcmp(before, s, len) != 0)
        *why = "the caller's text changed";
    else if ((rc == JSONREAD_OK) != (*root != NULL))
        *why = "a tree with a refusal, or none with a success";
    else if (place_rc != rc)
        *why = "another verdict in place";
    else if (rc != JSONREAD_OK && strcmp(place_msg, msg) != 0)
        *why = "another message in place";
    else if (rc == JSONREAD_OK && !same_tree(in_place, *root))
        *why = "another tree in place";
    jsonarena_reset(own);
    free(before);
    free(writable);
    return rc;
}

#endif
