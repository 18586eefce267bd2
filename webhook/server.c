/*
 * server.c - the admission listener on libmicrohttpd and GnuTLS.
 *
 * libmicrohttpd calls server_access() once when the headers are in
 * (checks and 4xx happen there, before any body is read), once per piece
 * of body, and once more at the end, where the review is answered. The
 * struct request made at the first call owns the body until the request
 * completes, which frees it in server_completed().
 *
 * TLS credentials are not libmicrohttpd's: each connection is handed the
 * current struct tls_creds when it opens, before its handshake, and holds
 * it until it closes. server_set_creds() swaps what the next connection
 * gets, so a rotated certificate serves new handshakes at once while
 * connections already open go on with the one they began with.
 *
 * A request's body is serverbody.c's, a connection's life serverconn.c's;
 * server_internal.h has what the three share.
 */
#include "webhook/server_internal.h"

#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/decimal.h"
#include "json/jsonread.h"
#include "policy/table/snapshot.h"
#include "policy/view/view.h"
#include "webhook/deadline.h"
#include "webhook/http.h"
#include "lib/log.h"
#include "webhook/metrics.h"
#include "webhook/review.h"
#include "webhook/tls.h"

/*
 * TLS 1.3 and 1.2 only; AEAD ciphers (AES-GCM, ChaCha20-Poly1305) with
 * ECDHE, so every suite has forward secrecy and none is CBC, RC4, 3DES,
 * NULL, export or anonymous. ECDHE-RSA stays for an RSA certificate
 * (cert-manager's default key). The server's cipher order wins.
 * X25519 first: Go's client (the apiserver) and OpenSSL send an X25519
 * key share, and a server that prefers P-256 answers it with a
 * HelloRetryRequest, a second round trip and twice the CPU per handshake.
 */
#define SERVER_TLS_PRIORITIES                                                  \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:"                              \
    "-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"                \
    "-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:"                          \
    "-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:"              \
    "%SERVER_PRECEDENCE"

/*
 * Connections from one address. The apiserver keeps at most 25 idle
 * connections per host (k8s.io/apimachinery utilnet.SetTransportDefaults,
 * MaxIdleConnsPerHost) and opens more only in a burst, one per call in
 * flight. Past this many, a new connection takes the slot of the
 * address's oldest silent one; where all are busy (that burst's
 * handshakes and requests) it goes over, until they go silent
 * (deadline.h). A pod flooding idle sockets is held to this many.
 */
#define SERVER_PER_ADDRESS 128

/*
 * A new connection's handshake and first request head, from accept. Go's
 * http.Transport (the apiserver) dials with a request in hand and writes
 * it right after the handshake; on loopback the slowest handshake and
 * head measured took well under this with 1,000 handshakes at once (see
 * README, Reliability). A socket that sends nothing is gone after it.
 */
#define SERVER_FIRST_MS 3000

/*
 * How long a connection waits for its next request once its handshake is
 * done or a request answered. The apiserver's client (Go's
 * http.Transport) keeps idle webhook connections up to 90 s and may dial
 * one it then does not use at once; cut before, each costs it a new
 * handshake, and a cut that crosses its next request on the wire fails
 * that review. Longer than 90 s so the client closes first. Idle ones
 * still give their slot to a new connection when slots run short.
 */
#define SERVER_KEPT_S 120

/*
 * Each connection's buffer, for the request headers and a piece of body
 * at a time; libmicrohttpd gives half of it to the read buffer and zeroes
 * all of it after every request. At 16 KiB a 6 KB review sent as one
 * TLS record (wrk, openloop) is read in one piece; at 8 KiB it came in two,
 * and the second piece's way through GnuTLS and libmicrohttpd's loop
 * cost 8-11 % of the review on the 16-core device (issue 15's twentieth
 * round), far more than zeroing 8 KiB more. The apiserver's Go client
 * sends such a review as two records, two pieces at either size: level.
 * Larger buffers gained nothing more, for a 59 KB body either. An
 * apiserver's headers are under 1 KiB (a bearer token for webhook
 * authentication adds one or two); past about 15 KiB of headers the
 * answer is 431 (nginx's default is 8 KiB a header line, four lines).
 */
#define SERVER_CONN_MEMORY (16 * 1024)

/* The 500 answer when there is not even memory to build one. */
static char server_oom_body[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
    "\"status\":\"Failure\",\"message\":\"out of memory\","
    "\"reason\":\"InternalError\",\"code\":500}";

/* http_reply() with a body, its header and body sent together. */
static enum MHD_Result
server_reply(struct MHD_Connection *conn, unsigned int code, char *body,
             size_t len, bool owned, const char *allow)
{
    struct server_conn *sc = server_conn_of(conn);
    enum MHD_Result ret;

    if (sc != NULL && len > 0)
        tls_join_hold_next(&sc->join, true);
    ret = http_reply(conn, code, SERVER_JSON, body, len, owned, allow);
    if (sc != NULL && ret != MHD_YES)
        tls_join_hold_next(&sc->join, false);
    return ret;
}

/*
 * Takes a reference to the snapshot and the view being served, together;
 * the caller drops both.
 */
static struct snapshot *
server_snapshot(struct server *srv, struct view **view)
{
    struct snapshot *s;

    /*
     * Load and ref under one lock: between a bare atomic load and the
     * ref, a reload could drop the last reference and free it.
     */
    pthread_mutex_lock(&srv->lock);
    s = snapshot_ref(srv->snapshot);
    *view = view_ref(srv->view);
    pthread_mutex_unlock(&srv->lock);
    return s;
}

enum MHD_Result
server_error(struct server *srv, struct MHD_Connection *conn, int code,
             const char *message, const char *allow)
{
    char *body = review_error_body(code, message);

    if (body == NULL) {
        metrics_http(srv->metrics, 500);
        return server_reply(conn, 500, server_oom_body,
                            strlen(server_oom_body), false, NULL);
    }
    metrics_http(srv->metrics, code);
    return server_reply(conn, (unsigned int)code, body, strlen(body), true,
                        allow);
}

/* The bytes a log field keeps as they are; any other becomes '?'. */
static bool
field_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
           c == ':' || c == '/';
}

/* Copies a field for the log line: names and uids only, never spaces. */
static const char *
server_field(char *dst, size_t size, const char *src)
{
    size_t i = 0;

    for (; src[i] != '\0' && i + 1 < size; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = (char)(field_byte(c) ? c : '?');
    }
    dst[i] = '\0';
    return i > 0 ? dst : "-";
}

/*
 * The line an operator greps, one per review:
 * review uid= ns= pod= type= known= decision= ops= us= [would=]
 */
static void
server_log(const struct review_result *r, const char *decision, uint64_t us)
{
    char uid[sizeof(r->uid)], ns[sizeof(r->namespace_)];
    char pod[sizeof(r->name)], type[sizeof(r->instance_type)];
    char ops[DECIMAL_MAX], took[DECIMAL_MAX];
    const char *pieces[] = {
        "review uid=", server_field(uid, sizeof(uid), r->uid),
        " ns=",        server_field(ns, sizeof(ns), r->namespace_),
        " pod=",       server_field(pod, sizeof(pod), r->name),
        " type=",      server_field(type, sizeof(type), r->instance_type),
        " known=",     r->known_by ? r->known_by : "-",
        " decision=",  decision,
        " ops=",       ops,
        " us=",        took,
        r->would_patch ? " would=" : "",
        r->would_patch ? r->would_patch : "",
    };

    decimal_write(ops, (long)r->n_ops);
    decimal_write(took, (long)us);
    log_info_pieces(pieces, sizeof(pieces) / sizeof(pieces[0]));
}

struct server_thread *
server_thread(struct server *srv)
{
    struct server_thread *t = pthread_getspecific(srv->threads);

    if (t != NULL)
        return t;
    if ((t = calloc(1, sizeof(*t))) == NULL)
        return NULL;
    if ((t->arena = jsonarena_new()) == NULL ||
        pthread_setspecific(srv->threads, t) != 0) {
        jsonarena_free(t->arena);
        free(t);
        return NULL;
    }
    return t;
}

/* At a pool thread's exit: what it kept, which only it used. */
static void
server_thread_free(void *p)
{
    struct server_thread *t = p;

    jsonarena_free(t->arena);
    free(t->spare);
    free(t);
}

/* After a review of len body bytes: a spare it did not need ages. */
static void
server_thread_age(struct server_thread *t, size_t len)
{
    if (t->spare == NULL)
        return;
    if (len > t->spare_size / 4) {
        t->quiet = 0;
    } else if (++t->quiet >= SERVER_SPARE_QUIET) {
        free(t->spare);
        t->spare = NULL;
        t->spare_size = 0;
        t->quiet = 0;
    }
}

/* Last call: the whole body is in. */
static enum MHD_Result
server_review(struct server *srv, struct MHD_Connection *conn,
              struct request *req)
{
    struct review_result res;
    struct server_thread *t;
    struct snapshot *s;
    struct view *view;
    enum MHD_Result ret;
    char empty[1];
    uint64_t us;
    size_t len;
    bool ok;
    int rc;

    if (req->refuse == 413) {
        log_warnx("refused a chunked review: over %d bytes", SERVER_BODY_MAX);
        return server_error(srv, conn, 413,
                            "request entity too large: a review is at most "
                            "3 MiB",
                            NULL);
    }
    if (req->refuse == 503) {
        log_warnx("refused a review: %d MiB of request bodies in flight",
                  SERVER_BODY_BUDGET >> 20);
        return server_error(srv, conn, 503,
                            "service unavailable: too many request bodies "
                            "in flight",
                            NULL);
    }
    if (req->refuse != 0 || (t = server_thread(srv)) == NULL)
        return server_error(srv, conn, 500, "out of memory", NULL);

    memset(&res, 0, sizeof(res));
    s = server_snapshot(srv, &view);
    /* The body buffer holds len + 1 bytes; it is dropped just below. */
    rc = req->body != NULL
             ? review_respond_in_place(t->arena, s, view, req->body,
                                       req->len, &res)
             : review_respond_in_place(t->arena, s, view, empty, 0, &res);
    view_unref(view);
    snapshot_unref(s);
    len = req->len;
    server_drop_body(srv, req);
    server_thread_age(t, len);
    if (rc != 0 || res.body == NULL) {
        review_result_free(&res);
        us = (deadline_now() - req->start) / 1000;
        metrics_review(srv->metrics, false, VERDICT_ALLOW, "", us);
        log_warnx("review failed: out of memory");
        return server_error(srv, conn, 500, "out of memory", NULL);
    }

    /* The body passes to libmicrohttpd, which frees it once sent. */
    ret = server_reply(conn, (unsigned int)res.http_status, res.body,
                       res.body_len, true, NULL);
    res.body = NULL;
    us = (deadline_now() - req->start) / 1000;
    ok = res.http_status == 200;
    server_log(&res, ok ? verdict_name(res.verdict) : "error", us);
    metrics_review(srv->metrics, ok, res.verdict, res.instance_type, us);
    if (res.known_by)
        metrics_known_by(srv->metrics, res.known_by);
    if (ok && res.mode)
        metrics_judged(srv->metrics, res.judged, res.mode);
    metrics_http(srv->metrics, res.http_status);
    review_result_free(&res);
    return ret;
}

static enum MHD_Result
server_access(void *cls, struct MHD_Connection *conn, const char *url,
              const char *method, const char *version, const char *upload,
              size_t *upload_size, void **con_cls)
{
    struct server *srv = cls;
    struct request *req = *con_cls;

    (void)version;
    if (req == NULL)
        return server_begin(srv, conn, url, method, con_cls);
    if (*upload_size > 0) {
        server_append(srv, req, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    return server_review(srv, conn, req);
}

static void
server_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                 enum MHD_RequestTerminationCode toe)
{
    struct server *srv = cls;
    struct request *req = *con_cls;
    struct deadline_conn *dc = server_conn(conn);

    (void)toe;
    /* The next request on this connection gets a window of its own. */
    if (dc != NULL)
        deadline_answered(dc);
    if (req == NULL)
        return;
    server_drop_body(srv, req);
    free(req);
    *con_cls = NULL;
    atomic_fetch_sub(&srv->in_flight, 1);
}

/*
 * Bodies of 64 KiB and more are mapped and unmapped, never kept in the
 * heap: glibc's moving threshold would otherwise keep the memory of a
 * burst of large bodies after it (557 MB after one of 200 x 3 MiB).
 *
 * What is left in the heap is small pieces (bodies, TLS records,
 * answers), and its free top is kept up to SERVER_HEAP_KEEP. At glibc's
 * default of 128 KiB a pool thread's heap was handed back (madvise)
 * whenever a freed body joined its top, and the next reviews faulted
 * the pages in again: two page faults a 6 KB review, 12 % of the
 * server's CPU under load on the 2-CPU VM (perf). It takes 4 MiB for
 * 128 connections to stop faulting; the heap never holds more than what
 * the open connections held at once.
 */
#define SERVER_HEAP_KEEP (8 * 1024 * 1024)

static void
server_malloc_tune(void)
{
    mallopt(M_MMAP_THRESHOLD, SERVER_CHUNK);
    mallopt(M_TRIM_THRESHOLD, SERVER_HEAP_KEEP);
}

static void
server_free(struct server *srv)
{
    if (srv == NULL)
        return;
    deadline_free(srv->deadline);
    /* The pool threads have exited, each freeing what it kept. */
    if (srv->threads_made)
        pthread_key_delete(srv->threads);
    snapshot_unref(srv->snapshot);
    view_unref(srv->view);
    tls_creds_unref(srv->creds);
    pthread_mutex_destroy(&srv->lock);
    free(srv);
}

struct server *
server_start(const struct server_config *cfg, struct snapshot *s,
             struct metrics *m, char *err, size_t err_len)
{
    struct server *srv;
    unsigned int threads = cfg->threads > 0 ? cfg->threads : 1;
    unsigned int limit, slots = server_slots(&limit);

    srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&srv->lock, NULL);
    server_malloc_tune();
    srv->metrics = m;
    srv->snapshot = snapshot_ref(s);
    srv->creds = tls_creds_ref(cfg->creds);
    /*
     * A request has SERVER_TIMEOUT + 1 s from its request line. A kept
     * one a second past libmicrohttpd's idle timeout: a silent connection
     * is its to close, quietly; one that keeps sending a little is ours.
     */
    srv->deadline =
        deadline_new("admission", SERVER_TIMEOUT + 1, SERVER_KEPT_S + 1,
                     SERVER_FIRST_MS, slots, SERVER_PER_ADDRESS);
    srv->bodies.limit = SERVER_BODY_BUDGET;
    srv->threads_made =
        pthread_key_create(&srv->threads, server_thread_free) == 0;
    if (srv->deadline == NULL || !srv->threads_made ||
        metrics_set_policy(m, s) != 0) {
        snprintf(err, err_len, "out of memory");
        goto fail;
    }

    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, (void *)cfg->addr},
        /* Sessions get theirs in server_connection(); see tls.h. */
        {MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)tls_no_certificate},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, SERVER_TLS_PRIORITIES},
        {MHD_OPTION_THREAD_POOL_SIZE, threads, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, limit, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, SERVER_CONN_MEMORY, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, SERVER_KEPT_S, NULL},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)server_connection, srv},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)server_uri, srv},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)server_completed, srv},
        {MHD_OPTION_END, 0, NULL},
    };
    http_capture_begin(err, err_len);
    srv->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TLS |
            MHD_USE_ITC | MHD_USE_ERROR_LOG | http_listen_flags(cfg->addr),
        http_listen_port(cfg->addr), server_accept, srv, server_access, srv,
        MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL, MHD_OPTION_ARRAY, opts,
        MHD_OPTION_END);
    http_capture_end();
    if (srv->daemon == NULL) {
        if (err[0] == '\0')
            snprintf(err, err_len, "cannot start the HTTPS listener");
        goto fail;
    }
    return srv;
fail:
    server_free(srv);
    return NULL;
}

void
server_set_creds(struct server *srv, struct tls_creds *c)
{
    struct tls_creds *old;

    tls_creds_ref(c);
    pthread_mutex_lock(&srv->lock);
    old = srv->creds;
    srv->creds = c;
    pthread_mutex_unlock(&srv->lock);
    tls_creds_unref(old); /* or by the last connection that used it */
}

int
server_set_snapshot(struct server *srv, struct snapshot *s)
{
    struct snapshot *old;

    snapshot_ref(s);
    pthread_mutex_lock(&srv->lock);
    old = srv->snapshot;
    srv->snapshot = s;
    pthread_mutex_unlock(&srv->lock);
    snapshot_unref(old); /* freed here, or by the last request using it */
    return metrics_set_policy(srv->metrics, s);
}

void
server_set_view(struct server *srv, struct view *v)
{
    struct view *old;

    view_ref(v);
    pthread_mutex_lock(&srv->lock);
    old = srv->view;
    srv->view = v;
    pthread_mutex_unlock(&srv->lock);
    view_unref(old); /* freed here, or by the last request using it */
}

/* How long no request may begin before a stopping server closes. */
#define SERVER_QUIET_MS 200

static unsigned int
server_connections(struct server *srv)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info ? info->num_connections : 0;
}

void
server_stop(struct server *srv, unsigned int grace_ms)
{
    const struct timespec tick = {.tv_nsec = 10 * 1000 * 1000};
    MHD_socket fd;

    if (srv == NULL)
        return;
    /* From here every response closes its connection, and new connects
     * are refused at once rather than left in the backlog. */
    http_set_closing();
    fd = MHD_quiesce_daemon(srv->daemon);
    if (fd != MHD_INVALID_SOCKET)
        shutdown(fd, SHUT_RDWR);
    /*
     * Until every connection has closed, or none has had a request for a
     * quiet spell: a request a client already wrote is in a socket buffer
     * and is read within milliseconds, so it is answered too; an idle
     * keep-alive connection does not hold the exit up.
     */
    unsigned int quiet = 0, seen = atomic_load(&srv->started);
    for (unsigned int ms = 0; ms < grace_ms && server_connections(srv) > 0 &&
                              quiet < SERVER_QUIET_MS;
         ms += 10) {
        nanosleep(&tick, NULL);
        unsigned int now = atomic_load(&srv->started);
        quiet =
            (now == seen && atomic_load(&srv->in_flight) == 0) ? quiet + 10 : 0;
        seen = now;
    }
    if (atomic_load(&srv->in_flight) > 0)
        log_warnx("stopping with %d requests unanswered",
                  atomic_load(&srv->in_flight));
    MHD_stop_daemon(srv->daemon);
    /* Only now: a pool thread may use the listen socket until stopped. */
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    server_free(srv);
}

struct snapshot *
server_current(struct server *srv, struct view **view)
{
    return server_snapshot(srv, view);
}
