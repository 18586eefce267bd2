/*
 * kubeframe.h - a watch stream cut into whole JSON objects.
 *
 * The apiserver writes one JSON object per watch event, but chunk and
 * read boundaries fall anywhere: an event may arrive in pieces, or
 * several in one read. kubeframe counts braces outside strings, so it
 * needs no newline between objects and parses nothing twice; the caller
 * parses each whole object it is handed. The struct owns its buffer.
 */
#ifndef TOPOGATE_KUBEFRAME_H
#define TOPOGATE_KUBEFRAME_H

#include <stdbool.h>
#include <stddef.h>

struct kubeframe {
    char *buf; /* the object being assembled, NUL-terminated */
    size_t len;
    size_t cap;
    size_t max; /* one object's cap */
    int depth;
    bool in_str;
    bool esc;
};

enum kubeframe_result {
    KUBEFRAME_OK,
    KUBEFRAME_TOO_LARGE, /* one object past max (or out of memory) */
    KUBEFRAME_NOT_JSON,  /* something other than '{' between objects */
    KUBEFRAME_STOPPED,   /* each() returned -1 */
};

/* An empty frame whose objects may be up to max bytes. */
void kubeframe_init(struct kubeframe *f, size_t max);

/* Forgets a partial object, for a new stream. Keeps small buffers. */
void kubeframe_reset(struct kubeframe *f);

void kubeframe_free(struct kubeframe *f);

/* True when an object has begun and not ended. */
bool kubeframe_partial(const struct kubeframe *f);

/*
 * Feeds n bytes; calls each(ctx, obj, len) for every object they
 * complete, obj NUL-terminated and borrowed for the call. Stops at the
 * first result other than KUBEFRAME_OK; the frame should then be reset.
 */
enum kubeframe_result
kubeframe_feed(struct kubeframe *f, const char *p, size_t n,
               int (*each)(void *ctx, const char *obj, size_t len), void *ctx);

#endif
