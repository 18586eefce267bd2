/* yamlresolve.c - see yamlresolve.h (go-yaml v2's resolve.go, in C). */
#include "policy/k8s/yamlresolve.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

/* A tag without the "tag:yaml.org,2002:" that libyaml expanded !! to. */
static const char *
short_tag(const char *tag)
{
    size_t n = strlen(TAG_PREFIX);

    return tag != NULL && strncmp(tag, TAG_PREFIX, n) == 0 ? tag + n : NULL;
}

/* resolve.go's resolveMap: the words that are not strings. */
static bool
in_word_map(const char *s, struct yscalar *out)
{
    static const struct {
        const char *word;
        enum yscalar_kind kind;
        bool b;
        double f;
    } words[] = {
        {"y", YSCALAR_BOOL, true, 0},     {"Y", YSCALAR_BOOL, true, 0},
        {"yes", YSCALAR_BOOL, true, 0},   {"Yes", YSCALAR_BOOL, true, 0},
        {"YES", YSCALAR_BOOL, true, 0},   {"true", YSCALAR_BOOL, true, 0},
        {"True", YSCALAR_BOOL, true, 0},  {"TRUE", YSCALAR_BOOL, true, 0},
        {"on", YSCALAR_BOOL, true, 0},    {"On", YSCALAR_BOOL, true, 0},
        {"ON", YSCALAR_BOOL, true, 0},    {"n", YSCALAR_BOOL, false, 0},
        {"N", YSCALAR_BOOL, false, 0},    {"no", YSCALAR_BOOL, false, 0},
        {"No", YSCALAR_BOOL, false, 0},   {"NO", YSCALAR_BOOL, false, 0},
        {"false", YSCALAR_BOOL, false, 0}, {"False", YSCALAR_BOOL, false, 0},
        {"FALSE", YSCALAR_BOOL, false, 0}, {"off", YSCALAR_BOOL, false, 0},
        {"Off", YSCALAR_BOOL, false, 0},  {"OFF", YSCALAR_BOOL, false, 0},
        {"", YSCALAR_NULL, false, 0},     {"~", YSCALAR_NULL, false, 0},
        {"null", YSCALAR_NULL, false, 0}, {"Null", YSCALAR_NULL, false, 0},
        {"NULL", YSCALAR_NULL, false, 0}, {".nan", YSCALAR_FLOAT, false, NAN},
        {".NaN", YSCALAR_FLOAT, false, NAN}, {".NAN", YSCALAR_FLOAT, false, NAN},
        {".inf", YSCALAR_FLOAT, false, INFINITY},
        {".Inf", YSCALAR_FLOAT, false, INFINITY},
        {".INF", YSCALAR_FLOAT, false, INFINITY},
        {"+.inf", YSCALAR_FLOAT, false, INFINITY},
        {"+.Inf", YSCALAR_FLOAT, false, INFINITY},
        {"+.INF", YSCALAR_FLOAT, false, INFINITY},
        {"-.inf", YSCALAR_FLOAT, false, -INFINITY},
        {"-.Inf", YSCALAR_FLOAT, false, -INFINITY},
        {"-.INF", YSCALAR_FLOAT, false, -INFINITY},
    };

    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcmp(s, words[i].word) == 0) {
            out->kind = words[i].kind;
            out->b = words[i].b;
            out->f = words[i].f;
            return true;
        }
    return false;
}

static int
digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    return 99;
}

/* strconv.ParseUint(s, 0, 64): 0x, 0o, 0b, a leading 0 for octal. */
static bool
parse_uint(const char *s, unsigned long long *out)
{
    unsigned base = 10;
    unsigned long long v = 0;

    if (*s == '\0')
        return false;
    if (s[0] == '0') {
        size_t n = strlen(s);
        char p = (char)(s[1] | 0x20);
        if (n >= 3 && (p == 'b' || p == 'o' || p == 'x')) {
            base = p == 'b' ? 2 : p == 'o' ? 8 : 16;
            s += 2;
        } else {
            base = 8;
            s += 1;
        }
    }
    for (; *s; s++) {
        unsigned d = (unsigned)digit_value(*s);
        if (d >= base || v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
    }
    *out = v;
    return true;
}

/* strconv.ParseInt(s, 0, 64): a sign, then parse_uint()'s digits. */
static bool
parse_int(const char *s, long long *out)
{
    bool neg = *s == '-';
    unsigned long long u;

    if (*s == '+' || *s == '-')
        s++;
    if (!parse_uint(s, &u))
        return false;
    if (neg ? u > (unsigned long long)INT64_MAX + 1 : u > INT64_MAX)
        return false;
    *out = neg ? (long long)(0 - u) : (long long)u;
    return true;
}

/* strconv.ParseFloat(s, 64) on what yamlStyleFloat or a '.' let through:
 * out of range (±Inf) is an error; underflow is not. */
static bool
parse_float(const char *s, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(s, &end);
    return end != s && *end == '\0' && !(errno == ERANGE && isinf(*out));
}

/* resolve.go's yamlStyleFloat:
 * ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool
yaml_style_float(const char *s)
{
    size_t n;

    if (*s == '-' || *s == '+')
        s++;
    if (*s == '.') {
        if ((n = strspn(s + 1, "0123456789")) == 0)
            return false;
        s += 1 + n;
    } else {
        if ((n = strspn(s, "0123456789")) == 0)
            return false;
        s += n;
        if (*s == '.')
            s += 1 + strspn(s + 1, "0123456789");
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if ((n = strspn(s, "0123456789")) == 0)
            return false;
        s += n;
    }
    return *s == '\0';
}

/* 1 or 2 digits at *p within [lo, hi] (Go's getnum(value, false)). */
static bool
number_at(const char **p, int lo, int hi, int *out)
{
    int v = 0, k = 0;

    while (k < 2 && (*p)[k] >= '0' && (*p)[k] <= '9')
        v = v * 10 + ((*p)[k++] - '0');
    *p += k;
    *out = v;
    return k > 0 && v >= lo && v <= hi;
}

/*
 * resolve.go's parseTimestamp(): the layouts it tries with time.Parse,
 * "2006-1-2" optionally followed by "T15:4:5.999999999Z07:00" (T or t)
 * or " 15:4:5.999999999".
 */
static bool
is_timestamp(const char *s)
{
    static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int year, month, day, v;

    if (strspn(s, "0123456789") != 4 || s[4] != '-')
        return false;
    year = atoi(s);
    s += 5;
    if (!number_at(&s, 1, 12, &month) || *s++ != '-' ||
        !number_at(&s, 1, days[month - 1], &day))
        return false;
    if (month == 2 && day == 29 &&
        !(year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)))
        return false;
    if (*s == '\0')
        return true;
    char sep = *s++;
    if (sep != 'T' && sep != 't' && sep != ' ')
        return false;
    if (!number_at(&s, 0, 23, &v) || *s++ != ':' ||
        !number_at(&s, 0, 59, &v) || *s++ != ':' || !number_at(&s, 0, 59, &v))
        return false;
    if (*s == '.' && s[1] >= '0' && s[1] <= '9')
        s += 1 + strspn(s + 1, "0123456789");
    if (sep == ' ')
        return *s == '\0';
    if (*s == 'Z')
        return s[1] == '\0';
    if (*s != '+' && *s != '-')
        return false;
    s++;
    return strspn(s, "0123456789") == 2 && s[2] == ':' &&
           strspn(s + 3, "0123456789") == 2 && s[5] == '\0';
}

/* The plain scalar in, as resolve() reads it with tag "" (or a core tag
 * other than !!str), into out->kind and its value. */
static int
resolve_text(const char *in, bool timestamp_ok, struct yscalar *out)
{
    char c = in[0];
    char *plain;
    size_t k = 0;

    out->kind = YSCALAR_STRING;
    /* resolveTable: what the first character lets the text be. */
    if (c != '\0' && !strchr("+-0123456789yYnNtTfFoO~.", c))
        return 0;
    if (in_word_map(in, out))
        return 0;
    if (c == '.') {
        if (parse_float(in, &out->f))
            out->kind = YSCALAR_FLOAT;
        return 0;
    }
    if (c == '\0' || !strchr("+-0123456789", c))
        return 0;
    if (timestamp_ok && is_timestamp(in)) {
        out->kind = YSCALAR_STRING; /* decode.go keeps it as text */
        out->why = "!!timestamp";
        return 0;
    }
    if ((plain = malloc(strlen(in) + 1)) == NULL)
        return -1;
    for (const char *p = in; *p; p++)
        if (*p != '_')
            plain[k++] = *p;
    plain[k] = '\0';
    if (parse_int(plain, &out->i))
        out->kind = YSCALAR_INT;
    else if (parse_uint(plain, &out->u))
        out->kind = YSCALAR_UINT;
    else if (yaml_style_float(plain) && parse_float(plain, &out->f))
        out->kind = YSCALAR_FLOAT;
    free(plain);
    return 0;
}

static const char *
kind_tag(enum yscalar_kind k)
{
    switch (k) {
    case YSCALAR_NULL:
        return "!!null";
    case YSCALAR_BOOL:
        return "!!bool";
    case YSCALAR_INT:
    case YSCALAR_UINT:
        return "!!int";
    case YSCALAR_FLOAT:
        return "!!float";
    default:
        return "!!str";
    }
}

/*
 * Decoded bytes b[0..n) (taken) as the string JSON will hold: Go's
 * encoding/json writes each byte that is not UTF-8 as U+FFFD, and a NUL
 * is UTF8_NUL_STANDIN here. Owned, or NULL out of memory.
 */
static char *
as_json_text(char *b, size_t n)
{
    char *out = malloc(3 * n + 1), *w = out;

    for (size_t i = 0; out != NULL && i < n;) {
        size_t k = utf8_length((const unsigned char *)b + i, n - i);
        if (b[i] == '\0') {
            *w++ = (char)UTF8_NUL_STANDIN;
            i++;
        } else if (k == 0) {
            memcpy(w, "\xef\xbf\xbd", 3);
            w += 3;
            i++;
        } else {
            memcpy(w, b + i, k);
            w += k;
            i += k;
        }
    }
    if (out != NULL)
        *w = '\0';
    free(b);
    return out;
}

/* Go's base64.StdEncoding.DecodeString (padded; it skips \r and \n). */
static char *
base64_text(const char *s)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), k = 0, got = 0;
    char *out = malloc(n / 4 * 3 + 4);
    unsigned acc = 0, pad = 0;

    if (out == NULL)
        return NULL;
    for (; *s; s++) {
        const char *at;
        if (*s == '\r' || *s == '\n')
            continue;
        if (*s == '=') {
            pad++;
        } else if (pad > 0 || (at = strchr(abc, *s)) == NULL) {
            free(out);
            return NULL;
        } else {
            acc = acc << 6 | (unsigned)(at - abc);
        }
        if (*s == '=')
            acc <<= 6;
        if (++got % 4 == 0) {
            out[k++] = (char)(acc >> 16);
            out[k++] = (char)(acc >> 8);
            out[k++] = (char)acc;
            acc = 0;
        }
    }
    if (got % 4 != 0 || pad > 2) {
        free(out);
        return NULL;
    }
    k -= pad;
    return as_json_text(out, k);
}

int
yscalar_resolve(const struct ynode *n, struct yscalar *out, char *msg,
                size_t size)
{
    const char *tag = short_tag(n->tag);

    memset(out, 0, sizeof(*out));
    out->kind = YSCALAR_STRING;
    out->text = n->scalar;
    if (n->tag == NULL && !n->plain) {
        out->why = "quoted";
        return 0;
    }
    if (n->tag != NULL && tag == NULL) {
        out->why = n->tag; /* "!" or "!foo": not resolved, a string */
        return 0;
    }
    if (tag != NULL && strcmp(tag, "binary") == 0) {
        if ((out->owned = base64_text(n->scalar)) == NULL) {
            snprintf(msg, size, "!!binary value contains invalid base64 "
                                "data");
            return -1;
        }
        out->text = out->owned;
        out->why = "!!binary";
        return 0;
    }
    if (tag != NULL && strcmp(tag, "str") == 0) {
        out->why = "!!str";
        return 0;
    }
    if (tag != NULL && strcmp(tag, "bool") != 0 && strcmp(tag, "int") != 0 &&
        strcmp(tag, "float") != 0 && strcmp(tag, "null") != 0 &&
        strcmp(tag, "timestamp") != 0) {
        out->why = n->tag; /* !!set, !!merge...: a string in go-yaml v2 */
        return 0;
    }
    if (resolve_text(n->scalar, tag == NULL || strcmp(tag, "timestamp") == 0,
                     out) < 0) {
        snprintf(msg, size, "out of memory");
        return -1;
    }
    if (out->why == NULL)
        out->why = kind_tag(out->kind);
    if (tag == NULL || strcmp(out->why + 2, tag) == 0)
        return 0;
    /* resolve()'s deferred check: the tag must fit the text. */
    if (strcmp(tag, "float") == 0 &&
        (out->kind == YSCALAR_INT || out->kind == YSCALAR_UINT)) {
        out->f = out->kind == YSCALAR_INT ? (double)out->i : (double)out->u;
        out->kind = YSCALAR_FLOAT;
        out->why = "!!float";
        return 0;
    }
    snprintf(msg, size, "cannot decode %s `%s` as a !!%s", out->why,
             n->scalar, tag);
    return -1;
}

void
yscalar_free(struct yscalar *s)
{
    free(s->owned);
    s->owned = NULL;
}
