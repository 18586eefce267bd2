/* jsonout.c - see jsonout.h. */
#include "base/jsonout.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "base/jsonstops.h"
#include "base/utf8.h"

/* A review's response is one to two KB. */
#define JSONOUT_FIRST 4096

bool
jsonout_reserve(struct jsonout *o, size_t n)
{
    size_t cap;
    char *p;

    if (o->failed)
        return false;
    if (o->cap - o->len > n)
        return true;
    if (n > (size_t)INT_MAX - o->len) /* cJSON prints into an int length */
        goto fail;
    cap = o->cap > 0 ? o->cap : JSONOUT_FIRST;
    while (cap - o->len <= n)
        cap *= 2;
    if ((p = realloc(o->buf, cap)) == NULL)
        goto fail;
    o->buf = p;
    o->cap = cap;
    return true;
fail:
    o->failed = true;
    return false;
}

void
jsonout_raw(struct jsonout *o, const char *text, size_t len)
{
    if (!jsonout_reserve(o, len))
        return;
    memcpy(o->buf + o->len, text, len);
    o->len += len;
    o->buf[o->len] = '\0';
}

/*
 * cJSON's escapes: the two-character ones, \u00XX for other controls.
 * A byte that does not start a whole UTF-8 sequence (a message cut in the
 * middle of a character) becomes \ufffd: cJSON would copy it, and the
 * response would not be JSON. UTF8_NUL_STANDIN is the NUL the reader
 * read (base/utf8.h): \u0000 again.
 */
void
jsonout_string(struct jsonout *o, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *in = (const unsigned char *)(s != NULL ? s : "");
    size_t n = strlen((const char *)in);
    const unsigned char *end = in + n;
    char *w;

    /* At most 6 bytes per input byte, and the quotes. */
    if (n > ((size_t)INT_MAX - 2) / 6 || !jsonout_reserve(o, 6 * n + 2))
        return;
    w = o->buf + o->len;
    *w++ = '"';
    while (in < end) {
        unsigned char c;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* Plain runs 8 bytes a step, copied whole (the room reserved is
         * 6 bytes per byte), kept up to the first byte to look at. */
        if (end - in >= 8) {
            uint64_t word;
            size_t plain;

            memcpy(&word, in, 8);
            memcpy(w, in, 8);
            word = jsonstops(word);
            plain = word == 0 ? 8 : (size_t)__builtin_ctzll(word) / 8;
            in += plain;
            w += plain;
            if (plain == 8)
                continue;
        }
#endif
        c = *in;
        if (c > 31 && c < 0x80 && c != '"' && c != '\\') {
            *w++ = (char)c;
            in++;
            continue;
        }
        if (c == UTF8_NUL_STANDIN) { /* a NUL as the reader read it */
            memcpy(w, "\\u0000", 6);
            w += 6;
            in++;
            continue;
        }
        if (c >= 0x80) {
            size_t k = utf8_length(in, (size_t)(end - in));

            if (k == 0) {
                memcpy(w, "\\ufffd", 6);
                w += 6;
                in++;
                continue;
            }
            memcpy(w, in, k);
            w += k;
            in += k;
            continue;
        }
        *w++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *w++ = (char)c;
            break;
        case '\b':
            *w++ = 'b';
            break;
        case '\f':
            *w++ = 'f';
            break;
        case '\n':
            *w++ = 'n';
            break;
        case '\r':
            *w++ = 'r';
            break;
        case '\t':
            *w++ = 't';
            break;
        default:
            *w++ = 'u';
            *w++ = '0';
            *w++ = '0';
            *w++ = hex[c >> 4];
            *w++ = hex[c & 15];
        }
        in++;
    }
    *w++ = '"';
    *w = '\0';
    o->len = (size_t)(w - o->buf);
}

void
jsonout_int(struct jsonout *o, long n)
{
    char num[DECIMAL_MAX];

    jsonout_raw(o, num, decimal_write(num, n));
}

/*
 * A number as cJSON 1.7.15 prints one: "%1.15g" (then "%1.17g" where that
 * does not read back), "null" for NaN and infinities. A whole number
 * under 10^15 comes out of %1.15g as its plain digits, which are written
 * here; any other (-0 included: "-0") is printed by cJSON itself.
 */
static void
put_number(struct jsonout *o, const cJSON *number)
{
    double d = number->valuedouble;

    if (d > -1e15 && d < 1e15 && d == (double)(long)d &&
        !(d == 0 && signbit(d))) {
        jsonout_int(o, (long)d);
        return;
    }
    if (!jsonout_reserve(o, 64))
        return;
    if (!cJSON_PrintPreallocated((cJSON *)number, o->buf + o->len,
                                 (int)(o->cap - o->len), 0)) {
        o->failed = true;
        return;
    }
    o->len += strlen(o->buf + o->len);
}

/*
 * The compact text cJSON_PrintUnformatted() gives, written here: cJSON's
 * printer walks a print buffer of its own per call, and a patch prints a
 * dozen small values. What cJSON cannot print (an invalid item, a raw one
 * without text) fails the output as it fails cJSON's; so does a value
 * nested deeper than cJSON reads (1,000), which no patch comes near.
 */
static void
put_value(struct jsonout *o, const cJSON *v, int depth)
{
    const cJSON *c;

    if (depth > CJSON_NESTING_LIMIT) {
        o->failed = true;
        return;
    }
    switch (v->type & 0xFF) {
    case cJSON_NULL:
        jsonout_lit(o, "null");
        return;
    case cJSON_False:
        jsonout_lit(o, "false");
        return;
    case cJSON_True:
        jsonout_lit(o, "true");
        return;
    case cJSON_Number:
        put_number(o, v);
        return;
    case cJSON_String:
        jsonout_string(o, v->valuestring);
        return;
    case cJSON_Raw:
        if (v->valuestring == NULL)
            break;
        jsonout_raw(o, v->valuestring, strlen(v->valuestring));
        return;
    case cJSON_Array:
        jsonout_lit(o, "[");
        for (c = v->child; c != NULL; c = c->next) {
            if (c != v->child)
                jsonout_lit(o, ",");
            put_value(o, c, depth + 1);
        }
        jsonout_lit(o, "]");
        return;
    case cJSON_Object:
        jsonout_lit(o, "{");
        for (c = v->child; c != NULL; c = c->next) {
            if (c != v->child)
                jsonout_lit(o, ",");
            jsonout_string(o, c->string);
            jsonout_lit(o, ":");
            put_value(o, c, depth + 1);
        }
        jsonout_lit(o, "}");
        return;
    }
    o->failed = true;
}

void
jsonout_value(struct jsonout *o, const cJSON *value)
{
    if (value == NULL) {
        o->failed = true;
        return;
    }
    put_value(o, value, 0);
}

char *
jsonout_take(struct jsonout *o, size_t *len)
{
    char *text;

    if (o->buf == NULL && jsonout_reserve(o, 0))
        o->buf[0] = '\0'; /* nothing written: the empty text */
    text = o->failed ? NULL : o->buf;
    if (text == NULL) {
        free(o->buf);
    } else if (len != NULL) {
        *len = o->len;
    }
    *o = (struct jsonout){0};
    return text;
}

void
jsonout_clear(struct jsonout *o)
{
    o->len = 0;
    o->failed = false;
}

void
jsonout_free(struct jsonout *o)
{
    free(o->buf);
    *o = (struct jsonout){0};
}
