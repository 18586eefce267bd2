/*
 * server.h - the admission listener: POST /mutate over HTTPS.
 *
 * Everything between a socket and review_respond(): TLS 1.2+, a thread
 * pool, a capped body, status codes for what is not a review, one log
 * line and the metrics for each review. The server holds its own
 * reference to the snapshot it serves and borrows the metrics, which must
 * outlive it. Nothing on the request path exits or aborts.
 */
#ifndef TOPOGATE_SERVER_H
#define TOPOGATE_SERVER_H

#include <stddef.h>
#include <sys/socket.h>

struct metrics;
struct snapshot;
struct server;
struct tls_creds;

/*
 * The largest request body read. A pod is well under 1 MiB; the
 * apiserver itself refuses requests over 3 MiB, so nothing larger is an
 * AdmissionReview it sent.
 */
#define SERVER_BODY_MAX (3 * 1024 * 1024)

/*
 * Seconds (plus one) a request may take, from its request line to its
 * last byte. The apiserver gives a webhook 10 s at most (?timeout=10s),
 * so a request slower than that has no one waiting.
 */
#define SERVER_TIMEOUT 10

struct server_config {
    const struct sockaddr *addr; /* where to listen: IPv4 or IPv6 */
    struct tls_creds *creds;     /* certificate and key; the server refs it */
    unsigned int threads;        /* the pool: serve gives cpus_usable() */
};

/*
 * Starts listening and serving s. Copies what it needs from cfg. On
 * failure returns NULL with a one-line reason in err (no trailing
 * newline, "port in use" and the like).
 */
struct server *server_start(const struct server_config *cfg, struct snapshot *s,
                            struct metrics *m, char *err, size_t err_len);

/*
 * Serves s from now on; requests already running finish with the old
 * one. The server takes its own reference. 0, or -1 when the metrics
 * labels could not all be updated (s is served all the same).
 */
int server_set_snapshot(struct server *srv, struct snapshot *s);

/*
 * Decides with the cluster view v from now on (NULL: none); requests
 * already running finish with the old one. The server takes its own
 * reference.
 */
struct view;
void server_set_view(struct server *srv, struct view *v);

/*
 * The snapshot and the view being served, taken together as a review
 * takes them; the caller drops both (snapshot_unref, view_unref). For
 * the live audit, which judges running pods as a review would.
 */
struct snapshot *server_current(struct server *srv, struct view **view);

/*
 * New connections get c from now on; open ones keep the credentials
 * they began with. The server takes its own reference.
 */
void server_set_creds(struct server *srv, struct tls_creds *c);

/*
 * Stops accepting connections, waits up to grace_ms for requests already
 * begun to be answered, then closes every connection and frees srv.
 * NULL is a no-op.
 */
void server_stop(struct server *srv, unsigned int grace_ms);

#endif
