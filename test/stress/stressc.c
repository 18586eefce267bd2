/*
 * stressc.c - the load and fault client of test/stress/run.sh.
 *
 *   stressc load -p PORT -a CA -d CASES [-c CONNS] [-r REQS] [-P PAD]
 *                [-w THINK_MS] [-T SECONDS] [-H CONNECT_MS] [-R] [-E] [-U]
 *   stressc slow -p PORT -a CA -d CASES -k header|body|vanish [-n N]
 *                [-i INTERVAL_MS] [-T SECONDS]
 *   stressc flood ...: see flood.c
 *
 * load: CONNS threads each open one keep-alive TLS connection (from
 * SOURCES loopback addresses in turn with -S, as that many clients) and
 * send their first review at once, as Go's http.Transport does with a
 * connection it dials; once all are open (or failed) they send the rest
 * of REQS golden reviews each, back to back
 * (or THINK_MS apart), and compare every answer with its .out.json byte
 * for byte. -R accepts connections that cannot be opened (a server out of
 * descriptors), -E accepts clean 5xx Status answers (a server out of
 * memory), -U accepts the server closing a connection between requests
 * (SIGTERM). Never accepted: a wrong answer, a request written and never
 * answered ("lost"), an answer cut off ("broken").
 *
 * slow: N clients that trickle the request head (header) or body (body)
 * one byte per INTERVAL_MS and wait for the server to drop them, or send
 * half a body and vanish with a RST (vanish).
 *
 * One summary line of key=value pairs on stdout; exit 0 when every check
 * held, 1 otherwise, 2 on a usage error. Every wait is bounded by -T.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "cases.h"
#include "flood.h"

struct opts {
    int port;
    const char *ca;
    const char *dir;
    int conns;
    int reqs;
    size_t pad;
    int think_ms;
    int seconds;
    bool allow_refused;
    bool allow_errors;
    bool until_closed;
    const char *kind;
    int interval_ms;
    int connect_ms;
    int sources;
    int rate;
    int limit_ms;
    size_t bytes;
    const char *mode;
};

/* What one load thread saw. */
struct tally {
    int index; /* the thread's number: which case it starts with */
    bool connected;
    long correct, wrong, errors, lost, broken, closed, unsent;
    uint32_t *us; /* latency of each answered request */
    long n_us;
    uint32_t connect_us; /* connect and TLS handshake, then the first
                            request written: what a server's first
                            window must allow */
};

static struct opts o = {.conns = 100,
                        .reqs = 10,
                        .seconds = 120,
                        .interval_ms = 100,
                        .connect_ms = 10000,
                        .rate = 200,
                        .limit_ms = 1000,
                        .bytes = 3 * 1024 * 1024,
                        .mode = "review"};
static SSL_CTX *ctx;
static struct fixture *cases;
static int n_cases;
static uint64_t stop_at; /* no new request after this (ns) */

/* The gate: every thread connects, then all start together. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_arrived;
static atomic_int reported_wrong;

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
gate_wait(void)
{
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30; /* bounded: a stuck connect must not stall all */
    pthread_mutex_lock(&gate_lock);
    if (++gate_arrived == o.conns)
        pthread_cond_broadcast(&gate_cond);
    while (gate_arrived < o.conns &&
           pthread_cond_timedwait(&gate_cond, &gate_lock, &until) == 0)
        ;
    pthread_mutex_unlock(&gate_lock);
}

/* Compares an answer with the golden one; prints the first few misses. */
static bool
answer_matches(const struct fixture *fx, const struct response *r)
{
    if (r->status == fx->status && r->body_len == fx->answer_len &&
        memcmp(r->body, fx->answer, r->body_len) == 0)
        return true;
    if (atomic_fetch_add(&reported_wrong, 1) < 3)
        fprintf(stderr, "stressc: %s: want %d, got %d: %.200s\n", fx->name,
                fx->status, r->status, r->body);
    return false;
}

static bool
is_clean_error(const struct response *r)
{
    return r->status >= 500 && strstr(r->body, "\"kind\":\"Status\"") != NULL;
}

/* True once the server has closed or reset the connection. */
static bool
server_gone(int fd, int wait_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};

    return poll(&p, 1, wait_ms) > 0;
}

static void *
load_thread(void *arg)
{
    struct tally *t = arg;
    struct conn c = {.fd = -1};
    bool gated = false;
    uint64_t dial = now_ns();

    t->connected =
        conn_open_from(&c, ctx, o.port, o.connect_ms,
                       o.sources > 0 ? t->index % o.sources : 0) == 0;
    if (!t->connected) {
        gate_wait();
        t->unsent = o.reqs;
        return NULL;
    }
    for (int i = 0; i < o.reqs; i++) {
        /* The first request goes at once; the rest once all are open. */
        if (i == 1) {
            gate_wait();
            gated = true;
        }
        const struct fixture *fx = &cases[(t->index + i) % n_cases];
        struct response r;
        uint64_t start;
        int rc;

        if (now_ns() > stop_at) {
            t->unsent += o.reqs - i;
            goto out;
        }
        /*
         * As Go's http.Transport does, never reuse a connection the
         * server has already closed: that request was not sent.
         */
        if (i > 0 && server_gone(c.fd, 0)) {
            t->closed++;
            t->unsent += o.reqs - i;
            goto out;
        }
        start = now_ns();
        if (i == 0)
            t->connect_us = (uint32_t)((start - dial) / 1000);
        if (conn_write(&c, fx->request, fx->request_len) != 0) {
            /* Closed before this request went out: never sent. */
            t->closed++;
            t->unsent += o.reqs - i - 1;
            goto out;
        }
        rc = conn_read_response(&c, &r);
        if (rc == -1) {
            t->lost++;
            t->unsent += o.reqs - i - 1;
            goto out;
        }
        if (rc == -2) {
            t->broken++;
            t->unsent += o.reqs - i - 1;
            goto out;
        }
        t->us[t->n_us++] = (uint32_t)((now_ns() - start) / 1000);
        if (answer_matches(fx, &r))
            t->correct++;
        else if (is_clean_error(&r))
            t->errors++;
        else
            t->wrong++;
        response_free(&r);
        if (r.close) {
            t->unsent += o.reqs - i - 1;
            t->closed++;
            goto out;
        }
        if (o.think_ms > 0)
            usleep((useconds_t)o.think_ms * 1000);
    }
    if (!gated)
        gate_wait();
    conn_close(&c, false);
    return NULL;
out:
    /* Through the gate all the same: the others wait for everyone. */
    if (!gated)
        gate_wait();
    conn_close(&c, false);
    return NULL;
}

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static double
percentile_ms(const uint32_t *v, long n, double p)
{
    long i;

    if (n == 0)
        return 0;
    i = (long)(p * (double)(n - 1) + 0.5);
    return v[i] / 1000.0;
}

static int
run_load(void)
{
    struct tally *t = calloc((size_t)o.conns, sizeof(*t));
    pthread_t *th = calloc((size_t)o.conns, sizeof(*th));
    struct tally sum = {0};
    pthread_attr_t attr;
    uint32_t *all, *dials;
    uint64_t start;
    double secs;
    int connected = 0, started = 0;
    bool ok;

    if (t == NULL || th == NULL)
        return 1;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    stop_at = now_ns() + (uint64_t)o.seconds * 1000000000u;
    start = now_ns();
    for (int i = 0; i < o.conns; i++) {
        t[i].index = i;
        t[i].us = calloc((size_t)o.reqs, sizeof(uint32_t));
        if (t[i].us == NULL ||
            pthread_create(&th[i], &attr, load_thread, &t[i]) != 0) {
            fprintf(stderr, "stressc: cannot start thread %d\n", i);
            /* Let the others through the gate, then fail. */
            pthread_mutex_lock(&gate_lock);
            gate_arrived += o.conns - i;
            pthread_cond_broadcast(&gate_cond);
            pthread_mutex_unlock(&gate_lock);
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    secs = (double)(now_ns() - start) / 1e9;

    all = malloc(sizeof(uint32_t) * ((size_t)o.conns * (size_t)o.reqs + 1));
    dials = calloc((size_t)o.conns + 1, sizeof(uint32_t));
    for (int i = 0; i < started; i++) {
        if (t[i].connected)
            dials[connected] = t[i].connect_us;
        connected += t[i].connected;
        sum.correct += t[i].correct;
        sum.wrong += t[i].wrong;
        sum.errors += t[i].errors;
        sum.lost += t[i].lost;
        sum.broken += t[i].broken;
        sum.closed += t[i].closed;
        sum.unsent += t[i].unsent;
        memcpy(all + sum.n_us, t[i].us, sizeof(uint32_t) * (size_t)t[i].n_us);
        sum.n_us += t[i].n_us;
        free(t[i].us);
    }
    qsort(all, (size_t)sum.n_us, sizeof(uint32_t), cmp_u32);
    qsort(dials, (size_t)connected, sizeof(uint32_t), cmp_u32);
    printf("load conns=%d connected=%d refused=%d requests=%ld answered=%ld "
           "correct=%ld wrong=%ld errors=%ld lost=%ld broken=%ld closed=%ld "
           "unsent=%ld p50_ms=%.2f p99_ms=%.2f max_ms=%.2f seconds=%.2f "
           "rps=%.0f dial_p99_ms=%.2f dial_max_ms=%.2f\n",
           o.conns, connected, o.conns - connected, (long)o.conns * o.reqs,
           sum.n_us, sum.correct, sum.wrong, sum.errors, sum.lost, sum.broken,
           sum.closed, sum.unsent, percentile_ms(all, sum.n_us, 0.50),
           percentile_ms(all, sum.n_us, 0.99),
           percentile_ms(all, sum.n_us, 1.0), secs,
           secs > 0 ? (double)sum.n_us / secs : 0,
           percentile_ms(dials, connected, 0.99),
           percentile_ms(dials, connected, 1.0));
    free(dials);
    ok = started == o.conns && sum.wrong == 0 && sum.lost == 0 &&
         sum.broken == 0 && (o.allow_refused || connected == o.conns) &&
         (o.allow_errors || sum.errors == 0) &&
         (o.until_closed || o.allow_refused ||
          sum.correct + sum.errors == (long)o.conns * o.reqs);
    free(all);
    free(t);
    free(th);
    return ok ? 0 : 1;
}

/* --- slow clients --------------------------------------------------------- */

struct slow {
    bool opened;
    bool dropped;   /* the server closed on us */
    double seconds; /* from the start of the server's window to the drop */
};

static void *
slow_thread(void *arg)
{
    struct slow *s = arg;
    const struct fixture *fx = &cases[0];
    const char *body = strstr(fx->request, "\r\n\r\n") + 4;
    size_t head_len = (size_t)(body - fx->request), from, to;
    struct conn c = {.fd = -1};
    uint64_t start;

    if (conn_open(&c, ctx, o.port, o.connect_ms) != 0)
        return NULL;
    s->opened = true;
    start = now_ns();
    if (strcmp(o.kind, "vanish") == 0) {
        conn_write(&c, fx->request,
                   head_len + (fx->request_len - head_len) / 2);
        conn_close(&c, true);
        return NULL;
    }
    if (strcmp(o.kind, "body") == 0) {
        if (conn_write(&c, fx->request, head_len) != 0)
            goto gone;
        from = head_len;
    } else {
        from = 0;
    }
    to = fx->request_len - 1; /* never the last byte: never complete */
    for (size_t i = from; i < to && now_ns() < stop_at; i++) {
        if (conn_write(&c, fx->request + i, 1) != 0 ||
            server_gone(c.fd, o.interval_ms))
            goto gone;
        /* The server's window restarts once the request line is in. */
        if (i >= 1 && memcmp(fx->request + i - 1, "\r\n", 2) == 0 &&
            memchr(fx->request, '\n', i - 1) == NULL)
            start = now_ns();
    }
    conn_close(&c, true);
    return NULL;
gone:
    s->dropped = true;
    s->seconds = (double)(now_ns() - start) / 1e9;
    conn_close(&c, true);
    return NULL;
}

static int
run_slow(void)
{
    struct slow *s = calloc((size_t)o.conns, sizeof(*s));
    pthread_t *th = calloc((size_t)o.conns, sizeof(*th));
    pthread_attr_t attr;
    int opened = 0, dropped = 0, started = 0;
    double lo = 1e9, hi = 0;
    bool vanish = strcmp(o.kind, "vanish") == 0;

    if (s == NULL || th == NULL)
        return 1;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    stop_at = now_ns() + (uint64_t)o.seconds * 1000000000u;
    for (int i = 0; i < o.conns; i++, started++)
        if (pthread_create(&th[i], &attr, slow_thread, &s[i]) != 0)
            break;
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        opened += s[i].opened;
        dropped += s[i].dropped;
        if (s[i].dropped) {
            lo = s[i].seconds < lo ? s[i].seconds : lo;
            hi = s[i].seconds > hi ? s[i].seconds : hi;
        }
    }
    printf("slow kind=%s clients=%d opened=%d dropped_by_server=%d "
           "first_drop_s=%.1f last_drop_s=%.1f\n",
           o.kind, o.conns, opened, dropped, dropped ? lo : 0, hi);
    free(s);
    free(th);
    return opened == o.conns && (vanish || dropped == opened) ? 0 : 1;
}

static int
usage(void)
{
    fputs("usage: stressc load|slow|flood -p PORT -a CA -d CASES [options]\n"
          "  see the comment at the top of test/stress/stressc.c\n",
          stderr);
    return 2;
}

int
main(int argc, char **argv)
{
    int ch;

    if (argc < 2)
        return usage();
    optind = 2;
    while ((ch = getopt(argc, argv, "p:a:d:c:n:r:P:w:T:k:i:H:S:L:B:m:REU")) !=
           -1) {
        switch (ch) {
        case 'p':
            o.port = atoi(optarg);
            break;
        case 'a':
            o.ca = optarg;
            break;
        case 'd':
            o.dir = optarg;
            break;
        case 'c':
        case 'n':
            o.conns = atoi(optarg);
            break;
        case 'r':
            o.reqs = atoi(optarg);
            o.rate = o.reqs; /* flood: new connections a second */
            break;
        case 'P':
            o.pad = (size_t)atol(optarg);
            break;
        case 'w':
            o.think_ms = atoi(optarg);
            break;
        case 'T':
            o.seconds = atoi(optarg);
            break;
        case 'k':
            o.kind = optarg;
            break;
        case 'i':
            o.interval_ms = atoi(optarg);
            break;
        case 'H':
            o.connect_ms = atoi(optarg);
            break;
        case 'S':
            o.sources = atoi(optarg);
            break;
        case 'L':
            o.limit_ms = atoi(optarg);
            break;
        case 'B':
            o.bytes = (size_t)atol(optarg);
            break;
        case 'm':
            o.mode = optarg;
            break;
        case 'R':
            o.allow_refused = true;
            break;
        case 'E':
            o.allow_errors = true;
            break;
        case 'U':
            o.until_closed = true;
            break;
        default:
            return usage();
        }
    }
    if (o.port <= 0 || o.ca == NULL || o.dir == NULL || o.conns < 0 ||
        (o.conns == 0 && strcmp(argv[1], "flood") != 0) ||
        (o.reqs <= 0 && strcmp(argv[1], "flood") != 0) || o.seconds <= 0)
        return usage();
    signal(SIGPIPE, SIG_IGN);
    if ((ctx = conn_ctx(o.ca)) == NULL) {
        fprintf(stderr, "stressc: cannot load CA '%s'\n", o.ca);
        return 2;
    }
    if ((n_cases = cases_load(o.dir, o.pad, &cases)) < 0)
        return 2;
    if (strcmp(argv[1], "load") == 0)
        return run_load();
    if (strcmp(argv[1], "flood") == 0 && o.kind != NULL) {
        struct flood_opts f = {.port = o.port,
                               .kind = o.kind,
                               .mode = o.mode,
                               .hold = o.conns,
                               .rate = o.rate,
                               .sources = o.sources,
                               .seconds = o.seconds,
                               .limit_ms = o.limit_ms,
                               .bytes = o.bytes};
        return run_flood(&f, ctx, &cases[0]);
    }
    if (strcmp(argv[1], "slow") == 0 && o.kind != NULL &&
        (strcmp(o.kind, "header") == 0 || strcmp(o.kind, "body") == 0 ||
         strcmp(o.kind, "vanish") == 0))
        return run_slow();
    return usage();
}
