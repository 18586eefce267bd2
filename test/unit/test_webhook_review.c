/* The codec's edges: base64, Status bodies, warnings, and the envelope. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/decision.h"
#include "test/unit/check.h"
#include "base/base64.h"
#include "webhook/jsonpatch.h"
#include "webhook/review.h"

static void
test_base64(void)
{
    /* RFC 4648 section 10 test vectors. */
    static const char *const vectors[][2] = {
        {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
        {"foo", "Zm9v"},  {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };

    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        char *b64 = jsonpatch_base64(vectors[i][0], strlen(vectors[i][0]));
        CHECK_STR(b64, vectors[i][1]);
        free(b64);
    }
}

/* The encoding as RFC 4648 section 4 words it: the bits six at a time. */
static void
base64_by_bits(const unsigned char *in, size_t len, char *out)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t bits = len * 8, n = 0;

    for (size_t at = 0; at < bits; at += 6) {
        unsigned v = 0;

        for (size_t b = at; b < at + 6; b++)
            v = v << 1 | (b < bits ? (in[b / 8] >> (7 - b % 8)) & 1u : 0u);
        out[n++] = abc[v];
    }
    while (n % 4 != 0)
        out[n++] = '=';
    out[n] = '\0';
}

/*
 * Every length up to 400 (the 16-byte path, its 12-byte steps and the
 * 3-byte tail, and each way they meet) of bytes of every value, against
 * the bit-by-bit encoding.
 */
static void
test_base64_lengths(void)
{
    unsigned char in[400];
    char want[BASE64_LEN(sizeof(in)) + 1];
    uint32_t x = 2463534242u;
    int wrong = 0;

    for (size_t i = 0; i < sizeof(in); i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
        in[i] = i < 256 ? (unsigned char)i : (unsigned char)x;
    }
    for (size_t off = 0; off < 3; off++)
        for (size_t len = 0; len + off <= sizeof(in); len++) {
            char *got = jsonpatch_base64((const char *)in + off, len);

            base64_by_bits(in + off, len, want);
            if (got == NULL || strcmp(got, want) != 0) {
                if (wrong++ == 0)
                    fprintf(stderr, "base64 of %zu bytes at %zu: %s\n  want %s\n",
                            len, off, got ? got : "(null)", want);
            }
            free(got);
        }
    CHECK_INT(wrong, 0);
}

static void
test_patch_text(void)
{
    struct decision d;
    char *text;

    decision_init(&d);
    CHECK_INT(decision_add(&d, "/spec/hostIPC", cJSON_CreateTrue()), 0);
    CHECK_INT(decision_replace(&d, "/spec/containers/0/env/1",
                               cJSON_CreateString("x")),
              0);
    text = jsonpatch_write(d.ops, d.n_ops);
    CHECK_STR(text, "[{\"op\":\"add\",\"path\":\"/spec/hostIPC\",\"value\":"
                    "true},{\"op\":\"replace\",\"path\":"
                    "\"/spec/containers/0/env/1\",\"value\":\"x\"}]");
    free(text);
    decision_free(&d);
}

static void
test_warnings(void)
{
    struct decision d;
    char long_word[300];

    decision_init(&d);
    memset(long_word, 'x', sizeof(long_word) - 1);
    long_word[sizeof(long_word) - 1] = '\0';
    CHECK_INT(decision_warn(&d, "%s", long_word), 0);
    CHECK_INT(decision_warn(&d, "container '%s' keeps %s", "a", long_word), 0);
    CHECK_INT(decision_warn(&d, "container '%s' keeps %s", "a", long_word), 0);
    CHECK_INT(d.n_warnings, 2); /* the same warning once */
    /* Cut at the limit, marked with "...": the only space is too early to
     * cut at without losing most of the line. */
    for (size_t i = 0; i < d.n_warnings; i++) {
        CHECK_INT(strlen(d.warnings[i]), WARNING_MAX);
        CHECK_STR(d.warnings[i] + WARNING_MAX - 3, "...");
    }
    CHECK_INT(decision_warn(&d, "%.100s %s", long_word, "tail-that-overflows-the-limit"),
              0);
    /* A space late enough: the cut falls there. */
    CHECK_INT(strlen(d.warnings[2]), 103);
    decision_free(&d);
}

static struct review_result
respond(const char *body)
{
    struct load_error err;
    struct snapshot *s = snapshot_parse_embedded(NULL, &err);
    struct review_result r;

    CHECK_INT(review_respond(s, NULL, body, strlen(body), &r), 0);
    snapshot_unref(s);
    return r;
}

static void
test_envelope(void)
{
    struct review_result r;

    r = respond("{\"apiVersion\":\"admission.k8s.io/v1\","
                "\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u-1\","
                "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":"
                "\"Pod\"},\"operation\":\"CREATE\",\"object\":{}}}");
    CHECK_INT(r.http_status, 200);
    CHECK_STR(r.body, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
                      "\"AdmissionReview\",\"response\":{\"uid\":\"u-1\","
                      "\"allowed\":true}}\n");
    review_result_free(&r);

    r = respond("{\"apiVersion\":\"admission.k8s.io/v1\","
                "\"kind\":\"AdmissionReview\",\"request\":{\"uid\":7}}");
    CHECK_INT(r.http_status, 400);
    CHECK(strstr(r.body, "'request.uid' is missing or not a string") != NULL);
    CHECK(strstr(r.body, "\"code\":400") != NULL);
    review_result_free(&r);

    r = respond("{\"a\":");
    CHECK_INT(r.http_status, 400);
    CHECK(strstr(r.body, "malformed JSON at byte 5: expected a value, the "
                          "text ends") != NULL);
    review_result_free(&r);
}

int
main(void)
{
    test_base64();
    test_base64_lengths();
    test_patch_text();
    test_warnings();
    test_envelope();
    CHECK_DONE();
}
