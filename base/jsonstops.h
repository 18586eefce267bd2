/*
 * jsonstops.h - where a plain run of JSON string text ends, 8 bytes at a
 * time: shared by the reader (json/jsonread.c), which looks for a
 * string's end, and the writer (jsonout.c), which copies what needs no
 * escape.
 */
#ifndef TOPOGATE_JSONSTOPS_H
#define TOPOGATE_JSONSTOPS_H

#include <stdint.h>

#define JSONSTOPS_ONES ((uint64_t)0x0101010101010101u)
#define JSONSTOPS_HIGHS ((uint64_t)0x8080808080808080u)

/*
 * Bit 7 of a byte is set where the word (8 bytes, loaded little-endian)
 * holds a byte that ends a plain run of a string: a control character,
 * '"', '\\', or a byte of a multi-byte sequence. The lowest flag is exact
 * (a borrow only reaches bytes above it), so __builtin_ctzll() / 8 is the
 * length of the plain run.
 */
static inline uint64_t
jsonstops(uint64_t w)
{
    uint64_t quote = w ^ (JSONSTOPS_ONES * '"');
    uint64_t slash = w ^ (JSONSTOPS_ONES * '\\');

    return (((w - JSONSTOPS_ONES * 0x20) & ~w) |
            ((quote - JSONSTOPS_ONES) & ~quote) |
            ((slash - JSONSTOPS_ONES) & ~slash) | w) &
           JSONSTOPS_HIGHS;
}

#endif
