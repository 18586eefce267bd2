/*
 * checkonly_review.c - a measuring instrument, not a webhook: build/bench/
 * topogate-checkonly is topogate serve with json/jsonread.c compiled
 * in here instead of on its own, so that its jsonread_in_place() can be
 * replaced: the body is checked whole by skip_value(), the same rules as
 * the parse (grammar, strings, escapes, UTF-8, numbers, depth) building
 * nothing, and the decision then gets the kept tree (kept_tree.h: the
 * first body parsed once, handed out again for the same bytes).
 * Beside topogate-noparse it tells what checking the text costs in
 * serve without writing a node: the least a parse into a compact tape
 * could cost, before a rule is changed to read one. Repeated member names
 * are not looked for (that needs the names kept). A body it refuses is
 * handed to the real parse for the exact message.
 */
#define jsonread_in_place parse_in_place
#include "json/jsonread.c"
#undef jsonread_in_place

#include "test/bench/kept_tree.h"

enum jsonread_status jsonread_in_place(struct jsonarena *arena, char *text,
                                       size_t len, const cJSON **root,
                                       char *msg, size_t size);

/* The whole text checked as JSON by skip_value(), nothing built (so no
 * arena). */
static bool
text_is_json(const char *text, size_t len)
{
    char msg[64];
    const cJSON *unused;
    struct reader r =
        reader_over(NULL, (const unsigned char *)text, len, &unused, msg,
                    sizeof(msg));
    const unsigned char *p = skip_space(r.start, r.end);

    p = skip_value(&r, p, 0);
    return p != NULL && skip_space(p, r.end) == r.end;
}

enum jsonread_status
jsonread_in_place(struct jsonarena *arena, char *text, size_t len,
                  const cJSON **root, char *msg, size_t size)
{
    const cJSON *tree;

    if (!text_is_json(text, len) || (tree = kept_tree_for(text, len)) == NULL)
        return parse_in_place(arena, text, len, root, msg, size);
    *root = tree;
    return JSONREAD_OK;
}
