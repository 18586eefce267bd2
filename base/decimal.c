/* decimal.c - see decimal.h. */
#include "base/decimal.h"

size_t
decimal_write(char *out, long n)
{
    char digits[DECIMAL_MAX];
    /* The magnitude as unsigned: -LONG_MIN does not fit a long. */
    unsigned long m = n < 0 ? 0UL - (unsigned long)n : (unsigned long)n;
    size_t k = 0, len = 0;

    do {
        digits[k++] = (char)('0' + m % 10);
        m /= 10;
    } while (m != 0);
    if (n < 0)
        out[len++] = '-';
    while (k > 0)
        out[len++] = digits[--k];
    out[len] = '\0';
    return len;
}
