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
     * Each pool thread's arena for the reviews it reads (json/jsonread.h),
     * made at its first review, reset after each, freed at its exit.
     */
    pthread_key_t arenas;
    bool arenas_made;
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
    size_t cap;
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

/* Answers code with a metav1.Status body; a 500 if that cannot be built. */
enum MHD_Result server_error(struct server *srv, struct MHD_Connection *conn,
                             int code, const char *message, const char *allow);

#endif
