/*
 * noparse_review.c - a measuring instrument, not a webhook: linked into
 * build/bench/topogate-noparse with -Wl,--wrap=jsonread_in_place, it
 * parses the first review's body once, keeps that tree, and hands it out
 * again for every later body that is byte for byte the same (the bench
 * sends one fixture over and over). Everything else is topogate serve as
 * shipped: the decision and the answer are built as always. Beside
 * topogate and topogate-floor it tells what the parse costs in serve: the
 * most that any faster parse, or a tape instead of cJSON nodes, could
 * take off a review. decide() only reads the tree (const), so the kept
 * one stays as parsed; test/bench/instruments-check.sh compares the
 * answers with topogate's.
 */
#include <stdlib.h>
#include <string.h>

#include "webhook/jsonarena.h"
#include "webhook/jsonread.h"

enum jsonread_status __real_jsonread_in_place(char *text, size_t len,
                                              cJSON **root, char *msg,
                                              size_t size);
enum jsonread_status __wrap_jsonread_in_place(char *text, size_t len,
                                              cJSON **root, char *msg,
                                              size_t size);

static _Thread_local char *kept_text; /* the body the tree was read from */
static _Thread_local size_t kept_len;
static _Thread_local cJSON *kept_tree;

/* The tree of text read outside the review's arena, so that it outlives
 * the review: malloc()ed nodes, strings copied. */
static enum jsonread_status
keep(const char *text, size_t len, char *msg, size_t size)
{
    enum jsonread_status st;
    bool arena = jsonarena_active();

    if (arena)
        jsonarena_end();
    st = jsonread(text, len, &kept_tree, msg, size);
    if (arena)
        jsonarena_begin();
    if (st != JSONREAD_OK)
        return st;
    if ((kept_text = malloc(len)) == NULL) {
        cJSON_Delete(kept_tree);
        kept_tree = NULL;
        return JSONREAD_NO_MEMORY;
    }
    memcpy(kept_text, text, len);
    kept_len = len;
    return JSONREAD_OK;
}

enum jsonread_status
__wrap_jsonread_in_place(char *text, size_t len, cJSON **root, char *msg,
                         size_t size)
{
    if (kept_tree != NULL && len == kept_len &&
        memcmp(text, kept_text, len) == 0) {
        *root = kept_tree;
        return JSONREAD_OK;
    }
    if (kept_tree == NULL && keep(text, len, msg, size) == JSONREAD_OK) {
        *root = kept_tree;
        return JSONREAD_OK;
    }
    return __real_jsonread_in_place(text, len, root, msg, size);
}
