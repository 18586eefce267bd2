/*
 * The joining push function on a socket pair: a held header goes out in
 * front of the body in one send, and when the socket fills, nothing is
 * lost, doubled or reordered as GnuTLS offers its record again. (A send
 * that takes part of the held header only is handled, but sockets take
 * at least a segment's worth when they take anything: not produced here.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test/unit/check.h"
#include "webhook/tlsjoin.h"

static int
pair(int fds[2], int sndbuf)
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
        return -1;
    if (sndbuf > 0)
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    return 0;
}

/* Everything readable on fd now, appended at got + *n. */
static void
drain(int fd, unsigned char *got, size_t cap, size_t *n)
{
    ssize_t r;

    while (*n < cap && (r = read(fd, got + *n, cap - *n)) > 0)
        *n += (size_t)r;
}

static ssize_t
push(struct tls_join *j, const void *data, size_t len)
{
    giovec_t v = {.iov_base = (void *)data, .iov_len = len};

    return tls_join_push(j, &v, 1);
}

static void
test_header_with_body(void)
{
    struct tls_join j;
    int fds[2];
    unsigned char got[64];
    size_t n = 0;

    CHECK(pair(fds, 0) == 0);
    memset(&j, 0, sizeof(j));
    j.fd = fds[0];
    /* Not held: straight through. */
    CHECK_INT(push(&j, "hello", 5), 5);
    drain(fds[1], got, sizeof(got), &n);
    CHECK_INT(n, 5);
    /* Held: reported sent, nothing on the wire until the body. */
    tls_join_hold_next(&j, true);
    CHECK_INT(push(&j, "HEAD", 4), 4);
    n = 0;
    drain(fds[1], got, sizeof(got), &n);
    CHECK_INT(n, 0);
    CHECK_INT(push(&j, "body", 4), 4);
    drain(fds[1], got, sizeof(got), &n);
    CHECK_INT(n, 8);
    CHECK(memcmp(got, "HEADbody", 8) == 0);
    /* Turned off again: the next record is not held. */
    tls_join_hold_next(&j, true);
    tls_join_hold_next(&j, false);
    CHECK_INT(push(&j, "x", 1), 1);
    n = 0;
    drain(fds[1], got, sizeof(got), &n);
    CHECK_INT(n, 1);
    close(fds[0]);
    close(fds[1]);
}

/*
 * A body far larger than the socket takes: offered again and again as
 * GnuTLS would (from where the last send stopped), the reader gets the
 * header and the body once each, in order.
 */
static void
test_full_socket(void)
{
    enum { BODY = 512 * 1024 };
    static unsigned char body[BODY], got[BODY + 64];
    struct tls_join j;
    int fds[2], partial = 0;
    size_t sent = 0, n = 0;

    for (size_t i = 0; i < BODY; i++)
        body[i] = (unsigned char)(i * 7 + i / 251);
    CHECK(pair(fds, 4096) == 0);
    memset(&j, 0, sizeof(j));
    j.fd = fds[0];
    tls_join_hold_next(&j, true);
    CHECK_INT(push(&j, "HEADER:", 7), 7);
    while (sent < BODY) {
        ssize_t r = push(&j, body + sent, BODY - sent);

        if (r < 0) {
            CHECK_INT(errno, EAGAIN);
            if (errno != EAGAIN)
                break;
        } else {
            partial += (size_t)r < BODY - sent;
            sent += (size_t)r;
        }
        drain(fds[1], got, sizeof(got), &n);
    }
    drain(fds[1], got, sizeof(got), &n);
    CHECK(partial > 0); /* the case under test did happen */
    CHECK_INT(n, BODY + 7);
    CHECK(memcmp(got, "HEADER:", 7) == 0);
    CHECK(memcmp(got + 7, body, BODY) == 0);
    CHECK_INT(j.len - j.off, 0);
    close(fds[0]);
    close(fds[1]);
}

/*
 * The socket is full when the body comes: the held header waits with it
 * until there is room, and then both go, once.
 */
static void
test_header_split(void)
{
    enum { FILL = 1 << 20 };
    static unsigned char junk[FILL], got[FILL + 64];
    struct tls_join j;
    int fds[2];
    size_t n = 0, filled = 0;
    ssize_t r;

    CHECK(pair(fds, 4096) == 0);
    memset(&j, 0, sizeof(j));
    j.fd = fds[0];
    while ((r = push(&j, junk, sizeof(junk))) > 0)
        filled += (size_t)r;
    tls_join_hold_next(&j, true);
    CHECK_INT(push(&j, "0123456789", 10), 10);
    CHECK(push(&j, "B", 1) < 0 && errno == EAGAIN);
    drain(fds[1], got, sizeof(got), &n);
    while ((r = push(&j, "B", 1)) < 0 && errno == EAGAIN)
        drain(fds[1], got, sizeof(got), &n);
    CHECK_INT(r, 1);
    drain(fds[1], got, sizeof(got), &n);
    CHECK_INT(n, filled + 11);
    CHECK(n == filled + 11 && memcmp(got + filled, "0123456789B", 11) == 0);
    close(fds[0]);
    close(fds[1]);
}

int
main(void)
{
    test_header_with_body();
    test_full_socket();
    test_header_split();
    CHECK_DONE();
}
