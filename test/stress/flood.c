/*
 * flood.c - stressc flood: hostile connections, and a review (or a probe)
 * timed beside them.
 *
 *   stressc flood -p PORT -a CA -d CASES -k idle|half|head|stall [-n HOLD]
 *                 [-r NEW_PER_S] [-S SOURCES] [-T SECONDS] [-m review|probe]
 *                 [-L LIMIT_MS] [-B BYTES]
 *
 * idle: HOLD plain TCP connections that send nothing, then NEW_PER_S more
 * every second. half: the same, each sending the first 10 bytes of a TLS
 * ClientHello (for -m probe: half an HTTP request line). head: each sends
 * a request head without its last line ending (-m probe only: plain
 * HTTP). stall: HOLD TLS connections that each announce a body of BYTES
 * (default 3 MiB), send all of it but the last byte and wait.
 * The flood comes from 127.0.0.2 to 127.0.0.(1 + SOURCES) in turn (a pod
 * each), or with -S 0 from 127.0.0.1 like the timed client.
 *
 * Beside it, from 127.0.0.1, every 100 ms: -m review opens a fresh TLS
 * connection and sends a golden review, -m probe a fresh plain
 * connection with GET /healthz; each must be answered correctly within
 * LIMIT_MS (default 1000) of its connect.
 *
 * One summary line; exit 0 when every timed request was answered in time.
 */
#include "flood.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <sys/time.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"

#define FLOOD_MAX 16384
#define FLOOD_TICK_MS 10
#define CHECK_EVERY_MS 100

static const struct flood_opts *fo;
static SSL_CTX *fctx;
static const struct fixture *fcase;
static atomic_bool flood_done;
static atomic_int held_now;
static char *stall_body; /* BYTES of spaces: valid JSON padding */

static uint64_t
ms_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* What a hostile connection sends once connected. */
static const char *
opening(size_t *len)
{
    static const char hello[] = "\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03";
    static const char line[] = "GET /heal";
    static const char head[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n";

    if (strcmp(fo->kind, "half") == 0 && strcmp(fo->mode, "probe") != 0) {
        *len = sizeof(hello) - 1;
        return hello;
    }
    if (strcmp(fo->kind, "half") == 0) {
        *len = sizeof(line) - 1;
        return line;
    }
    if (strcmp(fo->kind, "head") == 0) {
        *len = sizeof(head) - 1;
        return head;
    }
    *len = 0;
    return NULL;
}

struct tally {
    long opened, refused, closed;
};

/* Non-blocking connect from the next source address. -1 if it failed. */
static int
open_one(long n)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)fo->port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    if (fd < 0)
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (conn_bind_source(fd, fo->sources > 0 ? 1 + (int)(n % fo->sources)
                                             : 0) != 0 ||
        (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
         errno != EINPROGRESS)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The idle, half and head kinds: one thread, poll() over them all. */
static void *
flood_thread(void *arg)
{
    struct tally *t = arg;
    static struct pollfd p[FLOOD_MAX];
    static bool sent[FLOOD_MAX];
    size_t olen;
    const char *open_bytes = opening(&olen);
    int n = 0;
    uint64_t next = ms_now();
    double owed = 0;

    while (!atomic_load(&flood_done)) {
        int want = 0;
        uint64_t now = ms_now();

        if (now >= next) {
            /* The first tick opens HOLD; then NEW_PER_S a second. */
            if (t->opened == 0) {
                want = fo->hold;
            } else {
                owed += fo->rate * FLOOD_TICK_MS / 1000.0;
                want = (int)owed;
                owed -= want;
            }
            next += FLOOD_TICK_MS;
        }
        for (; want > 0 && n < FLOOD_MAX; want--) {
            int fd = open_one(t->opened);

            if (fd < 0) {
                t->refused++;
                continue;
            }
            t->opened++;
            p[n] = (struct pollfd){.fd = fd, .events = POLLOUT};
            sent[n++] = false;
        }
        if (poll(p, (nfds_t)n, FLOOD_TICK_MS) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < n; i++) {
            char buf[256];

            if (p[i].revents == 0)
                continue;
            if ((p[i].revents & POLLOUT) && !sent[i]) {
                sent[i] = true;
                if (olen > 0 && send(p[i].fd, open_bytes, olen,
                                     MSG_NOSIGNAL) < 0 &&
                    errno != EAGAIN) {
                    p[i].revents |= POLLERR;
                } else {
                    p[i].events = POLLIN | POLLRDHUP;
                    if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;
                }
            }
            /* Anything back (a TLS alert, a 4xx) or the end: gone. */
            if ((p[i].revents & (POLLIN | POLLRDHUP)) &&
                !(p[i].revents & (POLLHUP | POLLERR)) &&
                recv(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
                continue;
            close(p[i].fd);
            t->closed++;
            p[i] = p[--n];
            sent[i] = sent[n];
            i--;
        }
        atomic_store(&held_now, n);
    }
    for (int i = 0; i < n; i++)
        close(p[i].fd);
    return NULL;
}

/* The stall kind: a thread per connection, a whole body but one byte. */
static void *
stall_thread(void *arg)
{
    long i = (long)(intptr_t)arg;
    struct conn c = {.fd = -1};
    char head[256];
    int len;

    if (conn_open_from(&c, fctx, fo->port, 5000,
                       fo->sources > 0 ? 1 + (int)(i % fo->sources) : 0) != 0)
        return NULL;
    len = snprintf(head, sizeof(head),
                   "POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Type: application/json\r\n"
                   "Content-Length: %zu\r\n\r\n",
                   fo->bytes);
    if (conn_write(&c, head, (size_t)len) == 0)
        conn_write(&c, stall_body, fo->bytes - 1);
    atomic_fetch_add(&held_now, 1);
    while (!atomic_load(&flood_done)) {
        struct pollfd p = {.fd = c.fd, .events = POLLIN | POLLRDHUP};
        if (poll(&p, 1, 100) > 0)
            break;
    }
    atomic_fetch_sub(&held_now, 1);
    conn_close(&c, true);
    return NULL;
}

struct checks {
    long ok, failed;
    uint32_t ms[4096];
    long n;
};

/* One timed request on a fresh connection: its milliseconds, or -1. */
static long
timed_review(void)
{
    struct conn c = {.fd = -1};
    struct response r;
    uint64_t t0 = ms_now();
    long ms = -1;

    if (conn_open(&c, fctx, fo->port, fo->limit_ms + 1000) != 0)
        return -1;
    if (conn_write(&c, fcase->request, fcase->request_len) == 0 &&
        conn_read_response(&c, &r) == 0) {
        if (r.status == fcase->status && r.body_len == fcase->answer_len &&
            memcmp(r.body, fcase->answer, r.body_len) == 0)
            ms = (long)(ms_now() - t0);
        response_free(&r);
    }
    conn_close(&c, false);
    return ms;
}

static long
timed_probe(void)
{
    static const char get[] =
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)fo->port)};
    struct timeval tv = {.tv_sec = fo->limit_ms / 1000 + 1};
    uint64_t t0 = ms_now();
    char buf[512];
    size_t got = 0;
    ssize_t k;
    long ms = -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        send(fd, get, sizeof(get) - 1, MSG_NOSIGNAL) ==
            (ssize_t)sizeof(get) - 1) {
        while (got < sizeof(buf) - 1 &&
               (k = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) > 0)
            got += (size_t)k;
        buf[got] = '\0';
        if (strncmp(buf, "HTTP/1.1 200", 12) == 0 && strstr(buf, "\r\n\r\nok"))
            ms = (long)(ms_now() - t0);
    }
    close(fd);
    return ms;
}

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int
run_flood(const struct flood_opts *opts, SSL_CTX *ctx,
          const struct fixture *fx)
{
    static struct checks ck;
    struct tally t = {0};
    pthread_t flood, *stall = NULL;
    pthread_attr_t attr;
    bool stalling = strcmp(opts->kind, "stall") == 0;
    uint64_t start, end;
    int held_sum = 0, held_n = 0, started = 0, held_lo = FLOOD_MAX, held_hi = 0;
    bool in_time;

    fo = opts;
    fctx = ctx;
    fcase = fx;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (stalling) {
        if ((stall = calloc((size_t)opts->hold, sizeof(*stall))) == NULL ||
            opts->bytes < 2 || (stall_body = malloc(opts->bytes)) == NULL)
            return 1;
        memset(stall_body, ' ', opts->bytes);
        for (long i = 0; i < opts->hold; i++, started++)
            if (pthread_create(&stall[i], &attr, stall_thread,
                               (void *)(intptr_t)i) != 0)
                break;
    } else if (pthread_create(&flood, &attr, flood_thread, &t) != 0) {
        return 1;
    }
    /* Let the first burst land before timing anything. */
    usleep(1000 * 1000);
    start = ms_now();
    end = start + (uint64_t)opts->seconds * 1000u;
    while (ms_now() < end && ck.n < (long)(sizeof(ck.ms) / sizeof(ck.ms[0]))) {
        uint64_t t0 = ms_now();
        long ms = strcmp(opts->mode, "probe") == 0 ? timed_probe()
                                                   : timed_review();

        int held = atomic_load(&held_now);

        held_sum += held;
        held_n++;
        held_lo = held < held_lo ? held : held_lo;
        held_hi = held > held_hi ? held : held_hi;
        if (ms < 0 || ms > opts->limit_ms) {
            ck.failed++;
            if (ck.failed <= 3)
                fprintf(stderr, "stressc flood: a timed %s %s\n", opts->mode,
                        ms < 0 ? "failed" : "was late");
        } else {
            ck.ok++;
        }
        ck.ms[ck.n++] = (uint32_t)(ms < 0 ? opts->limit_ms * 10 : ms);
        if (ms_now() - t0 < CHECK_EVERY_MS)
            usleep((useconds_t)(CHECK_EVERY_MS - (ms_now() - t0)) * 1000);
    }
    atomic_store(&flood_done, true);
    if (stalling) {
        for (int i = 0; i < started; i++)
            pthread_join(stall[i], NULL);
        free(stall);
        free(stall_body);
    } else {
        pthread_join(flood, NULL);
    }
    qsort(ck.ms, (size_t)ck.n, sizeof(ck.ms[0]), cmp_u32);
    in_time = ck.n > 0 && ck.failed == 0;
    printf("flood kind=%s mode=%s hold=%d rate=%d sources=%d opened=%ld "
           "refused_at_connect=%ld closed_by_server=%ld held_avg=%d "
           "held_min=%d held_max=%d checks=%ld ok=%ld failed=%ld p50_ms=%u "
           "p99_ms=%u max_ms=%u\n",
           opts->kind, opts->mode, opts->hold, opts->rate, opts->sources,
           stalling ? (long)started : t.opened, t.refused, t.closed,
           held_n ? held_sum / held_n : 0, held_n ? held_lo : 0, held_hi,
           ck.n, ck.ok, ck.failed,
           ck.n ? ck.ms[ck.n / 2] : 0,
           ck.n ? ck.ms[(long)((double)(ck.n - 1) * 0.99 + 0.5)] : 0,
           ck.n ? ck.ms[ck.n - 1] : 0);
    return in_time ? 0 : 1;
}
