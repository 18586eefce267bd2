/*
 * floor_review.c - a measuring instrument, not a webhook: linked into
 * build/bench/topogate-floor with -Wl,--wrap for both of review.h's entry
 * points (serve calls review_respond_in_place()), it answers every review
 * "allowed" with the request's uid and reads nothing else.
 * Everything else is topogate serve as shipped (libmicrohttpd, GnuTLS,
 * the body's collection, the log line, the metrics), so the bench can
 * tell what the transport costs from what the review's parse, decision
 * and answer cost. The uid goes into the answer as found, unescaped: the
 * bench's fixtures hold plain ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/review.h"

int __wrap_review_respond(const struct snapshot *s, const struct view *view,
                          const char *body, size_t len,
                          struct review_result *out);
int __wrap_review_respond_in_place(struct jsonarena *arena,
                                   const struct snapshot *s,
                                   const struct view *view, char *body,
                                   size_t len, struct review_result *out);

int
__wrap_review_respond(const struct snapshot *s, const struct view *view,
                      const char *body, size_t len, struct review_result *out)
{
    static const char key[] = "\"uid\":\"";
    const char *uid = memmem(body, len, key, sizeof(key) - 1);
    size_t n = 0;
    int w;

    (void)s;
    (void)view;
    memset(out, 0, sizeof(*out));
    if (uid != NULL) {
        uid += sizeof(key) - 1;
        while (uid + n < body + len && uid[n] != '"' && n < 63)
            n++;
        memcpy(out->uid, uid, n);
    }
    w = asprintf(&out->body,
                 "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
                 "\"AdmissionReview\",\"response\":{\"uid\":\"%s\","
                 "\"allowed\":true}}\n",
                 out->uid);
    if (w < 0) {
        out->body = NULL;
        return -1;
    }
    out->body_len = (size_t)w;
    out->http_status = 200;
    out->verdict = VERDICT_ALLOW;
    return 0;
}

int
__wrap_review_respond_in_place(struct jsonarena *arena,
                               const struct snapshot *s,
                               const struct view *view, char *body,
                               size_t len, struct review_result *out)
{
    (void)arena;
    return __wrap_review_respond(s, view, body, len, out);
}
