/*
 * noparse_review.c - a measuring instrument, not a webhook: linked into
 * build/bench/topogate-noparse with -Wl,--wrap=jsonread_in_place, its
 * parse of a body it has read before costs nothing (kept_tree.h); the
 * decision and the answer are built as always. Beside topogate and
 * topogate-floor it tells what the parse costs in serve: the most that
 * any faster parse, or a tape instead of cJSON nodes, could take off a
 * review.
 */
#include "test/bench/kept_tree.h"

enum jsonread_status __real_jsonread_in_place(struct jsonarena *arena,
                                              char *text, size_t len,
                                              const cJSON **root, char *msg,
                                              size_t size);
enum jsonread_status __wrap_jsonread_in_place(struct jsonarena *arena,
                                              char *text, size_t len,
                                              const cJSON **root, char *msg,
                                              size_t size);

enum jsonread_status
__wrap_jsonread_in_place(struct jsonarena *arena, char *text, size_t len,
                         const cJSON **root, char *msg, size_t size)
{
    const cJSON *tree = kept_tree_for(text, len);

    if (tree == NULL)
        return __real_jsonread_in_place(arena, text, len, root, msg, size);
    *root = tree;
    return JSONREAD_OK;
}
