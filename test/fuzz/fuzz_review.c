/*
 * fuzz_review.c - libFuzzer target: AdmissionReview bytes through
 * review_respond(), the whole decode -> decide -> encode path of `serve`.
 *
 * The embedded policy is loaded once. Beyond "no crash, no leak, no
 * undefined behaviour" each input checks what the transport relies on:
 * a body is always built, is NUL-terminated at body_len, and comes with
 * 200 or 400 (500 only when memory ran out, which does not happen here).
 * Each input is then answered again the way `serve` reads its body
 * buffer, in place (review_respond_in_place()) in an arena kept from one
 * input to the next as a pool thread keeps its own, and must be answered
 * byte for byte the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/jsonread.h"
#include "policy/table/snapshot.h"
#include "test/fuzz/embedded_policy.h"
#include "webhook/review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct jsonarena *arena;
    struct review_result r, again;
    /*
     * An exact-size copy without a NUL, unlike the server's buffer: a read
     * past len is then a heap overflow that ASan reports.
     */
    char *body = malloc(size > 0 ? size : 1);
    char *received = malloc(size + 1); /* as the server holds a body */

    if (arena == NULL)
        arena = jsonarena_new();
    if (body == NULL || received == NULL || arena == NULL) {
        free(body);
        free(received);
        return 0;
    }
    memcpy(body, data, size);
    memcpy(received, data, size);
    if (review_respond(fuzz_snapshot, NULL, body, size, &r) != 0)
        abort(); /* out of memory cannot happen at these sizes */
    if (r.body == NULL || strlen(r.body) != r.body_len ||
        (r.http_status != 200 && r.http_status != 400))
        abort();
    if (review_respond_in_place(arena, fuzz_snapshot, NULL, received, size,
                                &again) != 0 ||
        again.http_status != r.http_status || again.body == NULL ||
        again.body_len != r.body_len ||
        memcmp(again.body, r.body, r.body_len) != 0)
        abort();
    review_result_free(&r);
    review_result_free(&again);
    free(body);
    free(received);
    return 0;
}
