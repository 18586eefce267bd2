/*
 * utf8_reference.h - RFC 3629 computed from the bits, byte by byte: the
 * reference the UTF-8 readers under test (utf8_length(), jsonread's
 * strings) are compared with. Included by the unit tests that use it.
 */
#ifndef TOPOGATE_UTF8_REFERENCE_H
#define TOPOGATE_UTF8_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* The length of the UTF-8 sequence at s (at most avail bytes), or 0. */
static size_t
utf8_reference(const unsigned char *s, size_t avail)
{
    size_t n;
    uint32_t cp;

    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xE0) == 0xC0)
        n = 2, cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0)
        n = 3, cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0)
        n = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (avail < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
        (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}
#endif
