/* strbuf.c - see strbuf.h. */
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
grow(struct strbuf *sb, size_t extra)
{
    size_t need = sb->len + extra + 1;
    size_t cap = sb->cap ? sb->cap : 64;
    char *buf;

    if (sb->failed)
        return false;
    if (need <= sb->cap)
        return true;
    while (cap < need)
        cap *= 2;
    if ((buf = realloc(sb->buf, cap)) == NULL) {
        sb->failed = true;
        return false;
    }
    sb->buf = buf;
    sb->cap = cap;
    return true;
}

void
strbuf_add(struct strbuf *sb, const char *data, size_t len)
{
    if (!grow(sb, len))
        return;
    memcpy(sb->buf + sb->len, data, len);
    sb->len += len;
    sb->buf[sb->len] = '\0';
}

void
strbuf_puts(struct strbuf *sb, const char *s)
{
    strbuf_add(sb, s, strlen(s));
}

void
strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !grow(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

char *
strbuf_take(struct strbuf *sb)
{
    char *s = sb->buf;

    if (sb->failed) {
        strbuf_free(sb);
        return NULL;
    }
    if (s == NULL)
        s = calloc(1, 1);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return s;
}

void
strbuf_free(struct strbuf *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    sb->failed = false;
}

void
text_append(char *out, size_t size, size_t *len, const char *s)
{
    size_t n;

    if (size == 0 || *len > size - 1)
        return;
    n = strnlen(s, size - 1 - *len);
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = '\0';
}
