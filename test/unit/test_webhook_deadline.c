/*
 * Connection slots and windows (webhook/deadline.c): which connection a
 * new one displaces when all slots are taken, the per-address cap, and
 * the short first window. Sockets are socketpair() ends: a connection
 * shut down by the server side reads as the end of the stream here.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "test/unit/check.h"
#include "webhook/deadline.h"

struct end {
    int server; /* what the deadline watches */
    int client; /* what tells whether it was shut down */
    struct deadline_conn *c;
};

static struct sockaddr_in
addr(int last)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (uint32_t)last);
    return sa;
}

static int
open_end(struct deadline *d, struct end *e, int from, bool *full)
{
    int sv[2];
    struct sockaddr_in sa = addr(from);

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return -1;
    e->server = sv[0];
    e->client = sv[1];
    e->c = NULL;
    *full = !deadline_admit(d, (struct sockaddr *)&sa);
    if (*full)
        return -1;
    e->c = deadline_open(d, e->server, (struct sockaddr *)&sa);
    return e->c != NULL ? 0 : -1;
}

/* Whether the server side was shut down: the client reads the end. */
static bool
shut(const struct end *e)
{
    char b;

    return recv(e->client, &b, 1, MSG_DONTWAIT) == 0;
}

static void
close_end(struct deadline *d, struct end *e)
{
    deadline_close(d, e->c);
    close(e->server);
    close(e->client);
    e->c = NULL;
}

/* A whole TLS record from the client, waiting unread by the server. */
static bool
send_record(const struct end *e)
{
    static const char record[] = "\x16\x03\x01\x00\x02\x01\x00";

    return send(e->client, record, sizeof(record) - 1, 0) ==
           (ssize_t)sizeof(record) - 1;
}

static void
sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

/* All slots taken: silent new ones go first, then silent kept ones;
 * never a young one, one in a request, nor a kept one just answered. */
static void
test_eviction_order(void)
{
    struct deadline *d = deadline_new("test", 10, 10, 10000, 3, 10);
    struct end a, b, c, e, f, g;
    bool full;

    CHECK(d != NULL);
    CHECK_INT(open_end(d, &a, 1, &full), 0); /* will be kept */
    CHECK_INT(open_end(d, &b, 2, &full), 0); /* will be new, silent */
    CHECK_INT(open_end(d, &c, 3, &full), 0); /* will be in a request */
    deadline_request_line(a.c);
    deadline_request_head(a.c);
    deadline_answered(a.c);
    deadline_request_line(c.c);
    deadline_request_head(c.c);
    sleep_ms(600); /* past the moment a connection is let be */

    CHECK_INT(open_end(d, &e, 4, &full), 0);
    CHECK(shut(&b));  /* the silent new one */
    CHECK(!shut(&a)); /* not the kept one yet */
    CHECK(!shut(&c));
    close_end(d, &b);

    CHECK_INT(open_end(d, &f, 5, &full), 0);
    CHECK(!shut(&e)); /* young: the silent kept one goes before it */
    CHECK(shut(&a));
    CHECK(!shut(&c));
    close_end(d, &a);

    /* Left: c in a request, e and f new and young (their request may be
     * on its way): the new one is refused, and nothing is closed. */
    CHECK_INT(open_end(d, &g, 6, &full), -1);
    CHECK(full);
    close(g.server);
    close(g.client);
    CHECK(!shut(&e) && !shut(&f));
    close_end(d, &e);

    /* A request and a kept one just answered: refused again. */
    CHECK_INT(open_end(d, &g, 6, &full), 0);
    deadline_request_line(f.c);
    deadline_request_head(f.c);
    deadline_request_line(g.c);
    deadline_request_head(g.c);
    deadline_answered(g.c);
    CHECK_INT(open_end(d, &e, 7, &full), -1);
    CHECK(full);
    close(e.server);
    close(e.client);
    CHECK(!shut(&c) && !shut(&f) && !shut(&g));
    close_end(d, &c);
    close_end(d, &f);
    close_end(d, &g);
    deadline_free(d);
}

/*
 * One address at its cap: a new connection takes its own oldest idle
 * kept one; with none idle (a burst of handshakes, as the apiserver's)
 * it goes over the cap rather than reset a young one. The watchdog then
 * brings the address back to its cap by its silent connections only: not
 * one with bytes unread, nor one whose handshake is moving.
 */
static void
test_per_address(void)
{
    struct deadline *d = deadline_new("test", 10, 10, 10000, 100, 2);
    struct end x1, x2, x3, y1, z1, z2, z3;
    bool full;

    CHECK_INT(open_end(d, &y1, 9, &full), 0);
    CHECK_INT(open_end(d, &x1, 8, &full), 0);
    CHECK_INT(open_end(d, &x2, 8, &full), 0);
    CHECK_INT(open_end(d, &x3, 8, &full), 0);
    CHECK(!shut(&x1) && !shut(&x2) && !shut(&x3) && !shut(&y1));
    CHECK(send_record(&x2)); /* unread by the server */
    sleep_ms(300);
    deadline_bytes_in(x3.c); /* a handshake byte: x3 is on its way */
    sleep_ms(550); /* x1 is silent past the moment, and a tick has come */
    CHECK(shut(&x1));
    CHECK(!shut(&x2) && !shut(&x3) && !shut(&y1));
    close_end(d, &x1);
    sleep_ms(600); /* back at its cap: nothing more goes */
    CHECK(!shut(&x2) && !shut(&x3));

    CHECK_INT(open_end(d, &z1, 7, &full), 0);
    CHECK_INT(open_end(d, &z2, 7, &full), 0);
    deadline_handshake_done(z1.c);
    sleep_ms(600);
    deadline_bytes_in(z2.c); /* z2 not yet done, but moving */
    CHECK_INT(open_end(d, &z3, 7, &full), 0);
    CHECK(shut(&z1)); /* its own idle kept one */
    CHECK(!shut(&z2) && !shut(&z3));
    close_end(d, &x2);
    close_end(d, &x3);
    close_end(d, &y1);
    close_end(d, &z1);
    close_end(d, &z2);
    close_end(d, &z3);
    deadline_free(d);
}

/*
 * All slots taken and none silent: a connection that came past its
 * address's cap and has sent nothing goes for another address's new one
 * (half a TLS record waiting counts as nothing); with a whole record
 * waiting, the new one is refused instead.
 */
static void
test_over_cap_unstarted(void)
{
    struct deadline *d = deadline_new("test", 10, 10, 10000, 3, 1);
    struct end x1, x2, y1, y2;
    bool full;

    CHECK_INT(open_end(d, &x1, 8, &full), 0);
    CHECK_INT(open_end(d, &x2, 8, &full), 0); /* over its cap */
    CHECK_INT(open_end(d, &y1, 9, &full), 0);
    CHECK(send_record(&x2));
    CHECK_INT(open_end(d, &y2, 10, &full), -1);
    CHECK(full);
    close(y2.server);
    close(y2.client);
    CHECK(!shut(&x1) && !shut(&x2) && !shut(&y1));
    close_end(d, &x2);
    CHECK_INT(open_end(d, &x2, 8, &full), 0); /* over again */
    /* Half a ClientHello, as a flood sends: not a client on its way. */
    CHECK_INT((int)send(x2.client, "\x16\x03\x01\x00\xc8\x01", 6, 0), 6);
    CHECK_INT(open_end(d, &y2, 10, &full), 0);
    CHECK(shut(&x2));
    CHECK(!shut(&x1) && !shut(&y1) && !shut(&y2));
    close_end(d, &x1);
    close_end(d, &x2);
    close_end(d, &y1);
    close_end(d, &y2);
    deadline_free(d);
}

/*
 * All slots taken, none silent, and an address past its cap whose
 * handshakes keep moving: another address's new connection takes its
 * oldest past the cap; its own new one is refused.
 */
static void
test_hog(void)
{
    struct deadline *d = deadline_new("test", 10, 10, 10000, 4, 1);
    struct end x1, x2, x3, x4, y1, y2;
    bool full;

    CHECK_INT(open_end(d, &x1, 8, &full), 0);
    CHECK_INT(open_end(d, &x2, 8, &full), 0);
    CHECK_INT(open_end(d, &x3, 8, &full), 0);
    deadline_bytes_in(x2.c);
    deadline_bytes_in(x3.c);
    CHECK_INT(open_end(d, &y1, 9, &full), 0);
    CHECK_INT(open_end(d, &y2, 10, &full), 0);
    CHECK(shut(&x2));
    CHECK(!shut(&x1) && !shut(&x3) && !shut(&y1) && !shut(&y2));
    close_end(d, &x2);
    CHECK_INT(open_end(d, &x4, 8, &full), -1);
    CHECK(full);
    close(x4.server);
    close(x4.client);
    CHECK(!shut(&x1) && !shut(&x3) && !shut(&y1) && !shut(&y2));
    close_end(d, &x1);
    close_end(d, &x3);
    close_end(d, &y1);
    close_end(d, &y2);
    deadline_free(d);
}

/* A new connection has first_ms for its head; then the request window. */
static void
test_first_window(void)
{
    struct deadline *d = deadline_new("test", 2, 2, 300, 10, 10);
    struct end idle, asked;
    bool full;

    CHECK_INT(open_end(d, &idle, 1, &full), 0);
    CHECK_INT(open_end(d, &asked, 2, &full), 0);
    deadline_request_line(asked.c);
    deadline_request_head(asked.c);
    sleep_ms(200);
    CHECK(!shut(&idle));
    sleep_ms(500); /* 300 ms and a watchdog tick of 250 ms */
    CHECK(shut(&idle));
    CHECK(!shut(&asked));
    sleep_ms(2000); /* the request's 2 s are over too */
    CHECK(shut(&asked));
    close_end(d, &idle);
    close_end(d, &asked);
    deadline_free(d);
}

/*
 * A connection whose handshake is done is kept, as one answered: it
 * outlives first_ms (a client's pool of idle connections), and goes
 * after kept_s, or first when slots run short (test_eviction_order).
 * Bytes on it begin a head, which has first_ms again.
 */
static void
test_handshake_kept(void)
{
    struct deadline *d = deadline_new("test", 3, 2, 400, 10, 10);
    struct end idle, pooled, trickle;
    bool full;

    CHECK_INT(open_end(d, &idle, 1, &full), 0);
    CHECK_INT(open_end(d, &pooled, 2, &full), 0);
    CHECK_INT(open_end(d, &trickle, 3, &full), 0);
    deadline_handshake_done(pooled.c);
    deadline_handshake_done(trickle.c);
    sleep_ms(700); /* 400 ms and a watchdog tick of 250 ms */
    CHECK(shut(&idle));
    CHECK(!shut(&pooled));
    CHECK(!shut(&trickle));
    deadline_bytes_in(trickle.c);
    sleep_ms(300);
    CHECK(!shut(&trickle));
    sleep_ms(400); /* its head's 400 ms from the first byte are over */
    CHECK(shut(&trickle));
    CHECK(!shut(&pooled));
    sleep_ms(1000); /* the pool's kept 2 s are over */
    CHECK(shut(&pooled));
    close_end(d, &idle);
    close_end(d, &pooled);
    close_end(d, &trickle);
    deadline_free(d);
}

int
main(void)
{
    test_eviction_order();
    test_per_address();
    test_over_cap_unstarted();
    test_hog();
    test_first_window();
    test_handshake_kept();
    CHECK_DONE();
}
