/* tlswatch.c - see tlswatch.h. */
#include "webhook/tlswatch.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "webhook/deadline.h"

/* GnuTLS's own pull (recv() on the socket), then a word to the watchdog. */
static ssize_t
tls_watch_pull(gnutls_transport_ptr_t ptr, void *buf, size_t size)
{
    struct tls_watch *w = ptr;
    ssize_t n = recv(w->fd, buf, size, 0);

    if (n > 0)
        deadline_bytes_in(w->dc);
    return n;
}

/* GnuTLS's own wait for data, which a pull function must come with. */
static int
tls_watch_pull_timeout(gnutls_transport_ptr_t ptr, unsigned int ms)
{
    struct tls_watch *w = ptr;
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    int rc;

    do
        rc = poll(&p, 1, ms == GNUTLS_INDEFINITE_TIMEOUT ? -1 : (int)ms);
    while (rc < 0 && errno == EINTR);
    return rc;
}

/*
 * After each handshake message: the client's Finished is the last one in
 * (TLS 1.3, and TLS 1.2 with or without resumption).
 */
static int
tls_watch_handshake(gnutls_session_t session, unsigned int type,
                    unsigned int when, unsigned int incoming,
                    const gnutls_datum_t *msg)
{
    gnutls_transport_ptr_t recv_ptr, send_ptr;

    (void)type;
    (void)when;
    (void)msg;
    if (incoming) {
        gnutls_transport_get_ptr2(session, &recv_ptr, &send_ptr);
        deadline_handshake_done(((struct tls_watch *)recv_ptr)->dc);
    }
    return 0;
}

void
tls_watch_attach(struct tls_watch *w, gnutls_session_t session, int fd,
                 struct deadline_conn *dc)
{
    gnutls_transport_ptr_t recv_ptr, send_ptr;

    w->fd = fd;
    w->dc = dc;
    gnutls_transport_get_ptr2(session, &recv_ptr, &send_ptr);
    gnutls_transport_set_ptr2(session, w, send_ptr);
    gnutls_transport_set_pull_function(session, tls_watch_pull);
    gnutls_transport_set_pull_timeout_function(session, tls_watch_pull_timeout);
    gnutls_handshake_set_hook_function(session, GNUTLS_HANDSHAKE_FINISHED,
                                       GNUTLS_HOOK_POST, tls_watch_handshake);
}
