/*
 * jsonread_arena.h - jsonread() read again inside this thread's arena, for
 * the jsonread unit test and its fuzz target.
 *
 * A review is read inside the arena, where one copy of the text holds
 * every string (each ends where its closing quote was, escapes decoded in
 * place); outside it each string is its own malloc(). Whatever the tests
 * read outside is read inside too and must agree: the same verdict, the
 * same message, the same tree, and the caller's text left as it was. So
 * must jsonread_in_place() on a copy of the text the way `serve` reads
 * its body buffer (len + 1 bytes, nothing past them).
 */
#ifndef TOPOGATE_JSONREAD_ARENA_H
#define TOPOGATE_JSONREAD_ARENA_H

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/unit/json_same.h"
#include "json/jsonarena.h"
#include "json/jsonread.h"

/*
 * NULL when reading s[0..len) in the arena gives rc, msg (when refused)
 * and a tree the same as outside (tree: what was built there), else what
 * differs.
 */
static const char *
arena_disagrees(const char *s, size_t len, enum jsonread_status rc,
                const char *msg, const cJSON *tree)
{
    char *before = malloc(len + 1), *writable = malloc(len + 1);
    char inside_msg[256], place_msg[256];
    const char *why = NULL;
    enum jsonread_status inside_rc, place_rc;
    cJSON *inside = NULL, *in_place = NULL;

    if (before == NULL || writable == NULL || jsonarena_begin() != 0) {
        free(before);
        free(writable);
        return "no arena";
    }
    memcpy(before, s, len);
    memcpy(writable, s, len);
    inside_rc = jsonread(s, len, &inside, inside_msg, sizeof(inside_msg));
    place_rc = jsonread_in_place(writable, len, &in_place, place_msg,
                                 sizeof(place_msg));
    jsonarena_end();
    if (inside_rc != rc)
        why = "another verdict";
    else if (rc != JSONREAD_OK && strcmp(inside_msg, msg) != 0)
        why = "another message";
    else if (rc == JSONREAD_OK && !same_tree(inside, tree))
        why = "another tree";
    else if (memcmp(before, s, len) != 0)
        why = "the caller's text changed";
    else if (place_rc != rc)
        why = "another verdict in place";
    else if (rc != JSONREAD_OK && strcmp(place_msg, msg) != 0)
        why = "another message in place";
    else if (rc == JSONREAD_OK && !same_tree(in_place, tree))
        why = "another tree in place";
    jsonarena_reset();
    free(before);
    free(writable);
    return why;
}

#endif
