/* kubeframe.c - whole JSON objects out of a byte stream, by depth. */
#include "kube/kubeframe.h"

#include <stdlib.h>
#include <string.h>

void
kubeframe_init(struct kubeframe *f, size_t max)
{
    memset(f, 0, sizeof(*f));
    f->max = max;
}

void
kubeframe_reset(struct kubeframe *f)
{
    size_t max = f->max;

    /* One big event should not pin its memory for good. */
    if (f->cap > (1u << 20))
        kubeframe_free(f);
    f->len = 0;
    f->depth = 0;
    f->in_str = f->esc = false;
    f->max = max;
}

void
kubeframe_free(struct kubeframe *f)
{
    free(f->buf);
    f->buf = NULL;
    f->len = f->cap = 0;
}

bool
kubeframe_partial(const struct kubeframe *f)
{
    return f->depth > 0;
}

static int
kubeframe_add(struct kubeframe *f, const char *p, size_t n)
{
    size_t need = f->len + n + 1;

    if (need > f->max + 1)
        return -1;
    if (need > f->cap) {
        size_t cap = f->cap ? f->cap : 4096;
        char *b;

        while (cap < need)
            cap *= 2;
        if ((b = realloc(f->buf, cap)) == NULL)
            return -1;
        f->buf = b;
        f->cap = cap;
    }
    memcpy(f->buf + f->len, p, n);
    f->len += n;
    f->buf[f->len] = '\0';
    return 0;
}

enum kubeframe_result
kubeframe_feed(struct kubeframe *f, const char *p, size_t n,
               int (*each)(void *ctx, const char *obj, size_t len), void *ctx)
{
    size_t from = 0; /* where the current object starts in p */

    for (size_t i = 0; i < n; i++) {
        char ch = p[i];

        if (f->depth == 0 && !f->in_str) {
            if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
                from = i + 1;
                continue;
            }
            if (ch != '{')
                return KUBEFRAME_NOT_JSON;
        }
        if (f->in_str) {
            if (f->esc)
                f->esc = false;
            else if (ch == '\\')
                f->esc = true;
            else if (ch == '"')
                f->in_str = false;
            continue;
        }
        if (ch == '"') {
            f->in_str = true;
        } else if (ch == '{' || ch == '[') {
            f->depth++;
        } else if ((ch == '}' || ch == ']') && --f->depth == 0) {
            if (kubeframe_add(f, p + from, i + 1 - from) != 0)
                return KUBEFRAME_TOO_LARGE;
            if (each(ctx, f->buf, f->len) != 0)
                return KUBEFRAME_STOPPED;
            f->len = 0;
            from = i + 1;
        }
    }
    if (f->depth > 0 && from < n && kubeframe_add(f, p + from, n - from) != 0)
        return KUBEFRAME_TOO_LARGE;
    return KUBEFRAME_OK;
}
