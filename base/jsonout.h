/*
 * jsonout.h - JSON text written straight into one growing buffer.
 *
 * The response to a review is a few fixed members around the uid, the
 * decision's strings and the patch, and the patch a dozen small values
 * the decision writes as it makes them (decision.h): building cJSON trees
 * for them only to print them cost more than deciding. Strings are
 * escaped exactly as cJSON prints them and values laid out as it lays
 * them out (fractions printed by cJSON itself), so the bytes are those
 * cJSON_PrintUnformatted() gives for the same document
 * (test_webhook_jsonout compares them).
 *
 * A zeroed struct jsonout is empty and valid. After an allocation failure
 * it is marked failed and further writes do nothing: check once, at the
 * end. jsonout_take() moves the NUL-terminated text out (owned by the
 * caller); jsonout_free() releases it.
 */
#ifndef TOPOGATE_JSONOUT_H
#define TOPOGATE_JSONOUT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

struct jsonout {
    char *buf;
    size_t len;
    size_t cap;
    bool failed;
};

/* Room for n more bytes and the NUL; false (and failed) when out of memory. */
bool jsonout_reserve(struct jsonout *o, size_t n);

/* Bytes as they are: punctuation and member names known to need no escape. */
void jsonout_raw(struct jsonout *o, const char *text, size_t len);

/*
 * jsonout_raw() of a literal: a response writes some sixty of them, and
 * with the length known here the copy is a few moves, not a call.
 */
static inline void
jsonout_known(struct jsonout *o, const char *text, size_t len)
{
    if (!o->failed && o->cap - o->len > len) {
        __builtin_memcpy(o->buf + o->len, text, len);
        o->len += len;
        o->buf[o->len] = '\0';
    } else {
        jsonout_raw(o, text, len);
    }
}

/* Only for a string literal (anything else does not compile). */
#define jsonout_lit(o, literal)                                                \
    jsonout_known((o), "" literal, sizeof("" literal) - 1)

/*
 * A quoted, escaped JSON string; NULL is written as "". Bytes that are not
 * UTF-8 are written as \ufffd (where cJSON would copy them), so the text
 * stays JSON whatever s holds; UTF8_NUL_STANDIN (base/utf8.h) is written
 * as the \u0000 it was read from.
 */
void jsonout_string(struct jsonout *o, const char *s);

/* A whole number, as cJSON prints one. */
void jsonout_int(struct jsonout *o, long n);

/*
 * Any cJSON value, compact. An item cJSON cannot print either (invalid,
 * raw without text, NULL) marks the output failed.
 */
void jsonout_value(struct jsonout *o, const cJSON *value);

char *jsonout_take(struct jsonout *o, size_t *len);
void jsonout_free(struct jsonout *o);

/* Empties o for the next text, keeping its buffer; a failure is forgotten. */
void jsonout_clear(struct jsonout *o);

#endif
