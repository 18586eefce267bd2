/*
 * jsonskim.c - see jsonskim.h.
 *
 * The trie's grammar, with no spaces, is
 *     object := '{' ( name ':' object ( ',' name ':' object )* )? '}'
 * and each of its tokens admits one kind of byte before it: a name's
 * opening quote '{' or ','; ':' a name's closing quote; '{' a ':'; ','
 * a '}'; '}' a '{' or a '}'. Those five rules, every byte outside the
 * names being one of the four tokens, and brackets that balance are the
 * grammar: whatever stands after a token is a token or a name, and its
 * own rule says whether it may. The rules are checked for 64 bytes at
 * once with shifted masks (simdjson's stage 1 has the masks, and the
 * carry-less multiply that finds the bytes inside quotes, Langdale and
 * Lemire 2019); the object's end is found by walking the brackets
 * that open or close a level, a leaf's "{}" taken out first.
 */
#include "json/jsonskim.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SKIM_X86 1
#endif

#define BLOCK 64

/* Inlined into each classifier's skim, so that each is compiled for its
 * own instructions. */
#define SKIM_INLINE static inline __attribute__((always_inline))

/* Bit i is byte i of a block. */
struct block {
    uint64_t quote, backslash, open, close, colon, comma;
    uint64_t odd; /* a control character or a byte >= 0x80 */
};

/* A block's classes a byte at a time: where there is no vector unit. */
static void
classify_bytes(const unsigned char *s, struct block *b)
{
    memset(b, 0, sizeof(*b));
    for (int i = 0; i < BLOCK; i++) {
        uint64_t bit = (uint64_t)1 << i;

        switch (s[i]) {
        case '"': b->quote |= bit; break;
        case '\\': b->backslash |= bit; break;
        case '{': b->open |= bit; break;
        case '}': b->close |= bit; break;
        case ':': b->colon |= bit; break;
        case ',': b->comma |= bit; break;
        default:
            if (s[i] < 0x20 || s[i] >= 0x80)
                b->odd |= bit;
        }
    }
}

#ifdef SKIM_X86
/* Bits of a 16-byte compare, placed at bit `at`. */
#define BITS16(eq, at) ((uint64_t)(unsigned)_mm_movemask_epi8(eq) << (at))

/* x86-64's baseline: 16 bytes a compare. */
SKIM_INLINE void
classify_sse2(const unsigned char *s, struct block *b)
{
    memset(b, 0, sizeof(*b));
    for (int i = 0; i < BLOCK; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));

        b->quote |= BITS16(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), i);
        b->backslash |= BITS16(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')), i);
        b->open |= BITS16(_mm_cmpeq_epi8(v, _mm_set1_epi8('{')), i);
        b->close |= BITS16(_mm_cmpeq_epi8(v, _mm_set1_epi8('}')), i);
        b->colon |= BITS16(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')), i);
        b->comma |= BITS16(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')), i);
        /* Signed: below 0x20, and 0x80 and up, in one compare. */
        b->odd |= BITS16(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), i);
    }
}

/* The bits of a 32-byte compare. */
#define BITS32(eq) ((uint64_t)(uint32_t)_mm256_movemask_epi8(eq))

/* The bytes of lo and hi (a block's two halves) equal to c, as bits. */
#define EQ64(lo, hi, c)                                                     \
    (BITS32(_mm256_cmpeq_epi8(lo, _mm256_set1_epi8(c))) |                   \
     BITS32(_mm256_cmpeq_epi8(hi, _mm256_set1_epi8(c))) << 32)

/* 32 bytes a compare, where the CPU has AVX2 (chosen as the skim runs);
 * the two halves written out, so that each class is one register. */
__attribute__((target("avx2"))) SKIM_INLINE void
classify_avx2(const unsigned char *s, struct block *b)
{
    __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)s);
    __m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
    __m256i space = _mm256_set1_epi8(0x20);

    b->quote = EQ64(lo, hi, '"');
    b->backslash = EQ64(lo, hi, '\\');
    b->open = EQ64(lo, hi, '{');
    b->close = EQ64(lo, hi, '}');
    b->colon = EQ64(lo, hi, ':');
    b->comma = EQ64(lo, hi, ',');
    /* Signed: below 0x20, and 0x80 and up, in one compare. */
    b->odd = BITS32(_mm256_cmpgt_epi8(space, lo)) |
             BITS32(_mm256_cmpgt_epi8(space, hi)) << 32;
}

/* prefix_xor() below, in one carry-less multiply by all ones. */
__attribute__((target("pclmul"))) SKIM_INLINE uint64_t
prefix_xor_clmul(uint64_t x)
{
    __m128i v = _mm_set_epi64x(0, (long long)x);

    return (uint64_t)_mm_cvtsi128_si64(
        _mm_clmulepi64_si128(v, _mm_set1_epi8((char)0xFF), 0));
}
#endif

/* Bit i set where an odd number of x's bits stand at or below i. */
SKIM_INLINE uint64_t
prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/*
 * The bytes of block b that break the trie's shape: a byte that is not
 * ASCII text or a token, an escape of anything but '"', a token whose
 * byte before is not one its rule admits. in_name: all ones when bit 0's
 * byte leaves a name open; becomes the same for bit 63's. The tokens
 * outside names go to *opens and *closes.
 */
SKIM_INLINE uint64_t
misfits(const struct block *b, uint64_t *in_name, uint64_t *opens,
        uint64_t *closes, uint64_t (*prefix)(uint64_t))
{
    uint64_t escaped = b->backslash << 1;
    uint64_t quotes = b->quote & ~escaped;
    /* Bit 0's quote was counted in the block before. */
    uint64_t inside = prefix(quotes & ~(uint64_t)1) ^ *in_name;
    uint64_t outside = ~inside & ~quotes;
    uint64_t name_open = quotes & inside, name_close = quotes & ~inside;
    uint64_t open = b->open & outside, close = b->close & outside;
    uint64_t colon = b->colon & outside, comma = b->comma & outside;
    uint64_t bad = b->odd | (escaped & ~b->quote) |
                   (outside & ~(open | close | colon | comma));

    bad |= (name_open & ~((open | comma) << 1)) |
           (colon & ~(name_close << 1)) | (open & ~(colon << 1)) |
           (comma & ~(close << 1)) | (close & ~((open | close) << 1));
    *in_name = (uint64_t)((int64_t)inside >> 63);
    *opens = open;
    *closes = close;
    return bad;
}

/*
 * Where in the block the object closes (its bit), or -1; *depth moves on.
 * A leaf's "{}" leaves the depth as it was and is not counted: the
 * brackets walked are the few that open or close a level. -2 where the
 * object would open more than depth_room objects at once, a leaf inside
 * counted.
 */
SKIM_INLINE int
object_end(uint64_t opens, uint64_t closes, uint64_t first, unsigned *depth,
           unsigned depth_room)
{
    uint64_t leaves = opens & closes >> 1 & ~first;
    uint64_t events;
    unsigned d = *depth, n_open, n_close;

    opens &= ~leaves;
    closes &= ~(leaves << 1);
    /* Most blocks close fewer levels than are open and open fewer than
     * the room: neither the end nor the limit can be in them. */
    n_open = (unsigned)__builtin_popcountll(opens);
    n_close = (unsigned)__builtin_popcountll(closes);
    if (n_close < d && d + n_open < depth_room) {
        *depth = d + n_open - n_close;
        return -1;
    }
    for (events = opens | closes; events != 0; events &= events - 1) {
        int at = __builtin_ctzll(events);

        if (opens >> at & 1) {
            if (++d >= depth_room)
                return -2;
        } else if (--d == 0) {
            return at;
        }
    }
    *depth = d;
    return -1;
}

/*
 * Blocks overlap by a byte: bit 0 is the byte before the block's own 63
 * (from own), so each token's rule is checked within one block, and only
 * whether a name is open is carried. The first block's bit 0 is a ':' of
 * its own, which p's '{' needs before it.
 */
SKIM_INLINE const unsigned char *
skim(const unsigned char *p, const unsigned char *end, unsigned depth_room,
     void (*classify)(const unsigned char *, struct block *),
     uint64_t (*prefix)(uint64_t))
{
    uint64_t in_name = 0, first = 2; /* p's '{': never a leaf of its own */
    unsigned depth = 0;
    unsigned char copy[BLOCK];

    if (p >= end || *p != '{')
        return NULL;
    for (const unsigned char *own = p;; own += BLOCK - 1, first = 0) {
        size_t left = (size_t)(end - own);
        const unsigned char *block = copy;
        struct block b;
        uint64_t bad, opens, closes;
        int at;

        if (first != 0 || left < BLOCK - 1) {
            /* Past the text, bytes that fit no rule: a block with any
             * ends the loop, found the object's end or not. */
            memset(copy, 0x01, sizeof(copy));
            copy[0] = first != 0 ? ':' : own[-1];
            memcpy(copy + 1, own, left < BLOCK - 1 ? left : BLOCK - 1);
        } else {
            block = own - 1;
        }
        classify(block, &b);
        bad = misfits(&b, &in_name, &opens, &closes, prefix) & ~(uint64_t)1;
        at = object_end(opens & ~(uint64_t)1, closes & ~(uint64_t)1, first,
                        &depth, depth_room);
        if (at == -2)
            return NULL;
        if (at >= 0) {
            /* What follows the object is the caller's to check. */
            uint64_t upto = at == BLOCK - 1 ? ~(uint64_t)0
                                            : ((uint64_t)2 << at) - 1;

            return (bad & upto) == 0 ? own + at : NULL;
        }
        if (bad != 0)
            return NULL; /* also where the text ended: the padding */
    }
}

/* The skim with each classifier; unused: the one this machine needs is
 * chosen below, the tests run them all. */
__attribute__((unused)) static const unsigned char *
skim_bytes(const unsigned char *p, const unsigned char *end,
           unsigned depth_room)
{
    return skim(p, end, depth_room, classify_bytes, prefix_xor);
}

#ifdef SKIM_X86
static const unsigned char *
skim_sse2(const unsigned char *p, const unsigned char *end,
          unsigned depth_room)
{
    return skim(p, end, depth_room, classify_sse2, prefix_xor);
}

/* Whether this CPU runs skim_avx2(). */
static bool
has_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
           __builtin_cpu_supports("pclmul");
}

__attribute__((target("avx2,bmi,pclmul"))) static const unsigned char *
skim_avx2(const unsigned char *p, const unsigned char *end,
          unsigned depth_room)
{
    return skim(p, end, depth_room, classify_avx2, prefix_xor_clmul);
}
#endif

const unsigned char *
jsonskim_fieldsv1(const unsigned char *p, const unsigned char *end,
                  unsigned depth_room)
{
#ifdef SKIM_X86
    if (has_avx2())
        return skim_avx2(p, end, depth_room);
    return skim_sse2(p, end, depth_room);
#else
    return skim_bytes(p, end, depth_room);
#endif
}
