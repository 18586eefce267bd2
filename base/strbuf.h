/*
 * strbuf.h - a growable, always NUL-terminated string (after git's strbuf).
 *
 * A zeroed struct strbuf is empty and valid. strbuf_take() moves the text
 * out (the caller then owns it and the buffer is empty again);
 * strbuf_free() releases it. After an allocation failure the buffer is
 * marked failed, further appends do nothing, and strbuf_take() returns
 * NULL, so callers check once at the end.
 */
#ifndef TOPOGATE_STRBUF_H
#define TOPOGATE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
    char *buf;
    size_t len;
    size_t cap;
    bool failed;
};

void strbuf_add(struct strbuf *sb, const char *data, size_t len);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *strbuf_take(struct strbuf *sb);
void strbuf_free(struct strbuf *sb);

/*
 * For a fixed buffer instead (no struct strbuf): s appended to out, of
 * size bytes, whose text is *len bytes long; cut to fit and always
 * NUL-terminated, as snprintf() would cut it.
 */
void text_append(char *out, size_t size, size_t *len, const char *s);

#endif
