/* tlsjoin.c - see tlsjoin.h. */
#include "webhook/tlsjoin.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* What one sendmsg() takes here: the held header and GnuTLS's records. */
#define TLS_JOIN_IOV 16

static size_t
iov_total(const giovec_t *iov, int n)
{
    size_t sum = 0;

    for (int i = 0; i < n; i++)
        sum += iov[i].iov_len;
    return sum;
}

static void
hold(struct tls_join *j, const giovec_t *iov, int n)
{
    for (int i = 0; i < n; i++) {
        memcpy(j->held + j->len, iov[i].iov_base, iov[i].iov_len);
        j->len += iov[i].iov_len;
    }
}

/*
 * Like GnuTLS's own push (sendmsg() with MSG_NOSIGNAL), except that a
 * record marked to hold is kept and reported sent, and goes out in front
 * of the next one. A send that takes only held bytes reports EAGAIN: the
 * socket is full, and GnuTLS offers its record again once it is not.
 */
ssize_t
tls_join_push(gnutls_transport_ptr_t ptr, const giovec_t *iov, int iovcnt)
{
    struct tls_join *j = ptr;
    struct iovec v[TLS_JOIN_IOV];
    struct msghdr msg = {.msg_iov = v};
    size_t total = iov_total(iov, iovcnt), pending = j->len - j->off;
    ssize_t sent;

    if (j->hold) {
        j->hold = false;
        if (pending == 0 && total <= sizeof(j->held)) {
            j->off = j->len = 0;
            hold(j, iov, iovcnt);
            return (ssize_t)total;
        }
    }
    if (pending > 0) {
        v[msg.msg_iovlen].iov_base = j->held + j->off;
        v[msg.msg_iovlen++].iov_len = pending;
    }
    for (int i = 0; i < iovcnt && msg.msg_iovlen < TLS_JOIN_IOV; i++) {
        v[msg.msg_iovlen].iov_base = iov[i].iov_base;
        v[msg.msg_iovlen++].iov_len = iov[i].iov_len;
    }
    sent = sendmsg(j->fd, &msg, MSG_NOSIGNAL);
    if (sent < 0 || pending == 0)
        return sent;
    if ((size_t)sent <= pending) {
        /* Only the held bytes (or part) went: the socket is full. */
        j->off += (size_t)sent;
        if (j->off == j->len)
            j->off = j->len = 0;
        errno = EAGAIN;
        return -1;
    }
    j->off = j->len = 0;
    return sent - (ssize_t)pending;
}

void
tls_join_attach(struct tls_join *j, gnutls_session_t session, int fd)
{
    memset(j, 0, offsetof(struct tls_join, held));
    j->fd = fd;
    /* Receiving keeps the socket number libmicrohttpd gave it. */
    gnutls_transport_set_ptr2(session, (gnutls_transport_ptr_t)(intptr_t)fd,
                              j);
    gnutls_transport_set_vec_push_function(session, tls_join_push);
}

void
tls_join_hold_next(struct tls_join *j, bool on)
{
    j->hold = on;
}
