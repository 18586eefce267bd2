/* pointer.c - see pointer.h. */
#include "base/pointer.h"

#include "base/decimal.h"
#include "base/strbuf.h"

void
pointer_index(char *out, size_t size, const char *array, long n,
              const char *rest)
{
    char num[DECIMAL_MAX];
    size_t len = 0;

    decimal_write(num, n);
    text_append(out, size, &len, array);
    text_append(out, size, &len, "/");
    text_append(out, size, &len, num);
    if (rest != NULL)
        text_append(out, size, &len, rest);
}

void
pointer_join(char *out, size_t size, const char *prefix, const char *suffix)
{
    size_t len = 0;

    text_append(out, size, &len, prefix);
    text_append(out, size, &len, suffix);
}
