/*
 * kubelist.h - a list response read as a stream: each member of its
 * "items" array is handed over whole as it completes, and the rest of
 * the body (kind, apiVersion, metadata) is kept, small, to be parsed at
 * the end.
 *
 * A real apiserver answers a list at resourceVersion=0 from its watch
 * cache and ignores limit (client-go tools/cache/reflector.go, list():
 * "watch cache is ignoring Limit in that case anyway"), so one page can
 * be the whole cluster: nothing here holds more than one item and the
 * list's envelope. The struct owns its buffers.
 */
#ifndef TOPOGATE_KUBELIST_H
#define TOPOGATE_KUBELIST_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

struct kubelist {
    struct strbuf rest; /* the body less its items: "items":[] */
    struct strbuf item; /* the item being read */
    size_t item_max;    /* one item's cap */
    size_t rest_max;    /* the envelope's cap */
    size_t items;       /* handed over so far */
    int depth;          /* of the byte just read; 1 inside the list */
    bool in_str, esc;
    bool want_key;  /* at depth 1, the next string is a member name */
    bool in_key;    /* reading that name */
    bool in_items;  /* inside the "items" array */
    bool items_key; /* the member name just read is "items" */
    size_t key_len;
    char key[8];
};

enum kubelist_result {
    KUBELIST_OK,
    KUBELIST_TOO_LARGE, /* an item or the envelope past its cap */
    KUBELIST_NOT_JSON,  /* not an object, or an item that is not one */
    KUBELIST_STOPPED,   /* each() returned -1 */
};

void kubelist_init(struct kubelist *l, size_t item_max, size_t rest_max);

/* Forgets everything read, for a new response; frees big buffers. */
void kubelist_reset(struct kubelist *l);

void kubelist_free(struct kubelist *l);

/*
 * Feeds n bytes of the body; calls each(ctx, item, len) for every item
 * they complete (NUL-terminated, borrowed for the call). Stops at the
 * first result other than KUBELIST_OK.
 */
enum kubelist_result
kubelist_feed(struct kubelist *l, const char *p, size_t n,
              int (*each)(void *ctx, const char *item, size_t len), void *ctx);

/* True when the body read so far is one whole JSON object. */
bool kubelist_done(const struct kubelist *l);

/* The body less its items (NUL-terminated), once kubelist_done(). */
const char *kubelist_rest(const struct kubelist *l, size_t *len);

#endif
