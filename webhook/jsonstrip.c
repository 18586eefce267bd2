/* jsonstrip.c - see jsonstrip.h. */
#include "webhook/jsonstrip.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define KEY "\"managedFields\""
#define KEY_LEN (sizeof(KEY) - 1)

/* Deeper than any managedFields entry; deeper still is left alone. */
#define STRIP_DEPTH 128

static size_t
skip_space(const char *s, size_t len, size_t i)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
                       s[i] == '\r'))
        i++;
    return i;
}

/* Bytes that end a run: structure outside strings, quote or escape in. */
static const unsigned char STRUCTURE[256] = {
    ['"'] = 1, ['['] = 1, [']'] = 1, ['{'] = 1, ['}'] = 1,
};
static const unsigned char IN_STRING[256] = {['"'] = 1, ['\\'] = 1};

/*
 * The index of the ']' closing the array that opens at s[i], or 0 when
 * it is not closed, brackets do not pair, or it nests past STRIP_DEPTH.
 */
static size_t
array_end(const unsigned char *s, size_t len, size_t i)
{
    unsigned char open[STRIP_DEPTH];
    size_t depth = 0;

    for (;; i++) {
        while (i < len && !STRUCTURE[s[i]])
            i++;
        if (i >= len)
            return 0;
        if (s[i] == '"') {
            for (i++;; i += 2) {
                while (i < len && !IN_STRING[s[i]])
                    i++;
                if (i >= len)
                    return 0;
                if (s[i] == '"')
                    break;
            }
        } else if (s[i] == '[' || s[i] == '{') {
            if (depth == STRIP_DEPTH)
                return 0;
            open[depth++] = s[i];
        } else {
            if (depth == 0 || open[--depth] != (s[i] == ']' ? '[' : '{'))
                return 0;
            if (depth == 0)
                return i;
        }
    }
}

/* Whether the '"' at s[i] is a string's own, not an escaped one. */
static bool
unescaped(const char *s, size_t i)
{
    size_t n = 0;

    while (i > n && s[i - n - 1] == '\\')
        n++;
    return n % 2 == 0;
}

/*
 * The next "managedFields" at or after from, or NULL. By its 'F': an
 * upper-case letter is rare in a pod's JSON, and memchr() skips to the
 * next one many bytes at a time (memmem() goes about a byte at a time).
 */
static const char *
find_key(const char *json, size_t len, size_t from)
{
    const size_t f_at = sizeof("\"managed") - 1;
    const char *f;

    while (from + f_at < len &&
           (f = memchr(json + from + f_at, 'F', len - from - f_at)) != NULL) {
        const char *key = f - f_at;

        if ((size_t)(key - json) + KEY_LEN <= len &&
            memcmp(key, KEY, KEY_LEN) == 0)
            return key;
        from = (size_t)(key - json) + 1;
    }
    return NULL;
}

char *
jsonstrip_managed_fields(const char *json, size_t len, size_t *out_len)
{
    char *out = NULL;
    size_t from = 0, done = 0, o = 0;
    const char *hit;

    /*
     * In valid JSON an unescaped '"' right before the name opens a string;
     * with ':' after it, that string is a member's name.
     */
    while ((hit = find_key(json, len, from)) != NULL) {
        size_t at = (size_t)(hit - json), open, close;

        from = at + KEY_LEN;
        if (!unescaped(json, at))
            continue;
        open = skip_space(json, len, from);
        if (open >= len || json[open] != ':')
            continue;
        open = skip_space(json, len, open + 1);
        if (open >= len || json[open] != '[' ||
            (close = array_end((const unsigned char *)json, len, open)) == 0)
            continue;
        if (close == open + 1)
            continue; /* already empty */
        if (out == NULL && (out = malloc(len)) == NULL)
            return NULL;
        /* Up to and with the '[', then on from the ']'. */
        memcpy(out + o, json + done, open + 1 - done);
        o += open + 1 - done;
        done = close;
        from = close;
    }
    if (out == NULL)
        return NULL;
    memcpy(out + o, json + done, len - done);
    *out_len = o + len - done;
    return out;
}
