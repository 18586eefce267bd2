/*
 * tlsjoin.h - a response's header and body in one TLS send.
 *
 * Over TLS, libmicrohttpd hands GnuTLS the response header and the body
 * as two writes: two records, two sendmsg() calls and, for a response
 * over about 1,400 bytes (a mutating review's), two TCP segments that
 * each wake the apiserver's reader. Told that a body follows, the push
 * function here keeps the header's record back and sends it with the
 * body's first record in one sendmsg().
 *
 * struct tls_join lives as long as its connection (the caller's); only
 * the thread serving that connection touches it.
 */
#ifndef TOPOGATE_TLSJOIN_H
#define TOPOGATE_TLSJOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <gnutls/gnutls.h>

/* A header record: a status line, four or five headers, TLS framing. */
#define TLS_JOIN_HELD 1024

struct tls_join {
    int fd;
    bool hold;   /* keep back the next record pushed */
    size_t off;  /* held[off..len) is still to be sent */
    size_t len;
    unsigned char held[TLS_JOIN_HELD];
};

/*
 * Makes session (whose transport is socket fd, as libmicrohttpd sets it
 * up) send through j. Receiving is left as it was.
 */
void tls_join_attach(struct tls_join *j, gnutls_session_t session, int fd);

/*
 * With on, the next record pushed is a response header with a body
 * after it: it is kept back for the body's first send. Only for a
 * non-empty body; off again when that response was not queued.
 */
void tls_join_hold_next(struct tls_join *j, bool on);

/*
 * The GnuTLS vec push function tls_join_attach() installs: sendmsg() on
 * j->fd, holding a record as asked. Public for the unit test.
 */
ssize_t tls_join_push(gnutls_transport_ptr_t j, const giovec_t *iov,
                      int iovcnt);

#endif
