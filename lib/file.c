/* file.c - reading a whole file or stream into memory. */
#include "lib/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
file_read_stream(FILE *f, size_t max, size_t *len)
{
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    int saved = 0;

    errno = 0;
    do {
        if (n + 1 >= cap) {
            char *grown;

            if (cap > max) {
                saved = EFBIG;
                goto fail;
            }
            cap = cap != 0 ? cap * 2 : 8192;
            grown = realloc(buf, cap);
            if (grown == NULL) {
                saved = ENOMEM;
                goto fail;
            }
            buf = grown;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    if (ferror(f)) {
        /* Keep read(2)'s reason, such as EISDIR for a directory. */
        saved = errno != 0 ? errno : EIO;
        goto fail;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
fail:
    free(buf);
    errno = saved;
    return NULL;
}

char *
file_read(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    int saved;

    if (f == NULL)
        return NULL;
    buf = file_read_stream(f, max, len);
    saved = errno;
    fclose(f);
    errno = saved;
    return buf;
}

void
file_free_secret(char *buf, size_t len)
{
    if (buf == NULL)
        return;
    explicit_bzero(buf, len);
    free(buf);
}
