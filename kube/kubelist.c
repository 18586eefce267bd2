/*
 * kubelist.c - a list body read as a stream, item by item (kubelist.h).
 *
 * One pass over the bytes, counting depth outside strings as kubeframe.c
 * does. Depth 1 is the list object; a member name read there says
 * whether the array that follows is "items" (depth 2), whose objects
 * (depth 3 and more) are cut out one at a time; everything else is kept
 * in rest, with the items array written as [].
 */
#include "kube/kubelist.h"

#include <stdlib.h>
#include <string.h>

void
kubelist_init(struct kubelist *l, size_t item_max, size_t rest_max)
{
    memset(l, 0, sizeof(*l));
    l->item_max = item_max;
    l->rest_max = rest_max;
}

void
kubelist_reset(struct kubelist *l)
{
    size_t item_max = l->item_max, rest_max = l->rest_max;
    struct strbuf item = l->item;

    strbuf_free(&l->rest);
    /* Keep an item buffer of ordinary size: the next list needs it. */
    if (item.cap > (1u << 20))
        strbuf_free(&item);
    item.len = 0;
    item.failed = false;
    memset(l, 0, sizeof(*l));
    l->item = item;
    l->item_max = item_max;
    l->rest_max = rest_max;
}

void
kubelist_free(struct kubelist *l)
{
    strbuf_free(&l->rest);
    strbuf_free(&l->item);
}

/* Appends to sb unless it would pass max bytes; -1 then or out of memory. */
static int
bounded_add(struct strbuf *sb, size_t max, const char *p, size_t n)
{
    if (sb->len + n > max)
        return -1;
    strbuf_add(sb, p, n);
    return sb->failed ? -1 : 0;
}

static int
rest_add(struct kubelist *l, const char *p, size_t n)
{
    return bounded_add(&l->rest, l->rest_max, p, n);
}

static int
item_add(struct kubelist *l, const char *p, size_t n)
{
    return bounded_add(&l->item, l->item_max, p, n);
}

static bool
space(char ch)
{
    return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t';
}

/* A byte of the envelope (depth 1 and 2 outside items, or 0). */
static enum kubelist_result
envelope(struct kubelist *l, char ch)
{
    if (l->depth == 0) {
        if (space(ch))
            return KUBELIST_OK;
        if (ch != '{' || l->rest.len > 0)
            return KUBELIST_NOT_JSON; /* not an object, or a second one */
        l->depth = 1;
        l->want_key = true;
        return rest_add(l, &ch, 1) ? KUBELIST_TOO_LARGE : KUBELIST_OK;
    }
    if (rest_add(l, &ch, 1) != 0)
        return KUBELIST_TOO_LARGE;
    if (l->in_str) {
        if (l->esc)
            l->esc = false;
        else if (ch == '\\')
            l->esc = true;
        else if (ch == '"')
            l->in_str = false;
        if (!l->in_key)
            return KUBELIST_OK;
        if (!l->in_str) {
            l->in_key = false;
            l->items_key = l->key_len == 5 && memcmp(l->key, "items", 5) == 0;
        } else if (l->key_len < sizeof(l->key)) {
            l->key[l->key_len++] = ch;
        }
        return KUBELIST_OK;
    }
    if (space(ch) || ch == ':')
        return KUBELIST_OK;
    if (ch == '"') {
        l->in_str = true;
        if (l->depth == 1 && l->want_key) {
            l->in_key = true;
            l->key_len = 0;
            l->want_key = false;
            return KUBELIST_OK;
        }
    } else if (ch == '[' && l->depth == 1 && l->items_key) {
        l->in_items = true;
    } else if (ch == '{' || ch == '[') {
        /* nothing: depth below */
    } else if (ch == '}' || ch == ']') {
        l->depth--;
    } else if (ch == ',' && l->depth == 1) {
        l->want_key = true;
    }
    if (ch == '{' || ch == '[')
        l->depth++;
    if (l->depth == 1)
        l->items_key = false;
    return KUBELIST_OK;
}

enum kubelist_result
kubelist_feed(struct kubelist *l, const char *p, size_t n,
              int (*each)(void *ctx, const char *item, size_t len), void *ctx)
{
    size_t from = 0; /* where the item's bytes in p begin */
    enum kubelist_result rc;

    for (size_t i = 0; i < n; i++) {
        char ch = p[i];

        if (!l->in_items) {
            if ((rc = envelope(l, ch)) != KUBELIST_OK)
                return rc;
            continue;
        }
        if (l->depth == 2) { /* between items */
            if (space(ch) || ch == ',')
                continue;
            if (ch == ']') {
                l->in_items = false;
                l->items_key = false;
                l->depth = 1;
                if (rest_add(l, "]", 1) != 0)
                    return KUBELIST_TOO_LARGE;
                continue;
            }
            if (ch != '{')
                return KUBELIST_NOT_JSON;
            l->depth = 3;
            l->item.len = 0;
            from = i;
            continue;
        }
        if (l->in_str) {
            if (l->esc)
                l->esc = false;
            else if (ch == '\\')
                l->esc = true;
            else if (ch == '"')
                l->in_str = false;
            continue;
        }
        if (ch == '"') {
            l->in_str = true;
        } else if (ch == '{' || ch == '[') {
            l->depth++;
        } else if ((ch == '}' || ch == ']') && --l->depth == 2) {
            if (item_add(l, p + from, i + 1 - from) != 0)
                return KUBELIST_TOO_LARGE;
            l->items++;
            if (each(ctx, l->item.buf, l->item.len) != 0)
                return KUBELIST_STOPPED;
            l->item.len = 0;
        }
    }
    if (l->in_items && l->depth > 2 && item_add(l, p + from, n - from) != 0)
        return KUBELIST_TOO_LARGE;
    return KUBELIST_OK;
}

bool
kubelist_done(const struct kubelist *l)
{
    return l->depth == 0 && l->rest.len > 0;
}

const char *
kubelist_rest(const struct kubelist *l, size_t *len)
{
    *len = l->rest.len;
    return l->rest.buf ? l->rest.buf : "";
}
