/*
 * tlswatch.h - a TLS connection's watchdog record told what arrives.
 *
 * The watchdog (deadline.h) gives a new connection 3 s for its handshake
 * and first head, and an idle one between requests far longer: a client
 * such as the apiserver keeps a pool of connections that have nothing to
 * send yet, some of them never used since their handshake. libmicrohttpd
 * says when a request line and head are in, but not when a handshake ends
 * or a head begins. GnuTLS's session does: once the client's Finished is
 * in, the connection is idle (kept); when bytes arrive on an idle one, a
 * head has begun, and it gets the short limit again for it. So a client
 * that trickles a head is dropped 3 s after its first byte, and one that
 * only waits keeps its connection.
 *
 * struct tls_watch lives as long as its connection (the caller's); only
 * the thread serving that connection touches it.
 */
#ifndef TOPOGATE_TLSWATCH_H
#define TOPOGATE_TLSWATCH_H

#include <gnutls/gnutls.h>

struct deadline_conn;

struct tls_watch {
    int fd;
    struct deadline_conn *dc; /* borrowed */
};

/*
 * Makes session (whose transport is socket fd, its send side already
 * set, as tls_join_attach() leaves it) receive through w and report its
 * handshake's end and each head's first bytes to dc.
 */
void tls_watch_attach(struct tls_watch *w, gnutls_session_t session, int fd,
                      struct deadline_conn *dc);

#endif
