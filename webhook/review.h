/*
 * review.h - AdmissionReview admission.k8s.io/v1: decode, decide, encode.
 *
 * review_respond() is the one path from request bytes to response bytes,
 * shared by `topogate serve` and `topogate audit --review`. It never
 * exits and never aborts: broken input becomes a 400 Status body.
 */
#ifndef TOPOGATE_REVIEW_H
#define TOPOGATE_REVIEW_H

#include <stddef.h>

#include "policy/decision.h"
#include "policy/table/snapshot.h"

struct jsonarena; /* json/jsonread.h */
struct view;

/* What the transport needs to answer, log and count one review. */
struct review_result {
    int http_status; /* 200, or 400 for a review we cannot read */
    char *body;      /* owned JSON text, NUL-terminated */
    size_t body_len;
    enum verdict verdict;
    char uid[64];
    char namespace_[64];
    char name[128];          /* pod name, or generateName */
    char instance_type[64];  /* a table row, "unknown", or "" */
    const char *known_by;    /* static: decision.h; NULL: not governed */
    enum verdict judged;     /* what enforce does with it */
    const char *mode;        /* static; NULL: not governed */
    char *would_patch;       /* audit mode's ops not made, owned, or NULL */
    size_t n_ops;
};

/*
 * Answers one review under policy s and the cluster view (NULL: none),
 * both borrowed. Fills *out (body owned by out); returns 0, or -1 when
 * memory ran out and no body could be built at all. The request is read
 * in an arena made for this one call; a caller that answers many keeps
 * one and calls review_respond_in_place().
 */
int review_respond(const struct snapshot *s, const struct view *view,
                   const char *body, size_t len, struct review_result *out);
/*
 * As review_respond(), parsing body where it is, into arena (borrowed:
 * json/jsonread.h, jsonread_in_place()), which is reset before it
 * returns: nothing of *out points into it. body[0..len] (len + 1 bytes)
 * is written over and is the caller's to drop afterwards. What `serve`
 * (an arena per thread) and `audit --review` use for the bytes they
 * received.
 */
int review_respond_in_place(struct jsonarena *arena,
                            const struct snapshot *s, const struct view *view,
                            char *body, size_t len,
                            struct review_result *out);
void review_result_free(struct review_result *r);

/*
 * An owned metav1.Status JSON body for an HTTP error (400, 405, 413, 415,
 * 500, 503): what the apiserver logs when a webhook call fails. NULL when out
 * of memory.
 */
char *review_error_body(int code, const char *message);

#endif
