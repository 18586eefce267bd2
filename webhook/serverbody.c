/*
 * serverbody.c - a request's body: the checks made when its headers are
 * in (path, method, content type, announced length), then its pieces
 * gathered into one buffer charged to the server's body budget.
 */
#include "webhook/server_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "webhook/deadline.h"
#include "lib/log.h"

/* Of the body budget, what large bodies leave to first pieces: 64 of 64 KiB. */
#define SERVER_BODY_KEEP (4 * 1024 * 1024)

/* "application/json" in any case, maybe followed by "; parameters". */
static bool
server_is_json(const char *ctype)
{
    static const char want[] = SERVER_JSON;

    if (ctype == NULL)
        return false;
    ctype += strspn(ctype, " \t");
    if (strncasecmp(ctype, want, sizeof(want) - 1) != 0)
        return false;
    ctype += sizeof(want) - 1;
    ctype += strspn(ctype, " \t");
    return *ctype == '\0' || *ctype == ';';
}

static void server_grow(struct server *srv, struct request *req, size_t cap);

/* First call: the headers are in, no body has been read yet. */
enum MHD_Result
server_begin(struct server *srv, struct MHD_Connection *conn, const char *url,
             const char *method, void **con_cls)
{
    struct deadline_conn *dc = server_conn(conn);
    struct request *req;
    const char *clen;

    if (dc != NULL)
        deadline_request_head(dc);
    req = calloc(1, sizeof(*req));
    if (req == NULL)
        return server_error(srv, conn, 500, "out of memory", NULL);
    req->start = dc != NULL ? deadline_since(dc) : deadline_now();
    *con_cls = req;
    atomic_fetch_add(&srv->in_flight, 1);
    atomic_fetch_add(&srv->started, 1);

    if (strcmp(url, "/mutate") != 0) {
        log_debug("not found: %s %s", method, url);
        return server_error(srv, conn, 404,
                            "not found: reviews go to POST /mutate", NULL);
    }
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return server_error(srv, conn, 405,
                            "method not allowed: reviews are POSTed",
                            MHD_HTTP_METHOD_POST);
    if (!server_is_json(MHD_lookup_connection_value(
            conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE)))
        return server_error(srv, conn, 415,
                            "unsupported media type: send application/json",
                            NULL);
    clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                       MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (clen != NULL) {
        char *end;
        unsigned long long n;

        errno = 0;
        n = strtoull(clen, &end, 10);
        if (errno != 0 || end == clen || *end != '\0')
            return server_error(srv, conn, 400, "invalid content length", NULL);
        if (n > SERVER_BODY_MAX) {
            log_warnx("refused a review of %llu bytes: over %d", n,
                      SERVER_BODY_MAX);
            return server_error(srv, conn, 413,
                                "request entity too large: a review is at "
                                "most 3 MiB",
                                NULL);
        }
        /*
         * Known length: one allocation up to SERVER_CHUNK (every pod the
         * apiserver sends but the largest); above it the buffer grows
         * with what arrives, so a length announced and never sent holds
         * nothing.
         */
        server_grow(srv, req, (size_t)n + 1 < SERVER_CHUNK ? (size_t)n + 1
                                                           : SERVER_CHUNK);
    }
    return MHD_YES;
}

/*
 * Gives the body's bytes back to the budget and frees it, or keeps it as
 * the pool thread's spare: the larger of the two, if under
 * SERVER_SPARE_MAX.
 */
void
server_drop_body(struct server *srv, struct request *req)
{
    struct server_thread *t;

    budget_give(&srv->bodies, req->cap);
    if (req->body != NULL && req->room > SERVER_CHUNK &&
        req->room <= SERVER_SPARE_MAX &&
        (t = pthread_getspecific(srv->threads)) != NULL &&
        t->spare_size < req->room) {
        free(t->spare);
        t->spare = req->body;
        t->spare_size = req->room;
        t->quiet = 0;
    } else {
        free(req->body);
    }
    req->body = NULL;
    req->len = req->cap = req->room = 0;
}

/*
 * Moves the body into the pool thread's spare when it holds cap bytes;
 * false when there is none, or it is too small.
 */
static bool
server_take_spare(struct server *srv, struct request *req, size_t cap)
{
    struct server_thread *t = server_thread(srv);

    if (t == NULL || t->spare == NULL || t->spare_size < cap)
        return false;
    if (req->len > 0) /* a chunked body's first piece finds none */
        memcpy(t->spare, req->body, req->len);
    free(req->body);
    req->body = t->spare;
    req->room = t->spare_size;
    t->spare = NULL;
    t->spare_size = 0;
    return true;
}

/*
 * The body buffer at cap bytes, charged to the budget first: past it the
 * request is refused with 503 (and its body dropped), past memory 500.
 */
static void
server_grow(struct server *srv, struct request *req, size_t cap)
{
    char *p;

    /* A body's first SERVER_CHUNK may use the whole budget; past that,
     * SERVER_BODY_KEEP stays free for the small bodies of other reviews. */
    if (!budget_take(&srv->bodies, cap - req->cap,
                     cap > SERVER_CHUNK ? SERVER_BODY_KEEP : 0)) {
        req->refuse = 503;
        goto drop;
    }
    /* The budget counts cap; a spare may hold more than that already. */
    if (cap <= req->room ||
        (cap > SERVER_CHUNK && server_take_spare(srv, req, cap))) {
        req->cap = cap;
        return;
    }
    if ((p = realloc(req->body, cap)) == NULL) {
        budget_give(&srv->bodies, cap - req->cap);
        req->refuse = 500;
        goto drop;
    }
    req->body = p;
    req->cap = req->room = cap;
    return;
drop:
    server_drop_body(srv, req);
}

/* A piece of body. Past the cap it is read and dropped, then 413. */
void
server_append(struct server *srv, struct request *req, const char *data,
              size_t n)
{
    if (req->refuse != 0)
        return;
    if (n > SERVER_BODY_MAX - req->len) {
        req->refuse = 413;
        server_drop_body(srv, req);
        return;
    }
    if (req->len + n + 1 > req->cap) {
        size_t cap = req->cap * 2;

        if (cap < SERVER_CHUNK)
            cap = SERVER_CHUNK;
        if (cap < req->len + n + 1)
            cap = req->len + n + 1;
        if (cap > SERVER_BODY_MAX + 1)
            cap = SERVER_BODY_MAX + 1;
        server_grow(srv, req, cap);
        if (req->refuse != 0)
            return;
    }
    memcpy(req->body + req->len, data, n);
    req->len += n;
}
