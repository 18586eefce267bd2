/* pointer.c - see pointer.h. */
#include "pointer.h"

#include <string.h>

#include "decimal.h"

/* Appends s at out + *len, keeping one byte of size for the NUL. */
static void
put(char *out, size_t size, size_t *len, const char *s, size_t n)
{
    if (n > size - 1 - *len)
        n = size - 1 - *len;
    memcpy(out + *len, s, n);
    *len += n;
}

void
pointer_index(char *out, size_t size, const char *array, long n,
              const char *rest)
{
    char num[DECIMAL_MAX];
    size_t num_len = decimal_write(num, n), len = 0;

    if (size == 0)
        return;
    put(out, size, &len, array, strlen(array));
    put(out, size, &len, "/", 1);
    put(out, size, &len, num, num_len);
    if (rest != NULL)
        put(out, size, &len, rest, strlen(rest));
    out[len] = '\0';
}

void
pointer_join(char *out, size_t size, const char *prefix, const char *suffix)
{
    size_t len = 0;

    if (size == 0)
        return;
    put(out, size, &len, prefix, strlen(prefix));
    put(out, size, &len, suffix, strlen(suffix));
    out[len] = '\0';
}
