/*
 * server_internal.h - what the admission listener's three files share:
 * server.c (start, stop, the review), serverbody.c (a request's body) and
 * serverconn.c (a connection's life: admission, TLS set-up, slots).
 */
#ifndef TOPOGATE_SERVER_INTERNAL_H
#define TOPOGATE_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "webhook/budget.h"
#include "webhook/server.h"
#include "webhook/tlsjoin.h"
#include "webhook/tlswatch.h"

/*
 * Request bodies in flight, all connections together: past this a
 * request is answered 503 rather than read. 200 clients each announcing
 * 3 MiB and trickling would otherwise take 600 MiB.
 */
#define SERVER_BODY_BUDGET (32 * 1024 * 1024)

/* The first allocation for a chunked body, whose length is not known. */
#define SERVER_CHUNK (64 * 1024)

/*
 * A pool thread keeps one body buffer of more than SERVER_CHUNK bytes
 * and at most SERVER_SPARE_MAX (a 1.5 MiB pod's review, grown by
 * doubling) for its next large body, so that large bodies are not
 * mapped and unmapped again for each review; it goes back after
 * SERVER_SPARE_QUIET reviews in a row on that thread whose body was at
 * most a quarter of it. With the arena's JSONARENA_KEEP this bounds what
 * a pool thread keeps between reviews (docs/operating.md#memory).
 */
#define SERVER_SPARE_MAX (2 * 1024 * 1024)
#define SERVER_SPARE_QUIET 256

#define SERVER_JSON "application/json"

struct server {
    struct MHD_Daemon *daemon;
    struct metrics *metrics; /* borrowed */
    struct deadline *deadline;
    /* lock guards the next two pointers, not what they point to. */
    pthread_mutex_t lock;
    struct snapshot *snapshot;
    struct view *view; /* the cluster view, or NULL */
    struct tls_creds *creds; /* what the next connection is given */
    atomic_int in_flight;    /* requests between headers and completion */
    atomic_uint started;     /* requests ever begun: shows a quiet spell */
    struct budget bodies;    /* bytes of request bodies held */
    /*
     * Each pool thread's struct server_thread, made at its first review
     * and freed at its exit.
     */
    pthread_key_t threads;
    bool threads_made;
};

/* What a pool thread keeps from one review to the next; only it uses it. */
struct server_thread {
    struct jsonarena *arena; /* the reviews it reads (json/jsonread.h) */
    char *spare;             /* a body buffer of spare_size bytes, or NULL */
    size_t spare_size;
    unsigned quiet;          /* reviews in a row that did not need it */
};

/* libmicrohttpd's socket context: what one connection holds. */
struct server_conn {
    struct deadline_conn *deadline; /* its watchdog record */
    struct tls_creds *creds;        /* the credentials of its handshake */
    struct tls_join join;           /* sends its answers in one piece */
    struct tls_watch watch;         /* tells deadline what comes in */
};

struct request {
    uint64_t start; /* CLOCK_MONOTONIC ns: the request line was in */
    char *body;     /* NUL-terminated once complete */
    size_t len;
    size_t cap;     /* bytes charged to the body budget */
    size_t room;    /* bytes body holds: cap or more (a pool thread's spare) */
    int refuse; /* 413, 500 or 503: answer this instead of a review */
};

/* serverconn.c */

/* What server_connection() made for conn; NULL if it made nothing. */
struct server_conn *server_conn_of(struct MHD_Connection *conn);
/* The watchdog record of a connection; NULL if it has none. */
struct deadline_conn *server_conn(struct MHD_Connection *conn);
/* libmicrohttpd's accept policy and its callbacks for a connection. */
enum MHD_Result server_accept(void *cls, const struct sockaddr *addr,
                              socklen_t addrlen);
void server_connection(void *cls, struct MHD_Connection *conn,
                       void **socket_context,
                       enum MHD_ConnectionNotificationCode toe);
void *server_uri(void *cls, const char *uri, struct MHD_Connection *conn);
/* The connections to serve; libmicrohttpd's own limit in *limit. */
unsigned int server_slots(unsigned int *limit);

/* serverbody.c */

/* The first call for a request: its headers are in, no body yet. */
enum MHD_Result server_begin(struct server *srv, struct MHD_Connection *conn,
                             const char *url, const char *method,
                             void **con_cls);
/* A piece of body; past the cap or the budget, req->refuse says why. */
void server_append(struct server *srv, struct request *req, const char *data,
                   size_t n);
/* Frees the body and gives its bytes back to the budget. */
void server_drop_body(struct server *srv, struct request *req);

/* server.c */

/* The calling pool thread's record, made at its first call; NULL when out
 * of memory (or not on a pool thread: then nothing is kept). */
struct server_thread *server_thread(struct server *srv);

/* Answers code with a metav1.Status body; a 500 if that cannot be built. */
enum MHD_Result server_error(struct server *srv, struct MHD_Connection *conn,
                             int code, const char *message, const char *allow);

#endif
