/* base64.c - see base64.h. */
#include "base/base64.h"

#include <limits.h>
#include <stdint.h>

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Three bytes (or the last one or two, padded) a step. */
static char *
encode_scalar(char *w, const unsigned char *in, size_t len)
{
    size_t i = 0;

    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

        *w++ = alphabet[v >> 18];
        *w++ = alphabet[(v >> 12) & 63];
        *w++ = alphabet[(v >> 6) & 63];
        *w++ = alphabet[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)in[i] << 16;

        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        *w++ = alphabet[v >> 18];
        *w++ = alphabet[(v >> 12) & 63];
        *w++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        *w++ = '=';
    }
    return w;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>
#define HAVE_SSSE3_PATH 1

/*
 * Twelve bytes a step into sixteen characters, the method of Wojciech
 * Muła and Daniel Lemire ("Faster Base64 Encoding and Decoding Using
 * AVX2 Instructions", 2018), in its 16-byte form: one shuffle puts each
 * group's three bytes where its four 6-bit values are cut out by two
 * multiplies, and a second shuffle picks the offset that turns each
 * value into its character. Reads 16 bytes for each 12 it encodes, so
 * it stops while 16 are left; the scalar loop does the rest.
 */
__attribute__((target("ssse3"))) static size_t
encode_ssse3(char *w, const unsigned char *in, size_t len)
{
    /* Per 32-bit lane: bytes b1, b0, b2, b1 of its group of three. */
    const __m128i spread =
        _mm_set_epi8(10, 11, 9, 10, 7, 8, 6, 7, 4, 5, 3, 4, 1, 2, 0, 1);
    /* What to add to a value, by the class the subtraction and compare
     * below give it: 0 for 26-51, 1-12 for 52-63, 13 for 0-25. */
    const __m128i offsets = _mm_setr_epi8(
        'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
    size_t done = 0;

    for (; len - done >= 16; done += 12, w += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(in + done));
        __m128i hi, lo, values, class;

        v = _mm_shuffle_epi8(v, spread);
        /* The first and third values of each group, to bits 0-5 of their
         * 16-bit halves; the second and fourth, to bits 8-13. */
        hi = _mm_mulhi_epu16(_mm_and_si128(v, _mm_set1_epi32(0x0fc0fc00)),
                             _mm_set1_epi32(0x04000040));
        lo = _mm_mullo_epi16(_mm_and_si128(v, _mm_set1_epi32(0x003f03f0)),
                             _mm_set1_epi32(0x01000010));
        values = _mm_or_si128(hi, lo);
        class = _mm_subs_epu8(values, _mm_set1_epi8(51));
        class = _mm_or_si128(
            class, _mm_and_si128(_mm_cmpgt_epi8(_mm_set1_epi8(26), values),
                                 _mm_set1_epi8(13)));
        _mm_storeu_si128((__m128i *)(void *)w,
                         _mm_add_epi8(values, _mm_shuffle_epi8(offsets, class)));
    }
    return done;
}
#endif

size_t
base64_encode(char *out, const unsigned char *in, size_t len)
{
    char *w = out;

#ifdef HAVE_SSSE3_PATH
    /* Every x86-64 server CPU of the last fifteen years has SSSE3; the
     * check keeps the baseline build running on one that does not. */
    if (len >= 16 && __builtin_cpu_supports("ssse3")) {
        size_t done = encode_ssse3(w, in, len);

        w += done / 3 * 4;
        in += done;
        len -= done;
    }
#endif
    w = encode_scalar(w, in, len);
    return (size_t)(w - out);
}

void
base64_put(struct jsonout *o, const char *bytes, size_t len)
{
    if (len > (size_t)INT_MAX / 4 * 3 || !jsonout_reserve(o, BASE64_LEN(len)))
        return;
    o->len += base64_encode(o->buf + o->len, (const unsigned char *)bytes, len);
    o->buf[o->len] = '\0';
}
