/*
 * fuzz_jsonread.c - libFuzzer target: any bytes through jsonread(), the
 * review's parser, against cJSON's own parser.
 *
 * Beyond "no crash, no leak, no undefined behaviour": whatever jsonread
 * takes, cJSON takes too and builds the same tree (types, names, strings,
 * number bits, links), every managedFields array emptied, each \u0000
 * as jsonread reads it (json_same.h); whatever it
 * refuses comes with a reason. jsonread is stricter than cJSON (RFC 8259
 * numbers, UTF-8, no bytes after the value), so the other direction is
 * test/unit/jsonread_oracle.py's, against Python's json. Each input is
 * read again in place, the way `serve` reads a review, and must agree
 * (test/unit/jsonread_arena.h). The trees are the arenas': read, never
 * changed, dropped by a reset after each input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/unit/json_same.h"
#include "test/unit/jsonread_arena.h"
#include "json/jsonread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct jsonarena *arena; /* kept from one input to the next */
    /* An exact-size copy: a read past the end is a heap overflow. */
    char *text = malloc(size > 0 ? size : 1), msg[256];
    const cJSON *mine = NULL;
    const char *why;
    cJSON *theirs;

    if (arena == NULL)
        arena = jsonarena_new();
    if (text == NULL || arena == NULL) {
        free(text);
        return 0;
    }
    memcpy(text, data, size);
    enum jsonread_status rc =
        read_both_ways(arena, text, size, &mine, msg, sizeof(msg), &why);

    if (why != NULL)
        abort();
    switch (rc) {
    case JSONREAD_OK:
        theirs = cjson_parse_standin(text, size);
        if (theirs == NULL)
            abort();
        empty_managed_fields(theirs);
        if (!same_tree(mine, theirs))
            abort();
        cJSON_Delete(theirs);
        break;
    case JSONREAD_MALFORMED:
        if (mine != NULL || msg[0] == '\0')
            abort();
        break;
    default:
        abort(); /* out of memory cannot happen at these sizes */
    }
    jsonarena_reset(arena);
    free(text);
    return 0;
}
