/*
 * kept_tree.h - for the bench's instruments (noparse_review.c,
 * checkonly_review.c): the tree of the first body a thread reads, parsed
 * once outside the review's arena so that it outlives reviews, and handed
 * out again for every later body that is byte for byte the same (the
 * bench sends one fixture over and over). decide() reads the tree as
 * const, so it stays as parsed; test/bench/instruments-check.sh compares
 * the answers with topogate's. The memcmp() of each body stays in what
 * the instruments measure.
 */
#ifndef TOPOGATE_BENCH_KEPT_TREE_H
#define TOPOGATE_BENCH_KEPT_TREE_H

#include <stdlib.h>
#include <string.h>

#include "json/jsonarena.h"
#include "json/jsonread.h"

static _Thread_local char *kept_text;
static _Thread_local size_t kept_len;
static _Thread_local cJSON *kept_tree;

/* Parses text outside the arena (malloc()ed nodes, strings copied). */
static void
kept_tree_keep(const char *text, size_t len)
{
    char msg[64];
    bool arena = jsonarena_active();
    cJSON *tree;

    if (arena)
        jsonarena_end();
    if (jsonread(text, len, &tree, msg, sizeof(msg)) != JSONREAD_OK)
        tree = NULL;
    if (arena)
        jsonarena_begin();
    if (tree == NULL || (kept_text = malloc(len)) == NULL) {
        cJSON_Delete(tree);
        return;
    }
    memcpy(kept_text, text, len);
    kept_len = len;
    kept_tree = tree;
}

/* The kept tree when text is the body it was read from, else NULL. */
static cJSON *
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
