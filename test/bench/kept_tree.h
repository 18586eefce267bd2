/*
 * kept_tree.h - for the bench's instruments (noparse_review.c,
 * checkonly_review.c): the tree of the first body a thread reads, parsed
 * once into an arena of its own that is never reset, so that it outlives
 * reviews, and handed out again for every later body that is byte for
 * byte the same (the bench sends one fixture over and over). The tree is
 * read-only (json/jsonread.h), so it stays as parsed;
 * test/bench/instruments-check.sh compares the answers with topogate's.
 * The memcmp() of each body stays in what the instruments measure.
 */
#ifndef TOPOGATE_BENCH_KEPT_TREE_H
#define TOPOGATE_BENCH_KEPT_TREE_H

#include <stdlib.h>
#include <string.h>

#include "json/jsonread.h"

static _Thread_local char *kept_text;
static _Thread_local size_t kept_len;
static _Thread_local const cJSON *kept_tree;

/*
 * Parses text into an arena of this thread's that lives as long as the
 * process (an instrument's: its one tree is never dropped).
 */
static void
kept_tree_keep(const char *text, size_t len)
{
    struct jsonarena *arena = jsonarena_new();
    const cJSON *tree;
    char msg[64];

    if (arena == NULL ||
        jsonread(arena, text, len, &tree, msg, sizeof(msg)) != JSONREAD_OK ||
        (kept_text = malloc(len)) == NULL) {
        jsonarena_free(arena);
        return;
    }
    memcpy(kept_text, text, len);
    kept_len = len;
    kept_tree = tree;
}

/* The kept tree when text is the body it was read from, else NULL. */
static const cJSON *
kept_tree_for(const char *text, size_t len)
{
    if (kept_tree == NULL)
        kept_tree_keep(text, len);
    if (kept_tree != NULL && len == kept_len &&
        memcmp(text, kept_text, len) == 0)
        return kept_tree;
    return NULL;
}

#endif
