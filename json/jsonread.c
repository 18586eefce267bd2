/* jsonread.c - see jsonread.h. */
#include "json/jsonread.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/jsonarena.h"
#include "json/jsoncheck.h"
#include "json/jsonskim.h"
#include "base/jsonstops.h"
#include "base/utf8.h"

#define DEPTH_MAX CJSON_NESTING_LIMIT
/* cJSON read at most 63 bytes of a number; encoding/json writes <= 24. */
#define NUMBER_MAX 63
#define MANAGED_FIELDS "managedFields"

/* Pieces are taken from the caller's arena this many bytes at a time. */
#define CHUNK (8 * 1024)

/*
 * Where the text is, what went wrong, where pieces come from. The position
 * is not here: every reader takes it and returns the next one (NULL once
 * refused), so it stays in a register. The text is the arena's copy or
 * the caller's to give up (jsonread_in_place()): every string ends where
 * its closing quote was, escapes decoded in place.
 */
struct reader {
    const unsigned char *start, *end;
    enum jsonread_status status;
    char *msg;
    size_t size;
    struct jsonarena *arena; /* the caller's: every node comes from it */
    unsigned char *chunk;    /* the rest of the current chunk */
    size_t chunk_left;
    /*
     * The 64 bytes at block, classified once for every string that ends
     * in them: bit i of stops is set where block[i] ends a string's plain
     * run (jsonstops()). A string's bytes past its start are not written
     * before it is read, so the bits ahead of the position stay true.
     */
    uintptr_t block;
    uint64_t stops;
};

/* Records the first failure only; returns NULL for `return refuse(...)`. */
__attribute__((format(printf, 3, 4))) static const unsigned char *
refuse(struct reader *r, enum jsonread_status status, const char *fmt, ...)
{
    va_list ap;

    if (r->status != JSONREAD_OK)
        return NULL;
    r->status = status;
    va_start(ap, fmt);
    vsnprintf(r->msg, r->size, fmt, ap);
    va_end(ap);
    return NULL;
}

static size_t
offset(const struct reader *r, const unsigned char *at)
{
    return (size_t)(at - r->start);
}

static const unsigned char *
malformed(struct reader *r, const unsigned char *at, const char *what)
{
    return refuse(r, JSONREAD_MALFORMED, "malformed JSON at byte %zu: %s",
                  offset(r, at), what);
}

static const unsigned char *
no_memory(struct reader *r)
{
    return refuse(r, JSONREAD_NO_MEMORY, "out of memory");
}

static const unsigned char *
bad_utf8(struct reader *r, const unsigned char *at)
{
    return refuse(r, JSONREAD_MALFORMED,
                  "invalid UTF-8 at byte %zu: a review is UTF-8 text",
                  offset(r, at));
}

static const unsigned char *
control_character(struct reader *r, const unsigned char *at)
{
    return refuse(r, JSONREAD_MALFORMED,
                  "control character 0x%02x at byte %zu: JSON needs it "
                  "escaped",
                  *at, offset(r, at));
}

/*
 * A byte where `what` was expected. A control character or a byte that is
 * not UTF-8 is named as such: that is the fault, wherever it stands.
 */
static const unsigned char *
unexpected(struct reader *r, const unsigned char *at, const char *what)
{
    if (at >= r->end)
        return malformed(r, at, what);
    if (*at < 0x20 && *at != '\t' && *at != '\n' && *at != '\r')
        return control_character(r, at);
    if (*at >= 0x80 && utf8_length(at, (size_t)(r->end - at)) == 0)
        return bad_utf8(r, at);
    return malformed(r, at, what);
}

/* The parser's calls per byte or per token: inlined, measured with callgrind. */
#define HOT static inline __attribute__((always_inline))

static const unsigned char *
past_spaces(const unsigned char *p, const unsigned char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/* p, or the first byte after the spaces at p. */
HOT const unsigned char *
skip_space(const unsigned char *p, const unsigned char *end)
{
    /* What the apiserver sends has no spaces: most calls end here. */
    if (p < end && *p > ' ')
        return p;
    return past_spaces(p, end);
}

/*
 * Whether c is at *p once spaces are skipped (*p moves past them). The
 * byte looked for is tried first: with no spaces that is the one compare.
 */
HOT bool
next_is(const unsigned char **p, const unsigned char *end, unsigned char c)
{
    if (*p < end && **p == c)
        return true;
    *p = past_spaces(*p, end);
    return *p < end && **p == c;
}

/*
 * n bytes for a node or the text's copy, cut from a chunk of the arena
 * (one call per CHUNK bytes instead of one per piece; the arena's reset
 * drops them with the rest), every piece a multiple of a node's alignment
 * so the next one is aligned without a check. A long piece is the
 * arena's own.
 */
HOT void *
piece(struct reader *r, size_t n)
{
    const size_t align = _Alignof(cJSON);
    unsigned char *p;

    n = (n + align - 1) & ~(align - 1);
    if (r->chunk_left < n) {
        if (n > CHUNK / 4)
            return jsonarena_alloc(r->arena, n);
        if ((r->chunk = jsonarena_alloc(r->arena, CHUNK)) == NULL)
            return NULL;
        r->chunk_left = CHUNK;
    }
    p = r->chunk;
    r->chunk += n;
    r->chunk_left -= n;
    return p;
}

HOT cJSON *
new_node(struct reader *r)
{
    cJSON *n = piece(r, sizeof(*n));

    if (n == NULL) {
        no_memory(r);
        return NULL;
    }
    memset(n, 0, sizeof(*n));
    return n;
}

/*
 * A new node appended to parent's children. cJSON's own convention, which
 * its append relies on, keeps the last one at hand: first->prev = last.
 */
HOT cJSON *
append(struct reader *r, cJSON *parent)
{
    cJSON *item = new_node(r), *first = parent->child;

    if (item == NULL)
        return NULL;
    if (first == NULL) {
        parent->child = item;
    } else {
        first->prev->next = item;
        item->prev = first->prev;
    }
    parent->child->prev = item;
    return item;
}

/* --- strings ----------------------------------------------------------- */

#if defined(__SSE2__)
#include <immintrin.h>

/* jsonstops() for 16 bytes, as a bit mask; one signed compare finds both
 * the control characters and the bytes >= 0x80 (negative as int8). */
static unsigned
string_stops16(const unsigned char *q)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
    __m128i stop = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
        _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));

    return (unsigned)_mm_movemask_epi8(stop);
}

static uint64_t
string_stops64_sse2(const unsigned char *q)
{
    return (uint64_t)string_stops16(q) |
           (uint64_t)string_stops16(q + 16) << 16 |
           (uint64_t)string_stops16(q + 32) << 32 |
           (uint64_t)string_stops16(q + 48) << 48;
}

/* The same compares, 32 bytes at a time. */
__attribute__((target("avx2"))) static unsigned
string_stops32(const unsigned char *q)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)q);
    __m256i stop = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')),
                        _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'))),
        _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v));

    return (unsigned)_mm256_movemask_epi8(stop);
}

__attribute__((target("avx2"))) static uint64_t
string_stops64_avx2(const unsigned char *q)
{
    return (uint64_t)string_stops32(q) | (uint64_t)string_stops32(q + 32) << 32;
}

/*
 * The stops of 64 bytes, 32 a compare where the CPU has AVX2 (asked each
 * time: a load and a test). Kept in this file: a call the compiler sees
 * whole clobbers fewer of read_tree()'s registers (from another file the
 * 59 KB review took 5 % more instructions).
 */
static uint64_t
string_stops64(const unsigned char *q)
{
    if (__builtin_cpu_supports("avx2"))
        return string_stops64_avx2(q);
    return string_stops64_sse2(q);
}
#endif

static bool
plain_byte(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static int
hex4(const unsigned char *s, const unsigned char *end)
{
    int v = 0;

    if (end - s < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        unsigned char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

/*
 * Checks the escape at q ('\\') and returns the byte after it, or NULL.
 * A lone surrogate is no character: refused, with a message the
 * apiserver's client can act on. \u0000 is taken (the apiserver stores
 * env values and annotations that hold it) and decoded as UTF8_NUL_STANDIN
 * (base/utf8.h).
 */
static const unsigned char *
escape_end(struct reader *r, const unsigned char *q)
{
    const unsigned char *end = r->end;
    int cp, lo;

    if (end - q < 2) {
        malformed(r, q, "a string is not closed");
        return NULL;
    }
    switch (q[1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r':
    case 't':
        return q + 2;
    case 'u':
        break;
    default:
        malformed(r, q, "not a JSON escape");
        return NULL;
    }
    if ((cp = hex4(q + 2, end)) < 0) {
        malformed(r, q, "\\u needs four hex digits");
        return NULL;
    }
    if (cp < 0xD800 || cp > 0xDFFF)
        return q + 6;
    if (cp <= 0xDBFF && end - q >= 12 && q[6] == '\\' && q[7] == 'u' &&
        (lo = hex4(q + 8, end)) >= 0xDC00 && lo <= 0xDFFF)
        return q + 12;
    refuse(r, JSONREAD_MALFORMED,
           "lone surrogate \\u%04x at byte %zu: not a character",
           (unsigned)cp, offset(r, q));
    return NULL;
}

/*
 * The closing '"' of the string whose contents begin at q, or NULL. Sets
 * *escaped when the string holds an escape (and must be decoded).
 */
HOT const unsigned char *
string_end(struct reader *r, const unsigned char *q, bool *escaped)
{
    const unsigned char *end = r->end;

    for (;;) {
        /*
         * Most of a review is ASCII with no escapes. The stops of 64 bytes
         * are found once, for all the strings that end in them: a string
         * is a shift and a bit scan, and the branch that leaves the loop
         * goes one way for most strings, where a step of 16 bytes took
         * one way or the other with each string's length (in callgrind's
         * branch model, 28 % of the 59 KB review's mispredictions).
         * The last 63 bytes of the text go 16 or 8 bytes a step.
         */
#if defined(__SSE2__)
        for (;;) {
            uintptr_t at = (uintptr_t)q - r->block; /* huge when before */
            uint64_t ahead;

            if (at >= 64) {
                if (end - q < 64)
                    break;
                r->block = (uintptr_t)q;
                r->stops = string_stops64(q);
                at = 0;
            }
            if ((ahead = r->stops >> at) != 0) {
                q += __builtin_ctzll(ahead);
                goto look;
            }
            q += 64 - at;
        }
        while (end - q >= 16) {
            unsigned stops = string_stops16(q);

            if (stops != 0) {
                q += __builtin_ctz(stops);
                goto look;
            }
            q += 16;
        }
#endif
        while (end - q >= 8) {
            uint64_t w, stops;

            memcpy(&w, q, 8);
            if ((stops = jsonstops(w)) != 0) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                q += __builtin_ctzll(stops) / 8;
#endif
                break;
            }
            q += 8;
        }
        while (q < end && plain_byte(*q))
            q++;
#if defined(__SSE2__)
    look:
#endif
        if (q >= end) {
            malformed(r, q, "a string is not closed");
            return NULL;
        }
        if (*q == '"')
            return q;
        if (*q == '\\') {
            *escaped = true;
            /* managedFields' k:{\"name\":...} keys: the escape to take fast. */
            if (end - q >= 2 && q[1] == '"')
                q += 2;
            else if ((q = escape_end(r, q)) == NULL)
                return NULL;
        } else if (*q >= 0x80) {
            size_t n = utf8_length(q, (size_t)(end - q));

            if (n == 0) {
                bad_utf8(r, q);
                return NULL;
            }
            q += n;
        } else {
            control_character(r, q);
            return NULL;
        }
    }
}

static char *
put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3F));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/*
 * Decodes s[0..end), whose escapes string_end() has checked, into o; o may
 * be s itself (no escape is shorter than what it stands for).
 */
static void
decode(const unsigned char *s, const unsigned char *end, char *o)
{
    while (s < end) {
        const unsigned char *bs = memchr(s, '\\', (size_t)(end - s));
        size_t run = (size_t)((bs != NULL ? bs : end) - s);
        unsigned cp;

        memmove(o, s, run);
        o += run;
        if (bs == NULL)
            break;
        s = bs + 2;
        switch (bs[1]) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u':
            cp = (unsigned)hex4(bs + 2, end);
            s = bs + 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) +
                     ((unsigned)hex4(bs + 8, end) - 0xDC00);
                s = bs + 12;
            }
            if (cp == 0)
                *o++ = (char)UTF8_NUL_STANDIN;
            else
                o = put_utf8(o, cp);
            break;
        default: /* '"', '\\', '/' */
            *o++ = (char)bs[1];
            break;
        }
    }
    *o = '\0';
}

/*
 * Reads the string at p ('"') and returns the byte after it; with out, its
 * contents, NUL-terminated where the closing quote was (decoded in place:
 * never longer than the text), go there.
 */
HOT const unsigned char *
read_string(struct reader *r, const unsigned char *p, char **out)
{
    const unsigned char *from = p + 1, *to;
    bool escaped = false;
    char *text;

    if ((to = string_end(r, from, &escaped)) == NULL)
        return NULL;
    if (out == NULL)
        return to + 1;
    text = (char *)(uintptr_t)from; /* the arena's copy, or given up */
    if (escaped)
        decode(from, to, text);
    else
        text[to - from] = '\0';
    *out = text;
    return to + 1;
}

/* --- numbers and literals ---------------------------------------------- */

static bool
is_digit(const unsigned char *p, const unsigned char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

/* strtod() of text[0..n): a number with a fraction, exponent or 16+ digits. */
__attribute__((noinline)) static double
number_text_value(const unsigned char *text, size_t n)
{
    char buf[NUMBER_MAX + 1];

    memcpy(buf, text, n);
    buf[n] = '\0';
    return strtod(buf, NULL); /* the C locale: topogate never sets one */
}

/* The number at s into node (NULL: checked only); the byte after it. */
static const unsigned char *
read_number(struct reader *r, const unsigned char *s, cJSON *node)
{
    const unsigned char *q = s, *end = r->end;
    uint64_t whole = 0;
    int digits = 0;
    bool plain = true;
    double v;

    if (q < end && *q == '-')
        q++;
    if (!is_digit(q, end))
        return unexpected(r, q, "a number needs a digit here");
    if (*q == '0') {
        if (is_digit(++q, end))
            return malformed(r, q, "a number does not begin with 0");
    } else {
        for (; is_digit(q, end); q++, digits++)
            whole = whole * 10 + (uint64_t)(*q - '0');
    }
    if (q < end && *q == '.') {
        plain = false;
        if (!is_digit(++q, end))
            return unexpected(r, q, "a number needs a digit after '.'");
        while (is_digit(q, end))
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        plain = false;
        if (++q < end && (*q == '+' || *q == '-'))
            q++;
        if (!is_digit(q, end))
            return unexpected(r, q, "a number needs a digit in its exponent");
        while (is_digit(q, end))
            q++;
    }
    if (q - s > NUMBER_MAX)
        return malformed(r, s, "a number longer than 63 bytes");
    if (node == NULL)
        return q;
    /* Up to 15 digits an integer is exact in a double: no strtod(). */
    if (plain && digits <= 15)
        v = *s == '-' ? -(double)whole : (double)whole;
    else
        v = number_text_value(s, (size_t)(q - s));
    node->type = cJSON_Number;
    node->valuedouble = v;
    /* As cJSON fills it: clamped to int. */
    node->valueint = v >= INT_MAX            ? INT_MAX
                     : v <= (double)INT_MIN ? INT_MIN
                                             : (int)v;
    return q;
}

/* Inlined: the word's length is then a constant. */
HOT const unsigned char *
read_literal(struct reader *r, const unsigned char *p, cJSON *node,
             const char *word, int type)
{
    size_t n = strlen(word);

    if ((size_t)(r->end - p) < n || memcmp(p, word, n) != 0)
        return malformed(r, p, "expected a value");
    if (node != NULL) {
        node->type = type;
        node->valueint = type == cJSON_True;
    }
    return p + n;
}

/* A literal or a number at p; node NULL: checked, not built. */
static const unsigned char *
read_scalar(struct reader *r, const unsigned char *p, cJSON *node)
{
    switch (*p) {
    case 't':
        return read_literal(r, p, node, "true", cJSON_True);
    case 'f':
        return read_literal(r, p, node, "false", cJSON_False);
    case 'n':
        return read_literal(r, p, node, "null", cJSON_NULL);
    default:
        if (*p == '-' || (*p >= '0' && *p <= '9'))
            return read_number(r, p, node);
        return unexpected(r, p, "expected a value");
    }
}

/* --- arrays and objects ------------------------------------------------ */

static const unsigned char *
nested_too_deep(struct reader *r, const unsigned char *at)
{
    return malformed(r, at, "arrays and objects nested deeper than 1000");
}

static const unsigned char *
after_element(struct reader *r, const unsigned char *at, char close)
{
    return unexpected(r, at, close == ']'
                                 ? "expected ',' or ']' after an element"
                                 : "expected ',' or '}' after a member");
}

/*
 * The member's name at p and its ':' (out NULL: checked only); returns the
 * byte after them, spaces skipped.
 */
HOT const unsigned char *
read_name(struct reader *r, const unsigned char *p, char **out)
{
    const unsigned char *end = r->end;

    if (p >= end || *p != '"')
        return unexpected(r, p, "expected a member's name in quotes");
    if ((p = read_string(r, p, out)) == NULL)
        return NULL;
    if (!next_is(&p, end, ':'))
        return unexpected(r, p, "expected ':' after a member's name");
    return skip_space(p + 1, end);
}

/*
 * A managedFields entry's "fieldsV1":{...} at p, checked whole by
 * jsonskim.h: the byte after it, or NULL where that cannot vouch for it
 * (p is then checked as any other member). open arrays and objects are
 * open around it.
 */
HOT const unsigned char *
skimmed_fields(const unsigned char *p, const unsigned char *end,
               unsigned open)
{
    static const char name[] = "\"fieldsV1\":{";
    const size_t n = sizeof(name) - 1;

    if ((size_t)(end - p) < n || memcmp(p, name, n) != 0)
        return NULL;
    return jsonskim_fieldsv1(p + n - 1, end, DEPTH_MAX - open);
}

/*
 * Checks the value at p by the same rules as read_tree(), building
 * nothing: for managedFields, often half of a pod's text, whose entries'
 * fieldsV1 jsonskim.h checks a block at a time. depth arrays and objects
 * are open around it.
 */
static const unsigned char *
skip_value(struct reader *r, const unsigned char *p, unsigned depth)
{
    const unsigned char *end = r->end, *skimmed;
    char closing[DEPTH_MAX]; /* the closing brackets still to come */
    unsigned open = 0;

value: /* a value at p */
    if (p >= end)
        return malformed(r, p, "expected a value, the text ends");
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';

        if (depth + open >= DEPTH_MAX)
            return nested_too_deep(r, p);
        p = skip_space(p + 1, end);
        if (p < end && *p == close) {
            p++;
            goto after;
        }
        closing[open++] = close;
        if (close == ']')
            goto value;
        goto member;
    }
    if ((p = *p == '"' ? read_string(r, p, NULL) : read_scalar(r, p, NULL)) ==
        NULL)
        return NULL;
    goto after;

member: /* a member's name at p */
    if ((skimmed = skimmed_fields(p, end, depth + open)) != NULL) {
        p = skimmed;
        goto after;
    }
    if ((p = read_name(r, p, NULL)) == NULL)
        return NULL;
    /*
     * Most of managedFields is "f:name":{} and "f:name":{"f:...: the
     * value's bytes taken as they come, with no spaces to skip.
     */
    if (end - p >= 2 && p[0] == '{' && (p[1] == '}' || p[1] == '"')) {
        if (depth + open >= DEPTH_MAX)
            return nested_too_deep(r, p);
        if (p[1] == '}') {
            p += 2;
            goto after;
        }
        closing[open++] = '}';
        p++;
        goto member;
    }
    goto value;

after: /* after a value: the end, the next element, or a closing bracket */
    if (open == 0)
        return p;
    if (end - p >= 2 && p[0] == ',' && p[1] == '"' &&
        closing[open - 1] == '}') {
        p++;
        goto member;
    }
    if (p < end && *p == ',') {
        p = skip_space(p + 1, end);
        if (closing[open - 1] == '}')
            goto member;
        goto value;
    }
    if (p < end && *p == closing[open - 1]) {
        p++;
        open--;
        goto after;
    }
    if (p < end && *p <= ' ' && (p = past_spaces(p, end)) < end &&
        (*p == ',' || *p == closing[open - 1]))
        goto after;
    return after_element(r, p, closing[open - 1]);
}

/* Asked of every member whose value is an array: most fail at once. */
static bool
is_managed_fields(const char *name)
{
    return name[0] == 'm' && strcmp(name, MANAGED_FIELDS) == 0;
}

/* The objects whose first bytes repeat: compared name by name. */
static bool
names_checked(struct reader *r, const cJSON *object, size_t members)
{
    char why[200];

    if (jsoncheck_unique_members(object, members, why, sizeof(why)) == 0)
        return true;
    if (strcmp(why, "out of memory") == 0)
        no_memory(r);
    else
        refuse(r, JSONREAD_MALFORMED, "%s", why);
    return false;
}

/* Two members with one name: which one counts is not agreed. object has
 * two members or more. */
HOT bool
unique_names(struct reader *r, const cJSON *object)
{
    const cJSON *first = object->child, *second = first->next;
    size_t members;

    /* Just two (an env entry, a resources map): told apart by their
     * first bytes without a walk. */
    if (second->next == NULL && first->string[0] != second->string[0])
        return true;
    if (jsoncheck_first_bytes_differ(object, &members))
        return true;
    return names_checked(r, object, members);
}

/*
 * Reads the value at p into top, and everything in it; returns the byte
 * after it. One loop over a stack of the arrays and objects still open,
 * not a call per value: the position stays in a register. The array of
 * a member named managedFields goes to skip_value().
 */
static const unsigned char *
read_tree(struct reader *r, const unsigned char *p, cJSON *top)
{
    const unsigned char *end = r->end;
    cJSON *open[DEPTH_MAX], *node = top, *parent;
    unsigned depth = 0;
    char close;

value: /* a value at p, into node */
    if (p >= end)
        return malformed(r, p, "expected a value, the text ends");
    switch (*p) {
    case '{':
    case '[':
        close = *p == '{' ? '}' : ']';
        node->type = close == '}' ? cJSON_Object : cJSON_Array;
        if (depth >= DEPTH_MAX)
            return nested_too_deep(r, p);
        p = skip_space(p + 1, end);
        if (p < end && *p == close) {
            p++;
            goto after;
        }
        open[depth++] = node;
        if (close == '}')
            goto member;
        if ((node = append(r, node)) == NULL)
            return NULL;
        goto value;
    case '"':
        node->type = cJSON_String;
        if ((p = read_string(r, p, &node->valuestring)) == NULL)
            return NULL;
        goto after;
    default:
        if ((p = read_scalar(r, p, node)) == NULL)
            return NULL;
        goto after;
    }

member: /* a member's name at p, of the object open[depth - 1] */
    if ((node = append(r, open[depth - 1])) == NULL)
        return NULL;
    if ((p = read_name(r, p, &node->string)) == NULL)
        return NULL;
    if (p < end && *p == '[' && is_managed_fields(node->string)) {
        /* Kept as an empty array: checked, never read. */
        node->type = cJSON_Array;
        if ((p = skip_value(r, p, depth)) == NULL)
            return NULL;
        goto after;
    }
    goto value;

after: /* after a value: the end, the next element, or a closing bracket */
    if (depth == 0)
        return p;
    parent = open[depth - 1];
    close = parent->type == cJSON_Object ? '}' : ']';
    if (p < end && *p == ',') {
        p = skip_space(p + 1, end);
        if (close == '}')
            goto member;
        if ((node = append(r, parent)) == NULL)
            return NULL;
        goto value;
    }
    if (p < end && *p == close) {
        p++;
        depth--;
        /* Checked as each object closes, as cJSON would have built it. */
        if (close == '}' && parent->child->next != NULL &&
            !unique_names(r, parent))
            return NULL;
        goto after;
    }
    if (p < end && *p <= ' ' && (p = past_spaces(p, end)) < end &&
        (*p == ',' || *p == close))
        goto after;
    return after_element(r, p, close);
}

/*
 * The text in r, from its first byte to its last, into *root. A tree
 * refused half-built is left to the arena's reset.
 */
static enum jsonread_status
read_text(struct reader *r, const cJSON **root)
{
    const unsigned char *p;
    cJSON *top;

    if ((top = new_node(r)) == NULL)
        return r->status;
    p = read_tree(r, skip_space(r->start, r->end), top);
    if (p != NULL && (p = skip_space(p, r->end)) < r->end)
        p = unexpected(r, p, "bytes after the JSON value");
    if (p == NULL)
        return r->status;
    *root = top;
    return JSONREAD_OK;
}

/* A reader of text[0..len) into arena; no result and no reason yet. */
static struct reader
reader_over(struct jsonarena *arena, const unsigned char *text, size_t len,
            const cJSON **root, char *msg, size_t size)
{
    *root = NULL;
    if (size > 0)
        msg[0] = '\0';
    return (struct reader){
        .start = text,
        .end = text + len,
        .status = JSONREAD_OK,
        .msg = msg,
        .size = size,
        .arena = arena,
    };
}

enum jsonread_status
jsonread(struct jsonarena *arena, const char *json, size_t len,
         const cJSON **root, char *msg, size_t size)
{
    struct reader r =
        reader_over(arena, (const unsigned char *)json, len, root, msg, size);
    unsigned char *copy;

    /*
     * One copy of the text in the arena holds every string: each ends
     * where its closing quote was, instead of a piece and a memcpy() per
     * string. The copy is a piece of its own, exactly len bytes: under
     * AddressSanitizer a read past its end is reported as one past the
     * caller's text would be.
     */
    if ((copy = jsonarena_alloc(arena, len)) == NULL) {
        no_memory(&r);
        return r.status;
    }
    memcpy(copy, json, len);
    r.start = copy;
    r.end = copy + len;
    return read_text(&r, root);
}

enum jsonread_status
jsonread_in_place(struct jsonarena *arena, char *text, size_t len,
                  const cJSON **root, char *msg, size_t size)
{
    struct reader r =
        reader_over(arena, (const unsigned char *)text, len, root, msg, size);

    text[len] = '\0';
    return read_text(&r, root);
}
