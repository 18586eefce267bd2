/*
 * The reader's stops of a 64-byte block (json/jsonread.c), 16 bytes a
 * compare and, where this CPU has AVX2, 32, against a byte-by-byte
 * reference: every byte value at every place of a block of plain text,
 * and random blocks of the bytes that matter. This file compiles the
 * source again to reach its static functions.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test/unit/check.h"

#define jsonread jsonread_again
#define jsonread_in_place jsonread_in_place_again
#include "json/jsonread.c"
#undef jsonread
#undef jsonread_in_place

#if defined(__SSE2__)
/* The stops by their definition: '"', '\\', below 0x20, 0x80 and up. */
static uint64_t
reference(const unsigned char *q)
{
    uint64_t stops = 0;

    for (int i = 0; i < 64; i++)
        if (q[i] == '"' || q[i] == '\\' || q[i] < 0x20 || q[i] >= 0x80)
            stops |= (uint64_t)1 << i;
    return stops;
}

/* How many of the ways disagree with the reference on q. */
static int
wrong_on(const unsigned char *q)
{
    uint64_t want = reference(q);
    int wrong = string_stops64_sse2(q) != want;

    if (__builtin_cpu_supports("avx2"))
        wrong += string_stops64_avx2(q) != want;
    wrong += string_stops64(q) != want;
    return wrong;
}

static void
test_each_byte_everywhere(void)
{
    unsigned char block[64];
    int wrong = 0;

    for (int b = 0; b < 256; b++)
        for (int i = 0; i < 64; i++) {
            memset(block, 'a', sizeof(block));
            block[i] = (unsigned char)b;
            wrong += wrong_on(block);
        }
    CHECK_INT(wrong, 0);
}

static void
test_random_blocks(void)
{
    static const unsigned char bytes[] = {'"', '\\', 0x00, 0x1f, 0x20,
                                          0x7f, 0x80, 0xff, 'a',  '{'};
    unsigned char block[64];
    uint64_t x = 0x2545f4914f6cdd1du;
    int wrong = 0;

    for (int n = 0; n < 100000; n++) {
        for (int i = 0; i < 64; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
            block[i] = bytes[x % sizeof(bytes)];
        }
        wrong += wrong_on(block);
    }
    CHECK_INT(wrong, 0);
}
#endif

int
main(void)
{
#if defined(__SSE2__)
    printf("# AVX2 on this CPU: %s\n",
           __builtin_cpu_supports("avx2") ? "yes" : "no");
    test_each_byte_everywhere();
    test_random_blocks();
#endif
    CHECK_DONE();
}
