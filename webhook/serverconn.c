/*
 * serverconn.c - a connection's life in the admission listener: let in
 * only where the watchdog has a slot for it, given the current TLS
 * credentials and its watchdog record before its handshake, told of its
 * request line, and freed when libmicrohttpd closes it.
 */
#include "webhook/server_internal.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "webhook/deadline.h"
#include "lib/log.h"
#include "webhook/tls.h"

/*
 * The apiserver keeps a few connections open. When all are taken, a new
 * connection takes the slot of one silent longest (deadline.h), so a
 * flood of idle ones cannot keep a review out. libmicrohttpd's own limit
 * is higher by up to SERVER_SLOTS_SPARE: at its limit it accepts nothing,
 * and a review's connection would wait in the listen queue behind the
 * flood's instead of being let in (or a flood's refused) at once.
 */
#define SERVER_CONNECTIONS 1000
#define SERVER_SLOTS_SPARE 256
/*
 * Descriptors kept for everything but admission connections: listeners,
 * epoll, the pool's wake-up pipes, the log, reloads (48), and the probe
 * listener's connections (probe.c: 256 and 128 spare).
 */
#define SERVER_FD_RESERVE (48 + 384)

/* What server_connection() made for conn; NULL if it made nothing. */
struct server_conn *
server_conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info;

    info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != NULL ? info->socket_context : NULL;
}

/* The watchdog record of a connection; NULL if it has none. */
struct deadline_conn *
server_conn(struct MHD_Connection *conn)
{
    struct server_conn *sc = server_conn_of(conn);

    return sc != NULL ? sc->deadline : NULL;
}

/* Takes a reference to the credentials for a new connection. */
static struct tls_creds *
server_creds(struct server *srv)
{
    struct tls_creds *c;

    pthread_mutex_lock(&srv->lock);
    c = tls_creds_ref(srv->creds);
    pthread_mutex_unlock(&srv->lock);
    return c;
}

static void
server_conn_free(struct server *srv, struct server_conn *sc)
{
    if (sc == NULL)
        return;
    deadline_close(srv->deadline, sc->deadline);
    tls_creds_unref(sc->creds);
    free(sc);
}

/*
 * libmicrohttpd's accept policy: a new connection is let in only where
 * there is a slot for it (deadline_admit() makes one if it can); refused,
 * it is closed at once and never holds a slot of libmicrohttpd's.
 */
enum MHD_Result
server_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct server *srv = cls;

    (void)addrlen;
    return deadline_admit(srv->deadline, addr) ? MHD_YES : MHD_NO;
}

/*
 * Called before the TLS handshake: the connection gets its watchdog
 * record and the current credentials, or is refused.
 */
void
server_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                  enum MHD_ConnectionNotificationCode toe)
{
    struct server *srv = cls;
    const union MHD_ConnectionInfo *fd, *tls, *peer;
    struct server_conn *sc;

    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        server_conn_free(srv, *socket_context);
        *socket_context = NULL;
        return;
    }
    fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    tls = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    peer = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (fd == NULL)
        return;
    sc = calloc(1, sizeof(*sc));
    if (sc == NULL)
        goto refuse;
    sc->deadline = deadline_open(srv->deadline, fd->connect_fd,
                                 peer != NULL ? peer->client_addr : NULL);
    sc->creds = server_creds(srv);
    if (sc->deadline == NULL || tls == NULL || tls->tls_session == NULL ||
        tls_creds_apply(sc->creds, tls->tls_session) != 0)
        goto refuse;
    tls_join_attach(&sc->join, tls->tls_session, fd->connect_fd);
    tls_watch_attach(&sc->watch, tls->tls_session, fd->connect_fd,
                     sc->deadline);
    *socket_context = sc;
    return;
refuse:
    /* Refused rather than left open unwatched, or with no certificate. */
    log_warnx("refusing a connection: %s", sc == NULL || sc->deadline == NULL
                                               ? "out of memory"
                                               : "no TLS session to set up");
    server_conn_free(srv, sc);
    shutdown(fd->connect_fd, SHUT_RDWR);
}

/* Called once the request line is in: the review's clock starts here. */
void *
server_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct deadline_conn *dc = server_conn(conn);

    (void)cls;
    (void)uri;
    if (dc != NULL)
        deadline_request_line(dc);
    return NULL; /* *con_cls stays NULL until server_begin() */
}

/*
 * The connections to serve (SERVER_CONNECTIONS, or fewer where the
 * descriptor limit would run out first: then accept() fails and no slot
 * can be freed for a review), and in *limit libmicrohttpd's limit. The
 * soft descriptor limit is raised to the hard one first, as Go's runtime
 * does at start: the soft 1,024 of many a container is a leftover of
 * select().
 */
unsigned int
server_slots(unsigned int *limit)
{
    struct rlimit rl;
    rlim_t avail, slots;

    *limit = SERVER_CONNECTIONS + SERVER_SLOTS_SPARE;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return SERVER_CONNECTIONS;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= SERVER_FD_RESERVE + *limit)
        return SERVER_CONNECTIONS;
    /* Four fifths for slots, the rest for connections on their way out. */
    avail = rl.rlim_cur > SERVER_FD_RESERVE + 8 ? rl.rlim_cur - SERVER_FD_RESERVE
                                                : rl.rlim_cur / 2;
    slots = avail * 4 / 5 > 0 ? avail * 4 / 5 : 1;
    *limit = (unsigned int)avail;
    return (unsigned int)slots;
}
